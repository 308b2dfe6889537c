"""Each GPU node's fragmentation under a workload, kept between calls: FGD's Score needs every candidate
node's fragmentation before the pod, and from one pod to the next only the nodes that something changed
(a placement, a departure, another pod's CPU) have another.

A value is kept per row of the GPU view (``GpuColumns.rows``) with the node state it was computed for
(each GPU's free milli, the CPU left, the model) and is reused while the node is in that state, whatever
changed it otherwise. ``fragmentation_by_state`` sums each state on its own, so a kept value is the very
bits a fresh computation of the state gives, in any company.
"""

from __future__ import annotations

import numpy as np

from scheduler.gpus.fragmentation import FloatArray, Workload, fragmentation_by_state
from scheduler.gpus.table import GpuColumns


class NodeFragmentation:
    """The kept values of one workload over one layout of the GPU view; another workload or layout
    starts afresh."""

    __slots__ = ("_cpu", "_free", "_known", "_layout", "_model", "_value", "_workload")

    def __init__(self) -> None:
        self._workload: Workload | None = None
        self._layout: object | None = None
        self._clear(0, 1)

    def _clear(self, rows: int, width: int) -> None:
        #: Per view row: the state a value was computed for, the value, and whether there is one.
        self._free = np.zeros((rows, width), dtype=np.int64)
        self._cpu = np.zeros(rows, dtype=np.int64)
        self._model = np.zeros(rows, dtype=np.int64)
        self._value = np.zeros(rows, dtype=np.float64)
        self._known = np.zeros(rows, dtype=np.bool_)

    def of(self, workload: Workload, columns: GpuColumns) -> FloatArray:
        """``fragmentation_by_state`` of each node state of ``columns``: kept values where the state is
        the one kept, computed (and kept) for the others."""
        rows = columns.rows
        if rows is None:
            return fragmentation_by_state(workload, columns.free, columns.cpu_left, columns.model,
                                          columns.models)
        width = columns.free.shape[1]
        if (columns.layout is not self._layout or self._free.shape[1] != width
                or (workload is not self._workload and workload != self._workload)):
            self._workload, self._layout = workload, columns.layout
            self._clear(0, width)
        needed = int(rows.max()) + 1 if len(rows) else 0
        if needed > len(self._value):
            self._grow(needed)
        stale = ~self._known[rows]
        stale |= self._cpu[rows] != columns.cpu_left
        stale |= self._model[rows] != columns.model
        stale |= (np.take(self._free, rows, axis=0) != columns.free).any(axis=1)
        values: FloatArray = self._value[rows]
        at = np.flatnonzero(stale)
        if len(at):
            free, cpu, model = columns.free[at], columns.cpu_left[at], columns.model[at]
            fresh = fragmentation_by_state(workload, free, cpu, model, columns.models)
            values[at] = fresh
            # Nodes without GPUs share one row: whichever is kept, each got its own value above.
            kept = rows[at]
            self._free[kept], self._cpu[kept], self._model[kept] = free, cpu, model
            self._value[kept] = fresh
            self._known[kept] = True
        return values

    def _grow(self, rows: int) -> None:
        old = (self._free, self._cpu, self._model, self._value, self._known)
        self._clear(rows, self._free.shape[1])
        size = len(old[1])
        self._free[:size], self._cpu[:size], self._model[:size] = old[0], old[1], old[2]
        self._value[:size], self._known[:size] = old[3], old[4]
