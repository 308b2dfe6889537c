"""What plugins see: pods and nodes, with everything a cycle needs parsed once up front.

``PodInfo`` wraps a Pod with its resource requests, priority, host ports and parsed affinity terms, so
that Filter and Score, which run once per node, never parse a quantity or a selector. ``NodeInfo`` is
a node with the aggregate of the pods on it (requested resources, ports, the pods that have affinity
terms); every change bumps its ``generation`` so that a snapshot copies only the nodes that changed.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from cluster.api import objects_pb2
from cluster.api.containers import long_running_containers
from cluster.api.selectors import IN, NOT_IN, LabelSelector, Requirement
from scheduler.framework.namespaces import NamespaceLabels
from scheduler.framework.node_to_status import NodeToStatus
from scheduler.framework.pod_groups import group_key_of
from scheduler.framework.resource import Resource, pod_non_zero_requests, pod_requests
from scheduler.framework.status import Status

_generations = itertools.count(1)


def next_generation() -> int:
    """A process-wide, strictly increasing stamp for NodeInfo changes."""
    return next(_generations)


def pod_key(pod: objects_pb2.Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A (anti-)affinity term with its selectors parsed: which pods, in which namespaces, by topology."""

    selector: LabelSelector
    #: Namespaces named explicitly (or the pod's own, when neither these nor a selector are given).
    namespaces: frozenset[str]
    #: None when the term has no namespaceSelector; an empty selector selects every namespace.
    namespace_selector: LabelSelector | None
    topology_key: str

    @property
    def reads_namespace_labels(self) -> bool:
        """Whether which namespaces the term covers depends on their labels (a non-empty selector)."""
        return self.namespace_selector is not None and not self.namespace_selector.empty

    def matches_namespace(self, namespace: str, labels: NamespaceLabels) -> bool:
        """Whether the term covers ``namespace``: named in ``namespaces``, or selected by its labels as
        ``labels`` has them (kube-scheduler's AffinityTerm.Matches; resolving the selector to names at
        PreFilter, as mergeAffinityTermNamespacesIfNotEmpty does, gives the same answer)."""
        if namespace in self.namespaces:
            return True
        selector = self.namespace_selector
        if selector is None:
            return False
        return selector.empty or selector.matches(labels.of(namespace))

    def matches(self, pod: objects_pb2.Pod, labels: NamespaceLabels) -> bool:
        """Whether ``pod`` is one of the pods this term is about (namespace and labels)."""
        return self.matches_namespace(pod.metadata.namespace, labels) and self.selector.matches(
            pod.metadata.labels
        )


@dataclass(frozen=True, slots=True)
class WeightedAffinityTerm:
    term: AffinityTerm
    weight: int


def affinity_term(pod: objects_pb2.Pod, term: objects_pb2.PodAffinityTerm) -> AffinityTerm:
    """Parse a PodAffinityTerm of ``pod``, as kube-scheduler's newAffinityTerm: no namespaces and no
    namespaceSelector mean the pod's own namespace; matchLabelKeys / mismatchLabelKeys add ``key in
    (value)`` / ``key notin (value)`` requirements with the pod's own label values."""
    selector = LabelSelector.from_proto(term.label_selector if term.HasField("label_selector") else None)
    extra = [Requirement(k, IN, frozenset({pod.metadata.labels[k]}))
             for k in term.match_label_keys if k in pod.metadata.labels]
    extra += [Requirement(k, NOT_IN, frozenset({pod.metadata.labels[k]}))
              for k in term.mismatch_label_keys if k in pod.metadata.labels]
    if extra and term.HasField("label_selector"):
        selector = LabelSelector(selector.requirements + tuple(extra))
    namespaces = frozenset(term.namespaces)
    namespace_selector = (
        LabelSelector.from_proto(term.namespace_selector) if term.HasField("namespace_selector") else None
    )
    if not namespaces and namespace_selector is None:
        namespaces = frozenset({pod.metadata.namespace})
    return AffinityTerm(selector, namespaces, namespace_selector, term.topology_key)


