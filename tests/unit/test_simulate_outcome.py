"""What `podsched simulate` reports per pod (PodOutcome, the JSON document), and the store wrapper that
tells the driver the revision of the last write of each kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.api import kinds, objects_pb2
from cluster.simulate import PodOutcome, outcomes_json
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
