"""The PersistentVolumeController against a real in-process API server on a temporary SQLite store,
through the real client, as upstream's pkg/controller/volume/persistentvolume binder_test.go (TestSync)
has it: each case writes its volumes and claims, runs the informers (not the worker), syncs one claim or
volume once, and checks the volumes, claims and events left. Upstream's volume names, sizes, phases,
reclaim policies and annotations are kept; uids are the server's, so "the claim's uid" stands for it.
Where upstream leaves a Delete to a volume plugin, podsched's controller deletes the object itself.
Then the hand-over to a provisioner, and the whole loop (worker running): a claim binds to a volume
that appears after it, and a deleted claim's volume is reclaimed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from cluster.api import errors, objects_pb2
from cluster.api.kinds import EVENT, PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM, STORAGE_CLASS
from cluster.api.persistentvolumes import (
    ANN_BETA_STORAGE_PROVISIONER,
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_STORAGE_PROVISIONER,
)
from cluster.api.volumes import SELECTED_NODE_ANNOTATION
from cluster.client import Client
from cluster.controllers import PersistentVolumeController
from cluster.controllers.persistentvolume import CLAIM_KEY_PREFIX, VOLUME_KEY_PREFIX
from tests.unit.test_apiserver_server import Harness

NS = "default"
SETTLE_TIMEOUT_S = 10.0
CLASS_WAIT = "wait"
CLASS_GOLD = "gold"
PROVISIONER = "example.com/disk"
#: Stands for the uid the server gave the claim a volume's claimRef names.
OWN_UID = "<the claim's uid>"
BOUND_BY = ANN_BOUND_BY_CONTROLLER
COMPLETED = ANN_BIND_COMPLETED
LABELS = {"foo": "true", "bar": "false"}


def new_volume(name: str, size: str, claim: str = "", *, uid: str = "", phase: str = "Available",
               policy: str = "Retain", class_name: str = "", annotations: Sequence[str] = (),
               labels: dict[str, str] | None = None, modes: Sequence[str] = ("ReadWriteOnce", "ReadOnlyMany"),
               ) -> objects_pb2.PersistentVolume:
    """newVolume: ``claim`` names the claim its claimRef points to, ``uid`` the uid there."""
    spec: dict[str, Any] = {"capacity": {"storage": size}, "accessModes": list(modes),
                            "persistentVolumeReclaimPolicy": policy, "storageClassName": class_name,
                            "hostPath": {"path": "/somepath"}}
    if claim:
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": NS,
                            "name": claim, "uid": uid}
    return json_format.ParseDict({
        "metadata": {"name": name, "labels": labels or {},
                     "annotations": {annotation: "yes" for annotation in annotations}},
        "spec": spec, "status": {"phase": phase},
    }, objects_pb2.PersistentVolume())


def new_claim(name: str, size: str, volume: str = "", *, phase: str = "Pending",
              class_name: str | None = None, annotations: Sequence[str] = (),
              selector: dict[str, str] | None = None,
              modes: Sequence[str] = ("ReadWriteOnce", "ReadOnlyMany"),
              extra_annotations: dict[str, str] | None = None) -> objects_pb2.PersistentVolumeClaim:
    spec: dict[str, Any] = {"accessModes": list(modes), "resources": {"requests": {"storage": size}},
                            "volumeName": volume, "volumeMode": "Filesystem"}
    if class_name is not None:
        spec["storageClassName"] = class_name
    if selector is not None:
        spec["selector"] = {"matchLabels": selector}
    meta = {"name": name, "namespace": NS,
            "annotations": {**{annotation: "yes" for annotation in annotations}, **(extra_annotations or {})}}
    return json_format.ParseDict({"metadata": meta, "spec": spec, "status": {"phase": phase}},
                                 objects_pb2.PersistentVolumeClaim())


def storage_class(name: str, mode: str = "Immediate",
                  provisioner: str = PROVISIONER) -> objects_pb2.StorageClass:
    return json_format.ParseDict({"metadata": {"name": name}, "provisioner": provisioner,
                                  "volumeBindingMode": mode, "reclaimPolicy": "Delete"},
                                 objects_pb2.StorageClass())


@dataclass(frozen=True)
class VolumeState:
    """What a case expects of a volume: its phase, the claim its claimRef names (bound: with that claim's
    uid), and the controller's annotation."""

    phase: str
    claim: str = ""
    #: The uid its claimRef names: OWN_UID for the claim's own (any when empty).
    uid: str = ""
    bound_by_controller: bool = False


