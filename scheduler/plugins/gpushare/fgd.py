"""FGDScore: fragmentation gradient descent. A node's fragmentation is the GPU milli the workload's
typical pods could not use, expected over the workload (``scheduler.gpus.fragmentation``); the pod goes
where it grows the least: ``score = int(sigmoid((frag_before - frag_after) / 1000) * 100)``.

A share pod is placed, hypothetically, on each GPU of the node that holds it (CPU taken too); the node
scores the best of them (0 when none holds it) and that GPU is the pod's (the GPU selection ranks the
node's GPUs by it, the lowest index first among equals). A pod of whole GPUs takes the least free GPUs
that hold it (whole ones: the free GPUs, lowest index first, which are also the GPUs it is given); a
CPU-only pod takes CPU only. A pod that requests no resources at all scores 100 everywhere.

The workload is the args' ``workload`` (pod kinds and their weights, as the replay passes the trace's);
without it, the typical kinds (``typical_workload``) of the pods on the snapshot's nodes plus the pod
being scheduled, recounted as nodes change.

Every node is scored in one ``fragmentation_by_state`` call over the nodes' states after the pod on each
candidate GPU; their states before it are the nodes' fragmentation kept from pod to pod
(``NodeFragmentation``). A node's score depends on its state alone, so the scores of the demands scored
last are kept too: a pod is scored afresh only on the nodes that changed since one of its demand was.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
import numpy.typing as npt

from scheduler.config.argtypes import FGDScoreArgs
from scheduler.framework import (
    MAX_NODE_SCORE,
    CycleState,
    Handle,
    NodeInfo,
    NodeSet,
    NodeTableLister,
    PodInfo,
)
from scheduler.gpus.fragmentation import PodKind, Workload, fragmentation_by_state, typical_workload
from scheduler.gpus.node_fragmentation import NodeFragmentation, NodeStateValues
from scheduler.gpus.table import GpuColumns, gpu_request, pod_milli_cpu
from scheduler.plugins.gpushare.common import (
    GpuSharePolicy,
    PodDemand,
    Scores,
    truncated,
    valid_gpus,
)
from scheduler.plugins.gpushare.selection import best_fit_order

NAME = "FGDScore"

#: Demands whose scores are kept: a trace's pods ask few distinct ones (openb's 8152 pods, 91; the 64
#: most frequent are 99% of its pods).
KEPT_DEMANDS = 64


def given_workload(args: FGDScoreArgs) -> Workload | None:
    """The args' typical pods, their weights as given; None: none given."""
    if not args.workload:
        return None
    return Workload(tuple(PodKind(kind.milli_cpu, kind.gpu_milli, kind.gpu_count,
                                  frozenset(kind.models) if kind.models else None) for kind in args.workload),
                    tuple(kind.weight for kind in args.workload))


ARGS = FGDScoreArgs


#: Decimals the fragmentation's decrease is rounded to. The sums are exact only to an ulp or so: a
#: placement that leaves a node's fragmentation as it was, the growth of some kinds' fragment making up
#: for the shrinking of others', could come out an ulp apart and score 49 rather than 50 (sigmoid(0) =
#: 0.5). A real decrease is a multiple of a kind's weight in milli, far above a millionth.
_DECIMALS = 6


def sigmoid_score(before: float, after: float) -> int:
    decrease = float(np.round(before - after, _DECIMALS))
    return int(1.0 / (1.0 + math.exp(-decrease / 1000)) * MAX_NODE_SCORE)


def sigmoid_scores(before: npt.NDArray[np.float64], after: npt.NDArray[np.float64]) -> Scores:
    decrease = np.round(before - after, _DECIMALS)
    return truncated(1.0 / (1.0 + np.exp(-decrease / 1000)) * MAX_NODE_SCORE)


def taken(free: Sequence[int], demand: PodDemand) -> list[int]:
    """The free milli of each GPU after the pod takes the least free GPUs that hold it (NodeResource.Sub)."""
    after, wanted = list(free), demand.count
    for gpu in sorted(range(len(free)), key=free.__getitem__):
        if not wanted:
            break
        if demand.milli <= after[gpu]:
            after[gpu] -= demand.milli
            wanted -= 1
    return after


