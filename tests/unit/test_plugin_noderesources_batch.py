"""The resource plugins' batch paths give exactly the per-node verdicts and scores, on random nodes: the
vector paths over a snapshot's resource columns (framework/columns.py), directly and through the
plugins' batch Filter and Score."""

from __future__ import annotations

import random

import pytest

from scheduler.cache import snapshot_of
from scheduler.framework import CycleState, NodeInfo, PodInfo, Resource, Status
from scheduler.framework.columns import EXACT_LIMIT, ResourceColumns, exact_columns
from scheduler.framework.nodedata import NodeSet
from scheduler.framework.resource import CPU, MEMORY
from scheduler.plugins.noderesources import balanced_allocation, fit
from scheduler.plugins.noderesources.balanced_allocation import balanced_columns, balanced_score
from scheduler.plugins.noderesources.fit import (
    NodeResourcesFitArgs,
    ScoringStrategy,
    least_allocated_columns,
    least_allocated_scorer,
)
from scheduler.plugins.noderesources.resource_allocation import ResourceSpec, node_vectors, pod_request_list
from tests.builders import node, pod
from tests.unit.framework_fakes import Snapshot, fake_handle, node_set, resource_columns


def random_node(rng: random.Random) -> NodeInfo:
    info = NodeInfo()
    # Zero allocatable and over-commitment included: both have their own branches.
    info.allocatable = Resource(rng.choice([0, 1, 999, 4000, 64000]), rng.choice([0, 7, 2**30, 2**35]))
    info.requested = Resource(rng.randrange(0, 70000), rng.randrange(0, 2**36))
    info.non_zero_requested = Resource(rng.randrange(0, 70000), rng.randrange(0, 2**36))
    return info




def random_pod(rng: random.Random) -> PodInfo:
    requests = {"cpu": f"{rng.randrange(0, 5000)}m", "memory": str(rng.randrange(0, 2**33))}
    made = pod(requests=requests)
    # Sometimes a RuntimeClass overhead, which every path counts as requested.
    if rng.random() < 0.5:
        made.spec.overhead["cpu"] = f"{rng.randrange(0, 500)}m"
        made.spec.overhead["memory"] = str(rng.randrange(0, 2**28))
    return PodInfo(made)


@pytest.mark.parametrize("seed", range(5))
def test_least_allocated_fast_path_equals_the_scorer(seed: int) -> None:
    rng = random.Random(seed)
    weights = (rng.randrange(1, 101), rng.randrange(1, 101))
    resources = (ResourceSpec(CPU, weights[0]), ResourceSpec(MEMORY, weights[1]))
    scorer = least_allocated_scorer(resources)
    nodes = [random_node(rng) for _ in range(300)]
    pod = random_pod(rng)
    pod_request = pod_request_list(pod, resources, use_requested=False)
    expected = [scorer(*node_vectors(n, resources, pod_request, use_requested=False)) for n in nodes]
    plugin = fit.NodeResourcesFit(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(resources=resources)))
    state = CycleState()
    plugin.pre_score(state, pod, nodes)
    assert plugin.score_nodes(state, pod, node_set(nodes)) == expected


@pytest.mark.parametrize("seed", range(5))
def test_balanced_fast_path_equals_balanced_score(seed: int) -> None:
    rng = random.Random(seed)
    resources = (ResourceSpec(CPU), ResourceSpec(MEMORY))
    nodes = [random_node(rng) for _ in range(300)]
    pod = random_pod(rng)
    pod_request = pod_request_list(pod, resources, use_requested=True)
    expected = [balanced_score(*node_vectors(n, resources, pod_request, use_requested=True)) for n in nodes]
    plugin = balanced_allocation.new(None, fake_handle(Snapshot([])))
    state = CycleState()
    plugin.pre_score(state, pod, nodes)
    assert plugin.score_nodes(state, pod, node_set(nodes)) == expected


