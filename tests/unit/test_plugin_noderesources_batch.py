"""The resource plugins' ``score_nodes`` fast paths give exactly the per-node scores, on random nodes."""

from __future__ import annotations

import random

import pytest

from scheduler.framework import NodeInfo, Resource
from scheduler.framework.resource import CPU, MEMORY
from scheduler.plugins.noderesources.balanced_allocation import balanced_cpu_memory, balanced_score
from scheduler.plugins.noderesources.fit import least_allocated_cpu_memory, least_allocated_scorer
from scheduler.plugins.noderesources.resource_allocation import ResourceSpec, node_vectors


def random_node(rng: random.Random) -> NodeInfo:
    info = NodeInfo()
    # Zero allocatable and over-commitment included: both have their own branches.
    info.allocatable = Resource(rng.choice([0, 1, 999, 4000, 64000]), rng.choice([0, 7, 2**30, 2**35]))
    info.requested = Resource(rng.randrange(0, 70000), rng.randrange(0, 2**36))
    info.non_zero_requested = Resource(rng.randrange(0, 70000), rng.randrange(0, 2**36))
    return info


@pytest.mark.parametrize("seed", range(5))
def test_least_allocated_fast_path_equals_the_scorer(seed: int) -> None:
    rng = random.Random(seed)
    weights = (rng.randrange(1, 101), rng.randrange(1, 101))
    resources = (ResourceSpec(CPU, weights[0]), ResourceSpec(MEMORY, weights[1]))
    scorer = least_allocated_scorer(resources)
    nodes = [random_node(rng) for _ in range(300)]
    pod_request = (rng.randrange(0, 5000), rng.randrange(0, 2**33))
    expected = [scorer(*node_vectors(n, resources, pod_request, use_requested=False)) for n in nodes]
    assert least_allocated_cpu_memory(nodes, pod_request, weights) == expected


@pytest.mark.parametrize("seed", range(5))
def test_balanced_fast_path_equals_balanced_score(seed: int) -> None:
    rng = random.Random(seed)
    resources = (ResourceSpec(CPU), ResourceSpec(MEMORY))
    nodes = [random_node(rng) for _ in range(300)]
    pod_request = (rng.randrange(0, 5000), rng.randrange(0, 2**33))
    expected = [balanced_score(*node_vectors(n, resources, pod_request, use_requested=True)) for n in nodes]
    assert balanced_cpu_memory(nodes, pod_request) == expected
