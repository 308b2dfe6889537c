"""What `podsched simulate` reports per pod (PodOutcome) and per PodGroup (PodGroupOutcome), the JSON
document, and the store wrapper that tells the driver the revision of the last write of each kind."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import json_format

from cluster.api import kinds, objects_pb2
from cluster.simulate import PodGroupOutcome, PodOutcome, outcomes_json
from cluster.simulate.writes import WriteTrackingStore
from store.base import BatchReader, KeyValue, TxnOp, WriteResult, get_many
from store.sqlite import SqliteStore
from tests import builders


def pod(name: str, namespace: str = "default", node: str = "", nominated: str = "",
        conditions: tuple[tuple[str, str, str], ...] = ()) -> objects_pb2.Pod:
    listed = [{"type": t, "status": s, "message": m} for t, s, m in conditions]
    return builders.pod(name, namespace, node_name=node, nominated=nominated, status={"conditions": listed})


@pytest.mark.parametrize(
    ("obj", "deleted", "expected"),
    [
        (pod("a", node="n1", conditions=(("PodScheduled", "True", ""),)), False,
         {"namespace": "default", "name": "a", "node": "n1", "nominatedNode": None, "deleted": False,
          "reason": None}),
        (pod("b", conditions=(("PodScheduled", "False", "0/1 nodes are available: 1 Insufficient cpu."),)),
         False,
         {"namespace": "default", "name": "b", "node": None, "nominatedNode": None, "deleted": False,
          "reason": "0/1 nodes are available: 1 Insufficient cpu."}),
        (pod("c", nominated="n2", conditions=(("Ready", "False", "not ready"),)), False,
         {"namespace": "default", "name": "c", "node": None, "nominatedNode": "n2", "deleted": False,
          "reason": None}),
        (pod("victim", namespace="batch", node="n2"), True,
         {"namespace": "batch", "name": "victim", "node": "n2", "nominatedNode": None, "deleted": True,
          "reason": None}),
    ],
    ids=["bound", "unschedulable", "nominated-other-condition", "deleted-victim"],
)
def test_pod_outcome(obj: objects_pb2.Pod, deleted: bool, expected: dict[str, object]) -> None:
    assert PodOutcome.of(obj, deleted=deleted).to_json() == expected


def test_result_is_sorted_by_namespace_then_name() -> None:
    outcomes = [PodOutcome.of(pod(name, namespace), deleted=False)
                for namespace, name in (("b", "a"), ("a", "z"), ("a", "b"))]
    assert [(p["namespace"], p["name"]) for p in outcomes_json(outcomes)["pods"]] == [
        ("a", "b"), ("a", "z"), ("b", "a"),
    ]


def upstream_group(
    name: str, policy: dict[str, object], conditions: tuple[tuple[str, str, str], ...] = ()
) -> objects_pb2.PodGroup:
    status = {"conditions": [{"type": kind, "status": status, "reason": "Unschedulable", "message": message}
                             for kind, status, message in conditions]} if conditions else None
    return builders.pod_group(name, kind="PodGroup", spec={"schedulingPolicy": policy}, status=status)


def coscheduling_group(name: str, min_member: int) -> objects_pb2.PodGroup:
    return builders.pod_group(name, api_version=builders.COSCHEDULING, kind="PodGroup", min_member=min_member)


def member(name: str, group: str, node: str = "", namespace: str = "default") -> objects_pb2.Pod:
    return builders.pod(name, namespace, node_name=node, spec={"schedulingGroup": {"podGroupName": group}})


def labelled_member(name: str, group: str, node: str = "") -> objects_pb2.Pod:
    return builders.pod(name, node_name=node, labels={"scheduling.x-k8s.io/pod-group": group})


UNSCHEDULABLE = "pod group default/g: 1/3 pods placeable, minCount 3: ..."


@pytest.mark.parametrize(
    ("group", "pods", "expected"),
    [
        (upstream_group("g", {"gang": {"minCount": 2}}),
         [member("a", "g", "n1"), member("b", "g", "n1"), member("c", "g"), member("x", "other", "n1"),
          member("y", "g", "n1", namespace="elsewhere"), builders.pod("plain", node_name="n1")],
         {"minCount": 2, "members": 3, "bound": 2, "admitted": True, "reason": None}),
        (upstream_group("g", {"gang": {"minCount": 3}},
                        (("PodGroupInitiallyScheduled", "False", UNSCHEDULABLE),)),
         [member("a", "g"), member("b", "g"), member("c", "g")],
         {"minCount": 3, "members": 3, "bound": 0, "admitted": False, "reason": UNSCHEDULABLE}),
        # Gated (fewer members than minCount): the scheduler never tried it, so there is no reason.
        (upstream_group("g", {"gang": {"minCount": 3}}), [member("a", "g")],
         {"minCount": 3, "members": 1, "bound": 0, "admitted": False, "reason": None}),
        (upstream_group("g", {"basic": {}}), [member("a", "g", "n1"), member("b", "g")],
         {"minCount": None, "members": 2, "bound": 1, "admitted": None, "reason": None}),
        (coscheduling_group("g", 2), [labelled_member("a", "g", "n1"), labelled_member("b", "g", "n1")],
         {"minCount": 2, "members": 2, "bound": 2, "admitted": True, "reason": None}),
        (coscheduling_group("g", 0), [labelled_member("a", "g")],
         {"minCount": None, "members": 1, "bound": 0, "admitted": None, "reason": None}),
    ],
    ids=["admitted-gang", "unschedulable-gang", "gated-gang", "basic", "coscheduling", "min-member-zero"],
)
def test_pod_group_outcome(
    group: objects_pb2.PodGroup, pods: list[objects_pb2.Pod], expected: dict[str, object]
) -> None:
    outcome = PodGroupOutcome.of(group, pods).to_json()
    assert outcome == {"namespace": "default", "name": "g", "apiVersion": group.api_version, **expected}


def test_pod_groups_section_only_for_a_scenario_with_groups() -> None:
    pods = [PodOutcome.of(pod("a"), deleted=False)]
    assert list(outcomes_json(pods)) == ["pods"]
    groups = [PodGroupOutcome.of(coscheduling_group(name, 1), []) for name in ("z", "b")]
    document = outcomes_json(pods, groups)
    assert [group["name"] for group in document["podGroups"]] == ["b", "z"]
    assert outcomes_json(pods, [])["podGroups"] == []


class ScriptedStore:
    """Answers writes with the next revision; keys containing "fail" fail their compare."""

    def __init__(self) -> None:
        self.revision = 10

    async def _answer(self, key: str) -> WriteResult:
        if "fail" in key:
            return WriteResult(False, self.revision, KeyValue(key, b"", 1, 1))
        self.revision += 1
        return WriteResult(True, self.revision, None)

    async def create(self, key: str, value: bytes, guards=()) -> WriteResult:
        return await self._answer(key)

    async def update(self, key: str, value: bytes, expected_revision: int | None, guards=()) -> WriteResult:
        return await self._answer(key)

    async def delete(self, key: str, expected_revision: int | None, guards=()) -> WriteResult:
        return await self._answer(key)


async def test_last_write_per_kind() -> None:
    store = WriteTrackingStore(ScriptedStore())  # type: ignore[arg-type]
    await store.create("/registry/pods/default/a", b"")
    await store.create("/registry/nodes/n1", b"")
    await store.update("/registry/pods/default/a", b"", 11)
    await store.update("/registry/pods/default/fail", b"", 1)  # a failed compare is no write
    await store.delete("/registry/events/default/e1", None)
    assert store.last_write(kinds.POD) == 13
    assert store.last_write(kinds.NODE) == 12
    assert store.last_write(kinds.EVENT) == 14
    assert store.last_write(kinds.PRIORITY_CLASS) == 0
    assert store.writes_in_flight == 0


class BatchReadingStore(ScriptedStore):
    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    async def get_many(self, keys: list[str]) -> list[KeyValue | None]:
        self.batches.append(list(keys))
        return [KeyValue(key, b"v", 1, 1) if "missing" not in key else None for key in keys]


async def test_get_many_is_one_read_of_the_wrapped_store() -> None:
    inner = BatchReadingStore()
    store = WriteTrackingStore(inner)  # type: ignore[arg-type]
    assert isinstance(store, BatchReader)
    values = await get_many(store, ["/registry/pods/default/a", "/registry/nodes/missing"])  # type: ignore[arg-type]
    assert values == [KeyValue("/registry/pods/default/a", b"v", 1, 1), None]
    assert inner.batches == [["/registry/pods/default/a", "/registry/nodes/missing"]]


async def test_a_transaction_counts_as_a_write_of_each_kind_it_touches(tmp_path: Path) -> None:
    inner = await SqliteStore.open(tmp_path)
    store = WriteTrackingStore(inner)
    try:
        await store.create("/registry/nodes/n1", b"")
        result = await store.txn([
            TxnOp.create("/registry/pods/default/a", b""), TxnOp.update("/registry/nodes/n1", b"x", None),
        ])
        assert result.succeeded
        failed = await store.txn([
            TxnOp.create("/registry/events/default/e", b""), TxnOp.delete("/nope", None),
        ])
        assert not failed.succeeded
        assert store.last_write(kinds.POD) == result.revision
        assert store.last_write(kinds.NODE) == result.revision
        assert store.last_write(kinds.EVENT) == 0
        assert store.writes_in_flight == 0
    finally:
        await store.close()


# ------------------------------------------------------------------------------------ resource claims


def claim(name: str, *results: dict[str, object]) -> objects_pb2.ResourceClaim:
    """A claim of namespace default allocated ``results`` (none: not allocated)."""
    data: dict[str, object] = {"metadata": {"name": name, "namespace": "default"}}
    if results:
        data["status"] = {"allocation": {"devices": {"results": list(results)}}}
    return json_format.ParseDict(data, objects_pb2.ResourceClaim())


def test_claims_of_a_pod_with_their_devices() -> None:
    gpu = {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}
    share = {"request": "mem", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-1",
             "shareID": "9a1f", "consumedCapacity": {"memory": "10Gi"}}
    user = builders.pod("user", spec={"resourceClaims": [
        {"name": "whole", "resourceClaimTemplateName": "one-gpu"},
        {"name": "shared", "resourceClaimName": "slice-of-gpu"},
        {"name": "later", "resourceClaimTemplateName": "one-gpu"},
        {"name": "missing", "resourceClaimName": "nowhere"},
    ]}, status={"resourceClaimStatuses": [{"name": "whole", "resourceClaimName": "user-whole-x7k2p"}]})
    claims = {("default", c.metadata.name): c
              for c in (claim("user-whole-x7k2p", gpu), claim("slice-of-gpu", share))}
    document = PodOutcome.of(user, deleted=False, claims=claims).to_json()
    assert document["claims"] == [
        {"name": "whole", "resourceClaim": "user-whole-x7k2p",
         "devices": [{**gpu, "shareID": None, "consumedCapacity": {}}]},
        {"name": "shared", "resourceClaim": "slice-of-gpu", "devices": [share]},
        {"name": "later", "resourceClaim": None, "devices": []},
        {"name": "missing", "resourceClaim": "nowhere", "devices": []},
    ]


def test_a_pod_without_claims_has_no_claims_key() -> None:
    document = PodOutcome.of(pod("plain", node="n1"), deleted=False, claims={}).to_json()
    assert "claims" not in document
