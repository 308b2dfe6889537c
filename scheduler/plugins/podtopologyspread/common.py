"""What PodTopologySpread's Filter and Score share: a pod's spread constraints, parsed, and the
per-node count of the pods they match.

A constraint counts the pods of the incoming pod's namespace that match its selector, per topology
domain (a value of its topology key), over the *eligible* nodes: those that carry every topology key of
the pod's constraints and pass the constraint's node inclusion policies (nodeAffinityPolicy: Honor by
default, the node must satisfy the pod's nodeSelector and required node affinity; nodeTaintsPolicy:
Ignore by default, Honor excludes nodes with a NoSchedule / NoExecute taint the pod does not tolerate).

Those counts are sums over every node of the cluster, so they come from a ``NodeAggregate`` keyed by
everything a node's contribution depends on (namespace, constraints, and the pod's node affinity and
tolerations when a policy honors them): pods of one workload share it, and a cycle recomputes only the
nodes that changed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, replace

from cluster.api import objects_pb2
from cluster.api.selectors import IN, LabelSelector, Requirement
from scheduler.framework import NodeInfo, PodInfo, WorkloadLister
from scheduler.plugins.helpers import DO_NOT_SCHEDULE_EFFECTS, RequiredNodeAffinity, find_untolerated_taint
from scheduler.plugins.nodeaggregate import Contribution

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
#: Spreading over this key counts each node on its own; Score counts it from the node it is handed.
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"


@dataclass(frozen=True, slots=True)
class Constraint:
    """A topologySpreadConstraint with its selector parsed (matchLabelKeys merged in) and defaults applied."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    #: 1 when unset: fewer eligible domains than this makes the global minimum 0.
    min_domains: int
    honor_node_affinity: bool
    honor_taints: bool


def constraints_of(pod: objects_pb2.Pod, action: str) -> tuple[Constraint, ...]:
    """The pod's constraints whose whenUnsatisfiable is ``action`` (DoNotSchedule: Filter; ScheduleAnyway:
    Score)."""
    return _parsed(pod.spec.topology_spread_constraints, pod.metadata.labels, action)


