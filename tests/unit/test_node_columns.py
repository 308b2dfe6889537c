"""A snapshot's node data stays in step with its nodes (a changed node's row: the resource columns and
NodeAffinity's label codes), and NodeAffinity decides a batch from its data exactly as node by node."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler.cache import Cache, Snapshot
from scheduler.clock import SystemClock
from scheduler.framework import CycleState, PodInfo, Status
from scheduler.framework.columns import ResourceColumns
from scheduler.plugins import nodeaffinity
from scheduler.plugins.nodeaffinity import NodeLabelCodes
from tests.builders import node, pod
from tests.unit.framework_fakes import fake_handle

ZONES = ("a", "b", "c", None)
TYPES = ("small", "large", None)


def labelled(name: str, zone: str | None, kind: str | None, cpu: str = "4") -> Any:
    labels = {key: value for key, value in (("zone", zone), ("type", kind)) if value is not None}
    return node(name, labels=labels, allocatable={"cpu": cpu, "memory": "8Gi", "pods": "110"})


def verdicts(statuses: list[Status | None]) -> list[tuple[str, tuple[str, ...]] | None]:
    return [None if s is None else (s.code.name, s.reasons) for s in statuses]


@pytest.mark.parametrize(
    "affinity",
    [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]},
        {"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]},
                              {"key": "type", "operator": "Exists"}]},
        {"matchExpressions": [{"key": "type", "operator": "DoesNotExist"}]},
    ],
    ids=["one-key", "two-keys", "absent-label"],
)
@pytest.mark.parametrize("seed", range(3))
def test_node_affinity_decides_a_batch_as_node_by_node(affinity: dict[str, Any], seed: int) -> None:
    rng = random.Random(seed)
    cache = Cache(clock=SystemClock())
    for i in range(200):
        cache.add_node(labelled(f"n{i}", rng.choice(ZONES), rng.choice(TYPES)))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    plugin = nodeaffinity.new(None, fake_handle(Snapshot()))
    spec = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [affinity]}}}}
    pod_info = PodInfo(pod(spec=spec))
    state = CycleState()
    plugin.pre_filter(state, pod_info, snapshot.list())

    def both_ways() -> None:
        expected = verdicts([plugin.filter(state, pod_info, info) for info in snapshot.list()])
        assert verdicts(plugin.filter_nodes(state, pod_info, snapshot.node_set(snapshot.list()))) == expected
        rotated = snapshot.rotated(37).window(10, 150)
        rotated_expected = (expected[37:] + expected[:37])[10:150]
        assert verdicts(plugin.filter_nodes(state, pod_info, rotated)) == rotated_expected

    both_ways()
    # Relabel some nodes (new values included) and bind a pod: the rows follow the snapshot's update.
    for i in rng.sample(range(200), 30):
        old = snapshot.get(f"n{i}").node
        assert old is not None
        cache.update_node(old, labelled(f"n{i}", rng.choice(("a", "d", None)), rng.choice(("huge", None))))
    cache.add_pod(pod(requests={"cpu": "1"}, name="bound", node_name="n5"))
    cache.update_snapshot(snapshot)
    both_ways()


def test_a_changed_node_rewrites_its_row() -> None:
    cache = Cache(clock=SystemClock())
    for i in range(3):
        cache.add_node(labelled(f"n{i}", "a", "small"))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    batch = snapshot.node_set(snapshot.list())
    rows = batch.rows
    assert batch.table is not None and rows is not None
    batch.table.data(ResourceColumns)  # registered before the change, as a plugin's first batch does
    before = batch.table.data(NodeLabelCodes).label_signatures(["zone"], rows)
    assert before is not None and len(set(before.tolist())) == 1

    cache.update_node(labelled("n1", "a", "small"), labelled("n1", "b", "small", cpu="8"))
    cache.add_pod(pod(requests={"cpu": "500m", "memory": "1Gi"}, name="p", node_name="n2"))
    cache.update_snapshot(snapshot)
    position = {info.name: i for i, info in enumerate(snapshot.list())}
    after = batch.table.data(NodeLabelCodes).label_signatures(["zone"], rows)
    columns = batch.table.data(ResourceColumns)
    assert after is not None
    assert after[position["n1"]] != after[position["n0"]] == after[position["n2"]]
    assert columns.alloc_cpu[position["n1"]] == 8000
    assert (columns.requested_cpu[position["n2"]], columns.requested_memory[position["n2"]],
            columns.pod_count[position["n2"]]) == (500, 2**30, 1)
