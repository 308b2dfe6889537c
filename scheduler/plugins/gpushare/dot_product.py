"""DotProductScore: Tetris's alignment heuristic, as the experiment runs it (dimExtMethod "merge",
normMethod "max"): the node's free vector (CPU left, total GPU milli left) and the pod's request vector
(CPU, total GPU milli), both divided by the largest node (128000, 8000); ``score = int(100 (1 - n·p / 2))``
(the smaller the product, the higher). A node whose CPU left is below the pod's scores 0. CPU-only pods
are scored the same way (their GPU term is 0). GPU selection: "best".
"""

from __future__ import annotations

import numpy as np

from scheduler.config.argtypes import GpuShareArgs
from scheduler.framework import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, Handle, NodeInfo, NodeSet, PodInfo
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

NAME = "DotProductScore"

ARGS = GpuShareArgs

#: The two dimensions (CPU, GPU) the product is divided by.
_DIMENSIONS = 2


def dot_product_score(node: NodeGpus, demand: PodDemand) -> int:
    if node.cpu_left < demand.milli_cpu:
        return MIN_NODE_SCORE
    product = 0.0
    for have, need, spec in ((node.cpu_left, demand.milli_cpu, MAX_SPEC_CPU),
                             (sum(node.free), demand.total, MAX_SPEC_GPU)):
        product += (have / spec) * (need / spec)
    score = 1 - product / _DIMENSIONS
    # The artifact keeps the best of its match groups, starting below any: a score of -1 or less stays
    # "none", scored as the minimum.
    if score <= -1:
        return MIN_NODE_SCORE
    return int(MAX_NODE_SCORE * score)


def dot_product_scores(columns: GpuColumns, demand: PodDemand) -> Scores:
    product = ((columns.cpu_left / MAX_SPEC_CPU) * (demand.milli_cpu / MAX_SPEC_CPU)
               + (columns.free.sum(axis=1) / MAX_SPEC_GPU) * (demand.total / MAX_SPEC_GPU))
    score = 1 - product / _DIMENSIONS
    scored = (columns.cpu_left >= demand.milli_cpu) & (score > -1)
    result: Scores = np.where(scored, truncated(MAX_NODE_SCORE * score), MIN_NODE_SCORE)
    return result


class DotProductScore(GpuSharePolicy):
    NAME = NAME

    def node_score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        return dot_product_score(self.node_view(node_info), self.demand(pod))

    def column_scores(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Scores:
        return dot_product_scores(self.columns(nodes), self.demand(pod))


def new(args: GpuShareArgs | None, handle: Handle) -> DotProductScore:
    return DotProductScore(GpuShareArgs() if args is None else args, handle)
