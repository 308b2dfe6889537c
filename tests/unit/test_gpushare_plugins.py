"""The GPU-sharing policies (scheduler/plugins/gpushare): each Score as the FGD artifact's Go code computes
it (tables translated from its logic and its gpu_packing_score_test.go), the batch Score equal to the
per-node one, and the GPU each policy picks."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster.api import objects_pb2
from scheduler.config import ConfigError, in_tree_registry, load_config
from scheduler.framework import (
    BatchScorePlugin,
    CycleState,
    DeviceCandidate,
    DeviceRankPlugin,
    NodeInfo,
    NodeSet,
    PluginError,
    PodInfo,
    PreScorePlugin,
    ScorePlugin,
)
from scheduler.framework.handle import FrameworkHandle
from scheduler.framework.runtime import build_framework
from scheduler.gpus import GpuColumns, GpuSpec
from scheduler.gpus.fragmentation import PodKind, Workload, fragmentation_reference, typical_workload
from scheduler.plugins import registry
from scheduler.plugins.gpushare.best_fit import best_fit_score, best_fit_scores, normalize
from scheduler.plugins.gpushare.common import NodeGpus, PodDemand, node_gpus
from scheduler.plugins.gpushare.dot_product import dot_product_score, dot_product_scores
from scheduler.plugins.gpushare.fgd import fgd_score, fgd_scores, gpu_scores
from scheduler.plugins.gpushare.gpu_clustering import clustering_score, clustering_scores, gpu_kind
from scheduler.plugins.gpushare.gpu_packing import gpu_packing_score, gpu_packing_scores
from scheduler.plugins.gpushare.selection import best_fit_order, free_milli, random_fit_order
from tests import builders
from tests.builders import node_info, plugin_args
from tests.unit.framework_fakes import Snapshot, fake_handle, node_set
from tests.unit.test_gpu_table import allocated, gpu, gpu_claim, gpu_slice, manager

MODELS = ("T4", "V100")


def columns(*nodes: tuple[Sequence[int], int], model: int = 1, cpu_capacity: int = 96_000) -> GpuColumns:
    """GPU columns of nodes given as (free milli of each GPU, CPU left)."""
    width = max(1, *(len(free) for free, _ in nodes))
    return GpuColumns(
        free=np.array([[*free, *[0] * (width - len(free))] for free, _ in nodes], dtype=np.int64),
        gpus=np.array([len(free) for free, _ in nodes], dtype=np.int64),
        model=np.array([model if free else -1 for free, _ in nodes], dtype=np.int64),
        models=MODELS,
        cpu_left=np.array([cpu for _, cpu in nodes], dtype=np.int64),
        cpu_capacity=np.full(len(nodes), cpu_capacity, dtype=np.int64))


def node(free: Sequence[int], cpu_left: int = 1000) -> NodeGpus:
    return node_gpus(columns((free, cpu_left)), 0)


# ------------------------------------------------------------------------------------------ GpuPacking


@pytest.mark.parametrize(("free", "demand", "expected"), [
    # gpu_packing_score_test.go, case by case.
    ([200, 1000, 1000, 500], PodDemand(100, 2, 1000), 48),  # case 2: two free GPUs of a node in use
    ([1000] * 4, PodDemand(100, 2, 1000), 29),  # case 3: a free 4-GPU node
    ([1000] * 8, PodDemand(100, 2, 1000), 25),  # case 3: a free 8-GPU node
    ([200, 1000, 1000, 500], PodDemand(100, 2, 200), 93),  # case 1: only GPUs in use (20% + 50% free)
    # And the rest of its logic.
    ([200, 1000, 1000, 500], PodDemand(100, 1, 300), 95),  # the least free that holds it: 500
    ([1000] * 40, PodDemand(100, 1, 1000), 40),  # case 3 capped below by the free GPUs
    ([0] * 5 + [1000] * 3 + [100], PodDemand(100, 1, 1000), 49),  # case 2 capped at 33 from below
    ([100, 1000], PodDemand(100, 1, 1000), 49),
    ([300, 1000, 1000], PodDemand(100, 0, 0), 0),  # no GPU: 0
    ([300, 200], PodDemand(100, 1, 500), 0),  # does not fit: 0
])
def test_gpu_packing_scores_as_the_artifact(free: list[int], demand: PodDemand, expected: int) -> None:
    assert gpu_packing_score(node(free), demand) == expected
    assert gpu_packing_scores(columns((free, 1000)), demand).tolist() == [expected]


# ------------------------------------------------------------------------------------------ BestFit


@pytest.mark.parametrize(("free", "cpu_left", "demand", "expected"), [
    # 1 - (0.5 * 32000/128000 + 0.5 * 1000/8000) = 0.8125
    ([1000, 500], 64_000, PodDemand(32_000, 1, 500), 81),
    ([1000] * 8, 128_000, PodDemand(0, 0, 0), 0),  # an empty largest node: the worst fit
    ([0, 0], 0, PodDemand(0, 0, 0), 100),
    ([1000], 64_000, PodDemand(4_000, 0, 0), 70),  # CPU-only pods too: 1 - (0.234375 + 0.0625)
    ([400], 64_000, PodDemand(4_000, 1, 500), 0),  # does not fit: 0
])
def test_best_fit_raw_scores(free: list[int], cpu_left: int, demand: PodDemand, expected: int) -> None:
    assert best_fit_score(node(free, cpu_left), demand) == expected
    assert best_fit_scores(columns((free, cpu_left)), demand).tolist() == [expected]


@pytest.mark.parametrize(("raw", "normalized"), [
    ([81, 50, 50], [100, 0, 0]),
    ([10, 20, 15], [0, 100, 50]),
    ([0, 3, 2], [0, 100, 66]),  # integer division
    ([7, 7], [0, 0]),  # all equal: all the minimum
    ([], []),
])
def test_best_fit_normalizes_min_max(raw: list[int], normalized: list[int]) -> None:
    normalize(raw)
    assert raw == normalized


# ------------------------------------------------------------------------------------------ DotProduct


@pytest.mark.parametrize(("free", "cpu_left", "demand", "expected"), [
    # node (0.5, 0.5) . pod (0.25, 0.125) = 0.1875; 1 - 0.1875 / 2 = 0.90625
    ([1000] * 4, 64_000, PodDemand(32_000, 1, 1000), 90),
    ([1000] * 8, 128_000, PodDemand(128_000, 8, 1000), 0),  # the full product: 1 - 2/2
    ([1000] * 8, 128_000, PodDemand(0, 0, 0), 100),
    ([1000], 1000, PodDemand(2000, 0, 0), 0),  # CPU left below the pod's: 0
])
def test_dot_product_scores(free: list[int], cpu_left: int, demand: PodDemand, expected: int) -> None:
    assert dot_product_score(node(free, cpu_left), demand) == expected
    assert dot_product_scores(columns((free, cpu_left)), demand).tolist() == [expected]


# ------------------------------------------------------------------------------------------ GpuClustering


@pytest.mark.parametrize(("count", "milli", "kind"), [
    (0, 0, None), (1, 500, "share"), (1, 1000, "1-gpu"), (4, 1000, "4-gpu"), (2, 500, "2x500m")])
def test_gpu_kinds(count: int, milli: int, kind: str | None) -> None:
    assert gpu_kind(count, milli) == kind


@pytest.mark.parametrize(("node_kinds", "expected"), [
    ({"share"}, 81),  # only its kind: base + 75
    ({"share", "1-gpu"}, 56),  # its kind and others: base + 50
    (set(), 31),  # no GPU pod: base + 25
    ({"1-gpu"}, 6),  # only other kinds: base
])
def test_gpu_clustering_scores(node_kinds: set[str], expected: int) -> None:
    # 6000 milli free: base = 25 * (8000 - 6000) / 8000 = 6
    free = [1000] * 5 + [500, 500]
    assert clustering_score(node(free), "share", node_kinds) == expected
    holds = np.array(["share" in node_kinds]), np.array([len(node_kinds)], dtype=np.int64)
    assert clustering_scores(columns((free, 1000)), *holds).tolist() == [expected]


def test_gpu_clustering_truncates_toward_zero_beyond_eight_gpus() -> None:
    # 25 * (8000 - 9000) / 8000 = -3.125: Go truncates to -3
    assert clustering_score(node([1000] * 9), "1-gpu", set()) == 22
    assert clustering_scores(columns(([1000] * 9, 0)), np.array([False]),
                             np.array([0], dtype=np.int64)).tolist() == [22]


# ------------------------------------------------------------------------------------------ FGD

WORKLOAD = Workload((PodKind(2000, 500, 1, None), PodKind(8000, 1000, 1, None), PodKind(1000, 0, 0, None),
                     PodKind(4000, 1000, 2, frozenset({"V100"}))), (0.4, 0.3, 0.2, 0.1))


def reference_score(free: list[int], cpu_left: int, after: list[int], cpu_after: int) -> int:
    """calculateGpuShareFragExtendScore's score between two states, by the reference fragmentation."""
    before_frag, after_frag = fragmentation_reference(WORKLOAD, [free, after], [cpu_left, cpu_after],
                                                      [1, 1], MODELS)
    return int(1.0 / (1.0 + math.exp(-(before_frag - after_frag) / 1000)) * 100)