@dataclass(frozen=True)
class ClaimState:
    phase: str
    volume: str = ""
    annotations: frozenset[str] = frozenset()
    capacity: str = ""


@dataclass
class Case:
    name: str
    volumes: list[objects_pb2.PersistentVolume]
    claims: list[objects_pb2.PersistentVolumeClaim]
    sync: str
    expected_volumes: dict[str, VolumeState | None]
    expected_claims: dict[str, ClaimState]
    events: list[str] = field(default_factory=list)
    classes: list[objects_pb2.StorageClass] = field(default_factory=list)


def bound(claim: str, *, by_controller: bool = True) -> VolumeState:
    return VolumeState("Bound", claim, OWN_UID, by_controller)


def claim_bound(volume: str, *annotations: str, capacity: str = "") -> ClaimState:
    return ClaimState("Bound", volume, frozenset(annotations), capacity)


PENDING = ClaimState("Pending")
AVAILABLE = VolumeState("Available")

CASES = [
    # [Unit test set 1] The user did not ask for a volume.
    Case("1-1 - successful bind", [new_volume("volume1-1", "1Gi")], [new_claim("claim1-1", "1Gi")],
         "claim1-1", {"volume1-1": bound("claim1-1")},
         {"claim1-1": claim_bound("volume1-1", BOUND_BY, COMPLETED, capacity="1Gi")}),
    Case("1-2 - noop", [new_volume("volume1-2", "1Gi")], [new_claim("claim1-2", "10Gi")], "claim1-2",
         {"volume1-2": AVAILABLE}, {"claim1-2": PENDING}, ["Normal FailedBinding"]),
    Case("1-3 - reset to Pending", [new_volume("volume1-3", "1Gi")],
         [new_claim("claim1-3", "10Gi", phase="Bound")], "claim1-3", {"volume1-3": AVAILABLE},
         {"claim1-3": PENDING}, ["Normal FailedBinding"]),
    Case("1-4 - smallest volume", [new_volume("volume1-4-1", "10Gi"), new_volume("volume1-4-2", "1Gi")],
         [new_claim("claim1-4", "1Gi")], "claim1-4",
         {"volume1-4-1": AVAILABLE, "volume1-4-2": bound("claim1-4")},
         {"claim1-4": claim_bound("volume1-4-2", BOUND_BY, COMPLETED, capacity="1Gi")}),
    Case("1-5 - prebound volume by name - success",
         [new_volume("volume1-5-1", "10Gi", "claim1-5"), new_volume("volume1-5-2", "1Gi")],
         [new_claim("claim1-5", "1Gi")], "claim1-5",
         {"volume1-5-1": bound("claim1-5", by_controller=False), "volume1-5-2": AVAILABLE},
         {"claim1-5": claim_bound("volume1-5-1", BOUND_BY, COMPLETED, capacity="10Gi")}),
    Case("1-6 - prebound volume by UID - success",
         [new_volume("volume1-6-1", "10Gi", "claim1-6", uid=OWN_UID),
          new_volume("volume1-6-2", "1Gi")],
         [new_claim("claim1-6", "1Gi")], "claim1-6",
         {"volume1-6-1": bound("claim1-6", by_controller=False), "volume1-6-2": AVAILABLE},
         {"claim1-6": claim_bound("volume1-6-1", BOUND_BY, COMPLETED, capacity="10Gi")}),
    Case("1-7 - prebound volume to different claim",
         [new_volume("volume1-7", "10Gi", "claim1-7", uid="uid1-777")], [new_claim("claim1-7", "1Gi")],
         "claim1-7", {"volume1-7": VolumeState("Available", "claim1-7")}, {"claim1-7": PENDING},
         ["Normal FailedBinding"]),
    Case("1-8 - complete bind after crash - PV bound",
         [new_volume("volume1-8", "1Gi", "claim1-8", uid=OWN_UID, annotations=[BOUND_BY])],
         [new_claim("claim1-8", "1Gi")], "claim1-8", {"volume1-8": bound("claim1-8")},
         {"claim1-8": claim_bound("volume1-8", BOUND_BY, COMPLETED, capacity="1Gi")}),
    Case("1-9 - complete bind after crash - PV status saved",
         [new_volume("volume1-9", "1Gi", "claim1-9", uid=OWN_UID, phase="Bound",
                     annotations=[BOUND_BY])],
         [new_claim("claim1-9", "1Gi")], "claim1-9", {"volume1-9": bound("claim1-9")},
         {"claim1-9": claim_bound("volume1-9", BOUND_BY, COMPLETED, capacity="1Gi")}),
    Case("1-10 - complete bind after crash - PVC bound",
         [new_volume("volume1-10", "1Gi", "claim1-10", uid=OWN_UID, phase="Bound",
                     annotations=[BOUND_BY])],
         [new_claim("claim1-10", "1Gi", "volume1-10", annotations=[BOUND_BY, COMPLETED])], "claim1-10",
         {"volume1-10": bound("claim1-10")},
         {"claim1-10": claim_bound("volume1-10", BOUND_BY, COMPLETED, capacity="1Gi")}),
    Case("1-11 - bind when selector matches", [new_volume("volume1-1", "1Gi", labels=LABELS)],
         [new_claim("claim1-1", "1Gi", selector=LABELS)], "claim1-1", {"volume1-1": bound("claim1-1")},
         {"claim1-1": claim_bound("volume1-1", BOUND_BY, COMPLETED, capacity="1Gi")}),
    Case("1-12 - do not bind when selector does not match", [new_volume("volume1-1", "1Gi")],
         [new_claim("claim1-1", "1Gi", selector=LABELS)], "claim1-1", {"volume1-1": AVAILABLE},
         {"claim1-1": PENDING}, ["Normal FailedBinding"]),
    Case("1-13 - delayed binding", [new_volume("volume1-1", "1Gi", class_name=CLASS_WAIT)],
         [new_claim("claim1-1", "1Gi", class_name=CLASS_WAIT)], "claim1-1", {"volume1-1": AVAILABLE},
         {"claim1-1": PENDING}, ["Normal WaitForFirstConsumer"],
         classes=[storage_class(CLASS_WAIT, "WaitForFirstConsumer")]),
    Case("1-14 - successful prebound PV", [new_volume("volume1-1", "1Gi", "claim1-1", class_name=CLASS_WAIT)],
         [new_claim("claim1-1", "1Gi", class_name=CLASS_WAIT)], "claim1-1",
         {"volume1-1": bound("claim1-1", by_controller=False)},
         {"claim1-1": claim_bound("volume1-1", BOUND_BY, COMPLETED, capacity="1Gi")},
         classes=[storage_class(CLASS_WAIT, "WaitForFirstConsumer")]),
    Case("1-15 - successful prebound PVC",
         [new_volume("volume1-15-1", "10Gi"), new_volume("volume1-15-2", "1Gi")],
         [new_claim("claim1-15", "1Gi", "volume1-15-1")], "claim1-15",
         {"volume1-15-1": bound("claim1-15"), "volume1-15-2": AVAILABLE},
         {"claim1-15": claim_bound("volume1-15-1", COMPLETED, capacity="10Gi")}),
    Case("1-16 - prebound PVC to a volume without its access mode", [new_volume("volume1-16", "1Gi")],
         [new_claim("claim1-16", "1Gi", "volume1-16", modes=["ReadWriteMany"])], "claim1-16",
         {"volume1-16": AVAILABLE}, {"claim1-16": ClaimState("Pending", "volume1-16")},
         ["Warning VolumeMismatch"]),
    Case("1-17 - skip non-available PV if it's not pre-bind",
         [new_volume("volume1-17-pending", "1Gi", phase="Pending"),
          new_volume("volume1-17-failed", "1Gi", phase="Failed"),
          new_volume("volume1-17-released", "1Gi", phase="Released")],
         [new_claim("claim1-17", "1Gi")], "claim1-17",
         {"volume1-17-pending": VolumeState("Pending"), "volume1-17-failed": VolumeState("Failed"),
          "volume1-17-released": VolumeState("Released")},
         {"claim1-17": PENDING}, ["Normal FailedBinding"]),
    Case("1-18 - successful pre-bound PV to PVC provisioning",
         [new_volume("volume1-18", "1Gi", "claim1-18", uid=OWN_UID, class_name=CLASS_WAIT)],
         [new_claim("claim1-18", "1Gi", class_name=CLASS_WAIT)], "claim1-18",
         {"volume1-18": bound("claim1-18", by_controller=False)},
         {"claim1-18": claim_bound("volume1-18", BOUND_BY, COMPLETED, capacity="1Gi")},
         classes=[storage_class(CLASS_WAIT, "WaitForFirstConsumer")]),
    # [Unit test set 2] The user asked for a volume by name.
    Case("2-1 - claim prebound to non-existing volume - noop", [new_volume("volume2-1", "10Gi")],
         [new_claim("claim2-1", "10Gi", "volume2-1-missing")], "claim2-1", {"volume2-1": AVAILABLE},
         {"claim2-1": ClaimState("Pending", "volume2-1-missing")}),
    Case("2-3 - claim prebound to unbound volume", [new_volume("volume2-3", "1Gi")],
         [new_claim("claim2-3", "1Gi", "volume2-3")], "claim2-3", {"volume2-3": bound("claim2-3")},
         {"claim2-3": claim_bound("volume2-3", COMPLETED, capacity="1Gi")}),
    Case("2-5 - claim prebound to volume bound to another claim",
         [new_volume("volume2-5", "1Gi", "claim2-5-other", uid="uid2-5-other", phase="Bound")],
         [new_claim("claim2-5", "1Gi", "volume2-5")], "claim2-5",
         {"volume2-5": VolumeState("Bound", "claim2-5-other", "uid2-5-other")},
         {"claim2-5": ClaimState("Pending", "volume2-5")}, ["Warning FailedBinding"]),
    # [Unit test set 3] Claims bound before.
    Case("3-1 - bound claim with missing VolumeName", [],
         [new_claim("claim3-1", "10Gi", phase="Bound", annotations=[BOUND_BY, COMPLETED])], "claim3-1", {},
         {"claim3-1": ClaimState("Lost", "", frozenset({BOUND_BY, COMPLETED}))}, ["Warning ClaimLost"]),
    Case("3-2 - bound claim with missing volume", [],
         [new_claim("claim3-2", "10Gi", "volume3-2", phase="Bound", annotations=[BOUND_BY, COMPLETED])],
         "claim3-2", {},
         {"claim3-2": ClaimState("Lost", "volume3-2", frozenset({BOUND_BY, COMPLETED}))},
         ["Warning ClaimLost"]),
    Case("3-3 - bound claim with unbound volume", [new_volume("volume3-3", "10Gi", phase="Pending")],
         [new_claim("claim3-3", "10Gi", "volume3-3", phase="Pending", annotations=[BOUND_BY, COMPLETED])],
         "claim3-3", {"volume3-3": bound("claim3-3")},
         {"claim3-3": claim_bound("volume3-3", BOUND_BY, COMPLETED, capacity="10Gi")}),
    Case("3-5 - bound claim with bound volume of another claim",
         [new_volume("volume3-5", "10Gi", "claim3-5", uid="uid3-5-other", phase="Bound")],
         [new_claim("claim3-5", "10Gi", "volume3-5", phase="Bound", annotations=[BOUND_BY, COMPLETED])],
         "claim3-5", {"volume3-5": VolumeState("Bound", "claim3-5", "uid3-5-other")},
         {"claim3-5": ClaimState("Lost", "volume3-5", frozenset({BOUND_BY, COMPLETED}))},
         ["Warning ClaimMisbound"]),
    # [Unit test set 4] Volumes.
    Case("4-1 - clean volume", [new_volume("volume4-1", "1Gi", phase="Pending")], [], "volume:volume4-1",
         {"volume4-1": AVAILABLE}, {}),
    Case("4-2 - clean volume with claimRef to a claim by name",
         [new_volume("volume4-2", "1Gi", "claim4-2", phase="Pending")], [], "volume:volume4-2",
         {"volume4-2": VolumeState("Available", "claim4-2")}, {}),
    Case("4-3 - released volume, claim gone (Retain)",
         [new_volume("volume4-3", "10Gi", "claim4-3", uid="uid4-3", phase="Bound")], [], "volume:volume4-3",
         {"volume4-3": VolumeState("Released", "claim4-3", "uid4-3")}, {}),
    Case("4-3b - released volume, claim gone (Delete)",
         [new_volume("volume4-3b", "10Gi", "claim4-3b", uid="uid4-3b", phase="Bound", policy="Delete")], [],
         "volume:volume4-3b", {"volume4-3b": None}, {}),
    Case("4-3c - released volume, claim gone (Recycle)",
         [new_volume("volume4-3c", "10Gi", "claim4-3c", uid="uid4-3c", phase="Bound", policy="Recycle",
                     annotations=[BOUND_BY])], [], "volume:volume4-3c", {"volume4-3c": AVAILABLE}, {}),
    Case("4-8 - provisioned volume of a claim bound to another volume (Delete)",
         [new_volume("volume4-8", "10Gi", "claim4-8", uid=OWN_UID, phase="Bound", policy="Delete",
                     annotations=[BOUND_BY, ANN_DYNAMICALLY_PROVISIONED])],
         [new_claim("claim4-8", "10Gi", "volume4-8-other", phase="Bound", annotations=[BOUND_BY, COMPLETED])],
         "volume:volume4-8", {"volume4-8": None},
         {"claim4-8": ClaimState("Bound", "volume4-8-other", frozenset({BOUND_BY, COMPLETED}))}),
    Case("4-4 - volume bound to a claim with a different uid",
         [new_volume("volume4-4", "10Gi", "claim4-4", uid="uid4-4-old", phase="Bound")],
         [new_claim("claim4-4", "10Gi")], "volume:volume4-4",
         {"volume4-4": VolumeState("Released", "claim4-4", "uid4-4-old")}, {"claim4-4": PENDING}),
    Case("4-5 - synchronize volume bound by controller to a claim bound to another volume",
         [new_volume("volume4-5", "10Gi", "claim4-5", uid=OWN_UID, phase="Bound",
                     annotations=[BOUND_BY])],
         [new_claim("claim4-5", "10Gi", "volume4-5-other", phase="Bound", annotations=[BOUND_BY, COMPLETED])],
         "volume:volume4-5", {"volume4-5": AVAILABLE},
         {"claim4-5": ClaimState("Bound", "volume4-5-other", frozenset({BOUND_BY, COMPLETED}))}),
    Case("4-6 - synchronize volume bound by user to a claim bound to another volume",
         [new_volume("volume4-6", "10Gi", "claim4-6", uid=OWN_UID, phase="Bound")],
         [new_claim("claim4-6", "10Gi", "volume4-6-other", phase="Bound", annotations=[BOUND_BY, COMPLETED])],
         "volume:volume4-6", {"volume4-6": VolumeState("Available", "claim4-6")},
         {"claim4-6": ClaimState("Bound", "volume4-6-other", frozenset({BOUND_BY, COMPLETED}))}),
    Case("4-7 - synchronize volume bound to a claim that is not bound yet",
         [new_volume("volume4-7", "10Gi", "claim4-7", uid=OWN_UID, phase="Bound",
                     annotations=[BOUND_BY])],
         [new_claim("claim4-7", "10Gi")], "volume:volume4-7", {"volume4-7": bound("claim4-7")},
         {"claim4-7": PENDING}),
]


