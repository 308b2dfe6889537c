"""The resource columns: what NodeResourcesFit and NodeResourcesBalancedAllocation read of every node, as
int64 NumPy arrays, one row per node of a snapshot. They are node data (framework/nodedata.py) the
framework offers because two plugins read them; each plugin asks for them with
``exact_columns``.

The vector paths compute on them only while every value is below 2**53, where int64 and float64
arithmetic give exactly what Python's integers and floats give.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from scheduler.framework.nodedata import NodeSet, Rows
from scheduler.framework.types import NodeInfo

#: Exact as an int64 product with a score (<= 100) and as a float64: the vector paths need both.
EXACT_LIMIT = 2**53

Column = npt.NDArray[np.int64]


class ResourceColumns:
    """Each node's allocatable, requested and non-zero requested CPU and memory, its pod count, and its
    allocatable and requested extended resources (GPUs, ...) by name."""

    __slots__ = ("_big_rows", "_size", "alloc_cpu", "alloc_memory", "alloc_pods", "non_zero_cpu",
                 "non_zero_memory", "pod_count", "requested_cpu", "requested_memory", "scalar_alloc",
                 "scalar_requested")

    def __init__(self, nodes: Sequence[NodeInfo]) -> None:
        size = self._size = len(nodes)
        self.alloc_cpu: Column = np.zeros(size, dtype=np.int64)
        self.alloc_memory: Column = np.zeros(size, dtype=np.int64)
        self.alloc_pods: Column = np.zeros(size, dtype=np.int64)
        self.non_zero_cpu: Column = np.zeros(size, dtype=np.int64)
        self.non_zero_memory: Column = np.zeros(size, dtype=np.int64)
        self.pod_count: Column = np.zeros(size, dtype=np.int64)
        self.requested_cpu: Column = np.zeros(size, dtype=np.int64)
        self.requested_memory: Column = np.zeros(size, dtype=np.int64)
        #: By resource name, for every name some node has or some pod on a node requests (0 elsewhere).
        self.scalar_alloc: dict[str, Column] = {}
        self.scalar_requested: dict[str, Column] = {}
        #: Rows holding a value the vector paths cannot compute with exactly.
        self._big_rows: set[int] = set()
        for row, info in enumerate(nodes):
            self.set_row(row, info)

    def set_row(self, row: int, info: NodeInfo) -> None:
        allocatable, requested, non_zero = info.allocatable, info.requested, info.non_zero_requested
        values = (allocatable.milli_cpu, allocatable.memory, allocatable.allowed_pod_number,
                  non_zero.milli_cpu, non_zero.memory, len(info.pods), requested.milli_cpu, requested.memory)
        for name in allocatable.scalar.keys() | requested.scalar.keys():
            if name not in self.scalar_alloc:
                self.scalar_alloc[name] = np.zeros(self._size, dtype=np.int64)
                self.scalar_requested[name] = np.zeros(self._size, dtype=np.int64)
        scalars = [(name, allocatable.scalar.get(name, 0), requested.scalar.get(name, 0))
                   for name in self.scalar_alloc]
        exact = all(0 <= value < EXACT_LIMIT for _, have, used in scalars for value in (have, used))
        if exact and all(0 <= value < EXACT_LIMIT for value in values):
            for name, have, used in scalars:
                self.scalar_alloc[name][row] = have
                self.scalar_requested[name][row] = used
            self._big_rows.discard(row)
            (self.alloc_cpu[row], self.alloc_memory[row], self.alloc_pods[row], self.non_zero_cpu[row],
             self.non_zero_memory[row], self.pod_count[row], self.requested_cpu[row],
             self.requested_memory[row]) = values
        else:
            self._big_rows.add(row)

    @property
    def exact(self) -> bool:
        """Whether every row's values are within EXACT_LIMIT (the vector paths apply)."""
        return not self._big_rows


def exact_columns(nodes: NodeSet) -> tuple[ResourceColumns, Rows] | None:
    """The resource columns of ``nodes`` and their rows in them, if the vector paths may compute on
    them; else None (nodes without rows, or a value beyond EXACT_LIMIT)."""
    found = nodes.node_data(ResourceColumns)
    if found is not None and found[0].exact:
        return found
    return None
