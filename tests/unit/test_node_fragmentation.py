"""The values of node states FGD keeps from pod to pod (its nodes' fragmentation, its scores of a demand):
after any sequence of placements, departures and CPU changes, read through any subset of the nodes in any
order, what they give is the very bits a fresh computation of the nodes' states gives."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.gpus import GpuColumns
from scheduler.gpus.fragmentation import PodKind, Workload, fragmentation_by_state
from scheduler.gpus.node_fragmentation import NodeFragmentation, NodeStateValues
from scheduler.plugins.gpushare.common import PodDemand
from scheduler.plugins.gpushare.fgd import fgd_scores
from tests.unit.test_gpu_fragmentation import MODELS, pod_kinds
from tests.unit.test_gpushare_plugins import demands

WIDTH = 4
CPU_VALUES = (0, 500, 1000, 4000, 8000, 16000, 64000)


class Cluster:
    """GPU nodes as the GPU view keeps them (one row each, model by node) and nodes without GPUs, which
    the view maps to one row past them."""

    def __init__(self, gpus: list[int], models: list[int], cpu: list[int], cpu_only: int) -> None:
        self.layout = object()
        self.gpus = np.array(gpus + [0] * cpu_only, dtype=np.int64)
        self.free = np.where(np.arange(WIDTH) < self.gpus[:, None], 1000, 0).astype(np.int64)
        self.model = np.array(models + [-1] * cpu_only, dtype=np.int64)
        self.cpu = np.array(cpu + [16_000] * cpu_only, dtype=np.int64)
        self.rows = np.array([*range(len(gpus)), *[len(gpus)] * cpu_only], dtype=np.int64)

    def columns(self, nodes: list[int]) -> GpuColumns:
        return GpuColumns(self.free[nodes], self.gpus[nodes], self.model[nodes], MODELS, self.cpu[nodes],
                          np.full(len(nodes), 64_000, dtype=np.int64), self.rows[nodes], self.layout)


def fresh(load: Workload, columns: GpuColumns) -> list[float]:
    values: list[float] = fragmentation_by_state(load, columns.free, columns.cpu_left, columns.model,
                                                 columns.models).tolist()
    return values


@st.composite
def workloads(draw: st.DrawFn) -> Workload:
    kinds = draw(st.lists(pod_kinds(), min_size=1, max_size=6))
    weights = draw(st.lists(st.floats(0.01, 1), min_size=len(kinds), max_size=len(kinds)))
    return Workload(tuple(kinds), tuple(weights))


STEPS = st.lists(st.tuples(st.sampled_from(["take", "give", "cpu", "layout", "workload"]),
                           st.integers(0, 10_000), st.integers(0, WIDTH - 1), st.integers(1, 1000)),
                 max_size=25)


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(st.integers(1, WIDTH), st.integers(0, len(MODELS) - 1),
                          st.sampled_from([0, 2000, 8000, 32_000])), min_size=1, max_size=8),
       st.integers(0, 3), workloads(), workloads(), demands, STEPS, st.data())
def test_kept_values_are_a_fresh_computation_after_any_sequence_of_changes(
        nodes: list[tuple[int, int, int]], cpu_only: int, load: Workload, other: Workload, demand: PodDemand,
        steps: list[tuple[str, int, int, int]], data: st.DataObject) -> None:
    cluster = Cluster([gpus for gpus, _, _ in nodes], [model for _, model, _ in nodes],
                      [cpu for _, _, cpu in nodes], cpu_only)
    kept, scores, size = NodeFragmentation(), NodeStateValues(), len(cluster.rows)
    everyone = list(range(size))

    def check(columns: GpuColumns) -> None:
        assert kept.of(load, columns).tolist() == fresh(load, columns)
        assert scores.of(load, columns, lambda states: fgd_scores(load, states, demand)).tolist() == \
            fgd_scores(load, columns, demand).tolist()

    check(cluster.columns(everyone))
    for action, node, gpu, amount in steps:
        node %= size
        if action == "take" and gpu < cluster.gpus[node]:
            cluster.free[node, gpu] -= min(amount, int(cluster.free[node, gpu]))
        elif action == "give" and gpu < cluster.gpus[node]:
            cluster.free[node, gpu] = min(1000, int(cluster.free[node, gpu]) + amount)
        elif action == "cpu":
            # Just below or at the CPU the kinds ask, so that kinds start and stop fitting.
            cluster.cpu[node] = CPU_VALUES[amount % len(CPU_VALUES)] - gpu % 2
        elif action == "layout":
            cluster.layout = object()
        elif action == "workload":
            load, other = other, load
        # Scheduling reads the nodes that passed Filter, in the order of its round robin.
        read = data.draw(st.permutations(everyone).flatmap(
            lambda order: st.integers(0, len(order)).map(lambda count: order[:count])))
        check(cluster.columns(read))
        check(cluster.columns(everyone))


def test_an_equal_workload_keeps_the_values_another_recomputes_them() -> None:
    cluster = Cluster([4, 2], [0, 1], [8000, 8000], 0)
    kind = PodKind(2000, 500, 1, None)
    one, equal, other = (Workload((kind,), (0.5,)), Workload((kind,), (0.5,)), Workload((kind,), (0.25,)))
    kept, columns = NodeFragmentation(), cluster.columns([0, 1])
    first = kept.of(one, columns)
    assert kept.of(equal, columns).tolist() == first.tolist()
    assert kept.of(other, columns).tolist() == fresh(other, columns) == (first / 2).tolist()


def test_columns_not_read_from_the_view_are_computed_each_time() -> None:
    cluster = Cluster([4], [0], [8000], 0)
    load = Workload((PodKind(2000, 500, 1, None),), (1.0,))
    columns = cluster.columns([0])
    plain = GpuColumns(columns.free, columns.gpus, columns.model, MODELS, columns.cpu_left,
                       columns.cpu_capacity)
    assert NodeFragmentation().of(load, plain).tolist() == fresh(load, plain) == [0.0]