# --------------------------------------------------------------------------------------------- harness


class Cluster:
    """An API server, a client, and a PersistentVolumeController whose informers run without its worker."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.controller = PersistentVolumeController(client)
        self._running: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Run the informers until they have synced, then empty the queue they filled."""
        informers = list(self.controller._informers().values())
        self._running = [asyncio.create_task(informer.run()) for informer in informers]
        for informer in informers:
            await informer.wait_synced()
        queue = self.controller._queue
        while queue.has_ready():
            await queue.get()

    async def stop(self) -> None:
        for task in self._running:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def write(self, case: Case) -> dict[str, str]:
        """Create the case's classes, claims (with their status), then volumes (claimRef uids resolved);
        returns each claim's uid by name."""
        for made in case.classes:
            await self.client.create(made)
        uids: dict[str, str] = {}
        for claim in case.claims:
            created = await self.client.create(claim)
            created.status.CopyFrom(claim.status)
            await self.client.update_status(created)
            uids[claim.metadata.name] = created.metadata.uid
        for volume in case.volumes:
            if volume.spec.claim_ref.uid == OWN_UID:
                volume.spec.claim_ref.uid = uids[volume.spec.claim_ref.name]
            created = await self.client.create(volume)
            created.status.CopyFrom(volume.status)
            await self.client.update_status(created)
        return uids

    async def volumes(self) -> dict[str, objects_pb2.PersistentVolume]:
        listed = (await self.client.list(PERSISTENT_VOLUME)).items
        return {volume.metadata.name: volume for volume in listed}  # type: ignore[attr-defined]

    async def claims(self) -> dict[str, objects_pb2.PersistentVolumeClaim]:
        listed = (await self.client.list(PERSISTENT_VOLUME_CLAIM, NS)).items
        return {claim.metadata.name: claim for claim in listed}  # type: ignore[attr-defined]

    async def events(self) -> list[str]:
        listed = (await self.client.list(EVENT, NS)).items
        return sorted(f"{event.type} {event.reason}" for event in listed)  # type: ignore[attr-defined]


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


