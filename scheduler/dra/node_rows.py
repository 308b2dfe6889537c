"""Per-device tables of the cluster (the device capacity table, the GPU view) meet a scheduling cycle's
nodes by name: ``NodeNames`` keeps each row's node name as node data of the scheduler's node table
(framework/nodedata.py), and ``NodeRows`` what each row maps to in a table's own layout, worked out
again only when a row was renamed or the layout changed."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from scheduler.framework.nodedata import NodeSet
from scheduler.framework.types import NodeInfo

Ints = npt.NDArray[np.int64]


class NodeNames:
    """Node data: each row's node name (empty for a NodeInfo without its node), and how many times a row
    was given another name."""

    __slots__ = ("names", "renamed")

    def __init__(self, nodes: Sequence[NodeInfo]) -> None:
        self.names = [node_name(info) for info in nodes]
        self.renamed = 0

    def set_row(self, row: int, info: NodeInfo) -> None:
        name = node_name(info)
        if self.names[row] != name:
            self.names[row] = name
            self.renamed += 1


def node_name(info: NodeInfo) -> str:
    """The name a node is looked up by: empty for a NodeInfo without its node (it has no devices)."""
    return "" if info.node is None else info.name


class NodeRows:
    """What each row of the node table maps to in one layout, by the rows' names."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        #: The table's names, their renames, the layout and what the rows map to.
        self._kept: tuple[NodeNames, int, object, Ints] | None = None

    def of(self, nodes: NodeSet, layout: object, lookup: Callable[[Sequence[str]], Ints]) -> Ints | None:
        """What each of ``nodes`` maps to in ``layout``: ``lookup`` of the node table's names, taken at
        the rows of ``nodes``; None for nodes without rows."""
        found = nodes.node_data(NodeNames)
        if found is None:
            return None
        names, rows = found
        kept = self._kept
        if kept is None or kept[0] is not names or kept[1] != names.renamed or kept[2] is not layout:
            kept = self._kept = (names, names.renamed, layout, lookup(names.names))
        mapped: Ints = kept[3][rows]
        return mapped
