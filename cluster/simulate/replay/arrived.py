"""The FGD experiment's measures (``podsched replay --fill``), taken after every pod as the artifact's
ClusterGpuFragReport takes them: the GPU milli of the pods tried so far (*arrived*, failed ones included),
the GPU milli the bound pods use, and the cluster's fragmentation; then each figure at every whole
percentage of arrived workload, by the rule of the artifact's merge_alloc_discrete.py (``at_arrived``).

The books are kept incrementally: each node's free milli per GPU (device order) and its row of
fragmentation change only when a pod is bound there, so a pod costs one node's update, not a pass over the
cluster.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from cluster.api import objects_pb2
from cluster.simulate.replay.fill import GPU_KINDS, GpuAsk
from cluster.simulate.trace.bounds import counted
from cluster.simulate.trace.model import GPU_PRODUCT_LABEL, WHOLE_GPU_MILLI
from scheduler.framework.resource import Resource
from scheduler.gpus.fragmentation import Workload, fragmentation


def at_arrived(arrived_milli: NDArray[np.int64], values: NDArray[np.float64], gpus: int,
               highest: int) -> dict[str, float]:
    """``values`` (one per pod tried) at each whole percentage 0..``highest`` of arrived GPU workload, as
    merge_alloc_discrete.py has them: a pod's percentage is its arrived milli over the cluster's
    ``gpus``, in percent, rounded half to even (Python's and pandas' round); a percentage's value is the
    mean over the pods of that percentage, or, when there are none, over the pods within one percentage
    of it; a percentage with neither is left out."""
    if gpus <= 0 or len(values) == 0:
        return {}
    percent = np.rint(arrived_milli / gpus / 10)
    table: dict[str, float] = {}
    for whole in range(highest + 1):
        chosen = percent == whole
        if not chosen.any():
            chosen = (percent >= whole - 1) & (percent <= whole + 1)
            if not chosen.any():
                continue
        table[str(whole)] = float(values[chosen].mean())
    return table


class GpuBooks:
    """Per node, the free milli of each GPU (device order) and the CPU milli left; per pod tried, the
    arrived and used GPU milli and the cluster's fragmentation after it under ``workload`` (none: not
    measured)."""

    def __init__(self, nodes: Sequence[objects_pb2.Node], pods: int,
                 workload: Workload | None = None) -> None:
        self.rows = {node.metadata.name: row for row, node in enumerate(nodes)}
        resources = [Resource.from_quantities(node.status.allocatable or node.status.capacity)
                     for node in nodes]
        gpus = np.array([counted(resource)[2] for resource in resources], dtype=np.int64)
        self.gpus = gpus
        width = int(gpus.max()) if len(gpus) else 0
        #: free[n, i]: the free milli of node n's GPU i; 0 where the node has no such GPU.
        self.free = np.where(np.arange(width)[None, :] < gpus[:, None], WHOLE_GPU_MILLI, 0).astype(np.int64)
        self.cpu_left = np.array([counted(resource)[0] for resource in resources], dtype=np.int64)
        labels = [node.metadata.labels.get(GPU_PRODUCT_LABEL) for node in nodes]
        self.models: list[str] = sorted({label for label in labels if label is not None})
        codes = {model: code for code, model in enumerate(self.models)}
        self.model = np.array([codes[label] if label is not None else -1 for label in labels], dtype=np.int64)
        self.total_milli = WHOLE_GPU_MILLI * int(gpus.sum())
        self.used_milli = 0
        self.arrived_milli = 0
        self._workload = workload
        #: Each node's expected fragmented GPU milli.
        self._node_frag = (fragmentation(workload, self.free, self.cpu_left, self.model, self.models)
                           if workload is not None else np.zeros(len(nodes), dtype=np.float64))
        self.tried = 0
        self.failed: Counter[str] = Counter()
        self.arrived_series = np.zeros(pods, dtype=np.int64)
        self.used_series = np.zeros(pods, dtype=np.int64)
        self.frag_series = np.zeros(pods, dtype=np.float64)

    @property
    def gpu_count(self) -> int:
        return self.total_milli // WHOLE_GPU_MILLI

    # ------------------------------------------------------------------------------- what happened

    def placed(self, node: str, milli_cpu: int, taken: Sequence[tuple[int, int]], ask: GpuAsk) -> None:
        """A pod asking ``ask`` was bound to ``node``, taking ``milli_cpu`` and, of its GPUs by index,
        ``taken`` (index, milli) pairs; then record the measures."""
        row = self.rows[node]
        self.cpu_left[row] -= milli_cpu
        for index, milli in taken:
            self.free[row, index] -= milli
            self.used_milli += milli
        if self._workload is not None:
            state = slice(row, row + 1)
            self._node_frag[row] = fragmentation(self._workload, self.free[state], self.cpu_left[state],
                                                 self.model[state], self.models)[0]
        self._record(ask)

    def failed_pod(self, ask: GpuAsk) -> None:
        """A pod asking ``ask`` could not be placed (and was deleted); then record the measures."""
        self.failed[ask.kind] += 1
        self._record(ask)

    def whole_gpus(self, node: str, count: int) -> list[tuple[int, int]]:
        """The GPUs a pod of ``count`` whole GPUs (the extended resource, which names no device) is counted
        on at ``node``: its first wholly free ones."""
        row = self.rows[node]
        free = np.flatnonzero(self.free[row, : self.gpus[row]] == WHOLE_GPU_MILLI)[:count]
        return [(int(index), WHOLE_GPU_MILLI) for index in free]

    def _record(self, ask: GpuAsk) -> None:
        self.arrived_milli += ask.total
        self.arrived_series[self.tried] = self.arrived_milli
        self.used_series[self.tried] = self.used_milli
        # Summed afresh (a sum over the nodes in NumPy): a running total would drift below 0 at the end.
        self.frag_series[self.tried] = self._node_frag.sum()
        self.tried += 1

    # ------------------------------------------------------------------------------------- figures

    def summary(self, ratio: float) -> dict[str, object]:
        """The figures of the pods tried: shares 0..1 of the cluster's GPU milli."""
        # 100 x 1.15 is 114.99999999999999 in floating point: the percentage meant is 115.
        highest = math.floor(round(100 * ratio, 9))
        arrived = self.arrived_series[: self.tried]
        total = float(self.total_milli) or 1.0
        used = self.used_series[: self.tried] / total
        figures: dict[str, object] = {
            "pods": self.tried,
            "placed": self.tried - sum(self.failed.values()),
            "failed": sum(self.failed.values()),
            "failed_pods_by_kind": {kind: self.failed[kind] for kind in GPU_KINDS},
            "gpu_milli_total": self.total_milli,
            "arrived_gpu_milli": self.arrived_milli,
            "used_gpu_milli": self.used_milli,
            "gpu_allocation": self.used_milli / total,
            "gpu_allocation_at_arrived": at_arrived(arrived, used, self.gpu_count, highest),
        }
        if self._workload is not None:
            frag = self.frag_series[: self.tried] / total
            figures["fragmentation_at_arrived"] = at_arrived(arrived, frag, self.gpu_count, highest)
        return figures