def sync_key(case: Case) -> str:
    return case.sync if case.sync.startswith(VOLUME_KEY_PREFIX) else f"{CLAIM_KEY_PREFIX}{NS}/{case.sync}"


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
async def test_sync(cluster: Cluster, case: Case) -> None:
    uids = await cluster.write(case)
    await cluster.start()
    await cluster.controller._sync(sync_key(case))

    volumes = await cluster.volumes()
    for name, expected in case.expected_volumes.items():
        if expected is None:
            assert name not in volumes, f"volume {name} should be deleted"
            continue
        got = volumes[name]
        ref = got.spec.claim_ref
        assert got.status.phase == expected.phase, name
        assert ref.name == expected.claim, name
        if expected.uid:
            assert ref.uid == (uids[expected.claim] if expected.uid == OWN_UID else expected.uid), name
        assert (BOUND_BY in got.metadata.annotations) is expected.bound_by_controller, name
    claims = await cluster.claims()
    for name, wanted in case.expected_claims.items():
        claim = claims[name]
        assert claim.status.phase == wanted.phase, name
        assert claim.spec.volume_name == wanted.volume, name
        marked = {a for a in (BOUND_BY, COMPLETED) if a in claim.metadata.annotations}
        assert marked == wanted.annotations, name
        assert claim.status.capacity.get("storage", "") == wanted.capacity, name
        if wanted.phase == "Bound" and wanted.volume in volumes:
            assert list(claim.status.access_modes) == list(volumes[wanted.volume].spec.access_modes)
    assert await cluster.events() == sorted(case.events)


