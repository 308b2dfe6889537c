"""PodTopologySpread's PreScore, Score and NormalizeScore: the ScheduleAnyway constraints.

PreScore looks at the nodes that passed Filter: those missing a topology key of the constraints are
ignored (they score 0); the topology values the others have are the domains that matter, and each gets
its count of matching pods over all eligible nodes of the cluster (common.py), except for
``kubernetes.io/hostname``, which Score counts on the node itself. Each constraint also gets a weight,
log(number of those domains + 2), so that spreading over many small domains (hosts) is not drowned by
spreading over a few big ones (zones).

A node's raw score is the sum over constraints of ``count * weight + maxSkew - 1``, rounded; fewer
matching pods is better, so NormalizeScore turns it around: ``100 * (max + min - score) / max`` (100
for every node when all scores are 0), and 0 for ignored nodes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scheduler.framework import (
    MAX_NODE_SCORE,
    CycleState,
    Handle,
    NodeInfo,
    NodeScore,
    PodInfo,
    Status,
)
from scheduler.plugins.nodeaggregate import ALL_NODES, AggregateCache, NodeAggregate
from scheduler.plugins.podcounts import normalize_state, require_node, score_state
from scheduler.plugins.podtopologyspread.common import (
    LABEL_HOSTNAME,
    SCHEDULE_ANYWAY,
    Constraint,
    Constraints,
    Inclusion,
    aggregate_key,
    count_matching,
    has_all_keys,
    spread_contribution,
)

PRE_SCORE_STATE_KEY = "PreScorePodTopologySpread"


class ScoreState:
    __slots__ = ("aggregate", "constraints", "counts", "ignored", "namespace", "weights")

    def __init__(
        self,
        constraints: tuple[Constraint, ...],
        namespace: str,
        ignored: set[str],
        counts: list[dict[str, int]],
        weights: list[float],
        aggregate: NodeAggregate[int],
    ) -> None:
        self.constraints = constraints
        self.namespace = namespace
        #: Names of the filtered nodes that miss a topology key: they score 0.
        self.ignored = ignored
        #: Per constraint: topology value (of a filtered node) -> matching pods (empty for hostname).
        self.counts = counts
        self.weights = weights
        #: The aggregate the counts came from: it also holds each node's own count (hostname).
        self.aggregate = aggregate

    def node_count(self, i: int, node_info: NodeInfo) -> int:
        """Constraint ``i``'s matching pods on the node itself: what PreScore's pass over the cluster
        found there, or, for a node that did not count there (inclusion policies), a fresh count."""
        for group, _, count in self.aggregate.contribution_of(node_info) or ():
            if group == i:
                return count
        return count_matching(node_info.pods.values(), self.constraints[i].selector, self.namespace)

    def clone(self) -> ScoreState:
        # Never changed after PreScore.
        return self


def topology_normalizing_weight(size: int) -> float:
    """log(size + 2): between 1.1 (one domain) and 8.5 (5,000 hosts)."""
    return math.log(size + 2)


class Scoring:
    """The PreScore / Score half of the plugin, with its per-workload aggregates."""

    def __init__(self, handle: Handle, constraints: Constraints) -> None:
        self._handle = handle
        self._constraints = constraints
        self._aggregates: AggregateCache[int] = AggregateCache()

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        lister = self._handle.snapshot().node_infos()
        if not lister.list():
            return Status.skip()
        constraints = self._constraints.of(pod.pod, SCHEDULE_ANYWAY)
        if not constraints:
            return Status.skip()
        require_all = self._constraints.require_all_keys(pod.pod)
        ignored: set[str] = set()
        domains: list[set[str]] = [set() for _ in constraints]
        for node_info in nodes:
            node = node_info.node
            labels = node.metadata.labels if node is not None else {}
            if node is None or (require_all and not has_all_keys(labels, constraints)):
                ignored.add(node_info.name)
                continue
            for i, c in enumerate(constraints):
                # Without the key (system defaults only), the node is in the domain "" of that key.
                domains[i].add(labels.get(c.topology_key, ""))
        weights = [
            topology_normalizing_weight(
                len(nodes) - len(ignored) if c.topology_key == LABEL_HOSTNAME else len(domains[i])
            )
            for i, c in enumerate(constraints)
        ]
        namespace = pod.pod.metadata.namespace
        aggregate = self._aggregates.refreshed(
            aggregate_key(pod.pod, constraints, require_all),
            lister,
            ALL_NODES,
            spread_contribution(namespace, constraints, Inclusion(pod.pod, constraints), require_all),
        )
        totals = aggregate.totals
        counts = []
        for i, c in enumerate(constraints):
            group = totals.get(i, {})
            # Hostname counts are taken by Score from the node itself.
            counts.append(
                {} if c.topology_key == LABEL_HOSTNAME else {v: group.get(v, 0) for v in domains[i]}
            )
        state.write(
            PRE_SCORE_STATE_KEY, ScoreState(constraints, namespace, ignored, counts, weights, aggregate)
        )
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        s: ScoreState = score_state(state, PRE_SCORE_STATE_KEY)
        require_node(node_info)
        if node_info.name in s.ignored:
            return 0
        labels = node_info.labels
        score = 0.0
        for i, c in enumerate(s.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                count = s.node_count(i, node_info)
            else:
                count = s.counts[i].get(value, 0)
            # maxSkew - 1 waters differences down: the larger the tolerated skew, the flatter the scores.
            score += count * s.weights[i] + (c.max_skew - 1)
        # Go's math.Round: halves away from zero (the score is never negative).
        return math.floor(score + 0.5)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        s: ScoreState
        s, error = normalize_state(state, PRE_SCORE_STATE_KEY)
        if error is not None:
            return error
        counted = [entry.score for entry in scores if entry.name not in s.ignored]
        lowest, highest = min(counted, default=0), max(counted, default=0)
        for i, entry in enumerate(scores):
            if entry.name in s.ignored:
                normalized = 0
            elif highest == 0:
                normalized = MAX_NODE_SCORE
            else:
                normalized = MAX_NODE_SCORE * (highest + lowest - entry.score) // highest
            scores[i] = NodeScore(entry.name, normalized)
        return None
