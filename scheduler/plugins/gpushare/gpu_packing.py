"""GpuPackingScore: prefer, in this order, sharing GPUs already in use, then free GPUs of a node in use,
then free nodes (the fewer GPUs the better). With ``f`` the node's fully free GPUs and the pod's GPUs
taken from the least free that hold it:

- every GPU of the node free: ``max(33 - f, f)``;
- it takes ``u > 0`` fully free GPUs: ``max(50 - u, 33)``;
- it takes only GPUs in use: ``max(100 - sum(int(free_g * 100 / 1000)) / 10, 50)`` over its GPUs.

Pods without GPUs, and nodes that cannot hold the pod (the Filter has removed them), score 0.
GPU selection: "best".
"""

from __future__ import annotations

import numpy as np

from scheduler.config.argtypes import GpuShareArgs
from scheduler.framework import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, Handle, NodeInfo, NodeSet, PodInfo
from scheduler.gpus.table import MILLI, GpuColumns
from scheduler.plugins.gpushare.common import (
    GpuSharePolicy,
    NodeGpus,
    PodDemand,
    Scores,
    valid_gpus,
)

NAME = "GpuPackingScore"

ARGS = GpuShareArgs


def gpu_packing_score(node: NodeGpus, demand: PodDemand) -> int:
    if demand.milli <= 0:
        return MIN_NODE_SCORE
    fully_free = sum(1 for left in node.free if left == MILLI)
    if fully_free == len(node.free):
        return max(MAX_NODE_SCORE // 3 - fully_free, fully_free)
    wanted, taken = demand.count, []
    for left in sorted(node.free):  # the least free first
        if wanted == 0:
            break
        if demand.milli <= left:
            wanted -= 1
            taken.append(left)
    if wanted:
        return MIN_NODE_SCORE
    fully_free_taken = sum(1 for left in taken if left == MILLI)
    if fully_free_taken:
        return max(MAX_NODE_SCORE // 2 - fully_free_taken, MAX_NODE_SCORE // 3)
    free_percent = sum(left * 100 // MILLI for left in taken)
    return max(MAX_NODE_SCORE - free_percent // 10, MAX_NODE_SCORE // 2)


def gpu_packing_scores(columns: GpuColumns, demand: PodDemand) -> Scores:
    rows = len(columns.gpus)
    if demand.milli <= 0:
        return np.zeros(rows, dtype=np.int64)
    valid = valid_gpus(columns)
    fully_free = ((columns.free == MILLI) & valid).sum(axis=1)
    # The least free first; padding (-1) never holds the pod.
    ordered = np.sort(np.where(valid, columns.free, -1), axis=1)
    holds = ordered >= demand.milli
    taken = holds & (np.cumsum(holds, axis=1) <= demand.count)
    fits = holds.sum(axis=1) >= demand.count
    fully_free_taken = (taken & (ordered == MILLI)).sum(axis=1)
    free_percent = np.where(taken, ordered * 100 // MILLI, 0).sum(axis=1)
    shared = np.maximum(MAX_NODE_SCORE - free_percent // 10, MAX_NODE_SCORE // 2)
    in_use = np.where(fully_free_taken > 0,
                      np.maximum(MAX_NODE_SCORE // 2 - fully_free_taken, MAX_NODE_SCORE // 3), shared)
    result: Scores = np.where(fully_free == columns.gpus,
                              np.maximum(MAX_NODE_SCORE // 3 - fully_free, fully_free),
                              np.where(fits, in_use, MIN_NODE_SCORE))
    return result


class GpuPackingScore(GpuSharePolicy):
    NAME = NAME

    def node_score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        return gpu_packing_score(self.node_view(node_info), self.demand(pod))

    def column_scores(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Scores:
        return gpu_packing_scores(self.columns(nodes), self.demand(pod))


def new(args: GpuShareArgs | None, handle: Handle) -> GpuPackingScore:
    return GpuPackingScore(GpuShareArgs() if args is None else args, handle)
