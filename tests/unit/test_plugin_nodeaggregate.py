"""NodeAggregate kept up to date across changes equals one built from scratch over the same nodes."""

from __future__ import annotations

import random

import pytest

from scheduler.framework import NodeInfo, PodInfo
from scheduler.plugins.nodeaggregate import Contribution, NodeAggregate
from tests.builders import node, pod


def pod_count(node_info: NodeInfo) -> Contribution[str]:
    zone = node_info.labels.get("zone", "")
    return (("pods", zone, len(node_info.pods)),)


def from_scratch(nodes: list[NodeInfo]) -> dict[str, dict[str, int]]:
    aggregate: NodeAggregate[str] = NodeAggregate()
    aggregate.refresh(nodes, pod_count)
    return aggregate.totals


@pytest.mark.parametrize("seed", range(4))
def test_incremental_refresh_equals_a_fresh_one(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [NodeInfo(node(f"n{i}", labels={"zone": f"z{i % 3}"})) for i in range(30)]
    aggregate: NodeAggregate[str] = NodeAggregate()
    aggregate.refresh(nodes, pod_count)
    for step in range(60):
        action = rng.random()
        if action < 0.6:  # a pod lands on a node: a new NodeInfo copy with a new generation
            i = rng.randrange(len(nodes))
            changed = nodes[i].clone()
            changed.add_pod(PodInfo(pod(name=f"p{step}", node_name=changed.name)))
            nodes[i] = changed
        elif action < 0.8 and len(nodes) > 1:  # a node leaves
            nodes.pop(rng.randrange(len(nodes)))
        else:  # a node joins
            nodes.append(NodeInfo(node(f"new{step}", labels={"zone": f"z{step % 4}"})))
        aggregate.refresh(nodes, pod_count)
        assert aggregate.totals == from_scratch(nodes)
