"""BestFitScore: prefer the node the pod leaves with the least CPU and GPU free.

``raw = int((1 - (0.5 (cpuLeft - cpu) / 128000 + 0.5 (gpuLeft - gpu) / 8000)) * 100)`` with the node's
free CPU and total free GPU milli and the pod's CPU and total GPU milli (CPU-only pods too); a node that
cannot hold the pod scores 0 (the Filter has removed it). NormalizeScore stretches the raw scores
min-max onto 0..100 (integer division; all equal: all 0). GPU selection: "best".
"""

from __future__ import annotations

import numpy as np

from scheduler.config.argtypes import GpuShareArgs
from scheduler.framework import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    CycleState,
    Handle,
    NodeInfo,
    NodeScore,
    NodeSet,
    PodInfo,
    Status,
)
from scheduler.gpus.table import GpuColumns
from scheduler.plugins.gpushare.common import (
    MAX_SPEC_CPU,
    MAX_SPEC_GPU,
    GpuSharePolicy,
    NodeGpus,
    PodDemand,
    Scores,
    truncated,
)

NAME = "BestFitScore"

ARGS = GpuShareArgs

_WEIGHT = 0.5


def best_fit_score(node: NodeGpus, demand: PodDemand) -> int:
    free, request = (node.cpu_left, sum(node.free)), (demand.milli_cpu, demand.total)
    if any(have < need for have, need in zip(free, request, strict=True)):
        return MIN_NODE_SCORE
    score = 0.0
    for have, need, spec in zip(free, request, (MAX_SPEC_CPU, MAX_SPEC_GPU), strict=True):
        score += (have - need) / spec * _WEIGHT
    return int((1.0 - score) * MAX_NODE_SCORE)


def best_fit_scores(columns: GpuColumns, demand: PodDemand) -> Scores:
    gpu_left = columns.free.sum(axis=1)
    fits = (columns.cpu_left >= demand.milli_cpu) & (gpu_left >= demand.total)
    score = ((columns.cpu_left - demand.milli_cpu) / MAX_SPEC_CPU * _WEIGHT
             + (gpu_left - demand.total) / MAX_SPEC_GPU * _WEIGHT)
    result: Scores = np.where(fits, truncated((1.0 - score) * MAX_NODE_SCORE), MIN_NODE_SCORE)
    return result


def normalize(scores: list[int]) -> None:
    """The artifact's NormalizeScore, in place: min-max onto 0..100; all equal: all 0."""
    if not scores:
        return
    lowest, highest = min(scores), max(scores)
    spread = highest - lowest
    for at, score in enumerate(scores):
        scores[at] = (score - lowest) * (MAX_NODE_SCORE - MIN_NODE_SCORE) // spread + MIN_NODE_SCORE \
            if spread else MIN_NODE_SCORE


class BestFitScore(GpuSharePolicy):
    NAME = NAME

    def node_score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        return best_fit_score(self.node_view(node_info), self.demand(pod))

    def column_scores(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Scores:
        return best_fit_scores(self.columns(nodes), self.demand(pod))

    def score_extensions(self) -> BestFitScore:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        plain = [entry.score for entry in scores]
        normalize(plain)
        scores[:] = [NodeScore(entry.name, score) for entry, score in zip(scores, plain, strict=True)]
        return None

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: list[int]) -> Status | None:
        normalize(scores)
        return None


def new(args: GpuShareArgs | None, handle: Handle) -> BestFitScore:
    return BestFitScore(GpuShareArgs() if args is None else args, handle)
