"""Derived node data: what a plugin computes once per node of a snapshot (NumPy columns, codes of label
values, ...) and keeps from one cycle to the next, so that its batch Filter or Score decides many nodes
in a few vector operations instead of a Python step per node (5000 nodes, hundreds filtered and scored
per pod).

A plugin's node data is a class of its own: built from the snapshot's node list (one row per node, in
the list's order) and told when the node of a row changes (``NodeData``). The snapshot keeps a
``NodeTable``, a registry of such data by class: a plugin asks a ``NodeBatch`` for its data with
``batch.data(ItsClass)``, the table builds it the first time, and from then on rewrites a row when the
snapshot puts a changed node in place and rebuilds the data with the node list. The snapshot knows no
plugin's data; several plugins may share one class (the resource columns, framework/columns.py).

A ``NodeBatch`` is a list of the snapshot's own NodeInfos that also carries their rows. Plugins take
their vector paths only for one: any other sequence (such as the modified copies preemption filters)
goes the per-node way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, TypeVar, cast

import numpy as np
import numpy.typing as npt

from scheduler.framework.types import NodeInfo

Rows = npt.NDArray[np.intp]


class NodeData(Protocol):
    """A plugin's derived data of a node list, one row per node."""

    def set_row(self, row: int, info: NodeInfo) -> None:
        """The node at ``row`` is now ``info`` (a changed copy of it, or another node)."""
        ...


D = TypeVar("D", bound=NodeData)

#: How a kind of node data is built from a node list: its class, usually.
NodeDataBuilder = Callable[[Sequence[NodeInfo]], D]


class NodeTable:
    """The rows of a snapshot's node list and the node data registered on it, by builder."""

    __slots__ = ("_data", "_nodes", "positions")

    def __init__(self, nodes: Sequence[NodeInfo] = ()) -> None:
        self._data: dict[NodeDataBuilder[Any], NodeData] = {}
        self.rebuild(nodes)

    def rebuild(self, nodes: Sequence[NodeInfo]) -> None:
        """One row per node, in ``nodes``' order, for every data registered so far."""
        #: 0..size-1, the rows in node-list order.
        self.positions: Rows = np.arange(len(nodes), dtype=np.intp)
        #: The node list the rows are of (the snapshot's own: it puts a changed node in place first).
        self._nodes = nodes
        for build in self._data:
            self._data[build] = build(nodes)

    def set_row(self, row: int, info: NodeInfo) -> None:
        for data in self._data.values():
            data.set_row(row, info)

    def data(self, build: NodeDataBuilder[D]) -> D:
        """The data ``build`` makes of the node list, registered (and built) the first time it is
        asked for and kept current from then on."""
        data = self._data.get(build)
        if data is None:
            data = self._data[build] = build(self._nodes)
        return cast(D, data)


class NodeBatch(list[NodeInfo]):
    """Nodes of a snapshot with their rows in its table (``rows[i]`` is ``self[i]``'s)."""

    __slots__ = ("rows", "table")

    def __init__(self, nodes: Iterable[NodeInfo], rows: Rows, table: NodeTable) -> None:
        super().__init__(nodes)
        self.rows = rows
        self.table = table

    def data(self, build: NodeDataBuilder[D]) -> D:
        """The snapshot's ``build`` data (index it with ``rows``)."""
        return self.table.data(build)

    def window(self, start: int, stop: int) -> NodeBatch:
        """``self[start:stop]`` with its rows (a plain slice of a list is a plain list)."""
        return NodeBatch(self[start:stop], self.rows[start:stop], self.table)

    def subset(self, positions: Sequence[int]) -> NodeBatch:
        """The nodes at ``positions`` of this batch, with their rows."""
        rows = self.rows[np.asarray(positions, dtype=np.intp)]
        return NodeBatch(list(map(self.__getitem__, positions)), rows, self.table)


def subset(nodes: Sequence[NodeInfo], positions: Sequence[int]) -> Sequence[NodeInfo]:
    """The nodes at ``positions`` of ``nodes``, still a batch if ``nodes`` is one."""
    if isinstance(nodes, NodeBatch):
        return nodes.subset(positions)
    return list(map(nodes.__getitem__, positions))