async def test_a_claim_bound_by_the_controller_to_a_claimed_volume_is_an_error(cluster: Cluster) -> None:
    """2-7: claim bound by the controller (without bind-completed) to a volume that names another claim:
    never so without someone removing the annotation; an error, reported."""
    case = Case("2-7", [new_volume("volume2-7", "1Gi", "claim2-7-other", uid="uid2-7-other", phase="Bound")],
                [new_claim("claim2-7", "1Gi", "volume2-7", annotations=[BOUND_BY])], "claim2-7", {}, {})
    await cluster.write(case)
    await cluster.start()
    with pytest.raises(errors.Invalid) as raised:
        await cluster.controller._sync(sync_key(case))
    assert raised.value.message == ('invalid binding of claim "default/claim2-7" to volume "volume2-7": '
                                    'volume already claimed by "default/claim2-7-other"')
    assert await cluster.events() == ["Warning FailedBinding"]


# ------------------------------------------------------------------------------------------ provisioning


@pytest.mark.parametrize(("mode", "selected"), [("Immediate", False), ("WaitForFirstConsumer", True)])
async def test_a_claim_without_a_volume_is_handed_to_its_provisioner(cluster: Cluster, mode: str,
                                                                     selected: bool) -> None:
    """provisionClaimOperationExternal: the provisioner's annotations and an ExternalProvisioning event."""
    chosen = {SELECTED_NODE_ANNOTATION: "node-1"} if selected else {}
    made = new_claim("claim11-1", "1Gi", class_name=CLASS_GOLD, extra_annotations=chosen)
    case = Case("provision", [], [made],
                "claim11-1", {}, {}, classes=[storage_class(CLASS_GOLD, mode)])
    await cluster.write(case)
    await cluster.start()
    await cluster.controller._sync(sync_key(case))
    claim = (await cluster.claims())["claim11-1"]
    assert claim.metadata.annotations[ANN_STORAGE_PROVISIONER] == PROVISIONER
    assert claim.metadata.annotations[ANN_BETA_STORAGE_PROVISIONER] == PROVISIONER
    assert claim.status.phase == "Pending" and not claim.spec.volume_name
    [event] = (await cluster.client.list(EVENT, NS)).items
    assert (event.type, event.reason) == ("Normal", "ExternalProvisioning")  # type: ignore[attr-defined]
    assert event.message == (  # type: ignore[attr-defined]
        f"Waiting for a volume to be created either by the external provisioner '{PROVISIONER}' or manually "
        "by the system administrator. If volume creation is delayed, please verify that the provisioner is "
        "running and correctly registered.")


