"""InterPodAffinity's PreFilter, Filter and PreFilterExtensions: required pod (anti-)affinity, both ways.

PreFilter counts, per topology pair (topology key, node label value), three things over the snapshot:

* existing anti-affinity: pods already placed whose *required anti-affinity* terms match the incoming
  pod (the symmetry rule: an existing pod that refuses the newcomer keeps it out of its domain). Only
  nodes listed by ``have_pods_with_required_anti_affinity`` can contribute.
* affinity: existing pods that match *all* of the incoming pod's required affinity terms, counted once
  per term's topology key.
* anti-affinity: existing pods that match each of the incoming pod's required anti-affinity terms.

Filter then only looks the node's labels up in these counts. The counts come from ``NodeAggregate``s
keyed by what they depend on (the pod's namespace, its labels and the labels of its namespace for the
first; its terms, and the namespaces' labels when a term's namespaceSelector reads them, for the others),
so a cycle recomputes only the nodes that changed since a pod of the same kind was last scheduled.

Namespace selectors are judged by the namespace labels PreFilter took from the Handle: the incoming
pod's terms by the labels of each existing pod's namespace, existing pods' terms by the labels of the
incoming pod's namespace (kube-scheduler's GetNamespaceLabelsSnapshot).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence

from cluster.api import objects_pb2
from scheduler.framework import (
    CycleState,
    Handle,
    NamespaceLabels,
    NodeInfo,
    PodInfo,
    PreFilterResult,
    Status,
)
from scheduler.framework.types import AffinityTerm
from scheduler.plugins.nodeaggregate import (
    ALL_NODES,
    WITH_REQUIRED_ANTI_AFFINITY,
    AggregateCache,
    Contribution,
)
from scheduler.plugins.podcounts import PodCountingFilter, filter_state, require_node

PRE_FILTER_STATE_KEY = "PreFilterInterPodAffinity"

REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"

# Groups of the incoming-terms aggregate: (kind, topology key).
_AFFINITY = "affinity"
_ANTI_AFFINITY = "anti-affinity"


class TopologyCounts:
    """topology key -> label value -> number of matching pods.

    Built on dictionaries shared with the aggregate that computed them; the first change (AddPod or
    RemovePod, always on a cloned CycleState) copies them, so the aggregate is never written through.
    """

    __slots__ = ("_by_key", "_owned")

    def __init__(self, by_key: dict[str, dict[str, int]], *, owned: bool = False) -> None:
        self._by_key = by_key
        self._owned = owned

    def __bool__(self) -> bool:
        return bool(self._by_key)

    def items(self) -> Sequence[tuple[str, dict[str, int]]]:
        return list(self._by_key.items())

    def values_of(self, key: str) -> Mapping[str, int]:
        """Label value -> count for ``key`` (empty if none); read-only."""
        return self._by_key.get(key, {})

    def get(self, key: str, value: str) -> int:
        values = self._by_key.get(key)
        return values.get(value, 0) if values is not None else 0

    def add(self, key: str, value: str, delta: int) -> None:
        if not self._owned:
            self._by_key = {k: dict(v) for k, v in self._by_key.items()}
            self._owned = True
        by_key = self._by_key
        values = by_key.setdefault(key, {})
        count = values.get(value, 0) + delta
        if count:
            values[value] = count
        else:
            # A pair that drops to zero disappears, so that "no pod matches anywhere" stays "empty".
            values.pop(value, None)
            if not values:
                del by_key[key]

    def clone(self) -> TopologyCounts:
        return TopologyCounts({k: dict(v) for k, v in self._by_key.items()}, owned=True)


class FilterState:
    """What PreFilter computed for one pod, read by Filter on every node."""

    __slots__ = (
        "affinity",
        "affinity_terms",
        "anti_affinity",
        "anti_affinity_terms",
        "existing_anti_affinity",
        "matches_own_affinity",
        "namespaces",
        "pod",
    )

    def __init__(
        self,
        pod: objects_pb2.Pod,
        affinity_terms: tuple[AffinityTerm, ...],
        anti_affinity_terms: tuple[AffinityTerm, ...],
        existing_anti_affinity: TopologyCounts,
        affinity: TopologyCounts,
        anti_affinity: TopologyCounts,
        matches_own_affinity: bool,
        namespaces: NamespaceLabels,
    ) -> None:
        self.pod = pod
        self.affinity_terms = affinity_terms
        self.anti_affinity_terms = anti_affinity_terms
        self.existing_anti_affinity = existing_anti_affinity
        self.affinity = affinity
        self.anti_affinity = anti_affinity
        #: The pod matches all of its own required affinity terms (see ``_satisfies_affinity``).
        self.matches_own_affinity = matches_own_affinity
        #: The namespace labels PreFilter judged by; AddPod / RemovePod judge by the same.
        self.namespaces = namespaces

    def clone(self) -> FilterState:
        return FilterState(
            self.pod,
            self.affinity_terms,
            self.anti_affinity_terms,
            self.existing_anti_affinity.clone(),
            self.affinity.clone(),
            self.anti_affinity.clone(),
            self.matches_own_affinity,
            self.namespaces,
        )

    def update_with_pod(self, pod_info: PodInfo, node_info: NodeInfo, sign: int) -> None:
        """Account for ``pod_info`` being added to (+1) or removed from (-1) the node."""
        node = node_info.node
        if node is None:
            return
        labels = node.metadata.labels
        incoming = self.pod
        incoming_labels = incoming.metadata.labels
        namespaces = self.namespaces
        for term in pod_info.required_anti_affinity_terms:
            if _term_matches(term, incoming.metadata.namespace, incoming_labels, namespaces):
                _add_pair(self.existing_anti_affinity, term.topology_key, labels, sign)
        other = pod_info.pod
        namespace, other_labels = other.metadata.namespace, other.metadata.labels
        if self.affinity_terms and all(
            _term_matches(t, namespace, other_labels, namespaces) for t in self.affinity_terms
        ):
            for term in self.affinity_terms:
                _add_pair(self.affinity, term.topology_key, labels, sign)
        for term in self.anti_affinity_terms:
            if _term_matches(term, namespace, other_labels, namespaces):
                _add_pair(self.anti_affinity, term.topology_key, labels, sign)


def _add_pair(counts: TopologyCounts, key: str, labels: Mapping[str, str], sign: int) -> None:
    value = labels.get(key)
    if value is not None:
        counts.add(key, value, sign)


def _term_matches(
    term: AffinityTerm, namespace: str, labels: Mapping[str, str], namespaces: NamespaceLabels
) -> bool:
    return term.matches_namespace(namespace, namespaces) and term.selector.matches(labels)


def namespaces_key(terms: Iterable[AffinityTerm], namespaces: NamespaceLabels) -> Hashable:
    """What the terms' matches depend on besides the terms: the namespace labels, when a term's
    namespaceSelector reads them."""
    return namespaces.key if any(term.reads_namespace_labels for term in terms) else None


class Filtering(PodCountingFilter):
    """The PreFilter / Filter half of the plugin, with its per-workload aggregates."""

    state_key = PRE_FILTER_STATE_KEY

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._existing_anti_affinity: AggregateCache[str] = AggregateCache()
        self._incoming: AggregateCache[tuple[str, str]] = AggregateCache()

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        lister = self._handle.snapshot().node_infos()
        with_anti_affinity = lister.have_pods_with_required_anti_affinity()
        affinity_terms, anti_terms = pod.required_affinity_terms, pod.required_anti_affinity_terms
        if not (affinity_terms or anti_terms or with_anti_affinity):
            return None, Status.skip()
        incoming_labels = dict(pod.pod.metadata.labels)
        namespace = pod.pod.metadata.namespace
        namespaces = self._handle.namespaces.snapshot()
        existing: dict[str, dict[str, int]] = {}
        if with_anti_affinity:
            namespace_labels = namespaces.of(namespace)
            existing = self._existing_anti_affinity.refreshed(
                (namespace, frozenset(incoming_labels.items()), frozenset(namespace_labels.items())),
                lister,
                WITH_REQUIRED_ANTI_AFFINITY,
                _existing_anti_affinity_contribution(namespace, incoming_labels, namespaces),
            ).totals
        if not (existing or affinity_terms or anti_terms):
            # No existing pod refuses this one and it asks for nothing: Filter could only pass.
            return None, Status.skip()
        affinity: dict[str, dict[str, int]] = {}
        anti: dict[str, dict[str, int]] = {}
        if affinity_terms or anti_terms:
            totals = self._incoming.refreshed(
                (affinity_terms, anti_terms, namespaces_key((*affinity_terms, *anti_terms), namespaces)),
                lister,
                ALL_NODES,
                _incoming_contribution(affinity_terms, anti_terms, namespaces),
            ).totals
            for (kind, key), values in totals.items():
                (affinity if kind == _AFFINITY else anti)[key] = values
        matches_own = bool(affinity_terms) and all(
            _term_matches(t, namespace, incoming_labels, namespaces) for t in affinity_terms
        )
        state.write(
            PRE_FILTER_STATE_KEY,
            FilterState(
                pod.pod,
                affinity_terms,
                anti_terms,
                TopologyCounts(existing),
                TopologyCounts(affinity),
                TopologyCounts(anti),
                matches_own,
                namespaces,
            ),
        )
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s: FilterState
        s, error = filter_state(state, PRE_FILTER_STATE_KEY, node_info)
        if error is not None:
            return error
        labels = node_info.labels
        if s.affinity_terms and not _satisfies_affinity(s, labels):
            # Evicting pods cannot bring in the pods this one wants to be near.
            return Status.unresolvable(REASON_AFFINITY)
        if s.anti_affinity:
            for term in s.anti_affinity_terms:
                value = labels.get(term.topology_key)
                if value is not None and s.anti_affinity.get(term.topology_key, value) > 0:
                    return Status.unschedulable(REASON_ANTI_AFFINITY)
        if _any_pair(s.existing_anti_affinity.items(), labels):
            return Status.unschedulable(REASON_EXISTING_ANTI_AFFINITY)
        return None

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> list[Status | None]:
        """``filter`` of each node, with the terms' topology keys and counts looked up once."""
        s: FilterState = state.read(PRE_FILTER_STATE_KEY)
        anti = [
            (term.topology_key, s.anti_affinity.values_of(term.topology_key))
            for term in s.anti_affinity_terms
        ] if s.anti_affinity else []
        existing = s.existing_anti_affinity.items()
        # One Status per reason, shared by the nodes it rejects (the diagnosis groups by Status object).
        no_affinity = Status.unresolvable(REASON_AFFINITY)
        anti_affinity = Status.unschedulable(REASON_ANTI_AFFINITY)
        existing_anti_affinity = Status.unschedulable(REASON_EXISTING_ANTI_AFFINITY)
        statuses: list[Status | None] = []
        for node_info in nodes:
            require_node(node_info)
            labels = node_info.labels
            if s.affinity_terms and not _satisfies_affinity(s, labels):
                statuses.append(no_affinity)
            elif _any_pair(anti, labels):
                statuses.append(anti_affinity)
            elif _any_pair(existing, labels):
                statuses.append(existing_anti_affinity)
            else:
                statuses.append(None)
        return statuses


