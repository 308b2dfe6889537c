"""Node data NodeUnschedulable and TaintToleration share: which nodes of a snapshot are cordoned or
without a Node object, and which have taints, as NumPy columns (one row per node). Their batch Filters
look only at those few rows instead of stepping through every node."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from scheduler.framework import NodeInfo, NodeSet


class NodeFlags:
    """Per row: ``suspect`` (cordoned, or no Node object: NodeUnschedulable may reject it) and
    ``tainted`` (TaintToleration may reject it)."""

    __slots__ = ("suspect", "tainted")

    def __init__(self, nodes: Sequence[NodeInfo]) -> None:
        self.suspect: npt.NDArray[np.bool_] = np.fromiter(map(_suspect, nodes), dtype=np.bool_,
                                                          count=len(nodes))
        self.tainted: npt.NDArray[np.bool_] = np.fromiter((bool(info.taints) for info in nodes),
                                                          dtype=np.bool_, count=len(nodes))

    def set_row(self, row: int, info: NodeInfo) -> None:
        self.suspect[row] = _suspect(info)
        self.tainted[row] = bool(info.taints)


def _suspect(info: NodeInfo) -> bool:
    return info.unschedulable or info.node is None


def flagged(nodes: Sequence[NodeInfo], column: str) -> list[int] | None:
    """The positions among ``nodes`` whose rows have ``column`` (a NodeFlags column) set; None for nodes
    without rows."""
    found = nodes.node_data(NodeFlags) if isinstance(nodes, NodeSet) else None
    if found is None:
        return None
    flags, rows = found
    positions: list[int] = np.flatnonzero(getattr(flags, column)[rows]).tolist()
    return positions