def pod_start_time(pod: objects_pb2.Pod) -> float:
    """When the pod started, in Unix seconds. A pod that has not started yet counts as starting now,
    after every pod that has (kube-scheduler's GetPodStartTime uses the current time); infinity says
    the same thing without reading a clock, so a preemption's dry run is deterministic."""
    started = pod.status.start_time
    if started.seconds or started.nanos:
        return started.seconds + started.nanos / 1e9
    return math.inf


def pod_host_ports(pod: objects_pb2.Pod) -> tuple[tuple[str, str, int], ...]:
    """The (address, protocol, port) host ports the pod holds on its node: those of the containers that
    run as long as it does (sidecars and app containers), as kube-scheduler's GetHostPorts counts them."""
    return tuple(
        (port.host_ip or "0.0.0.0", port.protocol or "TCP", port.host_port)
        for container in long_running_containers(pod)
        for port in container.ports
        if port.host_port > 0
    )


def pod_pvc_keys(pod: objects_pb2.Pod) -> tuple[str, ...]:
    """The "namespace/name" of each PersistentVolumeClaim the pod's volumes name directly (not its
    ephemeral volumes' claims), as kube-scheduler's NodeInfo counts them in PVCRefCounts."""
    namespace = pod.metadata.namespace
    return tuple(f"{namespace}/{volume.persistent_volume_claim.claim_name}" for volume in pod.spec.volumes
                 if volume.HasField("persistent_volume_claim"))


class PodInfo:
    """A pod and what the scheduler derives from it once."""

    __slots__ = (
        "group_key",
        "host_ports",
        "key",
        "non_zero_cpu",
        "non_zero_memory",
        "pod",
        "preferred_affinity_terms",
        "preferred_anti_affinity_terms",
        "priority",
        "pvc_keys",
        "requests",
        "required_affinity_terms",
        "required_anti_affinity_terms",
        "start_time",
    )

    def __init__(self, pod: objects_pb2.Pod) -> None:
        self.update(pod)

    def with_pod(self, pod: objects_pb2.Pod) -> PodInfo:
        """``PodInfo(pod)`` for another version of this pod (the bound pod confirming an assumed one, a
        bound pod's update): when nothing the derived fields are read from changed (name, namespace,
        labels, spec, start time) they are shared with this one instead of parsed again."""
        mine = self.pod
        if (pod.spec == mine.spec and pod.metadata.name == mine.metadata.name
                and pod.metadata.namespace == mine.metadata.namespace
                and pod.status.start_time == mine.status.start_time
                and pod.metadata.labels == mine.metadata.labels):
            same = copy.copy(self)
            same.pod = pod
            return same
        return PodInfo(pod)

    def update(self, pod: objects_pb2.Pod) -> None:
        self.pod = pod
        self.key = pod_key(pod)
        #: Read once here: the queue's order compares it at every move of the heap.
        self.group_key = group_key_of(pod)
        self.priority = pod.spec.priority if pod.spec.HasField("priority") else 0
        self.requests = pod_requests(pod)
        self.non_zero_cpu, self.non_zero_memory = pod_non_zero_requests(pod)
        #: Read once here: preemption sorts and compares every candidate victim by it.
        self.start_time = pod_start_time(pod)
        self.host_ports = pod_host_ports(pod)
        # Most pods have no volumes: the repeated field's truth is all they cost.
        self.pvc_keys = pod_pvc_keys(pod) if pod.spec.volumes else ()
        affinity = pod.spec.affinity
        pod_affinity = affinity.pod_affinity
        anti = affinity.pod_anti_affinity
        self.required_affinity_terms = tuple(
            affinity_term(pod, t) for t in pod_affinity.required_during_scheduling_ignored_during_execution
        )
        self.required_anti_affinity_terms = tuple(
            affinity_term(pod, t) for t in anti.required_during_scheduling_ignored_during_execution
        )
        self.preferred_affinity_terms = tuple(
            WeightedAffinityTerm(affinity_term(pod, w.pod_affinity_term), w.weight)
            for w in pod_affinity.preferred_during_scheduling_ignored_during_execution
        )
        self.preferred_anti_affinity_terms = tuple(
            WeightedAffinityTerm(affinity_term(pod, w.pod_affinity_term), w.weight)
            for w in anti.preferred_during_scheduling_ignored_during_execution
        )

    @property
    def has_affinity(self) -> bool:
        """Any pod (anti-)affinity term, which makes other pods' InterPodAffinity look at this one."""
        return bool(self.required_affinity_terms or self.required_anti_affinity_terms
                    or self.preferred_affinity_terms or self.preferred_anti_affinity_terms)

    @property
    def has_required_anti_affinity(self) -> bool:
        return bool(self.required_anti_affinity_terms)

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"