def taken_on(free: list[int], gpu: int, milli: int) -> list[int]:
    return [*free[:gpu], free[gpu] - milli, *free[gpu + 1:]]


@pytest.mark.parametrize(("free", "cpu_left", "demand", "after"), [
    # A share pod: the best of its GPUs (here the 300 on gpu-1 by fragmentation).
    ([1000, 700, 1000], 32_000, PodDemand(2000, 1, 300), None),
    # Whole GPUs: the least free that hold it, i.e. free ones.
    ([1000, 700, 1000, 1000], 32_000, PodDemand(4000, 2, 1000), [1000, 700, 0, 0]),
    # CPU only: the CPU taken.
    ([1000, 700], 32_000, PodDemand(30_500, 0, 0), [1000, 700]),
])
def test_fgd_scores_by_the_reference_fragmentation(free: list[int], cpu_left: int, demand: PodDemand,
                                                   after: list[int] | None) -> None:
    if after is None:
        expected = max(reference_score(free, cpu_left, taken_on(free, gpu, demand.milli),
                                       cpu_left - demand.milli_cpu)
                       for gpu in range(len(free)) if free[gpu] >= demand.milli)
    else:
        expected = reference_score(free, cpu_left, after, cpu_left - demand.milli_cpu)
    gpu_columns = columns((free, cpu_left))
    assert fgd_score(WORKLOAD, gpu_columns, 0, demand) == expected
    assert fgd_scores(WORKLOAD, gpu_columns, demand).tolist() == [expected]