def _any_pair(pairs: Iterable[tuple[str, Mapping[str, int]]], labels: Mapping[str, str]) -> bool:
    """Whether the node's value of some pair's topology key has a positive count in that pair."""
    for key, counts in pairs:
        value = labels.get(key)
        if value is not None and counts.get(value, 0) > 0:
            return True
    return False


def _satisfies_affinity(s: FilterState, labels: Mapping[str, str]) -> bool:
    pods_exist = True
    for term in s.affinity_terms:
        value = labels.get(term.topology_key)
        if value is None:
            # Every term's topology label must be on the node, first pod of a group or not.
            return False
        if s.affinity.get(term.topology_key, value) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # The first pod of a group whose members attract each other: when no pod anywhere matches the terms
    # and the pod matches them itself, it may go anywhere its topology labels exist, or the group could
    # never start.
    return not s.affinity and s.matches_own_affinity


def _existing_anti_affinity_contribution(
    namespace: str, labels: Mapping[str, str], namespaces: NamespaceLabels
) -> Callable[[NodeInfo], Contribution[str]]:
    """A node's pairs where an existing pod's required anti-affinity term matches the incoming pod."""

    def contribution(node_info: NodeInfo) -> Contribution[str]:
        node = node_info.node
        if node is None:
            return ()
        node_labels = node.metadata.labels
        out = []
        for existing in node_info.pods_with_required_anti_affinity.values():
            for term in existing.required_anti_affinity_terms:
                if _term_matches(term, namespace, labels, namespaces):
                    value = node_labels.get(term.topology_key)
                    if value is not None:
                        out.append((term.topology_key, value, 1))
        return tuple(out)

    return contribution