class HostPorts:
    """The host ports in use on a node: (ip, protocol, port) with counts. 0.0.0.0 conflicts with every
    address of the same protocol and port, as kube-scheduler's HostPortInfo."""

    __slots__ = ("_by_port",)

    def __init__(self) -> None:
        self._by_port: dict[tuple[str, int], Counter[str]] = {}

    def add(self, ip: str, protocol: str, port: int) -> None:
        self._by_port.setdefault((protocol, port), Counter())[ip] += 1

    def remove(self, ip: str, protocol: str, port: int) -> None:
        ips = self._by_port.get((protocol, port))
        if ips is None:
            return
        ips[ip] -= 1
        if ips[ip] <= 0:
            del ips[ip]
        if not ips:
            del self._by_port[(protocol, port)]

    def conflicts(self, ip: str, protocol: str, port: int) -> bool:
        ips = self._by_port.get((protocol, port))
        if not ips:
            return False
        return ip == "0.0.0.0" or "0.0.0.0" in ips or ip in ips

    def __len__(self) -> int:
        return sum(sum(ips.values()) for ips in self._by_port.values())

    def clone(self) -> HostPorts:
        copy = HostPorts()
        copy._by_port = {key: Counter(ips) for key, ips in self._by_port.items()}
        return copy


@dataclass(frozen=True, slots=True)
class ImageStateSummary:
    """An image a node reports, as a snapshot sees it: its size and how many nodes had it when this
    node was last copied into the snapshot (kube-scheduler's ImageStateSummary)."""

    size: int
    num_nodes: int


