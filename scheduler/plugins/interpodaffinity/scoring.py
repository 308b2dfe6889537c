"""InterPodAffinity's PreScore, Score and NormalizeScore: preferred terms, both ways.

PreScore sums weights per topology pair (topology key, node label value):

* the incoming pod's preferred affinity terms: +weight for every existing pod that matches, on the pair
  of that pod's node; its preferred anti-affinity terms: -weight;
* existing pods' terms toward the incoming pod (symmetry): their preferred affinity +weight, preferred
  anti-affinity -weight, and their *required* affinity terms +``hardPodAffinityWeight``.

Score adds up the sums of the node's own pairs; NormalizeScore maps the lowest score to 0 and the highest
to 100. As in Filtering, both sums come from ``NodeAggregate``s, so only changed nodes are recomputed, and
namespace selectors are judged by the namespace labels PreScore took from the Handle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from scheduler.framework import (
    MAX_NODE_SCORE,
    CycleState,
    Handle,
    NamespaceLabels,
    NodeInfo,
    NodeScore,
    PodInfo,
    Status,
)
from scheduler.framework.types import AffinityTerm, WeightedAffinityTerm
from scheduler.plugins.interpodaffinity.filtering import namespaces_key
from scheduler.plugins.nodeaggregate import ALL_NODES, WITH_AFFINITY, AggregateCache, Contribution
from scheduler.plugins.podcounts import normalize_state, require_node, score_state

PRE_SCORE_STATE_KEY = "PreScoreInterPodAffinity"


class ScoreState:
    """Topology key -> label value -> summed weight, from each source (keys may repeat across sources)."""

    __slots__ = ("sources",)

    def __init__(self, sources: list[tuple[str, dict[str, int]]]) -> None:
        self.sources = sources

    def clone(self) -> ScoreState:
        # Never changed after PreScore.
        return self


class Scoring:
    """The PreScore / Score half of the plugin, with its per-workload aggregates."""

    def __init__(
        self, handle: Handle, hard_pod_affinity_weight: int, ignore_preferred_terms_of_existing_pods: bool
    ) -> None:
        self._handle = handle
        self._hard_weight = hard_pod_affinity_weight
        self._ignore_existing_preferred = ignore_preferred_terms_of_existing_pods
        self._incoming: AggregateCache[str] = AggregateCache()
        self._existing: AggregateCache[str] = AggregateCache()

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        preferred, preferred_anti = pod.preferred_affinity_terms, pod.preferred_anti_affinity_terms
        has_preferred = bool(preferred or preferred_anti)
        if self._ignore_existing_preferred and not has_preferred:
            return Status.skip()
        lister = self._handle.snapshot().node_infos()
        namespaces = self._handle.namespaces.snapshot()
        sources: list[tuple[str, dict[str, int]]] = []
        if has_preferred:
            terms = [weighted.term for weighted in (*preferred, *preferred_anti)]
            totals = self._incoming.refreshed(
                (preferred, preferred_anti, namespaces_key(terms, namespaces)),
                lister,
                ALL_NODES,
                _incoming_contribution(preferred, preferred_anti, namespaces),
            ).totals
            sources += totals.items()
        with_affinity = lister.have_pods_with_affinity()
        if with_affinity:
            metadata = pod.pod.metadata
            labels = dict(metadata.labels)
            namespace_labels = namespaces.of(metadata.namespace)
            totals = self._existing.refreshed(
                (metadata.namespace, frozenset(labels.items()), frozenset(namespace_labels.items())),
                lister,
                WITH_AFFINITY,
                _existing_contribution(metadata.namespace, labels, self._hard_weight, namespaces),
            ).totals
            sources += totals.items()
        if not sources:
            # No pair got any weight: every node would score the same.
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, ScoreState(sources))
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        s: ScoreState = score_state(state, PRE_SCORE_STATE_KEY)
        require_node(node_info)
        labels = node_info.labels
        total = 0
        for key, values in s.sources:
            value = labels.get(key)
            if value is not None:
                total += values.get(value, 0)
        return total

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        _, error = normalize_state(state, PRE_SCORE_STATE_KEY)
        if error is not None:
            return error
        if not scores:
            return None
        low = min(s.score for s in scores)
        high = max(s.score for s in scores)
        spread = high - low
        for i, entry in enumerate(scores):
            # As kube-scheduler: a float fraction of the range, truncated; all 0 when every node ties.
            normalized = int(MAX_NODE_SCORE * ((entry.score - low) / spread)) if spread > 0 else 0
            scores[i] = NodeScore(entry.name, normalized)
        return None


def _matches(
    term: AffinityTerm, namespace: str, labels: Mapping[str, str], namespaces: NamespaceLabels
) -> bool:
    return term.matches_namespace(namespace, namespaces) and term.selector.matches(labels)


def _incoming_contribution(
    preferred: tuple[WeightedAffinityTerm, ...],
    preferred_anti: tuple[WeightedAffinityTerm, ...],
    namespaces: NamespaceLabels,
) -> Callable[[NodeInfo], Contribution[str]]:
    """A node's weights from the incoming pod's preferred terms matching the pods on it."""

    def contribution(node_info: NodeInfo) -> Contribution[str]:
        node = node_info.node
        if node is None or not node_info.pods:
            return ()
        node_labels = node.metadata.labels
        if not node_labels:
            return ()
        out = []
        for existing in node_info.pods.values():
            metadata = existing.pod.metadata
            namespace, labels = metadata.namespace, metadata.labels
            for weighted in preferred:
                term = weighted.term
                value = node_labels.get(term.topology_key)
                if value is not None and _matches(term, namespace, labels, namespaces):
                    out.append((term.topology_key, value, weighted.weight))
            for weighted in preferred_anti:
                term = weighted.term
                value = node_labels.get(term.topology_key)
                if value is not None and _matches(term, namespace, labels, namespaces):
                    out.append((term.topology_key, value, -weighted.weight))
        return tuple(out)

    return contribution


def _existing_contribution(
    namespace: str, labels: Mapping[str, str], hard_weight: int, namespaces: NamespaceLabels
) -> Callable[[NodeInfo], Contribution[str]]:
    """A node's weights from its pods' terms that match the incoming pod (``namespace``, ``labels``)."""

    def contribution(node_info: NodeInfo) -> Contribution[str]:
        node = node_info.node
        if node is None:
            return ()
        node_labels = node.metadata.labels
        if not node_labels:
            return ()
        out = []
        for existing in node_info.pods_with_affinity.values():
            weighted_terms: list[tuple[AffinityTerm, int]] = []
            if hard_weight > 0:
                weighted_terms += ((term, hard_weight) for term in existing.required_affinity_terms)
            weighted_terms += ((w.term, w.weight) for w in existing.preferred_affinity_terms)
            weighted_terms += ((w.term, -w.weight) for w in existing.preferred_anti_affinity_terms)
            for term, weight in weighted_terms:
                value = node_labels.get(term.topology_key)
                if value is not None and _matches(term, namespace, labels, namespaces):
                    out.append((term.topology_key, value, weight))
        return tuple(out)

    return contribution
