"""The storage controllers inside the real `podsched apiserver` process (its default ``--controllers``),
on each store, through real gRPC: a claim binds to the smallest matching volume; a claim of a class with
a provisioner gets a volume made for it and bound, a pod's ephemeral volume gets its claim (and through
it a volume), and deleting the pod deletes the claim, whose volume its Delete policy deletes."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from cluster.api import errors, objects_pb2
from cluster.api.kinds import PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM, POD
from cluster.api.persistentvolumes import ANN_BIND_COMPLETED, ANN_DYNAMICALLY_PROVISIONED
from cluster.client import Client
from tests.integration.test_scheduler import eventually

PROVISIONER = "disk.csi.example.com"


def volume(name: str, size: str) -> objects_pb2.PersistentVolume:
    return json_format.ParseDict({
        "metadata": {"name": name},
        "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"], "storageClassName": "",
                 "persistentVolumeReclaimPolicy": "Retain", "hostPath": {"path": f"/data/{name}"}},
    }, objects_pb2.PersistentVolume())


def claim_spec(class_name: str, size: str = "1Gi") -> dict[str, Any]:
    return {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}},
            "storageClassName": class_name}


def claim(name: str, namespace: str, class_name: str) -> objects_pb2.PersistentVolumeClaim:
    return json_format.ParseDict({"metadata": {"name": name, "namespace": namespace},
                                  "spec": claim_spec(class_name)}, objects_pb2.PersistentVolumeClaim())


async def bound_claim(client: Client, name: str, namespace: str) -> objects_pb2.PersistentVolumeClaim | None:
    try:
        got = await client.get(PERSISTENT_VOLUME_CLAIM, name, namespace)
    except errors.NotFound:
        return None
    assert isinstance(got, objects_pb2.PersistentVolumeClaim)
    return got if got.status.phase == "Bound" else None


async def test_a_claim_binds_to_the_smallest_matching_volume(client: Client, namespace: str) -> None:
    small, large = f"{namespace}-small", f"{namespace}-large"
    await client.create(volume(large, "5Gi"))
    await client.create(volume(small, "2Gi"))

    async def both_available() -> bool | None:
        phases = [(await client.get(PERSISTENT_VOLUME, name)).status.phase  # type: ignore[attr-defined]
                  for name in (small, large)]
        return True if phases == ["Available", "Available"] else None

    # A volume is created Pending and matched once Available (as upstream, which skips other phases).
    await eventually(both_available, "the volumes available")
    made = await client.create(claim("data", namespace, ""))
    bound = await eventually(lambda: bound_claim(client, "data", namespace), "the claim bound")
    assert bound.spec.volume_name == small
    assert bound.metadata.annotations[ANN_BIND_COMPLETED] == "yes"
    assert dict(bound.status.capacity) == {"storage": "2Gi"}
    chosen = await client.get(PERSISTENT_VOLUME, small)
    assert isinstance(chosen, objects_pb2.PersistentVolume)
    assert chosen.status.phase == "Bound"
    assert (chosen.spec.claim_ref.name, chosen.spec.claim_ref.uid) == ("data", made.metadata.uid)
    other = await client.get(PERSISTENT_VOLUME, large)
    assert other.status.phase == "Available"  # type: ignore[attr-defined]


async def test_an_ephemeral_volume_is_provisioned_and_goes_with_its_pod(client: Client,
                                                                       namespace: str) -> None:
    class_name = f"{namespace}-fast"
    await client.create(json_format.ParseDict(
        {"metadata": {"name": class_name}, "provisioner": PROVISIONER, "volumeBindingMode": "Immediate"},
        objects_pb2.StorageClass()))
    template = {"metadata": {"labels": {"app": "db"}}, "spec": claim_spec(class_name, "3Gi")}
    pod = json_format.ParseDict({
        "metadata": {"name": "db", "namespace": namespace},
        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}],
                 "volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": template}}]},
    }, objects_pb2.Pod())
    owner = await client.create(pod)

    bound = await eventually(lambda: bound_claim(client, "db-scratch", namespace),
                             "the ephemeral claim bound")
    assert [(ref.kind, ref.uid, ref.controller) for ref in bound.metadata.owner_references] == [
        ("Pod", owner.metadata.uid, True)]
    assert bound.spec.volume_name == f"pvc-{bound.metadata.uid}"
    made = await client.get(PERSISTENT_VOLUME, bound.spec.volume_name)
    assert isinstance(made, objects_pb2.PersistentVolume)
    assert made.metadata.annotations[ANN_DYNAMICALLY_PROVISIONED] == PROVISIONER
    assert (made.spec.csi.driver, dict(made.spec.capacity)) == (PROVISIONER, {"storage": "3Gi"})
    assert made.status.phase == "Bound"

    await client.delete(POD, "db", namespace)

    async def all_gone() -> bool | None:
        claims = (await client.list(PERSISTENT_VOLUME_CLAIM, namespace)).items
        try:
            await client.get(PERSISTENT_VOLUME, made.metadata.name)
        except errors.NotFound:
            return True if not claims else None
        return None

    await eventually(all_gone, "the claim and its volume deleted with the pod")