async def test_a_class_nobody_provisions_for_fails_provisioning(cluster: Cluster) -> None:
    case = Case("no provisioner", [], [new_claim("claim11-2", "1Gi", class_name="local")], "claim11-2",
                {}, {},
                classes=[storage_class("local", provisioner="kubernetes.io/no-provisioner")])
    await cluster.write(case)
    await cluster.start()
    await cluster.controller._sync(sync_key(case))
    claim = (await cluster.claims())["claim11-2"]
    assert ANN_STORAGE_PROVISIONER not in claim.metadata.annotations
    events = (await cluster.client.list(EVENT, NS)).items
    assert [(e.type, e.reason, e.message) for e in events] == [  # type: ignore[attr-defined]
        ("Warning", "ProvisioningFailed", "no volume plugin matched name: kubernetes.io/no-provisioner")]


async def test_a_missing_class_fails_provisioning(cluster: Cluster) -> None:
    case = Case("missing class", [], [new_claim("claim11-3", "1Gi", class_name="nope")], "claim11-3", {}, {})
    await cluster.write(case)
    await cluster.start()
    await cluster.controller._sync(sync_key(case))
    events = (await cluster.client.list(EVENT, NS)).items
    assert [(e.type, e.reason, e.message) for e in events] == [  # type: ignore[attr-defined]
        ("Warning", "ProvisioningFailed", f'{STORAGE_CLASS.resource} "nope" not found')]


