"""Derived node data: what a plugin computes once per node of a snapshot (NumPy columns, codes of label
values, ...) and keeps from one cycle to the next, so that its batch Filter or Score decides many nodes
in a few vector operations instead of a Python step per node (5000 nodes, hundreds filtered and scored
per pod).

A plugin's node data is a class of its own: built from the snapshot's node list (one row per node, in
the list's order) and told when the node of a row changes (``NodeData``). The snapshot keeps a
``NodeTable``, a registry of such data by class: a plugin asks a ``NodeSet`` for its data and the
nodes' rows in it with ``nodes.node_data(ItsClass)``, the table builds it the first time, and from then
on rewrites a row when the snapshot puts a changed node in place and rebuilds the data with the node
list. The snapshot knows no
plugin's data; several plugins may share one class (the resource columns, framework/columns.py).

A ``NodeSet`` is what Filter and Score are handed: nodes, and their rows when they are the snapshot's
own NodeInfos. Plugins take their vector paths only where it has rows: other nodes (such as the
modified copies preemption filters) go the per-node way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar, cast, overload

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


class NodeSet(Sequence[NodeInfo]):
    """Nodes handed to Filter and Score, in order, with their rows in a snapshot's node table when they
    are the snapshot's own NodeInfos (``rows[i]`` is ``nodes[i]``'s), and without (``rows`` None) when
    they are not (the modified copies preemption filters, a lister without a table): plugins take their
    vector paths only where ``node_data`` answers."""

    __slots__ = ("nodes", "rows", "table")

    def __init__(self, nodes: list[NodeInfo], rows: Rows | None = None,
                 table: NodeTable | None = None) -> None:
        self.nodes = nodes
        self.rows = rows
        self.table = table

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self.nodes)

    @overload
    def __getitem__(self, index: int) -> NodeInfo: ...

    @overload
    def __getitem__(self, index: slice) -> list[NodeInfo]: ...

    def __getitem__(self, index: int | slice) -> NodeInfo | list[NodeInfo]:
        return self.nodes[index]

    def node_data(self, build: NodeDataBuilder[D]) -> tuple[D, Rows] | None:
        """The table's ``build`` data and these nodes' rows in it; None for nodes without rows."""
        if self.table is None or self.rows is None:
            return None
        return self.table.data(build), self.rows

    def window(self, start: int, stop: int) -> NodeSet:
        """The nodes from ``start`` to ``stop``, with their rows."""
        rows = self.rows
        return NodeSet(self.nodes[start:stop], None if rows is None else rows[start:stop], self.table)

    def subset(self, positions: Sequence[int]) -> NodeSet:
        """The nodes at ``positions``, in that order, with their rows."""
        rows = self.rows
        return NodeSet(list(map(self.nodes.__getitem__, positions)),
                       None if rows is None else rows[np.asarray(positions, dtype=np.intp)], self.table)
