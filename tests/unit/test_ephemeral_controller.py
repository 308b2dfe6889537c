"""The EphemeralVolumeController against a real in-process API server, through the real client, as
upstream's pkg/controller/volume/ephemeral controller_test.go (TestSyncHandler) has it: each case writes
its pods and claims, runs the informers (not the worker), syncs one pod once and checks the claims left.
Then what podsched adds for want of a garbage collector: a deleted pod's claims are deleted, a claim
owned by a live pod or by nobody is kept."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from cluster.api import errors, objects_pb2
from cluster.api.kinds import PERSISTENT_VOLUME_CLAIM, POD
from cluster.client import Client
from cluster.controllers import EphemeralVolumeController
from cluster.controllers.ephemeral import CLAIM_KEY_PREFIX, POD_KEY_PREFIX
from tests.builders import IMAGE, pod
from tests.unit.test_apiserver_server import Harness

NS = "my-namespace"
POD_NAME = "test-pod"
VOLUME = "my-volume"
CLAIM_NAME = f"{POD_NAME}-{VOLUME}"
TEMPLATE: dict[str, Any] = {
    "metadata": {"labels": {"app": "db"}, "annotations": {"team": "storage"}},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
             "storageClassName": "fast"},
}


def ephemeral_pod(name: str = POD_NAME, *volumes: str) -> objects_pb2.Pod:
    spec = {"volumes": [{"name": volume, "ephemeral": {"volumeClaimTemplate": TEMPLATE}}
                        for volume in volumes or (VOLUME,)]}
    return pod(name, NS, spec=spec, image=IMAGE)


def claim(name: str = CLAIM_NAME, owner: objects_pb2.Pod | None = None) -> objects_pb2.PersistentVolumeClaim:
    made = json_format.ParseDict({"metadata": {"name": name, "namespace": NS}, "spec": TEMPLATE["spec"]},
                                 objects_pb2.PersistentVolumeClaim())
    if owner is not None:
        made.metadata.owner_references.add(api_version="v1", kind="Pod", name=owner.metadata.name,
                                           uid=owner.metadata.uid, controller=True, block_owner_deletion=True)
    return made


class Cluster:
    def __init__(self, client: Client) -> None:
        self.client = client
        self.controller = EphemeralVolumeController(client)
        self._running: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        informers = list(self.controller._informers().values())
        self._running = [asyncio.create_task(informer.run()) for informer in informers]
        for informer in informers:
            await informer.wait_synced()
        while self.controller._queue.has_ready():
            await self.controller._queue.get()

    async def stop(self) -> None:
        for task in self._running:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def claims(self) -> list[objects_pb2.PersistentVolumeClaim]:
        listed = (await self.client.list(PERSISTENT_VOLUME_CLAIM, NS)).items
        return sorted(listed, key=lambda c: c.metadata.name)  # type: ignore[no-any-return,attr-defined]


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


def assert_made_for(made: objects_pb2.PersistentVolumeClaim, owner: objects_pb2.Pod,
                    volume: str = VOLUME) -> None:
    meta = made.metadata
    assert meta.name == f"{owner.metadata.name}-{volume}"
    assert dict(meta.labels) == {"app": "db"}
    assert dict(meta.annotations) == {"team": "storage"}
    [ref] = meta.owner_references
    assert (ref.api_version, ref.kind, ref.name, ref.uid, ref.controller, ref.block_owner_deletion) == (
        "v1", "Pod", owner.metadata.name, owner.metadata.uid, True, True)
    assert list(made.spec.access_modes) == ["ReadWriteOnce"]
    assert made.spec.resources.requests["storage"] == "1Gi"
    assert made.spec.storage_class_name == "fast"


async def test_create(cluster: Cluster) -> None:
    owner = await cluster.client.create(ephemeral_pod())
    await cluster.start()
    await cluster.controller._sync(POD_KEY_PREFIX + f"{NS}/{POD_NAME}")
    [made] = await cluster.claims()
    assert_made_for(made, owner)


async def test_create_one_claim_per_volume(cluster: Cluster) -> None:
    owner = await cluster.client.create(ephemeral_pod(POD_NAME, "a", "b"))
    await cluster.start()
    await cluster.controller._sync(POD_KEY_PREFIX + f"{NS}/{POD_NAME}")
    first, second = await cluster.claims()
    assert_made_for(first, owner, "a")
    assert_made_for(second, owner, "b")


async def test_nop(cluster: Cluster) -> None:
    """The pod's claim exists already: nothing is written."""
    owner = await cluster.client.create(ephemeral_pod())
    existing = await cluster.client.create(claim(owner=owner))
    await cluster.start()
    await cluster.controller._sync(POD_KEY_PREFIX + f"{NS}/{POD_NAME}")
    [kept] = await cluster.claims()
    assert kept.metadata.resource_version == existing.metadata.resource_version


