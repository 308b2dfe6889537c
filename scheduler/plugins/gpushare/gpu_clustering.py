"""GpuClusteringScore: keep pods of one GPU kind together. A pod's GPU kind is "share" (a share of one
GPU) or "k-gpu" (k whole GPUs); a node's kinds are those of the pods on it. With ``left`` the node's
total free GPU milli and ``base = 25 (8000 - left) / 8000`` (integer division):

- the node holds only pods of the pod's kind: ``base + 75``;
- it holds the pod's kind and others: ``base + 50``;
- it holds no GPU pod: ``base + 25``;
- it holds only other kinds: ``base``.

Pods without GPUs score 0 everywhere. GPU selection: "best".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
import numpy.typing as npt

from scheduler.config.argtypes import GpuShareArgs
from scheduler.framework import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, Handle, NodeInfo, NodeSet, PodInfo
from scheduler.gpus.table import MILLI, GpuColumns, gpu_request
from scheduler.plugins.gpushare.common import (
    MAX_SPEC_GPU,
    GpuSharePolicy,
    NodeGpus,
    Scores,
    trunc_div_columns,
)
from scheduler.plugins.gpushare.selection import trunc_div

NAME = "GpuClusteringScore"

ARGS = GpuShareArgs

#: A pod's GPU kind; None: no GPUs.
Kind = str | None


def gpu_kind(count: int, milli: int) -> Kind:
    if not count:
        return None
    if count == 1 and milli < MILLI:
        return "share"
    if milli == MILLI:
        return f"{count}-gpu"
    return f"{count}x{milli}m"


def clustering_score(node: NodeGpus, kind: str, node_kinds: set[str]) -> int:
    """The score of a pod of GPU kind ``kind`` on a node holding pods of ``node_kinds``."""
    base = trunc_div(MAX_NODE_SCORE // 4 * (MAX_SPEC_GPU - sum(node.free)), MAX_SPEC_GPU)
    if kind in node_kinds:
        return base + (MAX_NODE_SCORE * 3 // 4 if len(node_kinds) == 1 else MAX_NODE_SCORE * 2 // 4)
    return base + (MAX_NODE_SCORE // 4 if not node_kinds else 0)


def clustering_scores(columns: GpuColumns, holds_kind: npt.NDArray[np.bool_],
                      kinds: npt.NDArray[np.int64]) -> Scores:
    """``clustering_score`` of every row, given whether each node holds the pod's kind and how many
    kinds it holds."""
    base = trunc_div_columns(MAX_NODE_SCORE // 4 * (MAX_SPEC_GPU - columns.free.sum(axis=1)), MAX_SPEC_GPU)
    result: Scores = base + np.where(
        holds_kind, np.where(kinds == 1, MAX_NODE_SCORE * 3 // 4, MAX_NODE_SCORE * 2 // 4),
        np.where(kinds == 0, MAX_NODE_SCORE // 4, 0))
    return result


class NodeKinds:
    """Node data: the GPU kinds of each node's pods, as a column per kind and their number per node
    (kept current as nodes change, so a cycle reads them without a pass over the pods)."""

    def __init__(self, kinds_of: Callable[[NodeInfo], set[str]], nodes: Sequence[NodeInfo]) -> None:
        self._kinds_of = kinds_of
        self._size = len(nodes)
        self.holds: dict[str, npt.NDArray[np.bool_]] = {}
        self.count: npt.NDArray[np.int64] = np.zeros(self._size, dtype=np.int64)
        for row, info in enumerate(nodes):
            self.set_row(row, info)

    def set_row(self, row: int, info: NodeInfo) -> None:
        kinds = self._kinds_of(info)
        for kind in kinds - self.holds.keys():
            self.holds[kind] = np.zeros(self._size, dtype=np.bool_)
        for kind, column in self.holds.items():
            column[row] = kind in kinds
        self.count[row] = len(kinds)


class GpuClusteringScore(GpuSharePolicy):
    NAME = NAME

    def __init__(self, args: GpuShareArgs, handle: Handle) -> None:
        super().__init__(args, handle)
        #: The node data's builder: one object, so that the snapshot's table keeps one NodeKinds.
        self._node_kinds = partial(NodeKinds, self.node_kinds)

    def node_kinds(self, info: NodeInfo) -> set[str]:
        kinds = set()
        for pod in info.pods.values():
            request = gpu_request(self._handle.dra_manager, pod, self._spec)
            kind = gpu_kind(request.count, request.milli) if request is not None else None
            if kind is not None:
                kinds.add(kind)
        return kinds

    def node_score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        demand = self.demand(pod)
        kind = gpu_kind(demand.count, demand.milli)
        if kind is None:
            return MIN_NODE_SCORE
        return clustering_score(self.node_view(node_info), kind, self.node_kinds(node_info))

    def column_scores(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Scores:
        demand = self.demand(pod)
        kind = gpu_kind(demand.count, demand.milli)
        if kind is None:
            return np.zeros(len(nodes), dtype=np.int64)
        found = nodes.node_data(self._node_kinds)
        if found is None:
            node_kinds = [self.node_kinds(info) for info in nodes]
            holds = np.array([kind in kinds for kinds in node_kinds], dtype=np.bool_)
            count = np.array([len(kinds) for kinds in node_kinds], dtype=np.int64)
        else:
            data, rows = found
            column = data.holds.get(kind)
            holds = column[rows] if column is not None else np.zeros(len(rows), dtype=np.bool_)
            count = data.count[rows]
        return clustering_scores(self.columns(nodes), holds, count)


def new(args: GpuShareArgs | None, handle: Handle) -> GpuClusteringScore:
    return GpuClusteringScore(GpuShareArgs() if args is None else args, handle)