def test_fgd_ranks_a_share_pods_gpus_by_their_scores() -> None:
    # 600 on the 700 GPU leaves 100 no typical pod uses; 600 of a free GPU leaves 400 for the share kind.
    free = [1000, 700, 1000]
    scores = gpu_scores(WORKLOAD, columns((free, 32_000)), 0, PodDemand(2000, 1, 600))
    assert set(scores) == {0, 1, 2} and scores[0] == scores[2]
    assert scores == {gpu: reference_score(free, 32_000, taken_on(free, gpu, 600), 30_000)
                      for gpu in range(3)}


def test_fgd_scores_zero_where_no_gpu_holds_a_share_pod() -> None:
    assert fgd_scores(WORKLOAD, columns(([200, 100], 32_000)), PodDemand(1000, 1, 500)).tolist() == [0]
    assert fgd_score(WORKLOAD, columns(([200, 100], 32_000)), 0, PodDemand(1000, 1, 500)) == 0


# ------------------------------------------------------------------------------------------ GPU selection


def test_best_fit_takes_the_least_free_gpu_that_holds_a_share() -> None:
    # allocateGpuIdBasedOnBestFit: 400 on [1000, 500, 300, 500, 1000] -> gpu-1 (500, the lower index)
    order = best_fit_order([0, 1, 2, 3, 4], [1000, 500, 300, 500, 1000], 400)
    assert order[0] == 1 and order[-1] == 2