async def test_no_such_pod(cluster: Cluster) -> None:
    await cluster.start()
    await cluster.controller._sync(POD_KEY_PREFIX + f"{NS}/{POD_NAME}")
    assert await cluster.claims() == []


async def test_pod_deleted(cluster: Cluster) -> None:
    """A pod being deleted gets no claim."""
    terminating = ephemeral_pod()
    terminating.spec.node_name = "worker"
    terminating.spec.termination_grace_period_seconds = 3600
    await cluster.client.create(terminating)
    await cluster.client.delete(POD, POD_NAME, NS)
    await cluster.start()
    await cluster.controller._sync(POD_KEY_PREFIX + f"{NS}/{POD_NAME}")
    assert await cluster.claims() == []


async def test_no_volumes(cluster: Cluster) -> None:
    await cluster.client.create(pod(POD_NAME, NS, image=IMAGE))
    await cluster.start()
    await cluster.controller._sync(POD_KEY_PREFIX + f"{NS}/{POD_NAME}")
    assert await cluster.claims() == []


async def test_wrong_owner(cluster: Cluster) -> None:
    """A claim of the pod's claim name that the pod does not own is never adopted: the sync fails."""
    await cluster.client.create(ephemeral_pod())
    foreign = await cluster.client.create(claim())
    await cluster.start()
    with pytest.raises(errors.AlreadyExists) as raised:
        await cluster.controller._sync(POD_KEY_PREFIX + f"{NS}/{POD_NAME}")
    assert raised.value.message == (f"PVC {NS}/{CLAIM_NAME} was not created for pod {NS}/{POD_NAME} "
                                    "(pod is not owner)")
    [kept] = await cluster.claims()
    assert kept.metadata.resource_version == foreign.metadata.resource_version
    assert not kept.metadata.owner_references


async def test_the_claims_of_a_deleted_pod_are_deleted(cluster: Cluster) -> None:
    owner = await cluster.client.create(ephemeral_pod())
    await cluster.client.create(claim(owner=owner))
    other = await cluster.client.create(ephemeral_pod("other-pod"))
    await cluster.client.create(claim("other-pod-my-volume", owner=other))
    await cluster.client.create(claim("nobodys"))
    await cluster.client.delete(POD, POD_NAME, NS)
    await cluster.start()
    for made in await cluster.claims():
        await cluster.controller._sync(CLAIM_KEY_PREFIX + f"{NS}/{made.metadata.name}")
    assert [made.metadata.name for made in await cluster.claims()] == ["nobodys", "other-pod-my-volume"]


async def test_a_claim_of_a_pod_of_the_same_name_but_another_uid_is_deleted(cluster: Cluster) -> None:
    first = await cluster.client.create(ephemeral_pod())
    await cluster.client.create(claim(owner=first))
    await cluster.client.delete(POD, POD_NAME, NS)
    await cluster.client.create(ephemeral_pod())
    await cluster.start()
    await cluster.controller._sync(CLAIM_KEY_PREFIX + f"{NS}/{CLAIM_NAME}")
    assert await cluster.claims() == []