@pytest.mark.parametrize("seed", range(5))
def test_least_allocated_columns_equal_the_scorer(seed: int) -> None:
    rng = random.Random(seed)
    weights = (rng.randrange(1, 101), rng.randrange(1, 101))
    resources = (ResourceSpec(CPU, weights[0]), ResourceSpec(MEMORY, weights[1]))
    scorer = least_allocated_scorer(resources)
    nodes = [random_node(rng) for _ in range(300)]
    pod_request = (rng.randrange(0, 5000), rng.randrange(0, 2**33))
    assert least_allocated_columns(*resource_columns(nodes), pod_request, weights) == (
        [scorer(*node_vectors(n, resources, pod_request, use_requested=False)) for n in nodes])


@pytest.mark.parametrize("seed", range(5))
def test_balanced_columns_equal_balanced_score(seed: int) -> None:
    rng = random.Random(seed)
    resources = (ResourceSpec(CPU), ResourceSpec(MEMORY))
    nodes = [random_node(rng) for _ in range(300)]
    pod_request = (rng.randrange(0, 5000), rng.randrange(0, 2**33))
    assert balanced_columns(*resource_columns(nodes), pod_request) == (
        [balanced_score(*node_vectors(n, resources, pod_request, use_requested=True)) for n in nodes])


def verdicts(statuses: list[Status | None]) -> list[tuple[str, tuple[str, ...]] | None]:
    return [None if s is None else (s.code.name, s.reasons) for s in statuses]


@pytest.mark.parametrize("seed", range(5))
def test_the_fit_filter_decides_a_snapshot_batch_as_node_by_node(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [node(f"n{i}", allocatable={"cpu": str(rng.choice([0, 1, 2, 4])),
                                        "memory": f"{rng.choice([0, 1, 4])}Gi",
                                        "pods": str(rng.choice([0, 1, 2, 110]))})
             for i in range(60)]
    bound = [pod(requests={"cpu": f"{rng.randrange(0, 2000)}m", "memory": f"{rng.randrange(0, 2048)}Mi"},
                        name=f"p{i}", node_name=f"n{rng.randrange(60)}")
             for i in range(80)]
    snapshot = snapshot_of(nodes, bound)
    plugin = fit.new(None, fake_handle(Snapshot([])))
    state = CycleState()
    pod_info = PodInfo(pod(cpu=f"{rng.randrange(1, 3000)}m", memory=f"{rng.randrange(1, 3000)}Mi"))
    plugin.pre_filter(state, pod_info, snapshot.list())
    batch = snapshot.node_set(snapshot.list())
    assert exact_columns(batch) is not None
    expected = verdicts([plugin.filter(state, pod_info, info) for info in snapshot.list()])
    assert "Too many pods" in str(expected) and None in expected  # both paths are exercised
    assert verdicts(plugin.filter_nodes(state, pod_info, batch)) == expected
    # A rotated window, as the algorithm asks, and a subset, as the framework narrows one.
    rotated = snapshot.rotated(17).window(5, 50)
    assert verdicts(plugin.filter_nodes(state, pod_info, rotated)) == (expected[17:] + expected[:17])[5:50]
    assert verdicts(plugin.filter_nodes(state, pod_info, snapshot.node_set(rotated))) == (
        expected[17:] + expected[:17])[5:50]
    assert verdicts(plugin.filter_nodes(state, pod_info, batch.subset([3, 1, 40]))) == [
        expected[3], expected[1], expected[40]]


def test_a_value_too_large_for_exact_vector_arithmetic_turns_the_vector_paths_off() -> None:
    nodes = [random_node(random.Random(0)) for _ in range(3)]
    nodes[1].allocatable.memory = EXACT_LIMIT
    batch = node_set(nodes)
    assert exact_columns(batch) is None
    assert exact_columns(NodeSet(nodes)) is None  # nodes without rows
    assert batch.table is not None
    batch.table.data(ResourceColumns).set_row(1, random_node(random.Random(1)))
    assert exact_columns(batch) is not None