def test_whole_gpus_go_lowest_index_first() -> None:
    # AllocateExclusiveGpuId: the free GPUs in index order.
    assert best_fit_order([3, 0, 2, 1], [1000, 1000, 0, 1000], 1000)[:3] == [1, 3, 0]
    assert random_fit_order([3, 0, 2, 1], [1000, 1000, 0, 1000], 1000, random.Random(1))[:3] == [1, 3, 0]


def test_random_fit_draws_uniformly_among_the_gpus_that_hold_the_share() -> None:
    rng = random.Random(7)
    picked = [random_fit_order([0, 1, 2, 3], [100, 600, 1000, 500], 500, rng)[0] for _ in range(3000)]
    counts = {gpu: picked.count(gpu) for gpu in set(picked)}
    assert set(counts) == {1, 2, 3}
    assert all(800 < count < 1200 for count in counts.values())


# ------------------------------------------------------------------------------------------ batch == per node

states = st.integers(min_value=1, max_value=6).flatmap(lambda width: st.lists(
    st.tuples(st.lists(st.sampled_from([0, 100, 250, 300, 500, 700, 900, 1000]) | st.integers(0, 1000),
                       min_size=0, max_size=width),
              st.integers(0, 140_000)),
    min_size=1, max_size=12))
demands = st.one_of(
    st.builds(PodDemand, st.integers(0, 64_000)),
    st.builds(lambda cpu, milli: PodDemand(cpu, 1, milli), st.integers(0, 64_000), st.integers(1, 999)),
    st.builds(lambda cpu, count: PodDemand(cpu, count, 1000), st.integers(0, 64_000), st.integers(1, 8)),
    st.builds(lambda cpu, count, milli: PodDemand(cpu, count, milli), st.integers(0, 64_000),
              st.integers(2, 4), st.integers(1, 999)))


@settings(max_examples=150, deadline=None)
@given(states, demands)
def test_the_batch_scores_are_the_per_node_scores(nodes: list[tuple[list[int], int]],
                                                  demand: PodDemand) -> None:
    found = columns(*nodes)
    rows = [node_gpus(found, row) for row in range(len(nodes))]
    assert best_fit_scores(found, demand).tolist() == [best_fit_score(row, demand) for row in rows]
    assert dot_product_scores(found, demand).tolist() == [dot_product_score(row, demand) for row in rows]
    assert gpu_packing_scores(found, demand).tolist() == [gpu_packing_score(row, demand) for row in rows]
    assert fgd_scores(WORKLOAD, found, demand).tolist() == [
        fgd_score(WORKLOAD, found, row, demand) for row in range(len(nodes))]


@settings(max_examples=100, deadline=None)
@given(states, st.sampled_from(["share", "1-gpu", "2-gpu"]),
       st.lists(st.sets(st.sampled_from(["share", "1-gpu", "2-gpu", "8-gpu"])), min_size=12, max_size=12))
def test_the_batch_clustering_scores_are_the_per_node_scores(nodes: list[tuple[list[int], int]], kind: str,
                                                             kinds: list[set[str]]) -> None:
    found, kinds = columns(*nodes), kinds[:len(nodes)]
    holds = np.array([kind in held for held in kinds], dtype=np.bool_)
    count = np.array([len(held) for held in kinds], dtype=np.int64)
    assert clustering_scores(found, holds, count).tolist() == [
        clustering_score(node_gpus(found, row), kind, kinds[row]) for row in range(len(nodes))]


# ------------------------------------------------------------------------------------------ the plugins


POLICIES = ("RandomScore", "DotProductScore", "GpuClusteringScore", "GpuPackingScore", "BestFitScore",
            "FGDScore")


