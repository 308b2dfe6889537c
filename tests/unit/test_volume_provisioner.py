"""The VolumeProvisioner against a real in-process API server, through the real client: the volume it
makes for a claim handed to it (capacity, modes, class, policy, CSI source, claimRef, provisioned-by and
node affinity from the topology, as a CSI external-provisioner makes it), the claims it leaves alone, and
its final failure on a node without capacity (the event, the selected node given back)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from cluster.api import objects_pb2
from cluster.api.kinds import EVENT, PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM
from cluster.api.persistentvolumes import (
    ANN_BETA_STORAGE_PROVISIONER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_STORAGE_PROVISIONER,
)
from cluster.api.volumes import SELECTED_NODE_ANNOTATION
from cluster.client import Client
from cluster.controllers import VolumeProvisioner
from cluster.controllers.provisioner import CLAIM_KEY_PREFIX
from tests.builders import node
from tests.unit.test_apiserver_server import Harness

NS = "default"
DRIVER = "zonal.csi.example.com"
ZONE = "topology.kubernetes.io/zone"


def storage_class(name: str = "fast", mode: str = "WaitForFirstConsumer", provisioner: str = DRIVER,
                  **fields: Any) -> objects_pb2.StorageClass:
    return json_format.ParseDict({"metadata": {"name": name}, "provisioner": provisioner,
                                  "volumeBindingMode": mode, **fields}, objects_pb2.StorageClass())


def handed_claim(name: str = "data", class_name: str = "fast", *, selected: str = "",
                 provisioner: str = DRIVER, beta_only: bool = False) -> objects_pb2.PersistentVolumeClaim:
    """A claim the PV controller handed to ``provisioner`` (selected for node ``selected``)."""
    annotations = {ANN_BETA_STORAGE_PROVISIONER: provisioner}
    if not beta_only:
        annotations[ANN_STORAGE_PROVISIONER] = provisioner
    if selected:
        annotations[SELECTED_NODE_ANNOTATION] = selected
    return json_format.ParseDict({
        "metadata": {"name": name, "namespace": NS, "annotations": annotations},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}},
                 "storageClassName": class_name, "volumeMode": "Block"},
    }, objects_pb2.PersistentVolumeClaim())


def zonal_node(name: str, zone: str) -> objects_pb2.Node:
    made = node(name)
    made.metadata.labels.update({ZONE: zone, "kubernetes.io/hostname": name})
    return made


def csi_node(name: str, *keys: str) -> objects_pb2.CSINode:
    return json_format.ParseDict({"metadata": {"name": name}, "spec": {"drivers": [
        {"name": DRIVER, "nodeID": name, "topologyKeys": list(keys)}]}}, objects_pb2.CSINode())


def capacity(name: str, zone: str, size: str, class_name: str = "fast") -> objects_pb2.CSIStorageCapacity:
    return json_format.ParseDict({"metadata": {"name": name, "namespace": NS}, "storageClassName": class_name,
                                  "nodeTopology": {"matchLabels": {ZONE: zone}}, "capacity": size},
                                 objects_pb2.CSIStorageCapacity())


class Cluster:
    def __init__(self, client: Client, provisioners: tuple[str, ...] = ()) -> None:
        self.client = client
        self.controller = VolumeProvisioner(client, provisioners)
        self._running: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        informers = list(self.controller._informers().values())
        self._running = [asyncio.create_task(informer.run()) for informer in informers]
        for informer in informers:
            await informer.wait_synced()

    async def stop(self) -> None:
        for task in self._running:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def sync(self, name: str = "data") -> None:
        await self.controller._sync(f"{CLAIM_KEY_PREFIX}{NS}/{name}")

    async def volumes(self) -> list[objects_pb2.PersistentVolume]:
        return list((await self.client.list(PERSISTENT_VOLUME)).items)  # type: ignore[arg-type]

    async def events(self) -> list[tuple[str, str, str]]:
        listed = (await self.client.list(EVENT, NS)).items
        return [(e.type, e.reason, e.message) for e in listed]  # type: ignore[attr-defined]


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with Harness(tmp_path) as api:
        assert api.server is not None
        async with Client(api.server.address) as client:
            made = Cluster(client)
            try:
                yield made
            finally:
                await made.stop()


def affinity_of(volume: objects_pb2.PersistentVolume) -> list[list[tuple[str, str, list[str]]]]:
    return [[(e.key, e.operator, list(e.values)) for e in term.match_expressions]
            for term in volume.spec.node_affinity.required.node_selector_terms]


async def test_a_selected_claim_gets_a_volume_on_its_nodes_topology(cluster: Cluster) -> None:
    await cluster.client.create(storage_class(reclaimPolicy="Retain", mountOptions=["noatime"]))
    await cluster.client.create(zonal_node("node-1", "zone-a"))
    await cluster.client.create(csi_node("node-1", ZONE))
    made = await cluster.client.create(handed_claim(selected="node-1"))
    await cluster.start()
    await cluster.sync()
    [volume] = await cluster.volumes()
    assert volume.metadata.name == f"pvc-{made.metadata.uid}"
    assert volume.metadata.annotations[ANN_DYNAMICALLY_PROVISIONED] == DRIVER
    spec = volume.spec
    assert dict(spec.capacity) == {"storage": "5Gi"}
    assert list(spec.access_modes) == ["ReadWriteOnce"] and spec.volume_mode == "Block"
    assert (spec.storage_class_name, spec.persistent_volume_reclaim_policy) == ("fast", "Retain")
    assert list(spec.mount_options) == ["noatime"]
    assert (spec.csi.driver, spec.csi.volume_handle) == (DRIVER, volume.metadata.name)
    ref = spec.claim_ref
    assert (ref.kind, ref.namespace, ref.name) == ("PersistentVolumeClaim", NS, "data")
    assert ref.uid == made.metadata.uid
    assert affinity_of(volume) == [[(ZONE, "In", ["zone-a"])]]
    assert await cluster.events() == [("Normal", "ProvisioningSucceeded",
                                       f"Successfully provisioned volume {volume.metadata.name}")]


@pytest.mark.parametrize(("allowed", "expected"), [
    ([{"matchLabelExpressions": [{"key": ZONE, "values": ["zone-a", "zone-b"]}]}],
     [[(ZONE, "In", ["zone-a"])]]),
    ([], [[("kubernetes.io/hostname", "In", ["node-1"])]]),
])
async def test_without_a_csinode_the_keys_come_from_the_class_else_the_hostname(
        cluster: Cluster, allowed: list[dict[str, Any]], expected: list[Any]) -> None:
    await cluster.client.create(storage_class(allowedTopologies=allowed))
    await cluster.client.create(zonal_node("node-1", "zone-a"))
    await cluster.client.create(handed_claim(selected="node-1"))
    await cluster.start()
    await cluster.sync()
    [volume] = await cluster.volumes()
    assert affinity_of(volume) == expected
    assert volume.spec.persistent_volume_reclaim_policy == "Delete", "a class without a policy deletes"


async def test_an_immediate_claim_gets_the_classes_allowed_topologies_at_once(cluster: Cluster) -> None:
    allowed = [{"matchLabelExpressions": [{"key": ZONE, "values": ["zone-a", "zone-b"]}]}]
    await cluster.client.create(storage_class(mode="Immediate", allowedTopologies=allowed))
    await cluster.client.create(handed_claim(beta_only=True))
    await cluster.start()
    await cluster.sync()
    [volume] = await cluster.volumes()
    assert affinity_of(volume) == [[(ZONE, "In", ["zone-a", "zone-b"])]]


async def test_an_immediate_claim_without_topologies_gets_a_volume_usable_anywhere(cluster: Cluster) -> None:
    await cluster.client.create(storage_class(mode="Immediate"))
    await cluster.client.create(handed_claim())
    await cluster.start()
    await cluster.sync()
    [volume] = await cluster.volumes()
    assert not volume.spec.HasField("node_affinity")


@pytest.mark.parametrize(("case", "claim", "served"), [
    ("WaitForFirstConsumer without a selected node", handed_claim(), ()),
    ("not handed to a provisioner", json_format.ParseDict(
        {"metadata": {"name": "data", "namespace": NS}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
            "storageClassName": "fast"}}, objects_pb2.PersistentVolumeClaim()), ()),
    ("handed to a provisioner not served", handed_claim(selected="node-1"), ("other.example.com",)),
    ("handed to another provisioner than its class's",
     handed_claim(selected="node-1", provisioner="x.io"), ()),
])
async def test_claims_left_alone(tmp_path: Path, case: str, claim: objects_pb2.PersistentVolumeClaim,
                                 served: tuple[str, ...]) -> None:
    async with Harness(tmp_path) as api:
        assert api.server is not None
        async with Client(api.server.address) as client:
            cluster = Cluster(client, served)
            try:
                await client.create(storage_class())
                await client.create(zonal_node("node-1", "zone-a"))
                await client.create(claim)
                await cluster.start()
                await cluster.sync()
                assert await cluster.volumes() == [], case
            finally:
                await cluster.stop()


async def test_no_capacity_on_the_nodes_topology_fails_and_gives_the_node_back(cluster: Cluster) -> None:
    await cluster.client.create(storage_class())
    await cluster.client.create(zonal_node("node-1", "zone-a"))
    await cluster.client.create(capacity("cap-a", "zone-a", "1Gi"))
    await cluster.client.create(capacity("cap-b", "zone-b", "100Gi"))
    await cluster.client.create(handed_claim(selected="node-1"))
    await cluster.start()
    await cluster.sync()
    assert await cluster.volumes() == []
    assert await cluster.events() == [
        ("Warning", "ProvisioningFailed",
         'failed to provision volume with StorageClass "fast": no capacity for 5Gi in the topology of node '
         '"node-1"')]
    claim = await cluster.client.get(PERSISTENT_VOLUME_CLAIM, "data", NS)
    assert SELECTED_NODE_ANNOTATION not in claim.metadata.annotations  # type: ignore[attr-defined]


async def test_enough_capacity_on_the_selected_nodes_topology_provisions(cluster: Cluster) -> None:
    await cluster.client.create(storage_class())
    await cluster.client.create(zonal_node("node-1", "zone-a"))
    await cluster.client.create(capacity("cap-a", "zone-a", "10Gi"))
    await cluster.client.create(handed_claim(selected="node-1"))
    await cluster.start()
    await cluster.sync()
    assert len(await cluster.volumes()) == 1


async def test_a_selected_node_that_does_not_exist_fails(cluster: Cluster) -> None:
    await cluster.client.create(storage_class())
    await cluster.client.create(handed_claim(selected="gone"))
    await cluster.start()
    await cluster.sync()
    assert await cluster.volumes() == []
    assert await cluster.events() == [
        ("Warning", "ProvisioningFailed",
         'failed to provision volume with StorageClass "fast": failed to get target node: node "gone" not '
         'found')]