class ImageState:
    """The cache's live record of an image name: the size the first node to report it gave, and the
    nodes reporting it now. NodeInfos in the cache share these; copies freeze them into summaries."""

    __slots__ = ("nodes", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self.nodes: set[str] = set()

    @property
    def num_nodes(self) -> int:
        return len(self.nodes)

    def summary(self) -> ImageStateSummary:
        return ImageStateSummary(self.size, len(self.nodes))


class NodeInfo:
    """A node and the pods on it (bound, or assumed by this scheduler)."""

    __slots__ = (
        "allocatable",
        "generation",
        "image_states",
        "labels",
        "name",
        "node",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "pvc_ref_counts",
        "requested",
        "taints",
        "unschedulable",
        "used_ports",
    )

    def __init__(self, node: objects_pb2.Node | None = None, pods: Iterable[PodInfo] = ()) -> None:
        self.node: objects_pb2.Node | None = None
        #: The node's name ("" without a node), in a plain slot (read-only for users): Filter and Score
        #: ask for it per node, and through the protobuf message it costs about a microsecond.
        self.name = ""
        #: The node's labels as a plain dict: Filter and Score match selectors against them per node, and
        #: a dict lookup is several times cheaper than one in the protobuf map.
        self.labels: dict[str, str] = {}
        #: The node's taints and ``spec.unschedulable``, read out of the protobuf once for the same
        #: reason (Filter and Score look at them on every node, and most nodes have none).
        self.taints: tuple[objects_pb2.Taint, ...] = ()
        self.unschedulable = False
        #: Image name -> its state, for every name in the node's ``status.images``: set by the cache
        #: (which counts the nodes per image), live ``ImageState``s there and frozen summaries in copies.
        self.image_states: dict[str, ImageState | ImageStateSummary] = {}
        #: Pods by key ("namespace/name"), in the order they were added.
        self.pods: dict[str, PodInfo] = {}
        self.pods_with_affinity: dict[str, PodInfo] = {}
        self.pods_with_required_anti_affinity: dict[str, PodInfo] = {}
        self.used_ports = HostPorts()
        #: "namespace/name" of each PersistentVolumeClaim the pods here use -> how many of them use it
        #: (kube-scheduler's PVCRefCounts): the snapshot knows from these which claims are in use.
        self.pvc_ref_counts: dict[str, int] = {}
        self.requested = Resource()
        #: CPU and memory with the scoring defaults for containers without requests.
        self.non_zero_requested = Resource()
        self.allocatable = Resource()
        self.generation = next_generation()
        if node is not None:
            self.set_node(node)
        for pod_info in pods:
            self.add_pod(pod_info)

    def set_node(self, node: objects_pb2.Node) -> None:
        self.node = node
        self.name = node.metadata.name
        self.labels = dict(node.metadata.labels)
        self.taints = tuple(node.spec.taints)
        self.unschedulable = node.spec.unschedulable
        self.allocatable = Resource.from_quantities(node.status.allocatable)
        self.generation = next_generation()

    def remove_node(self) -> None:
        """The node object is gone; the pods still on it keep the NodeInfo alive until they go too."""
        self.node = None
        self.name = ""
        self.labels = {}
        self.taints = ()
        self.unschedulable = False
        self.image_states = {}
        self.generation = next_generation()

    def add_pod(self, pod_info: PodInfo) -> None:
        if pod_info.key in self.pods:
            self.remove_pod(pod_info.key)
        self.pods[pod_info.key] = pod_info
        if pod_info.has_affinity:
            self.pods_with_affinity[pod_info.key] = pod_info
        if pod_info.has_required_anti_affinity:
            self.pods_with_required_anti_affinity[pod_info.key] = pod_info
        self._account(pod_info, +1)
        self.generation = next_generation()

    def replace_pod(self, pod_info: PodInfo) -> None:
        """Put ``pod_info`` in place of the pod with its key, which is here, as one change (one
        generation): what ``remove_pod`` then ``add_pod`` leave, without counting the pod's footprint out
        and in again when it did not change."""
        key = pod_info.key
        old = self.pods.pop(key)
        self.pods[key] = pod_info  # last, as add_pod would put it
        self.pods_with_affinity.pop(key, None)
        if pod_info.has_affinity:
            self.pods_with_affinity[key] = pod_info
        self.pods_with_required_anti_affinity.pop(key, None)
        if pod_info.has_required_anti_affinity:
            self.pods_with_required_anti_affinity[key] = pod_info
        if not _same_footprint(old, pod_info):
            self._account(old, -1)
            self._account(pod_info, +1)
        self.generation = next_generation()

    def remove_pod(self, key: str) -> bool:
        """Take the pod with ``key`` off this node; False if it was not here."""
        pod_info = self.pods.pop(key, None)
        if pod_info is None:
            return False
        self.pods_with_affinity.pop(key, None)
        self.pods_with_required_anti_affinity.pop(key, None)
        self._account(pod_info, -1)
        self.generation = next_generation()
        return True

    def _account(self, pod_info: PodInfo, sign: int) -> None:
        if sign > 0:
            self.requested.add(pod_info.requests)
            for ip, protocol, port in pod_info.host_ports:
                self.used_ports.add(ip, protocol, port)
        else:
            self.requested.sub(pod_info.requests)
            for ip, protocol, port in pod_info.host_ports:
                self.used_ports.remove(ip, protocol, port)
        self.non_zero_requested.milli_cpu += sign * pod_info.non_zero_cpu
        self.non_zero_requested.memory += sign * pod_info.non_zero_memory
        if pod_info.pvc_keys:
            counts = self.pvc_ref_counts
            for key in pod_info.pvc_keys:
                left = counts.get(key, 0) + sign
                if left > 0:
                    counts[key] = left
                else:
                    counts.pop(key, None)

    def clone(self) -> NodeInfo:
        """A copy whose pod set and aggregates can change without touching this one (preemption's dry
        runs and snapshots); pods and the node object are shared, being replaced, never mutated."""
        copy = NodeInfo.__new__(NodeInfo)
        copy.node = self.node
        copy.name = self.name
        copy.labels = self.labels  # replaced with the node, never mutated
        copy.taints = self.taints
        copy.unschedulable = self.unschedulable
        # Frozen: the copy's image counts stay those of now, as kube-scheduler's snapshot has them.
        copy.image_states = {
            name: state.summary() if isinstance(state, ImageState) else state
            for name, state in self.image_states.items()
        }
        copy.pods = dict(self.pods)
        copy.pods_with_affinity = dict(self.pods_with_affinity)
        copy.pods_with_required_anti_affinity = dict(self.pods_with_required_anti_affinity)
        copy.used_ports = self.used_ports.clone()
        copy.pvc_ref_counts = dict(self.pvc_ref_counts)
        copy.requested = self.requested.clone()
        copy.non_zero_requested = self.non_zero_requested.clone()
        copy.allocatable = self.allocatable.clone()
        copy.generation = self.generation
        return copy

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"


def _same_footprint(a: PodInfo, b: PodInfo) -> bool:
    """Whether the two pods count alike in a node's aggregates (``NodeInfo._account``)."""
    return (a.requests == b.requests and a.non_zero_cpu == b.non_zero_cpu
            and a.non_zero_memory == b.non_zero_memory and a.host_ports == b.host_ports
            and a.pvc_keys == b.pvc_keys)


@dataclass(slots=True)
class QueuedPodInfo:
    """A pod in the scheduling queue, with its queueing history."""

    pod_info: PodInfo
    #: When the pod was last added to (or moved within) the queue: the QueueSort tie-breaker and the
    #: start of its backoff and of its stay in the unschedulable pods.
    timestamp: float
    #: Scheduling attempts so far; the backoff doubles with each.
    attempts: int = 0
    #: When the first attempt started (for the pod's end-to-end scheduling latency).
    initial_attempt_timestamp: float | None = None
    #: Plugins that rejected the pod in its last attempt: only events they registered can requeue it.
    unschedulable_plugins: set[str] = field(default_factory=set)
    #: Plugins that returned PENDING in its last attempt.
    pending_plugins: set[str] = field(default_factory=set)
    #: A PreEnqueue plugin (named in ``unschedulable_plugins``) keeps the pod out of activeQ.
    gated: bool = False

    @property
    def pod(self) -> objects_pb2.Pod:
        return self.pod_info.pod

    @property
    def key(self) -> str:
        return self.pod_info.key


class NodeScore(NamedTuple):
    """A node's score (a tuple: Score makes thousands per cycle, and a tuple is the cheapest to make)."""

    name: str
    score: int


def node_scores(names: Iterable[str], scores: Iterable[int]) -> list[NodeScore]:
    """NodeScores of parallel names and scores, each made in C by ``tuple.__new__`` (what
    ``NodeScore._make`` calls, without its Python frame per node)."""
    return list(map(tuple.__new__, itertools.repeat(NodeScore), zip(names, scores, strict=True)))


@dataclass(slots=True)
class PreFilterResult:
    """PreFilter may narrow the nodes worth filtering (NodeAffinity, NodeName): None means all."""

    node_names: frozenset[str] | None = None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return PreFilterResult(other.node_names)
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(slots=True)
class PostFilterResult:
    """What PostFilter (preemption) decided: the node the pod is nominated to, if any."""

    nominated_node_name: str = ""


@dataclass(slots=True)
class Diagnosis:
    """Why a pod fits nowhere: the status of every node that was filtered out, and which plugins said no."""

    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    #: Set when PreFilter rejected the pod before any node was looked at.
    pre_filter_message: str = ""
    #: Set by PostFilter (preemption) to explain what it could or could not do.
    post_filter_message: str = ""

    def distinct_statuses(self, examples: int) -> list[tuple[Status, int, list[int]]]:
        """Each distinct Status object of ``node_to_status``, first seen first, with how many nodes
        have it and the positions (in ``node_to_status``) of the first ``examples`` of them. Plugins
        hand one object to every node with the same verdict, so a pod that fits on none of 5000 nodes
        has a handful: summaries count those, not the nodes, and stop reading positions early."""
        statuses = list(self.node_to_status.values())
        idents = list(map(id, statuses))
        counts = Counter(idents)
        positions: dict[int, list[int]] = {ident: [] for ident in counts}
        missing = len(counts)
        for position, ident in enumerate(idents):
            kept = positions[ident]
            if len(kept) < examples:
                kept.append(position)
                if len(kept) == min(examples, counts[ident]):
                    missing -= 1
                    if not missing:
                        break
        first = {ident: kept[0] for ident, kept in positions.items() if kept}
        return [(statuses[first[ident]], count, positions[ident]) for ident, count in counts.items()]


class FitError(Exception):
    """No node fits the pod. Its message reads as kube-scheduler's:
    ``0/5 nodes are available: 2 node(s) had untolerated taint {dedicated: gpu}, 3 Insufficient cpu.``
    followed by what preemption said."""

    def __init__(self, pod: objects_pb2.Pod, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        #: What the nodes said, once summarized: the diagnosis's node statuses do not change after the
        #: attempt, only PostFilter's message is added.
        self._filtered: str | None = None
        super().__init__(self.message())

    def message(self) -> str:
        text = self._filtered
        if text is None:
            text = self._filtered = self._summarize_filtered()
        if self.diagnosis.post_filter_message:
            text += " " + self.diagnosis.post_filter_message
        return text

    def _summarize_filtered(self) -> str:
        if self.diagnosis.pre_filter_message:
            return f"0/{self.num_all_nodes} nodes are available: {self.diagnosis.pre_filter_message}."
        return summarize_statuses(self.num_all_nodes, self.diagnosis.node_to_status.counted())


def rejected_on_node(status: Status, pod: objects_pb2.Pod, node_name: str) -> Status:
    """Reserve or Permit turned ``pod`` down on its node: ``status`` carrying a FitError over that one
    node, so that the pod waits for the events the rejecting plugin registered (as kube-scheduler)."""
    diagnosis = Diagnosis(NodeToStatus({node_name: status}), unschedulable_plugins={status.plugin})
    fit_error = FitError(pod, 1, diagnosis)
    return Status(status.code, (fit_error.message(),), status.plugin, error=fit_error)


def summarize_statuses(num_all_nodes: int, counted: Iterable[tuple[Status, int]]) -> str:
    """What a FitError says of the nodes: ``0/N nodes are available: <count> <reason>, ...``, from each
    distinct status and how many nodes have it."""
    counts: Counter[str] = Counter()
    for status, nodes in counted:
        for reason in status.reasons:
            counts[reason] += nodes
    # kube-scheduler sorts the "<count> <reason>" strings as strings.
    listed = ", ".join(sorted(f"{n} {reason}" for reason, n in counts.items()))
    return f"0/{num_all_nodes} nodes are available: {listed}."