class Cluster:
    """Nodes n1 (4 V100), n2 (2 T4) and n3 (no GPU) of GPU slices, a share of 300 of n1's gpu-0 and one
    of n2's GPUs held by pods on them, and pending pods of each kind with their claims."""

    def __init__(self) -> None:
        self.dra = manager(gpu_slice("n1", *(gpu(i, "V100") for i in range(4))),
                           gpu_slice("n2", gpu(0, "T4"), gpu(1, "T4")))
        share_held = allocated(self.dra, gpu_claim("share-held", 1, 300), "n1")
        whole_held = allocated(self.dra, gpu_claim("whole-held", 1), "n2")
        assert share_held is not None and whole_held is not None
        for claim in (share_held, whole_held, gpu_claim("share", 1, 500), gpu_claim("whole", 2),
                      gpu_claim("small", 1, 200)):
            self.dra.resource_claims.on_add(claim)
        allocatable = {"cpu": "32", "memory": "64Gi", "pods": "110"}
        self.nodes = [
            node_info(builders.node("n1", allocatable=allocatable), [claiming("a", "share-held", cpu="4")]),
            node_info(builders.node("n2", allocatable=allocatable), [claiming("b", "whole-held", cpu="8")]),
            node_info(builders.node("n3", allocatable=allocatable), [builders.pod("c", cpu="2")])]
        self.pending = {"share": PodInfo(claiming("p-share", "share", cpu="2")),
                        "whole": PodInfo(claiming("p-whole", "whole", cpu="6")),
                        "small": PodInfo(claiming("p-small", "small", cpu="1")),
                        "cpu": PodInfo(builders.pod("p-cpu", cpu="3"))}

    def handle(self, rng: random.Random | None = None) -> FrameworkHandle:
        return fake_handle(Snapshot(self.nodes), dra_manager=self.dra, rng=rng)


def claiming(name: str, claim: str, *, cpu: str) -> objects_pb2.Pod:
    entries = [{"name": "gpus", "resourceClaimName": claim}]
    return builders.pod(name, spec={"resourceClaims": entries}, cpu=cpu)


def policy(name: str, handle: FrameworkHandle, args: dict[str, Any] | None = None) -> Any:
    return registry.load(name).new(plugin_args(name, args), handle)


@pytest.mark.parametrize("name", POLICIES)
@pytest.mark.parametrize("kind", ["share", "whole", "small", "cpu"])
def test_each_plugin_scores_the_same_in_batch_and_per_node(name: str, kind: str) -> None:
    cluster = Cluster()
    plugin = policy(name, cluster.handle())
    pod_info, state = cluster.pending[kind], CycleState()
    assert isinstance(plugin, ScorePlugin) and isinstance(plugin, BatchScorePlugin)
    if isinstance(plugin, PreScorePlugin):
        assert plugin.pre_score(state, pod_info, cluster.nodes) is None
    per_node = [plugin.score(state, pod_info, info) for info in cluster.nodes]
    assert plugin.score_nodes(state, pod_info, node_set(cluster.nodes)) == per_node
    assert plugin.score_nodes(state, pod_info, NodeSet(list(cluster.nodes))) == per_node
    assert all(0 <= score <= 100 for score in per_node)


def test_the_plugins_read_the_gpus_the_claims_hold() -> None:
    cluster = Cluster()
    handle, share = cluster.handle(), cluster.pending["share"]
    nodes = node_set(cluster.nodes[:2])
    # n1: 3700 milli free, only share pods: 25 * 4300 / 8000 + 75; n2: 1000 free, only 1-gpu pods.
    assert policy("GpuClusteringScore", handle).score_nodes(CycleState(), share, nodes) == [88, 21]
    # n1 shares the 700 left of gpu-0 (70% free): 100 - 7; n2 takes its free GPU: 50 - 1.
    assert policy("GpuPackingScore", handle).score_nodes(CycleState(), share, nodes) == [93, 49]
    cpu_only = cluster.pending["cpu"]
    assert policy("GpuPackingScore", handle).score_nodes(CycleState(), cpu_only, nodes) == [0, 0]
    # 1 - (0.5 * 26000 / 128000 + 0.5 * 3200 / 8000) = 0.6984375 and 1 - (0.5 * 22000/128000 + 0.5 * 500/8000)
    raw = [69, 88]
    assert policy("BestFitScore", handle).score_nodes(CycleState(), share, nodes) == raw
    assert policy("GpuClusteringScore", handle).score_nodes(CycleState(), cpu_only, nodes) == [0, 0]