def _incoming_contribution(
    affinity_terms: tuple[AffinityTerm, ...],
    anti_terms: tuple[AffinityTerm, ...],
    namespaces: NamespaceLabels,
) -> Callable[[NodeInfo], Contribution[tuple[str, str]]]:
    """A node's pairs where its pods match the incoming pod's required affinity (all terms) or each of its
    required anti-affinity terms."""

    def contribution(node_info: NodeInfo) -> Contribution[tuple[str, str]]:
        node = node_info.node
        if node is None or not node_info.pods:
            return ()
        node_labels = node.metadata.labels
        out = []
        for existing in node_info.pods.values():
            metadata = existing.pod.metadata
            namespace, labels = metadata.namespace, metadata.labels
            if affinity_terms and all(
                _term_matches(t, namespace, labels, namespaces) for t in affinity_terms
            ):
                for term in affinity_terms:
                    value = node_labels.get(term.topology_key)
                    if value is not None:
                        out.append(((_AFFINITY, term.topology_key), value, 1))
            for term in anti_terms:
                if _term_matches(term, namespace, labels, namespaces):
                    value = node_labels.get(term.topology_key)
                    if value is not None:
                        out.append(((_ANTI_AFFINITY, term.topology_key), value, 1))
        return tuple(out)

    return contribution
