"""What the GPU-sharing policies share: the pod's and a node's GPU view the per-node scores read, and the
plugin skeleton (Score per node and in batch over the GPU columns, and the device ranking
that makes the policy's GPU choice the allocator's).

The scores are the FGD artifact's ("Beware of Fragmentation", ATC '23), integer truncations included:
MAX_SPEC_CPU and MAX_SPEC_GPU are its largest node, the normalisers of DotProduct and BestFit.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import numpy.typing as npt

from scheduler.config.argtypes import GpuShareArgs
from scheduler.framework import CycleState, Handle, NodeInfo, NodeSet, PodInfo, ScoreExtensions
from scheduler.gpus.table import (
    MILLI,
    GpuColumns,
    GpuSpec,
    gpu_columns,
    gpu_request,
    node_gpu_columns,
    pod_milli_cpu,
)
from scheduler.plugins.gpushare.selection import best_fit_order, free_milli

#: The artifact's largest node: 128 CPUs and 8 GPUs, in milli.
MAX_SPEC_CPU = 128_000
MAX_SPEC_GPU = 8 * MILLI

if TYPE_CHECKING:
    from scheduler.framework import DeviceCandidate

Scores = npt.NDArray[np.int64]


def gpu_spec(args: GpuShareArgs) -> GpuSpec:
    return GpuSpec(args.device_class, args.share_capacity, args.model_attribute)


@dataclass(frozen=True, slots=True)
class PodDemand:
    """A pod as the policies see it: its non-zero CPU request and its GPUs (count 0: none)."""

    milli_cpu: int
    count: int = 0
    #: Per GPU, 1..MILLI; 0 without GPUs.
    milli: int = 0

    @property
    def total(self) -> int:
        """GPU milli over all its GPUs."""
        return self.count * self.milli

    @property
    def shares(self) -> bool:
        """Whether it takes a share of one GPU (the artifact's GPU-share pod)."""
        return self.count == 1 and self.milli < MILLI


@dataclass(frozen=True, slots=True)
class NodeGpus:
    """One node's row of the GPU columns: the free milli of each of its GPUs in device order, and its CPU
    left (milli)."""

    free: tuple[int, ...]
    cpu_left: int


def node_gpus(columns: GpuColumns, row: int) -> NodeGpus:
    gpus = int(columns.gpus[row])
    return NodeGpus(tuple(int(value) for value in columns.free[row, :gpus]), int(columns.cpu_left[row]))


def valid_gpus(columns: GpuColumns) -> npt.NDArray[np.bool_]:
    """[n, W]: which columns are GPUs of the node (the others are padding)."""
    return np.arange(columns.free.shape[1]) < columns.gpus[:, None]


def trunc_div_columns(a: Scores, b: int) -> Scores:
    result: Scores = np.sign(a) * (np.abs(a) // b)
    return result


def truncated(values: npt.NDArray[np.float64]) -> Scores:
    """Go's int64(float): truncated toward zero."""
    return np.trunc(values).astype(np.int64)


class GpuSharePolicy(ABC):
    """A policy's Score (per node, and in batch over the GPU columns) and its GPU selection.

    A subclass gives ``node_score`` (the artifact's Score of one node, plain Python: the reference) and
    ``column_scores`` (the same over the columns of many nodes); the GPU selection defaults to the
    artifact's "best": the share pod takes the GPU with the least free milli that holds it, a
    whole-GPU pod the lowest-index free GPUs."""

    NAME: ClassVar[str]

    def __init__(self, args: GpuShareArgs, handle: Handle) -> None:
        self._spec = gpu_spec(args)
        self._handle = handle

    @property
    def name(self) -> str:
        return self.NAME

    def demand(self, pod: PodInfo) -> PodDemand:
        request = gpu_request(self._handle.dra_manager, pod, self._spec)
        if request is None:
            return PodDemand(pod_milli_cpu(pod))
        return PodDemand(pod_milli_cpu(pod), request.count, request.milli)

    def columns(self, nodes: NodeSet) -> GpuColumns:
        return gpu_columns(self._handle.dra_manager, nodes, self._spec)

    def node_columns(self, node_info: NodeInfo) -> GpuColumns:
        """The GPU columns of ``node_info`` alone."""
        return node_gpu_columns(self._handle.dra_manager, node_info, self._spec)

    def node_view(self, node_info: NodeInfo) -> NodeGpus:
        return node_gpus(self.node_columns(node_info), 0)

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        return self.node_score(state, pod, node_info)

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> list[int]:
        scores: list[int] = self.column_scores(state, pod, nodes).tolist()
        return scores

    def score_extensions(self) -> ScoreExtensions | None:
        return None

    @abstractmethod
    def node_score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        """The artifact's Score of one node (plain Python: the reference of ``column_scores``)."""

    @abstractmethod
    def column_scores(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Scores:
        """``node_score`` of every node, in order, vectorized over their GPU columns."""

    def rank_devices(self, state: CycleState, pod: PodInfo, node: NodeInfo,
                     candidates: Sequence[DeviceCandidate]) -> Sequence[int] | None:
        free = [free_milli(candidate, self._spec) for candidate in candidates]
        if any(value is None for value in free):
            return None  # not (only) GPUs: the allocator's own order
        demand = self.demand(pod)
        if not demand.count:
            return None
        return self.order_gpus(state, pod, node, demand, [candidate.index for candidate in candidates],
                               [value for value in free if value is not None])

    def order_gpus(self, state: CycleState, pod: PodInfo, node: NodeInfo, demand: PodDemand,
                   indexes: Sequence[int], free: Sequence[int]) -> list[int]:
        """The candidates' positions, the policy's choice first (``indexes``: their GPU indexes,
        ``free``: their free milli)."""
        return best_fit_order(indexes, free, demand.milli)