def test_random_scores_one_feasible_node_drawn_with_the_schedulers_source() -> None:
    cluster = Cluster()
    drawn = {}
    for seed in range(20):
        plugin, state = policy("RandomScore", cluster.handle(random.Random(seed))), CycleState()
        plugin.pre_score(state, cluster.pending["cpu"], cluster.nodes)
        scores = plugin.score_nodes(state, cluster.pending["cpu"], node_set(cluster.nodes))
        assert sorted(scores) == [0, 0, 100]
        drawn[seed] = scores.index(100)
        assert cluster.nodes[drawn[seed]].name == cluster.nodes[random.Random(seed).randrange(3)].name
    assert set(drawn.values()) == {0, 1, 2}


def test_random_without_pre_score_is_a_plugin_error() -> None:
    cluster = Cluster()
    with pytest.raises(PluginError, match="PreScore"):
        policy("RandomScore", cluster.handle()).score(CycleState(), cluster.pending["cpu"], cluster.nodes[0])


def test_fgd_scores_a_pod_that_requests_nothing_100() -> None:
    cluster = Cluster()
    empty = PodInfo(builders.pod("empty"))
    assert policy("FGDScore", cluster.handle()).score_nodes(CycleState(), empty, node_set(cluster.nodes)) \
        == [100, 100, 100]


def test_fgd_scores_as_afresh_while_the_claims_change_the_gpus_under_its_kept_fragmentation() -> None:
    cluster = Cluster()
    plugin = policy("FGDScore", cluster.handle())
    share, nodes = cluster.pending["share"], node_set(cluster.nodes)

    def afresh() -> list[int]:
        scores: list[int] = fgd_scores(plugin.workload(share), plugin.columns(nodes),
                                       plugin.demand(share)).tolist()
        return scores

    first = plugin.score_nodes(CycleState(), share, nodes)
    assert first == afresh()
    for name, milli in (("more", 600), ("most", 700)):
        held = allocated(cluster.dra, gpu_claim(name, 1, milli), "n1")
        assert held is not None
        cluster.dra.resource_claims.on_add(held)
        assert plugin.score_nodes(CycleState(), share, nodes) == afresh()
    assert plugin.score_nodes(CycleState(), share, nodes) != first


def test_fgd_takes_the_workload_of_its_args_or_of_the_pods_held() -> None:
    cluster = Cluster()
    handle, pod_info = cluster.handle(), cluster.pending["share"]
    given = policy("FGDScore", handle, {"workload": [
        {"milliCpu": 2000, "gpuMilli": 700, "gpuCount": 1, "weight": 0.5},
        {"milliCpu": 1000, "gpuMilli": 1000, "gpuCount": 1, "models": ["T4"], "weight": 0.5}]})
    assert given.workload(pod_info) == Workload(
        (PodKind(2000, 700, 1, None), PodKind(1000, 1000, 1, frozenset({"T4"}))), (0.5, 0.5))
    held = policy("FGDScore", handle)
    # The kinds of the pods on the nodes (a, b, c) and of the pod, one each.
    assert held.workload(pod_info) == typical_workload([
        PodKind(4000, 300, 1, None), PodKind(8000, 1000, 1, None), PodKind(2000, 0, 0, None),
        PodKind(2000, 500, 1, None)])


def test_fgd_counts_the_pods_held_as_the_nodes_change() -> None:
    cluster = Cluster()
    nodes = node_set(cluster.nodes)
    table_lister = TableSnapshot(cluster.nodes, nodes)
    plugin = policy("FGDScore", fake_handle(table_lister, dra_manager=cluster.dra))
    pod_info = cluster.pending["cpu"]
    before = plugin.workload(pod_info)
    assert before == typical_workload([PodKind(4000, 300, 1, None), PodKind(8000, 1000, 1, None),
                                       PodKind(2000, 0, 0, None), PodKind(3000, 0, 0, None)])
    assert plugin.workload(pod_info) is before  # not counted again
    changed = cluster.nodes[2].clone()
    changed.add_pod(PodInfo(builders.pod("d", cpu="2")))
    assert nodes.table is not None
    nodes.table.set_row(2, changed)
    assert plugin.workload(pod_info) == typical_workload([
        PodKind(4000, 300, 1, None), PodKind(8000, 1000, 1, None), PodKind(2000, 0, 0, None),
        PodKind(2000, 0, 0, None), PodKind(3000, 0, 0, None)])


