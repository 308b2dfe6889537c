"""RandomScore: one feasible node, drawn with the scheduler's seeded random source at PreScore, scores
100 and every other node 0 (pods without GPUs too). GPU selection: "random" -- a share pod's GPU drawn
uniformly among those of the node that hold it, with the same source; whole GPUs the lowest-index free.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scheduler.config.argtypes import GpuShareArgs
from scheduler.framework import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    CycleState,
    Handle,
    NodeInfo,
    NodeSet,
    NotFound,
    PluginError,
    PodInfo,
    Status,
)
from scheduler.plugins.gpushare.common import GpuSharePolicy, PodDemand, Scores
from scheduler.plugins.gpushare.selection import random_fit_order

NAME = "RandomScore"

ARGS = GpuShareArgs

_PRE_SCORE_KEY = "PreScore" + NAME


class RandomScore(GpuSharePolicy):
    NAME = NAME

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        if nodes:
            state.write(_PRE_SCORE_KEY, nodes[self._handle.rng.randrange(len(nodes))].name)
        return None

    def _chosen(self, state: CycleState) -> str:
        try:
            chosen: str = state.read(_PRE_SCORE_KEY)
        except NotFound:
            raise PluginError(f"{_PRE_SCORE_KEY!r} is not in the cycle state: PreScore did not run") from None
        return chosen

    def node_score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        return MAX_NODE_SCORE if node_info.name == self._chosen(state) else MIN_NODE_SCORE

    def column_scores(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Scores:
        chosen = self._chosen(state)
        return np.array([MAX_NODE_SCORE if info.name == chosen else MIN_NODE_SCORE for info in nodes],
                        dtype=np.int64)

    def order_gpus(self, state: CycleState, pod: PodInfo, node: NodeInfo, demand: PodDemand,
                   indexes: Sequence[int], free: Sequence[int]) -> list[int]:
        return random_fit_order(indexes, free, demand.milli, self._handle.rng)


def new(args: GpuShareArgs | None, handle: Handle) -> RandomScore:
    return RandomScore(GpuShareArgs() if args is None else args, handle)
