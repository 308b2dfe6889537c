"""Values of a node's state kept between calls: FGD's Score needs every candidate node's fragmentation
before the pod, and its score for the pod; from one pod to the next only the nodes that something changed
(a placement, a departure, another pod's CPU) have other ones.

A value is kept per row of the GPU view (``GpuColumns.rows``) with the node state it was computed for
(each GPU's free milli, the CPU left, the model) and is reused while the node is in that state, whatever
changed it otherwise. So a value must depend on the node's state alone, and be the same bits whatever
other nodes it is computed with: ``fragmentation_by_state`` sums each state on its own for that.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.gpus.fragmentation import FloatArray, Workload, fragmentation_by_state
from scheduler.gpus.table import GpuColumns

Values = npt.NDArray[Any]


class NodeStateValues:
    """The kept values of one function (named by a key: another key starts afresh) over one layout of
    the GPU view."""

    __slots__ = ("_cpu", "_free", "_key", "_known", "_layout", "_model", "_value")

    def __init__(self) -> None:
        self._key: Hashable | None = None
        self._layout: object | None = None
        self._value: Values | None = None
        self._clear(0, 1)

    def _clear(self, rows: int, width: int) -> None:
        #: Per view row: the state a value was computed for, and whether there is one.
        self._free = np.zeros((rows, width), dtype=np.int64)
        self._cpu = np.zeros(rows, dtype=np.int64)
        self._model = np.zeros(rows, dtype=np.int64)
        self._known = np.zeros(rows, dtype=np.bool_)
        self._value = None

    def of(self, key: Hashable, columns: GpuColumns, compute: Callable[[GpuColumns], Values]) -> Values:
        """``compute`` of ``columns``, each row's value depending on its state alone: kept values where
        the state is the one kept, computed (and kept) for the others."""
        rows = columns.rows
        if rows is None:
            return compute(columns)
        width = columns.free.shape[1]
        if (columns.layout is not self._layout or self._free.shape[1] != width
                or (key is not self._key and key != self._key)):
            self._key, self._layout = key, columns.layout
            self._clear(0, width)
        needed = int(rows.max()) + 1 if len(rows) else 0
        if needed > len(self._known):
            self._grow(needed)
        stale = ~self._known[rows]
        stale |= self._cpu[rows] != columns.cpu_left
        stale |= self._model[rows] != columns.model
        stale |= (np.take(self._free, rows, axis=0) != columns.free).any(axis=1)
        at = np.flatnonzero(stale)
        kept_values = self._value
        if kept_values is None:
            # Nothing kept yet: every row is stale.
            values = compute(columns)
            kept_values = self._value = np.zeros(len(self._known), dtype=values.dtype)
        else:
            values = kept_values[rows]
            if len(at):
                values[at] = compute(rows_of(columns, at))
        if len(at):
            # Nodes without GPUs share one row: whichever is kept, each got its own value above.
            kept = rows[at]
            self._free[kept], self._cpu[kept] = columns.free[at], columns.cpu_left[at]
            self._model[kept] = columns.model[at]
            kept_values[kept] = values[at]
            self._known[kept] = True
        return values

    def _grow(self, rows: int) -> None:
        old = (self._free, self._cpu, self._model, self._known, self._value)
        self._clear(rows, self._free.shape[1])
        size = len(old[1])
        self._free[:size], self._cpu[:size], self._model[:size], self._known[:size] = old[:4]
        if old[4] is not None:
            value = self._value = np.zeros(rows, dtype=old[4].dtype)
            value[:size] = old[4]


def rows_of(columns: GpuColumns, at: npt.NDArray[np.intp]) -> GpuColumns:
    """The columns' rows ``at``."""
    rows = None if columns.rows is None else columns.rows[at]
    return GpuColumns(columns.free[at], columns.gpus[at], columns.model[at], columns.models,
                      columns.cpu_left[at], columns.cpu_capacity[at], rows, columns.layout)


class NodeFragmentation:
    """Each GPU node's fragmentation under a workload, kept (``NodeStateValues``)."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        self._kept = NodeStateValues()

    def of(self, workload: Workload, columns: GpuColumns) -> FloatArray:
        """``fragmentation_by_state`` of each node state of ``columns``."""

        def compute(states: GpuColumns) -> FloatArray:
            return fragmentation_by_state(workload, states.free, states.cpu_left, states.model, states.models)

        values: FloatArray = self._kept.of(workload, columns, compute)
        return values
