"""NodeResourcesBalancedAllocation: prefer nodes whose resources would be used evenly with the pod.

Per configured resource (default CPU and memory) the fraction ``(requested on the node + the pod's
request) / allocatable``, capped at 1, using the real requests (no non-zero defaults); resources the
node does not have, and extended resources the pod does not request, are left out. The score is
``(1 - std) * 100`` truncated, where std is the standard deviation of the fractions (for exactly two,
``|f1 - f2| / 2``; for one or none, 0). A pod that requests none of the resources (best effort) is not
scored at all (PreScore returns SKIP), so that such pods do not all pile onto the same node.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from scheduler.config.argtypes import NodeResourcesBalancedAllocationArgs
from scheduler.framework import (
    MAX_NODE_SCORE,
    CycleState,
    Handle,
    NodeInfo,
    NotFound,
    PodInfo,
    Signature,
    Status,
)
from scheduler.framework.columns import EXACT_LIMIT, ResourceColumns, exact_columns
from scheduler.framework.nodedata import NodeSet, Rows
from scheduler.framework.resource import CPU, MEMORY
from scheduler.plugins.noderesources.resource_allocation import (
    node_vectors,
    pod_request_list,
    request_signature,
)

NAME = "NodeResourcesBalancedAllocation"

_PRE_SCORE_KEY = "PreScore" + NAME


#: kube-scheduler's NodeResourcesBalancedAllocationArgs, decoded, defaulted and validated by
#: scheduler.config.
ARGS = NodeResourcesBalancedAllocationArgs


def balanced_score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    fractions = [min(req / alloc, 1.0) for req, alloc in zip(requested, allocatable, strict=True) if alloc]
    std = 0.0
    if len(fractions) == 2:
        std = abs(fractions[0] - fractions[1]) / 2
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


def balanced_columns(columns: ResourceColumns, rows: Rows, pod_request: Sequence[int]) -> list[int]:
    """``balanced_score`` over (CPU, memory) with the real requests, for a batch: the same float64
    operations over the resource columns (every integer below EXACT_LIMIT converts exactly, so each
    division rounds as Python's does; for two fractions the standard deviation is ``|f1 - f2| / 2``, and
    with one or none there is no spread)."""
    cpu, memory = columns.alloc_cpu[rows], columns.alloc_memory[rows]
    both = (cpu != 0) & (memory != 0)
    cpu_fraction = np.minimum((columns.requested_cpu[rows] + pod_request[0]) / np.where(both, cpu, 1), 1.0)
    memory_fraction = np.minimum(
        (columns.requested_memory[rows] + pod_request[1]) / np.where(both, memory, 1), 1.0)
    balanced = ((1 - np.abs(cpu_fraction - memory_fraction) / 2) * MAX_NODE_SCORE).astype(np.int64)
    scores: list[int] = np.where(both, balanced, MAX_NODE_SCORE).tolist()
    return scores


class NodeResourcesBalancedAllocation:
    def __init__(self, args: NodeResourcesBalancedAllocationArgs) -> None:
        self._resources = args.resources
        self._cpu_memory = tuple(spec.name for spec in args.resources) == (CPU, MEMORY)

    @property
    def name(self) -> str:
        return NAME

    def sign(self, pod: PodInfo) -> Signature:
        """Score reads the pod's requests alone."""
        return request_signature(pod)

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        requests = pod_request_list(pod, self._resources, use_requested=True)
        if not any(requests):
            return Status.skip()
        state.write(_PRE_SCORE_KEY, requests)
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        requests = self._requests(state, pod)
        if requests is None:
            return 0
        return balanced_score(*node_vectors(node_info, self._resources, requests, use_requested=True))

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> list[int]:
        """``score`` of every node; over CPU and memory (the default) over the resource columns for a
        batch of the snapshot's nodes."""
        requests = self._requests(state, pod)
        if requests is None:
            return [0] * len(nodes)
        found = exact_columns(nodes) if self._cpu_memory else None
        if found is not None and max(requests) < EXACT_LIMIT:
            return balanced_columns(*found, requests)
        return [balanced_score(*node_vectors(node_info, self._resources, requests, use_requested=True))
                for node_info in nodes]

    def _requests(self, state: CycleState, pod: PodInfo) -> tuple[int, ...] | None:
        """The pod's requests PreScore left; None when it requests none of the resources (not scored)."""
        try:
            requests: tuple[int, ...] = state.read(_PRE_SCORE_KEY)
        except NotFound:
            requests = pod_request_list(pod, self._resources, use_requested=True)
            if not any(requests):
                return None
        return requests

    def score_extensions(self) -> None:
        # Scores are already 0..100.
        return None


def new(args: NodeResourcesBalancedAllocationArgs | None, handle: Handle) -> NodeResourcesBalancedAllocation:
    """None (a framework built without a configuration): the defaults."""
    return NodeResourcesBalancedAllocation(NodeResourcesBalancedAllocationArgs() if args is None else args)