class TableSnapshot(Snapshot):
    """A snapshot whose nodes have rows in a node table, as the scheduler's."""

    def __init__(self, nodes: Sequence[NodeInfo], with_rows: NodeSet) -> None:
        super().__init__(nodes)
        self._with_rows = with_rows

    def node_set(self, nodes: Sequence[NodeInfo]) -> NodeSet:
        return NodeSet(list(nodes), np.zeros(0, dtype=np.intp) if not nodes else None, self._with_rows.table)

    def rotated(self, first: int) -> NodeSet:
        return self._with_rows


@pytest.mark.parametrize(("args", "problem"), [
    ({"workload": [{"gpuMilli": 1200, "gpuCount": 1, "weight": 0.5}]}, r"workload\[0\]\.gpuMilli"),
    ({"workload": [{"gpuMilli": 500, "gpuCount": 0, "weight": 0.5}]}, r"workload\[0\]\.gpuMilli"),
    ({"workload": [{"milliCpu": 1000, "weight": 0}]}, r"workload\[0\]\.weight"),
    ({"workload": [{"milliCpu": -1, "weight": 1}]}, r"workload\[0\]\.milliCpu"),
    ({"deviceClass": ""}, r"args\.deviceClass"),
    ({"workload": [{"cpu": 1}]}, r'unknown field "cpu"'),
])
def test_bad_fgd_args_are_named(args: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        plugin_args("FGDScore", args)


# ------------------------------------------------------------------------------------------ device ranking


def candidates(free: Sequence[int], capacity: str = "milli") -> list[DeviceCandidate]:
    """n1's GPUs as the allocator offers them, in reverse index order (the ranking sorts them)."""
    return [DeviceCandidate(("gpu.podsched.io", "n1", f"gpu-{index}"), index, {capacity: Fraction(1000)},
                            {capacity: Fraction(free[index])}) for index in reversed(range(len(free)))]


def first_index(plugin: Any, pod_info: PodInfo, offered: list[DeviceCandidate], node: NodeInfo) -> int:
    order = plugin.rank_devices(CycleState(), pod_info, node, offered)
    assert sorted(order) == list(range(len(offered)))
    return offered[order[0]].index


fractions = st.fractions(min_value=-10_000, max_value=10_000, max_denominator=1000)


@settings(max_examples=200, deadline=None)
@given(fractions, fractions.filter(bool))
def test_a_candidates_free_milli_is_its_free_share_scaled_and_truncated(free: Fraction,
                                                                       capacity: Fraction) -> None:
    candidate = DeviceCandidate(("gpu.podsched.io", "n1", "gpu-0"), 0, {"milli": capacity}, {"milli": free})
    assert free_milli(candidate, GpuSpec()) == int(free * 1000 / capacity)


@pytest.mark.parametrize("name", ["DotProductScore", "GpuClusteringScore", "GpuPackingScore", "BestFitScore"])
def test_best_fit_policies_give_the_least_free_gpu_or_the_lowest_free_ones(name: str) -> None:
    cluster = Cluster()
    plugin, n1 = policy(name, cluster.handle()), cluster.nodes[0]
    assert isinstance(plugin, DeviceRankPlugin)
    assert first_index(plugin, cluster.pending["share"], candidates([1000, 600, 500, 1000]), n1) == 2
    assert first_index(plugin, cluster.pending["small"], candidates([1000, 600, 500, 1000]), n1) == 2
    assert first_index(plugin, cluster.pending["whole"], candidates([600, 1000, 500, 1000]), n1) == 1


def test_random_draws_the_shared_gpu_with_the_schedulers_source() -> None:
    cluster = Cluster()
    offered, n1 = candidates([1000, 400, 700, 100]), cluster.nodes[0]
    drawn = set()
    for seed in range(30):
        plugin = policy("RandomScore", cluster.handle(random.Random(seed)))
        index = first_index(plugin, cluster.pending["share"], offered, n1)
        assert index == offered[random_fit_order([c.index for c in offered],
                                                 [int(c.free["milli"]) for c in offered], 500,
                                                 random.Random(seed))[0]].index
        drawn.add(index)
    assert drawn == {0, 2}
    assert first_index(policy("RandomScore", cluster.handle()), cluster.pending["whole"],
                       candidates([600, 1000, 500, 1000]), n1) == 1


def test_fgd_gives_the_gpu_of_its_best_score() -> None:
    cluster = Cluster()
    handle, n1, share = cluster.handle(), cluster.nodes[0], cluster.pending["share"]
    plugin = policy("FGDScore", handle)
    # n1 as the GPU columns have it: 700 left of gpu-0.
    found = plugin.columns(NodeSet([n1]))
    scores = gpu_scores(plugin.workload(share), found, 0, PodDemand(2000, 1, 500))
    best = min(scores, key=lambda gpu: (-scores[gpu], gpu))
    assert first_index(plugin, share, candidates(found.free[0].tolist()), n1) == best
    assert first_index(plugin, cluster.pending["whole"], candidates([600, 1000, 500, 1000]), n1) == 1


@pytest.mark.parametrize("name", POLICIES)
def test_devices_that_are_no_shared_gpus_keep_the_allocators_order(name: str) -> None:
    cluster = Cluster()
    plugin = policy(name, cluster.handle())
    node_info = cluster.nodes[0]
    assert plugin.rank_devices(CycleState(), cluster.pending["share"], node_info,
                               candidates([1000, 500], capacity="memory")) is None
    cpu_only = cluster.pending["cpu"]
    assert plugin.rank_devices(CycleState(), cpu_only, node_info, candidates([1000, 500])) is None


# ------------------------------------------------------------------------------------------ the configs

CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "replay" / "fgd"


@pytest.mark.parametrize(("file", "name"), [
    ("random", "RandomScore"), ("dot-product", "DotProductScore"), ("gpu-clustering", "GpuClusteringScore"),
    ("gpu-packing", "GpuPackingScore"), ("best-fit", "BestFitScore"), ("fgd", "FGDScore")])
def test_each_config_scores_with_its_policy_alone(file: str, name: str) -> None:
    registry = in_tree_registry()
    config = load_config(str(CONFIGS / f"{file}.yaml"), registry=registry)
    assert config.percentage_of_nodes_to_score == 100
    cluster = Cluster()
    framework = build_framework(config.profiles[0], registry, cluster.handle())
    assert framework.plugin_names("score") == [name]
    assert framework.plugin_names("preScore") == ([name] if name == "RandomScore" else [])
    assert "DynamicResources" in framework.plugin_names("filter")
    ranker = framework.device_ranker()
    assert ranker is not None and ranker.name == name


def test_no_policy_is_enabled_by_default() -> None:
    registry = in_tree_registry()
    framework = build_framework(load_config(None, registry=registry).profiles[0], registry,
                                Cluster().handle())
    assert not set(POLICIES) & set(framework.plugin_names("score"))


def test_gpu_clustering_follows_the_kinds_of_a_changed_node() -> None:
    cluster = Cluster()
    nodes, share = node_set(cluster.nodes[:2]), cluster.pending["share"]
    plugin = policy("GpuClusteringScore", cluster.handle())
    assert plugin.score_nodes(CycleState(), share, nodes) == [88, 21]
    # A share pod joins n2's 1-GPU pod: n2 now holds the pod's kind among others (base + 50).
    changed = cluster.nodes[1].clone()
    changed.add_pod(PodInfo(claiming("d", "share", cpu="1")))
    assert nodes.table is not None
    nodes.table.set_row(1, changed)
    assert plugin.score_nodes(CycleState(), share, NodeSet([cluster.nodes[0], changed], nodes.rows,
                                                           nodes.table)) == [88, 71]
    assert plugin.score(CycleState(), share, changed) == 71