def gpu_scores(workload: Workload, columns: GpuColumns, row: int, demand: PodDemand,
               before: float | None = None) -> dict[int, int]:
    """A share pod's score on each GPU of node ``row`` that holds it, by GPU index (``before``: the
    node's fragmentation, computed when not given)."""
    gpus = int(columns.gpus[row])
    free = [int(value) for value in columns.free[row, :gpus]]
    holding = [gpu for gpu in range(gpus) if free[gpu] >= demand.milli]
    if not holding:
        return {}
    if before is None:
        before = float(fragmentation_by_state(workload, columns.free[row:row + 1],
                                              columns.cpu_left[row:row + 1], columns.model[row:row + 1],
                                              columns.models)[0])
    states = np.repeat(columns.free[row:row + 1], len(holding), axis=0)
    states[np.arange(len(holding)), holding] -= demand.milli
    cpu = np.full(len(states), int(columns.cpu_left[row]) - demand.milli_cpu, dtype=np.int64)
    models = np.repeat(columns.model[row:row + 1], len(states))
    after = fragmentation_by_state(workload, states, cpu, models, columns.models).tolist()
    return {gpu: sigmoid_score(before, frag) for gpu, frag in zip(holding, after, strict=True)}


def fgd_score(workload: Workload, columns: GpuColumns, row: int, demand: PodDemand) -> int:
    """FGD's Score of node ``row``, one node at a time: the reference of ``fgd_scores``."""
    if demand.shares:
        return max(gpu_scores(workload, columns, row, demand).values(), default=0)
    gpus = int(columns.gpus[row])
    after = taken([int(value) for value in columns.free[row, :gpus]], demand)
    states = np.repeat(columns.free[row:row + 1], 2, axis=0)
    states[1, :gpus] = after
    cpu = np.array([columns.cpu_left[row], columns.cpu_left[row] - demand.milli_cpu], dtype=np.int64)
    frag = fragmentation_by_state(workload, states, cpu, np.repeat(columns.model[row:row + 1], 2),
                                  columns.models).tolist()
    return sigmoid_score(frag[0], frag[1])


def fgd_scores(workload: Workload, columns: GpuColumns, demand: PodDemand,
               before: npt.NDArray[np.float64] | None = None) -> Scores:
    """``fgd_score`` of every row: the states after the pod on every candidate GPU of every node, in one
    ``fragmentation_by_state`` call, against ``before``, the rows' fragmentation (computed when not
    given)."""
    free, size = columns.free, len(columns.gpus)
    if before is None:
        before = fragmentation_by_state(workload, free, columns.cpu_left, columns.model, columns.models)
    valid = valid_gpus(columns)
    if demand.shares:
        # GPUs of a node with equal free milli leave equal states (the measure does not depend on the
        # GPUs' order): only the first of them is tried, which is also the one the artifact keeps.
        tried = valid & (free >= demand.milli)
        for gpu in range(1, free.shape[1]):
            tried[:, gpu] &= (free[:, :gpu] != free[:, gpu:gpu + 1]).all(axis=1)
        rows, gpus = np.nonzero(tried)
        after = free[rows]
        after[np.arange(len(rows)), gpus] -= demand.milli
    else:
        rows = np.arange(size)
        # The least free first (padding, -1, first and never taken), as NodeResource.Sub takes them.
        order = np.argsort(np.where(valid, free, -1), axis=1, kind="stable")
        ordered = np.take_along_axis(free, order, axis=1)
        holds = valid[np.arange(size)[:, None], order] & (ordered >= demand.milli)
        take = holds & (np.cumsum(holds, axis=1) <= demand.count)
        delta = np.zeros_like(free)
        np.put_along_axis(delta, order, np.where(take, demand.milli, 0), axis=1)
        after = free - delta
    frag = fragmentation_by_state(workload, after, columns.cpu_left[rows] - demand.milli_cpu,
                                  columns.model[rows], columns.models)
    candidates = sigmoid_scores(before[rows], frag)
    if not demand.shares:
        return candidates
    scores: Scores = np.zeros(size, dtype=np.int64)
    np.maximum.at(scores, rows, candidates)
    return scores


def asks_nothing(pod: PodInfo) -> bool:
    """Whether the pod's containers request no resources at all (the artifact scores it 100)."""
    requests = pod.requests
    return not (requests.milli_cpu or requests.memory or requests.ephemeral_storage or requests.scalar)