#: kube-scheduler's system default constraints (defaultingType: System).
SYSTEM_DEFAULT_CONSTRAINTS = (
    objects_pb2.TopologySpreadConstraint(
        max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
    objects_pb2.TopologySpreadConstraint(
        max_skew=5, topology_key=LABEL_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
)


class Constraints:
    """What a pod is spread by: its own constraints, or, when it has none, the default constraints with
    the selector of the Services and controller that select it (none when nothing does)."""

    __slots__ = ("_defaults", "_workloads", "system_defaulted")

    def __init__(
        self,
        defaults: Iterable[objects_pb2.TopologySpreadConstraint],
        system_defaulted: bool,
        workloads: WorkloadLister,
    ) -> None:
        self._defaults = tuple(defaults)
        #: defaultingType System: Score then also weighs nodes that lack a default constraint's key.
        self.system_defaulted = system_defaulted
        self._workloads = workloads

    def of(self, pod: objects_pb2.Pod, action: str) -> tuple[Constraint, ...]:
        if pod.spec.topology_spread_constraints:
            return constraints_of(pod, action)
        if not any(c.when_unsatisfiable == action for c in self._defaults):
            return ()
        selector = self._workloads.default_selector(pod)
        if selector.empty:
            return ()
        return tuple(
            replace(c, selector=selector) for c in _parsed(self._defaults, pod.metadata.labels, action)
        )

    def spreads(self, pod: objects_pb2.Pod) -> bool:
        """Whether some constraint, the pod's own or a default one, applies to the pod."""
        if pod.spec.topology_spread_constraints:
            return True
        return bool(self._defaults) and not self._workloads.default_selector(pod).empty

    def require_all_keys(self, pod: objects_pb2.Pod) -> bool:
        """Whether a node must carry every topology key to be scored: always but for system defaults."""
        return bool(pod.spec.topology_spread_constraints) or not self.system_defaulted


def _parsed(
    constraints: Iterable[objects_pb2.TopologySpreadConstraint], labels: Mapping[str, str], action: str
) -> tuple[Constraint, ...]:
    out = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        has_selector = c.HasField("label_selector")
        # An absent selector matches nothing (and matchLabelKeys cannot change that).
        selector = LabelSelector.from_proto(c.label_selector if has_selector else None)
        # matchLabelKeys: the pod's own values for those keys join the selector, so that, say, each
        # rollout revision spreads on its own.
        extra = tuple(Requirement(k, IN, frozenset({labels[k]})) for k in c.match_label_keys if k in labels)
        if extra and has_selector:
            selector = LabelSelector(selector.requirements + extra)
        out.append(Constraint(
            max_skew=c.max_skew,
            topology_key=c.topology_key,
            selector=selector,
            min_domains=c.min_domains if c.HasField("min_domains") else 1,
            honor_node_affinity=(c.node_affinity_policy or HONOR) == HONOR,
            honor_taints=(c.node_taints_policy or IGNORE) == HONOR,
        ))
    return tuple(out)


def count_matching(pods: Iterable[PodInfo], selector: LabelSelector, namespace: str) -> int:
    """Pods of ``namespace`` matching ``selector``, terminating pods left out (they are going away).
    An empty selector counts nothing, as kube-scheduler's countPodsMatchSelector."""
    if selector.empty:
        return 0
    count = 0
    for pod_info in pods:
        metadata = pod_info.pod.metadata
        if metadata.namespace == namespace and not metadata.HasField("deletion_timestamp") and (
            selector.matches(metadata.labels)
        ):
            count += 1
    return count


def has_all_keys(labels: Mapping[str, str], constraints: Iterable[Constraint]) -> bool:
    return all(c.topology_key in labels for c in constraints)


class Inclusion:
    """The node inclusion policies of one pod's constraints: whether a node counts for a constraint."""

    __slots__ = ("_affinity", "_tolerations")

    def __init__(self, pod: objects_pb2.Pod, constraints: Iterable[Constraint]) -> None:
        constraints = tuple(constraints)
        self._affinity = (
            RequiredNodeAffinity.from_pod(pod) if any(c.honor_node_affinity for c in constraints) else None
        )
        self._tolerations = pod.spec.tolerations

    def admits(self, constraint: Constraint, node: objects_pb2.Node) -> bool:
        if constraint.honor_node_affinity and self._affinity is not None and not self._affinity.matches(node):
            return False
        return not (constraint.honor_taints and find_untolerated_taint(
            node.spec.taints, self._tolerations, DO_NOT_SCHEDULE_EFFECTS
        ) is not None)


def aggregate_key(
    pod: objects_pb2.Pod, constraints: tuple[Constraint, ...], require_all: bool = True
) -> Hashable:
    """Everything a node's contribution depends on besides the node itself."""
    affinity: Hashable = None
    if any(c.honor_node_affinity for c in constraints):
        node_affinity = pod.spec.affinity.node_affinity
        required = node_affinity.required_during_scheduling_ignored_during_execution
        affinity = (
            frozenset(pod.spec.node_selector.items()),
            required.SerializeToString(deterministic=True)
            if node_affinity.HasField("required_during_scheduling_ignored_during_execution") else None,
        )
    tolerations: Hashable = None
    if any(c.honor_taints for c in constraints):
        tolerations = tuple(t.SerializeToString(deterministic=True) for t in pod.spec.tolerations)
    return pod.metadata.namespace, constraints, affinity, tolerations, require_all


def spread_contribution(
    namespace: str, constraints: tuple[Constraint, ...], inclusion: Inclusion, require_all: bool = True
) -> Callable[[NodeInfo], Contribution[int]]:
    """A node's (constraint index, topology value, matching pods) for every constraint it is eligible for;
    nothing when it lacks one of the topology keys (with ``require_all`` False, nothing for the
    constraints whose key it lacks). A zero count still makes the domain exist."""

    def contribution(node_info: NodeInfo) -> Contribution[int]:
        node = node_info.node
        if node is None:
            return ()
        labels = node.metadata.labels
        if require_all and any(c.topology_key not in labels for c in constraints):
            return ()
        counted: dict[LabelSelector, int] = {}
        out = []
        for i, c in enumerate(constraints):
            value = labels.get(c.topology_key)
            if value is None or not inclusion.admits(c, node):
                continue
            count = counted.get(c.selector)
            if count is None:
                count = counted[c.selector] = count_matching(node_info.pods.values(), c.selector, namespace)
            out.append((i, value, count))
        return tuple(out)

    return contribution
