"""NodeResourcesFit: the pod's requests must fit in what the node has left (Filter), and a scoring
strategy ranks the nodes that fit (Score).

Fit: for CPU, memory, ephemeral storage and every extended resource the pod requests (> 0),
``requested on the node + the pod's request <= allocatable``, and one more pod must not exceed the
node's pod count. Every shortfall is reported ("Insufficient cpu", "Insufficient memory", "Too many
pods"). The status is UNSCHEDULABLE, since evicting pods frees resources, unless the pod asks for more
of some resource than the whole node has: then no preemption can help, and it is
UNSCHEDULABLE_AND_UNRESOLVABLE (as recent kube-scheduler releases mark it). ``ignoredResources`` and
``ignoredResourceGroups`` (the part before the "/") exempt extended resources from the check, and so
does a DeviceClass serving the resource (extended resources backed by DRA) on a node that has none of it
in its allocatable: there DynamicResources allocates devices for it.

Scoring strategies (per resource ``r`` the node has, weighted average over the configured resources,
integer arithmetic as kube-scheduler's):

* LeastAllocated (default): ``(allocatable - requested) * 100 / allocatable``, 0 when over-committed.
* MostAllocated: ``min(requested, allocatable) * 100 / allocatable``.
* RequestedToCapacityRatio: a piecewise-linear function of utilization ``requested * 100 /
  allocatable`` through the configured shape, whose scores (0..10) are scaled by 10 to 0..100;
  resources scoring 0 are left out of the average, which is rounded to the nearest integer.

``requested`` counts the pod too, and uses the non-zero requests for CPU and memory (100m / 200Mi
for a container without a request). ScorePlacement scores a pod group's placement with the same
strategy, the placement's nodes taken as one (placement_score.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cluster.api import objects_pb2
from cluster.api.validation import is_qualified_name
from scheduler.config.argtypes import (
    LEAST_ALLOCATED,
    MAX_CUSTOM_PRIORITY_SCORE,
    MAX_UTILIZATION,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from scheduler.framework import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    NotFound,
    PodGroupAssignments,
    PodGroupInfo,
    PodInfo,
    PreFilterResult,
    QueueingHint,
    Resource,
    Signature,
    Status,
    pod_requests,
)
from scheduler.framework.columns import EXACT_LIMIT, Column, ResourceColumns, exact_columns
from scheduler.framework.extended_resources import DEVICE_CLASS_PREFIX, DeviceClassResolver
from scheduler.framework.nodedata import NodeSet, Rows
from scheduler.framework.resource import CPU, EPHEMERAL_STORAGE, MEMORY
from scheduler.plugins.noderesources.placement_score import score_placement
from scheduler.plugins.noderesources.resource_allocation import (
    node_vectors,
    pod_request_list,
    request_signature,
)

NAME = "NodeResourcesFit"

ERR_REASON_TOO_MANY_PODS = "Too many pods"
ERR_REASON_INSUFFICIENT = "Insufficient {resource}"
ERR_REASON_INSUFFICIENT_CPU = "Insufficient cpu"
ERR_REASON_INSUFFICIENT_MEMORY = "Insufficient memory"
ERR_REASON_INSUFFICIENT_EPHEMERAL_STORAGE = "Insufficient ephemeral-storage"

_PRE_FILTER_KEY = "PreFilter" + NAME
_PRE_SCORE_KEY = "PreScore" + NAME

_STANDARD: tuple[tuple[str, str], ...] = (
    (CPU, ERR_REASON_INSUFFICIENT_CPU), (MEMORY, ERR_REASON_INSUFFICIENT_MEMORY))
_STANDARD += ((EPHEMERAL_STORAGE, ERR_REASON_INSUFFICIENT_EPHEMERAL_STORAGE),)


# ------------------------------------------------------------------------------------------- args

#: kube-scheduler's NodeResourcesFitArgs, decoded, defaulted and validated by scheduler.config.
ARGS = NodeResourcesFitArgs


# ------------------------------------------------------------------------------------- scoring

#: (requested per resource, allocatable per resource) -> node score; 0-allocatable entries are skipped.
Scorer = Callable[[Sequence[int], Sequence[int]], int]


def least_allocated_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        total = weights = 0
        for spec, req, alloc in zip(resources, requested, allocatable, strict=True):
            if alloc == 0:
                continue
            resource_score = 0 if req > alloc else (alloc - req) * MAX_NODE_SCORE // alloc
            total += resource_score * spec.weight
            weights += spec.weight
        return total // weights if weights else 0

    return score


def most_allocated_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        total = weights = 0
        for spec, req, alloc in zip(resources, requested, allocatable, strict=True):
            if alloc == 0:
                continue
            # Non-zero requests can exceed allocatable; such a node counts as full, not more.
            total += min(req, alloc) * MAX_NODE_SCORE // alloc * spec.weight
            weights += spec.weight
        return total // weights if weights else 0

    return score


def least_allocated_columns(
    columns: ResourceColumns, rows: Rows, pod_request: Sequence[int], weights: tuple[int, int]
) -> list[int]:
    """``least_allocated_scorer`` over (CPU, memory) with the non-zero requests, for a batch: the same
    integer arithmetic in int64 over the resource columns (exact, every value being below EXACT_LIMIT)."""
    total = np.zeros(len(rows), dtype=np.int64)
    weight_sum = np.zeros(len(rows), dtype=np.int64)
    for allocatable, requested, pod, weight in (
        (columns.alloc_cpu[rows], columns.non_zero_cpu[rows], pod_request[0], weights[0]),
        (columns.alloc_memory[rows], columns.non_zero_memory[rows], pod_request[1], weights[1]),
    ):
        requested = requested + pod
        has = allocatable > 0
        free = np.where(has & (requested <= allocatable), allocatable - requested, 0)
        total += free * MAX_NODE_SCORE // np.maximum(allocatable, 1) * weight
        weight_sum += has * weight
    scores: list[int] = np.where(weight_sum > 0, total // np.maximum(weight_sum, 1), 0).tolist()
    return scores


def _div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as Go's (a decreasing shape has negative slopes)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def broken_linear(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """The piecewise-linear function through (utilization, score) points: flat before the first point
    and after the last (kube-scheduler's helper.BuildBrokenLinearFunction)."""

    def f(p: int) -> int:
        for i, (x, y) in enumerate(shape):
            if p <= x:
                if i == 0:
                    return y
                x0, y0 = shape[i - 1]
                return y0 + _div((y - y0) * (p - x0), x - x0)
        return shape[-1][1]

    return f


def requested_to_capacity_ratio_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]
) -> Scorer:
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    f = broken_linear([(point.utilization, point.score * scale) for point in shape])

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        total = weights = 0
        for spec, req, alloc in zip(resources, requested, allocatable, strict=True):
            if alloc == 0:
                continue
            resource_score = f(MAX_UTILIZATION) if req > alloc else f(req * MAX_UTILIZATION // alloc)
            if resource_score > 0:
                total += resource_score * spec.weight
                weights += spec.weight
        # Go's math.Round: halves away from zero (all values here are non-negative).
        return (2 * total + weights) // (2 * weights) if weights else 0

    return score


def _scorer(strategy: ScoringStrategy) -> Scorer:
    if strategy.type == MOST_ALLOCATED:
        return most_allocated_scorer(strategy.resources)
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        assert strategy.shape is not None
        return requested_to_capacity_ratio_scorer(strategy.resources, strategy.shape)
    return least_allocated_scorer(strategy.resources)


# -------------------------------------------------------------------------------------- plugin

#: The most checks whose comparisons fit the bits of one int64 verdict key (two bits each, and one).
MAX_COLUMNAR_CHECKS = 30
#: (resource, the pod's request, the reason when it does not fit), precomputed in PreFilter.
_Check = tuple[str, int, str]


@dataclass(frozen=True, slots=True)
class _FitChecks:
    """What PreFilter leaves for Filter: the checks, and the pod's CPU and memory requests when those
    are all it asks for (then batch Filter decides over the resource columns)."""

    checks: tuple[_Check, ...]
    #: Whether every check is of a resource the columns hold (CPU, memory, extended resources) with an
    #: amount they compute with exactly.
    columnar: bool
    #: The checked resources a DeviceClass serves: not checked on a node without them in allocatable.
    dra_served: frozenset[str]

    @classmethod
    def of(cls, checks: tuple[_Check, ...], dra_served: frozenset[str]) -> _FitChecks:
        columnar = all(name != EPHEMERAL_STORAGE and amount < EXACT_LIMIT for name, amount, _ in checks)
        return cls(checks, columnar, dra_served)


def _is_extended(name: str) -> bool:
    """An extended resource (``example.com/gpu``): prefixed, outside kubernetes.io, and a valid quota
    name once prefixed with ``requests.`` (core/v1 helper IsExtendedResourceName)."""
    return (
        "/" in name
        and "kubernetes.io/" not in name
        and not name.startswith("requests.")
        and not is_qualified_name("requests." + name)
    )


class NodeResourcesFit:
    def __init__(self, args: NodeResourcesFitArgs,
                 extended_resources: DeviceClassResolver | None = None) -> None:
        self._ignored = frozenset(args.ignored_resources)
        self._extended_resources = extended_resources if extended_resources is not None \
            else DeviceClassResolver()
        self._ignored_groups = frozenset(args.ignored_resource_groups)
        self._resources = args.scoring_strategy.resources
        self._scorer = _scorer(args.scoring_strategy)
        #: Placements are always bin-packed, with the strategy's resources and weights: a domain the group
        #: fills tightly leaves the others whole for the next group, whatever spreads pods across nodes.
        self._placement_scorer = most_allocated_scorer(self._resources)
        #: The (CPU, memory) weights when the strategy is LeastAllocated over exactly those two, in that
        #: order (the default): ``score_nodes`` then takes its vector path.
        self._least_allocated_cpu_memory: tuple[int, int] | None = None
        names = tuple(spec.name for spec in self._resources)
        if args.scoring_strategy.type == LEAST_ALLOCATED and names == (CPU, MEMORY):
            self._least_allocated_cpu_memory = (self._resources[0].weight, self._resources[1].weight)

    @property
    def name(self) -> str:
        return NAME

    def sign(self, pod: PodInfo) -> Signature:
        """Filter and Score read the pod's requests alone."""
        return request_signature(pod)

    # ---------------------------------------------------------------------------------- filtering

    def _checks(self, requests: Resource) -> tuple[_Check, ...]:
        checks = [(name, requests.get(name), reason) for name, reason in _STANDARD if requests.get(name) > 0]
        for name in sorted(requests.scalar):
            amount = requests.scalar[name]
            if amount <= 0 or (
                _is_extended(name)
                and (name in self._ignored or name.split("/", 1)[0] in self._ignored_groups)
            ):
                continue
            checks.append((name, amount, ERR_REASON_INSUFFICIENT.format(resource=name)))
        return tuple(checks)

    def _dra_served(self, requests: Resource) -> frozenset[str]:
        """The extended resources of ``requests`` a DeviceClass serves (none without extended resources,
        at no cost)."""
        if not requests.scalar or not self._extended_resources:
            return frozenset()
        resolve = self._extended_resources.get
        return frozenset(name for name in requests.scalar if resolve(name) is not None)

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        requests = pod.requests
        state.write(_PRE_FILTER_KEY, _FitChecks.of(self._checks(requests), self._dra_served(requests)))
        return None, None

    def pre_filter_extensions(self) -> None:
        # The checks depend on the pod alone; the node's usage is read from the NodeInfo Filter gets.
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        try:
            fit: _FitChecks = state.read(_PRE_FILTER_KEY)
        except NotFound:
            return Status.as_error(f"reading {_PRE_FILTER_KEY!r} from the cycle state: PreFilter did not run")
        return _fit_status(fit, node_info)

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> list[Status | None]:
        """``filter`` of each node, PreFilter's checks read once (a missing one raises, and the framework
        then asks node by node). For a batch of the snapshot's nodes and a pod asking only for CPU,
        memory and extended resources, the comparisons run over the resource columns, and the nodes that
        fail the same ones share one verdict, decided on the first of them (one Status object: a pod that
        fits nowhere, a preemptor, would otherwise make thousands of equal ones, and their garbage
        collections)."""
        fit: _FitChecks = state.read(_PRE_FILTER_KEY)
        found = exact_columns(nodes)
        if found is None or not fit.columnar or len(fit.checks) > MAX_COLUMNAR_CHECKS:
            return _fit_statuses(fit, nodes)
        columns, rows = found
        full = columns.pod_count[rows] >= columns.alloc_pods[rows]
        failing_any = full.copy()
        # A node's verdict is a function of these comparisons: the pod count, and per check whether the
        # free amount falls short and whether the whole allocatable does.
        shortfall = full.astype(np.int64)
        for bit, (name, amount, _) in enumerate(fit.checks):
            allocatable, requested = _columns_of(columns, name)
            short = amount > allocatable[rows] - requested[rows]
            over = amount > allocatable[rows]
            if name in fit.dra_served:
                # DynamicResources decides where the node has none of it.
                has_some = allocatable[rows] > 0
                short &= has_some
                over &= has_some
            failing_any |= short
            shortfall |= short.astype(np.int64) << (2 * bit + 1) | over.astype(np.int64) << (2 * bit + 2)
        failing = np.flatnonzero(failing_any)
        statuses: list[Status | None] = [None] * len(rows)
        if not failing.size:
            return statuses
        shortfall = shortfall[failing]
        _, first, inverse = np.unique(shortfall, return_index=True, return_inverse=True)
        failing_rows = failing.tolist()
        listed = nodes.nodes
        decided = [_fit_status(fit, listed[failing_rows[i]]) for i in first.tolist()]
        for i, j in zip(failing_rows, inverse.tolist(), strict=True):
            statuses[i] = decided[j]
        return statuses

    # ------------------------------------------------------------------------------------ scoring

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(_PRE_SCORE_KEY, pod_request_list(pod, self._resources, use_requested=False))
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        pod_request = self._pod_request(state, pod)
        requested, allocatable = node_vectors(node_info, self._resources, pod_request, use_requested=False)
        return self._scorer(requested, allocatable)

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> list[int]:
        """``score`` of every node; the default strategy (LeastAllocated over CPU and memory) over the
        resource columns for a batch of the snapshot's nodes."""
        pod_request = self._pod_request(state, pod)
        weights = self._least_allocated_cpu_memory
        found = exact_columns(nodes) if weights is not None else None
        if weights is not None and found is not None and max(pod_request) < EXACT_LIMIT:
            return least_allocated_columns(*found, pod_request, weights)
        return [self._scorer(*node_vectors(node_info, self._resources, pod_request, use_requested=False))
                for node_info in nodes]

    def _pod_request(self, state: CycleState, pod: PodInfo) -> tuple[int, ...]:
        try:
            pod_request: tuple[int, ...] = state.read(_PRE_SCORE_KEY)
        except NotFound:
            pod_request = pod_request_list(pod, self._resources, use_requested=False)
        return pod_request

    def score_extensions(self) -> None:
        # Scores are already 0..100.
        return None

    def score_placement(self, state: CycleState, group: PodGroupInfo,
                        assignments: PodGroupAssignments) -> int:
        return score_placement(self._placement_scorer, self._resources, assignments)

    def placement_score_extensions(self) -> None:
        # Scores are already 0..100.
        return None

    # ------------------------------------------------------------------------------------- events

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            # A deleted pod frees what it requested on its node.
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE), _after_pod_delete),
            # A pod whose requests shrank frees the difference.
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCALE_DOWN), _after_pod_scale_down
            ),
            # A new node, or more allocatable on a node, may make room.
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
                self._after_node_change,
            ),
            # A class may come to serve an extended resource the pod asks for.
            ClusterEventWithHint(
                ClusterEvent(EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE),
                _after_device_class_change,
            ),
        ]

    def _after_node_change(self, pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
        requests = pod_requests(pod)
        after = Resource.from_quantities(new.status.allocatable)
        dra_served = self._dra_served(requests)
        # The pod would not fit even on the empty node: nothing to gain from it.
        if _insufficient(self._checks(requests), after, Resource(), 0, dra_served)[0]:
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        before = Resource.from_quantities(old.status.allocatable)
        if after.allowed_pod_number > before.allowed_pod_number:
            return QueueingHint.QUEUE
        if any(after.get(name) > before.get(name) for name in requests.names()):
            return QueueingHint.QUEUE
        # A resource a class serves that the node lacks is DynamicResources' to decide.
        if any(after.get(name) <= 0 for name in dra_served):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP


def _fit_status(fit: _FitChecks, node_info: NodeInfo) -> Status | None:
    """The general checks of ``filter``, every shortfall reported."""
    return _verdict(fit, node_info.allocatable, node_info.requested, len(node_info.pods))


def _verdict(fit: _FitChecks, allocatable: Resource, requested: Resource, pods: int) -> Status | None:
    reasons, unresolvable = _insufficient(fit.checks, allocatable, requested, pods, fit.dra_served)
    if not reasons:
        return None
    return Status.unresolvable(*reasons) if unresolvable else Status.unschedulable(*reasons)


class RequestsFit:
    """This plugin's Filter for the pod of one cycle as a function of a node's allocatable, its pods'
    summed requests and their number (Filter's own checks): for preemption's dry run, which takes pods
    off a node and puts them back without copying it."""

    __slots__ = ("_fit",)

    def __init__(self, state: CycleState) -> None:
        """NotFound when PreFilter did not run in the cycle of ``state``."""
        self._fit: _FitChecks = state.read(_PRE_FILTER_KEY)

    def fits(self, allocatable: Resource, requested: Resource, pods: int) -> bool:
        fit = self._fit
        return not _insufficient(fit.checks, allocatable, requested, pods, fit.dra_served)[0]

    def status(self, allocatable: Resource, requested: Resource, pods: int) -> Status | None:
        """Filter's verdict: None, or why the pod does not fit (no plugin named yet, as Filter's)."""
        return _verdict(self._fit, allocatable, requested, pods)


def _columns_of(columns: ResourceColumns, name: str) -> tuple[Column, Column]:
    """The allocatable and requested columns of resource ``name`` (zeros for one no node has)."""
    if name == CPU:
        return columns.alloc_cpu, columns.requested_cpu
    if name == MEMORY:
        return columns.alloc_memory, columns.requested_memory
    allocatable = columns.scalar_alloc.get(name)
    if allocatable is None:
        none = np.zeros(len(columns.alloc_cpu), dtype=np.int64)
        return none, none
    return allocatable, columns.scalar_requested[name]


def _fit_statuses(fit: _FitChecks, nodes: Sequence[NodeInfo]) -> list[Status | None]:
    """``_fit_status`` of each node, the nodes that fail for the same reasons sharing one verdict."""
    verdicts: dict[tuple[tuple[str, ...], bool], Status] = {}
    statuses: list[Status | None] = []
    for node_info in nodes:
        reasons, unresolvable = _insufficient(fit.checks, node_info.allocatable, node_info.requested,
                                              len(node_info.pods), fit.dra_served)
        if not reasons:
            statuses.append(None)
            continue
        key = (tuple(reasons), unresolvable)
        verdict = verdicts.get(key)
        if verdict is None:
            verdict = verdicts[key] = (Status.unresolvable(*reasons) if unresolvable
                                       else Status.unschedulable(*reasons))
        statuses.append(verdict)
    return statuses


def _insufficient(
    checks: Sequence[_Check], allocatable: Resource, requested: Resource, pods: int,
    dra_served: frozenset[str],
) -> tuple[list[str], bool]:
    """The reasons the pod does not fit, and whether one of them is a request larger than the whole
    node's allocatable (which evicting pods cannot fix; a full pod count can be). A resource of
    ``dra_served`` the node has none of is DynamicResources' to allocate."""
    reasons = []
    unresolvable = False
    if pods + 1 > allocatable.allowed_pod_number:
        reasons.append(ERR_REASON_TOO_MANY_PODS)
    for name, amount, reason in checks:
        have = allocatable.get(name)
        if amount > have - requested.get(name):
            if have <= 0 and name in dra_served:
                continue
            reasons.append(reason)
            unresolvable = unresolvable or amount > have
    return reasons, unresolvable


def _explicit_name(device_class: objects_pb2.DeviceClass) -> str:
    spec = device_class.spec
    return spec.extended_resource_name if spec.HasField("extended_resource_name") else ""


def _after_device_class_change(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    """A DeviceClass was added, or its extendedResourceName changed: it may serve what the pod wants."""
    modified: objects_pb2.DeviceClass = new
    explicit = _explicit_name(modified)
    requested = pod_requests(pod).scalar
    if old is not None:
        if _explicit_name(old) == explicit:
            return QueueingHint.SKIP
    elif DEVICE_CLASS_PREFIX + modified.metadata.name in requested:
        # A class's name never changes: only its addition brings its implicit name.
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE if explicit and explicit in requested else QueueingHint.SKIP


def _after_pod_delete(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    # Only a pod that was on a node held resources there.
    return QueueingHint.QUEUE if old.spec.node_name else QueueingHint.SKIP


def _after_pod_scale_down(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    if new.metadata.uid == pod.metadata.uid:
        # The pod itself asks for less now.
        return QueueingHint.QUEUE
    if not new.spec.node_name:
        return QueueingHint.SKIP
    before, after = pod_requests(old), pod_requests(new)
    if any(before.get(name) > after.get(name) for name in pod_requests(pod).names()):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def new(args: NodeResourcesFitArgs | None, handle: Handle) -> NodeResourcesFit:
    """None (a framework built without a configuration): the defaults."""
    return NodeResourcesFit(NodeResourcesFitArgs() if args is None else args,
                            handle.dra_manager.extended_resources)