class NodePodKinds:
    """Node data: how many pods of each kind the nodes hold, in total, counted again only for the
    nodes that change."""

    def __init__(self, kind_of: Callable[[PodInfo], PodKind], nodes: Sequence[NodeInfo]) -> None:
        self._kind_of = kind_of
        self._rows = [Counter(map(kind_of, info.pods.values())) for info in nodes]
        self.total: Counter[PodKind] = Counter()
        for counted in self._rows:
            self.total += counted
        #: Changes with ``total``.
        self.version = 0

    def set_row(self, row: int, info: NodeInfo) -> None:
        counted = Counter(map(self._kind_of, info.pods.values()))
        if counted != self._rows[row]:
            self.total -= self._rows[row]
            self.total += counted
            self._rows[row] = counted
            self.version += 1


class FGDScore(GpuSharePolicy):
    NAME = NAME

    def __init__(self, args: FGDScoreArgs, handle: Handle) -> None:
        super().__init__(args, handle)
        self._given = given_workload(args)
        #: The node data's builder: one object, so that the snapshot's table keeps one NodePodKinds.
        self._node_pod_kinds = partial(NodePodKinds, self.pod_kind)
        self._workload_key: tuple[object, ...] | None = None
        self._workload: Workload | None = None
        #: The nodes' fragmentation before the pod, kept from pod to pod.
        self._before = NodeFragmentation()
        #: The nodes' scores for the demands scored last, kept from pod to pod.
        self._scores: OrderedDict[PodDemand, NodeStateValues] = OrderedDict()

    def pod_kind(self, pod: PodInfo) -> PodKind:
        request = gpu_request(self._handle.dra_manager, pod, self._spec)
        if request is None:
            return PodKind(pod_milli_cpu(pod), 0, 0, None)
        return PodKind(pod_milli_cpu(pod), request.milli, request.count, request.models)

    def workload(self, pod: PodInfo) -> Workload:
        if self._given is not None:
            return self._given
        pending = self.pod_kind(pod)
        lister = self._handle.snapshot().node_infos()
        found = lister.node_set([]).node_data(self._node_pod_kinds) \
            if isinstance(lister, NodeTableLister) else None
        if found is None:
            return typical_workload(itertools.chain(
                (self.pod_kind(held) for info in lister.list() for held in info.pods.values()), (pending,)))
        counted = found[0]
        key = (id(counted), counted.version, pending)
        if key != self._workload_key or self._workload is None:
            self._workload = typical_workload(itertools.chain(counted.total.elements(), (pending,)))
            self._workload_key = key
        return self._workload

    def node_score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        if asks_nothing(pod):
            return MAX_NODE_SCORE
        return fgd_score(self.workload(pod), self.node_columns(node_info), 0, self.demand(pod))

    def column_scores(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Scores:
        if asks_nothing(pod):
            return np.full(len(nodes), MAX_NODE_SCORE, dtype=np.int64)
        workload, columns, demand = self.workload(pod), self.columns(nodes), self.demand(pod)
        kept = self._scores.pop(demand, None)
        if kept is None:
            kept = NodeStateValues()
            if len(self._scores) >= KEPT_DEMANDS:
                self._scores.popitem(last=False)
        self._scores[demand] = kept

        def compute(states: GpuColumns) -> Scores:
            return fgd_scores(workload, states, demand, self._before.of(workload, states))

        scores: Scores = kept.of(workload, columns, compute)
        return scores

    def order_gpus(self, state: CycleState, pod: PodInfo, node: NodeInfo, demand: PodDemand,
                   indexes: Sequence[int], free: Sequence[int]) -> list[int]:
        if not demand.shares:
            return best_fit_order(indexes, free, demand.milli)
        workload, columns = self.workload(pod), self.node_columns(node)
        scores = gpu_scores(workload, columns, 0, demand, float(self._before.of(workload, columns)[0]))
        return sorted(range(len(indexes)), key=lambda at: (
            indexes[at] not in scores, -scores.get(indexes[at], 0), indexes[at]))


def new(args: FGDScoreArgs | None, handle: Handle) -> FGDScore:
    return FGDScore(FGDScoreArgs() if args is None else args, handle)