@pytest.mark.parametrize(("class_name", "expected"), [(None, CLASS_GOLD), ("", "")])
async def test_a_claim_naming_no_class_gets_the_default_class_that_came_later(
        cluster: Cluster, class_name: str | None, expected: str) -> None:
    """assignDefaultStorageClass: a claim without spec.storageClassName gets the default class made after
    it (the admission gave it none); one that asks for "" keeps it."""
    await cluster.client.create(new_claim("claim13-1", "1Gi", class_name=class_name))
    default = storage_class(CLASS_GOLD)
    default.metadata.annotations["storageclass.kubernetes.io/is-default-class"] = "true"
    await cluster.client.create(default)
    await cluster.start()
    await cluster.controller._sync(f"{CLAIM_KEY_PREFIX}{NS}/claim13-1")
    claim = (await cluster.claims())["claim13-1"]
    assert claim.spec.storage_class_name == expected
    assert claim.status.phase == "Pending" and not claim.spec.volume_name


# ------------------------------------------------------------------------------------------ the loop


async def eventually(check: Any) -> None:
    async with asyncio.timeout(SETTLE_TIMEOUT_S):
        while True:
            if await check():
                return
            await asyncio.sleep(0.02)


async def test_a_waiting_claim_binds_to_a_volume_that_comes_and_goes_with_it(tmp_path: Path) -> None:
    """Without a resync, a new Available volume brings the claims of its class back; deleting the claim
    releases the volume and its Delete policy deletes it."""
    async with Harness(tmp_path) as api:
        assert api.server is not None
        async with Client(api.server.address) as client:
            controller = PersistentVolumeController(client)
            running = asyncio.create_task(controller.run())
            try:
                await controller.wait_synced()
                await client.create(new_claim("claim", "1Gi"))
                await client.create(new_volume("volume", "2Gi", policy="Delete", phase=""))

                async def claim_bound() -> bool:
                    claim = await client.get(PERSISTENT_VOLUME_CLAIM, "claim", NS)
                    return claim.status.phase == "Bound"  # type: ignore[attr-defined,no-any-return]

                await eventually(claim_bound)
                volume = await client.get(PERSISTENT_VOLUME, "volume")
                assert volume.status.phase == "Bound"  # type: ignore[attr-defined]
                await client.delete(PERSISTENT_VOLUME_CLAIM, "claim", NS)

                async def volume_gone() -> bool:
                    return not (await client.list(PERSISTENT_VOLUME)).items

                await eventually(volume_gone)
            finally:
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running
