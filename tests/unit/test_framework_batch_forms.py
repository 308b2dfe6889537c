"""Batch Filter and batch Score are declared extension interfaces: a plugin with only the batch form is a
Filter and a Score plugin, asked node by node where the framework filters one node at a time; the
algorithm hands the nodes' rows to any lister that declares ``NodeTableLister``; a plugin's own node
data in the snapshot follows the snapshot's changes."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from typing import Any

from scheduler.algorithm import schedule_pod
from scheduler.cache import Cache, Snapshot, snapshot_of
from scheduler.clock import SystemClock
from scheduler.framework import (
    BatchFilterPlugin,
    BatchScorePlugin,
    CycleState,
    NodeInfo,
    NodeSet,
    NodeTableLister,
    PodInfo,
    Status,
)
from tests.builders import node
from tests.unit import framework_fakes
from tests.unit.framework_fakes import build, pod


class BatchOnly:
    """Filters and scores only in batches: rejects n2, scores each node by its number."""

    name = "BatchOnly"

    def __init__(self) -> None:
        self.batches: list[NodeSet] = []

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> list[Status | None]:
        self.batches.append(nodes)
        return [Status.unschedulable("n2 is out") if n.name == "n2" else None for n in nodes]

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> list[int]:
        self.batches.append(nodes)
        return [int(n.name[1:]) for n in nodes]


NODES = [framework_fakes.node(f"n{i}") for i in range(1, 5)]


def test_a_plugin_with_only_the_batch_forms_filters_and_scores() -> None:
    plugin = BatchOnly()
    assert isinstance(plugin, BatchFilterPlugin) and isinstance(plugin, BatchScorePlugin)
    framework = build(plugin, snapshot=framework_fakes.Snapshot(NODES))
    assert framework.plugin_names("filter") == ["BatchOnly"]
    assert framework.plugin_names("score") == ["BatchOnly"]
    state, pod_info = CycleState(), pod("p")
    # Node by node (a nominated node, preemption's dry run): the batch form asked about one node.
    assert framework.run_filter(state, pod_info, NODES[0]) is None
    rejected = framework.run_filter(state, pod_info, NODES[1])
    assert rejected is not None and rejected.plugin == "BatchOnly" and rejected.reasons == ("n2 is out",)
    verdicts = framework.run_filter_nodes(state, pod_info, NodeSet(NODES))
    assert [s is None for s in verdicts.statuses] == [True, False, True, True]
    result, status = framework.run_score(state, pod_info, NodeSet(NODES))
    assert status is None and result is not None
    assert result.per_plugin["BatchOnly"] == [1, 2, 3, 4]


class Lister:
    """Not the scheduler's Snapshot, but a SharedLister that declares NodeTableLister (by delegating)."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot

    def node_infos(self) -> Lister:
        return self

    def __getattr__(self, name: str) -> Any:
        return getattr(self._snapshot, name)

    def list(self) -> Sequence[NodeInfo]:
        return self._snapshot.list()

    def node_set(self, nodes: Sequence[NodeInfo]) -> NodeSet:
        return self._snapshot.node_set(nodes)

    def rotated(self, first: int) -> NodeSet:
        return self._snapshot.rotated(first)


def test_the_algorithm_hands_rows_to_any_lister_that_declares_them() -> None:
    nodes = [node(f"n{i}", allocatable={"cpu": "4", "pods": "110"}) for i in range(1, 5)]
    lister = Lister(snapshot_of(nodes))
    assert isinstance(lister, NodeTableLister)
    plugin = BatchOnly()
    framework = build(plugin, snapshot=lister)  # type: ignore[arg-type]
    result = asyncio.run(schedule_pod(framework, CycleState(), pod("p"), lister,  # type: ignore[arg-type]
                                      percentage_of_nodes_to_score=None, rng=random.Random(0), start_index=0))
    assert result.suggested_host == "n4"
    assert plugin.batches and all(nodes.rows is not None for nodes in plugin.batches)


class AllocatableCpu:
    """A plugin's node data: each row's allocatable CPU, counting how often it was built."""

    builds = 0

    def __init__(self, nodes: Sequence[NodeInfo]) -> None:
        AllocatableCpu.builds += 1
        self.cpu = [info.allocatable.milli_cpu for info in nodes]

    def set_row(self, row: int, info: NodeInfo) -> None:
        self.cpu[row] = info.allocatable.milli_cpu


def test_the_snapshot_keeps_a_plugins_node_data_current() -> None:
    cache = Cache(clock=SystemClock())
    for i in range(3):
        cache.add_node(node(f"n{i}", allocatable={"cpu": str(i + 1)}))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    AllocatableCpu.builds = 0

    def cpu_by_name() -> dict[str, int]:
        found = snapshot.node_set(snapshot.list()).node_data(AllocatableCpu)
        assert found is not None
        data, rows = found
        return {info.name: data.cpu[row] for info, row in zip(snapshot.list(), rows.tolist(), strict=True)}

    assert cpu_by_name() == {"n0": 1000, "n1": 2000, "n2": 3000}
    # A changed node rewrites its row in the data built before, without building it again.
    cache.update_node(node("n1", allocatable={"cpu": "2"}), node("n1", allocatable={"cpu": "8"}))
    cache.update_snapshot(snapshot)
    assert cpu_by_name() == {"n0": 1000, "n1": 8000, "n2": 3000}
    assert AllocatableCpu.builds == 1
    # A new node lays the node list out again, and the registered data with it.
    cache.add_node(node("n3", allocatable={"cpu": "5"}))
    cache.update_snapshot(snapshot)
    assert AllocatableCpu.builds == 2
    assert cpu_by_name() == {"n0": 1000, "n1": 8000, "n2": 3000, "n3": 5000}
