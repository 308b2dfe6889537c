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
from dataclasses import dataclass

from cluster.api import objects_pb2
from cluster.api.selectors import IN, LabelSelector, Requirement
from scheduler.framework import NodeInfo, PodInfo
from scheduler.plugins.helpers import DO_NOT_SCHEDULE_EFFECTS, RequiredNodeAffinity, find_untolerated_taint
from scheduler.plugins.nodeaggregate import Contribution

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
#: Spreading over this key counts each node on its own; Score counts it from the node it is handed.
LABEL_HOSTNAME = "kubernetes.io/hostname"


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
    labels = pod.metadata.labels
    out = []
    for c in pod.spec.topology_spread_constraints:
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


def aggregate_key(pod: objects_pb2.Pod, constraints: tuple[Constraint, ...]) -> Hashable:
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
    return pod.metadata.namespace, constraints, affinity, tolerations


def spread_contribution(
    namespace: str, constraints: tuple[Constraint, ...], inclusion: Inclusion
) -> Callable[[NodeInfo], Contribution[int]]:
    """A node's (constraint index, topology value, matching pods) for every constraint it is eligible for;
    nothing when it lacks one of the topology keys. A zero count still makes the domain exist."""

    def contribution(node_info: NodeInfo) -> Contribution[int]:
        node = node_info.node
        if node is None:
            return ()
        labels = node.metadata.labels
        if any(c.topology_key not in labels for c in constraints):
            return ()
        values = [labels[c.topology_key] for c in constraints]
        counted: dict[LabelSelector, int] = {}
        out = []
        for i, c in enumerate(constraints):
            if not inclusion.admits(c, node):
                continue
            count = counted.get(c.selector)
            if count is None:
                count = counted[c.selector] = count_matching(node_info.pods.values(), c.selector, namespace)
            out.append((i, values[i], count))
        return tuple(out)

    return contribution
