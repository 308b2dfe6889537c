"""A snapshot's nodes as columns: what NodeResourcesFit and NodeResourcesBalancedAllocation read of every
node (and, per label key NodeAffinity asks about, each node's value), in NumPy arrays in the snapshot's node
order, so that they decide a whole batch of nodes in a few vector operations instead of a Python step per
node (5000 nodes, hundreds filtered and scored per pod).

The snapshot keeps the columns current: a changed node's row is rewritten when its copy is put in place,
and the columns are rebuilt with the node list. A ``NodeBatch`` is a list of the snapshot's own NodeInfos
that also carries their rows; plugins take the vector path only for one (any other sequence, such as the
modified copies preemption filters, goes the per-node way), and only while every value is below 2**53,
where int64 and float64 arithmetic give exactly what Python's integers and floats give.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from scheduler.framework.types import NodeInfo

#: Exact as an int64 product with a score (<= 100) and as a float64: the vector paths need both.
EXACT_LIMIT = 2**53

Rows = npt.NDArray[np.intp]


#: The int64 columns, one row per node.
COLUMNS = ("alloc_cpu", "alloc_memory", "alloc_pods", "non_zero_cpu", "non_zero_memory", "pod_count",
           "requested_cpu", "requested_memory")


#: Label signatures combine the keys' value codes into one int64 while the product of the keys' value
#: counts stays below this.
SIGNATURE_LIMIT = 2**62


class NodeColumns:
    __slots__ = ("_big_rows", "_labels", "_nodes", "positions", *COLUMNS)
    alloc_cpu: npt.NDArray[np.int64]
    alloc_memory: npt.NDArray[np.int64]
    alloc_pods: npt.NDArray[np.int64]
    non_zero_cpu: npt.NDArray[np.int64]
    non_zero_memory: npt.NDArray[np.int64]
    pod_count: npt.NDArray[np.int64]
    requested_cpu: npt.NDArray[np.int64]
    requested_memory: npt.NDArray[np.int64]

    def __init__(self, nodes: Sequence[NodeInfo] = ()) -> None:
        self.rebuild(nodes)

    def rebuild(self, nodes: Sequence[NodeInfo]) -> None:
        """One row per node, in ``nodes``' order."""
        size = len(nodes)
        #: 0..size-1, the rows in node-list order.
        self.positions: Rows = np.arange(size, dtype=np.intp)
        for name in COLUMNS:
            setattr(self, name, np.zeros(size, dtype=np.int64))
        #: Rows holding a value the vector paths cannot compute with exactly.
        self._big_rows: set[int] = set()
        #: The node list the rows are of (the snapshot's own: it puts a changed node in place first).
        self._nodes = nodes
        #: Per label key asked about since the rebuild: each row's value code, and the codes by value
        #: (0: no such label).
        self._labels: dict[str, tuple[npt.NDArray[np.int64], dict[str | None, int]]] = {}
        for row, info in enumerate(nodes):
            self.set_row(row, info)

    def set_row(self, row: int, info: NodeInfo) -> None:
        for key, (codes, code_of) in self._labels.items():
            codes[row] = code_of.setdefault(info.labels.get(key), len(code_of))
        allocatable, requested, non_zero = info.allocatable, info.requested, info.non_zero_requested
        values = (allocatable.milli_cpu, allocatable.memory, allocatable.allowed_pod_number,
                  non_zero.milli_cpu, non_zero.memory, len(info.pods), requested.milli_cpu, requested.memory)
        if all(0 <= value < EXACT_LIMIT for value in values):
            self._big_rows.discard(row)
            (self.alloc_cpu[row], self.alloc_memory[row], self.alloc_pods[row], self.non_zero_cpu[row],
             self.non_zero_memory[row], self.pod_count[row], self.requested_cpu[row],
             self.requested_memory[row]) = values
        else:
            self._big_rows.add(row)

    def label_signatures(self, keys: Sequence[str], rows: Rows) -> npt.NDArray[np.int64] | None:
        """For each of ``rows``, a number that is the same for two rows exactly when their nodes have the
        same values of the labels ``keys``; None when the keys have too many values to combine."""
        signature = np.zeros(len(rows), dtype=np.int64)
        span = 1
        for key in keys:
            codes, code_of = self._label_column(key)
            span *= len(code_of) + 1
            if span >= SIGNATURE_LIMIT:
                return None
            signature = signature * (len(code_of) + 1) + codes[rows]
        return signature

    def _label_column(self, key: str) -> tuple[npt.NDArray[np.int64], dict[str | None, int]]:
        column = self._labels.get(key)
        if column is None:
            code_of: dict[str | None, int] = {None: 0}
            values = (info.labels.get(key) for info in self._nodes)
            codes = np.fromiter((code_of.setdefault(value, len(code_of)) for value in values),
                                dtype=np.int64, count=len(self._nodes))
            column = self._labels[key] = (codes, code_of)
        return column

    @property
    def exact(self) -> bool:
        """Whether every row's values are within EXACT_LIMIT (the vector paths apply)."""
        return not self._big_rows


class NodeBatch(list[NodeInfo]):
    """Nodes of a snapshot with their rows in its columns (``rows[i]`` is ``self[i]``'s)."""

    __slots__ = ("columns", "rows")

    def __init__(self, nodes: Iterable[NodeInfo], rows: Rows, columns: NodeColumns) -> None:
        super().__init__(nodes)
        self.rows = rows
        self.columns = columns

    def window(self, start: int, stop: int) -> NodeBatch:
        """``self[start:stop]`` with its rows (a plain slice of a list is a plain list)."""
        return NodeBatch(self[start:stop], self.rows[start:stop], self.columns)

    def subset(self, positions: Sequence[int]) -> NodeBatch:
        """The nodes at ``positions`` of this batch, with their rows."""
        return NodeBatch([self[i] for i in positions], self.rows[np.asarray(positions, dtype=np.intp)],
                         self.columns)


def subset(nodes: Sequence[NodeInfo], positions: Sequence[int]) -> Sequence[NodeInfo]:
    """The nodes at ``positions`` of ``nodes``, still a batch if ``nodes`` is one."""
    if isinstance(nodes, NodeBatch):
        return nodes.subset(positions)
    return [nodes[i] for i in positions]


def vector_batch(nodes: Sequence[NodeInfo]) -> NodeBatch | None:
    """``nodes`` as a batch the vector paths may compute on, or None."""
    if isinstance(nodes, NodeBatch) and nodes.columns.exact:
        return nodes
    return None
