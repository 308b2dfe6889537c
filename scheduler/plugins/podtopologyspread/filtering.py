"""PodTopologySpread's PreFilter, Filter and PreFilterExtensions: the DoNotSchedule constraints.

PreFilter counts, per constraint and topology domain, the matching pods on eligible nodes (see
common.py) and the global minimum over the domains. Filter admits a node when, for every constraint,

    matching pods in the node's domain + 1 if the pod matches its own selector - global minimum <= maxSkew

where the global minimum is 0 while there are fewer eligible domains than minDomains. AddPod / RemovePod
change one count by one; the minimum then follows from a histogram of the counts (how many domains
hold exactly k pods), built on the first such change, so it stays exact without a scan.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from scheduler.framework import (
    CycleState,
    Handle,
    NodeInfo,
    PodInfo,
    PreFilterResult,
    Status,
)
from scheduler.framework.nodedata import NodeSet
from scheduler.plugins.nodeaffinity import NodeLabelCodes
from scheduler.plugins.nodeaggregate import ALL_NODES, AggregateCache
from scheduler.plugins.podcounts import PodCountingFilter, filter_state, require_node
from scheduler.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    Constraint,
    Constraints,
    Inclusion,
    aggregate_key,
    has_all_keys,
    spread_contribution,
)

PRE_FILTER_STATE_KEY = "PreFilterPodTopologySpread"

REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
REASON_NODE_LABEL_NOT_MATCH = REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

#: The minimum of a constraint without any eligible domain (kube-scheduler's MaxInt32): every skew is
#: then negative, so Filter does not hold the pod back on that constraint.
NO_DOMAIN_MIN = 2**31 - 1


class FilterState:
    """Per constraint: topology value -> matching pods, and the minimum over those values.

    The count dictionaries are shared with the aggregate they came from until the first AddPod /
    RemovePod (which the framework runs on a cloned CycleState), which copies them."""

    __slots__ = ("_histograms", "constraints", "counts", "inclusion", "minimums", "namespace", "self_match")

    def __init__(
        self,
        constraints: tuple[Constraint, ...],
        self_match: tuple[int, ...],
        namespace: str,
        inclusion: Inclusion,
        counts: list[dict[str, int]],
        minimums: list[int],
        histograms: list[Counter[int]] | None = None,
    ) -> None:
        self.constraints = constraints
        #: 1 where the incoming pod matches the constraint's own selector.
        self.self_match = self_match
        self.namespace = namespace
        self.inclusion = inclusion
        self.counts = counts
        self.minimums = minimums
        #: Per constraint: pod count -> number of domains with that count; None until the first change.
        self._histograms = histograms

    def min_match(self, i: int) -> int:
        """The global minimum to compute skews against for constraint ``i``."""
        if len(self.counts[i]) < self.constraints[i].min_domains:
            return 0
        return self.minimums[i]

    def clone(self) -> FilterState:
        return FilterState(
            self.constraints, self.self_match, self.namespace, self.inclusion,
            [dict(c) for c in self.counts], list(self.minimums),
            [Counter(c.values()) for c in self.counts],
        )

    def update_with_pod(self, pod_info: PodInfo, node_info: NodeInfo, sign: int) -> None:
        """Account for ``pod_info`` being added to (+1) or removed from (-1) the node."""
        node = node_info.node
        metadata = pod_info.pod.metadata
        if node is None or metadata.namespace != self.namespace:
            return
        labels = node.metadata.labels
        if not has_all_keys(labels, self.constraints):
            return
        for i, c in enumerate(self.constraints):
            # An empty selector counts nothing, as in PreFilter.
            if c.selector.empty or not c.selector.matches(metadata.labels):
                continue
            if not self.inclusion.admits(c, node):
                continue
            self._change(i, labels[c.topology_key], sign)

    def _change(self, i: int, value: str, delta: int) -> None:
        if self._histograms is None:
            self.counts = [dict(c) for c in self.counts]
            self._histograms = [Counter(c.values()) for c in self.counts]
        counts, histogram = self.counts[i], self._histograms[i]
        old = counts.get(value)
        new = (old or 0) + delta
        counts[value] = new
        if old is not None:
            histogram[old] -= 1
            if histogram[old] <= 0:
                del histogram[old]
        histogram[new] += 1
        if new < self.minimums[i]:
            self.minimums[i] = new
        elif old == self.minimums[i] and old not in histogram:
            # The last domain at the minimum went up by one: every other domain was above it, so the
            # new minimum is this domain's new count.
            self.minimums[i] = new


class Filtering(PodCountingFilter):
    """The PreFilter / Filter half of the plugin, with its per-workload aggregates."""

    state_key = PRE_FILTER_STATE_KEY

    def __init__(self, handle: Handle, constraints: Constraints) -> None:
        self._handle = handle
        self._constraints = constraints
        self._aggregates: AggregateCache[int] = AggregateCache()

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        constraints = self._constraints.of(pod.pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, Status.skip()
        namespace = pod.pod.metadata.namespace
        inclusion = Inclusion(pod.pod, constraints)
        totals = self._aggregates.refreshed(
            aggregate_key(pod.pod, constraints),
            self._handle.snapshot().node_infos(),
            ALL_NODES,
            spread_contribution(namespace, constraints, inclusion),
        ).totals
        counts = [totals.get(i, {}) for i in range(len(constraints))]
        labels = pod.pod.metadata.labels
        state.write(PRE_FILTER_STATE_KEY, FilterState(
            constraints,
            tuple(int(c.selector.matches(labels)) for c in constraints),
            namespace,
            inclusion,
            counts,
            [min(c.values(), default=NO_DOMAIN_MIN) for c in counts],
        ))
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s: FilterState
        s, error = filter_state(state, PRE_FILTER_STATE_KEY, node_info)
        if error is not None:
            return error
        labels = node_info.labels
        for i, c in enumerate(s.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                # No pod eviction gives a node a label.
                return Status.unresolvable(REASON_NODE_LABEL_NOT_MATCH)
            skew = s.counts[i].get(value, 0) + s.self_match[i] - s.min_match(i)
            if skew > c.max_skew:
                return Status.unschedulable(REASON_CONSTRAINTS_NOT_MATCH)
        return None

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> list[Status | None]:
        """``filter`` of each node, with each constraint's key, counts and skew allowance (max skew plus
        the global minimum, less the pod itself) worked out once. Only the node's values of the
        constraints' topology keys decide, so for a batch of the snapshot's nodes each distinct
        combination of them (a zone, say) is decided once, found with NodeAffinity's label codes."""
        s: FilterState = state.read(PRE_FILTER_STATE_KEY)
        checks = [
            (c.topology_key, s.counts[i], c.max_skew + s.min_match(i) - s.self_match[i])
            for i, c in enumerate(s.constraints)
        ]
        # One Status for every node it rejects (the diagnosis groups by Status object).
        label_missing = Status.unresolvable(REASON_NODE_LABEL_NOT_MATCH)
        skewed = Status.unschedulable(REASON_CONSTRAINTS_NOT_MATCH)

        def verdict(labels: Mapping[str, str]) -> Status | None:
            for key, counts, allowed in checks:
                value = labels.get(key)
                if value is None:
                    return label_missing
                if counts.get(value, 0) > allowed:
                    return skewed
            return None

        found = nodes.node_data(NodeLabelCodes) if isinstance(nodes, NodeSet) else None
        if found is not None:  # the snapshot's own nodes, each with its Node object
            codes, rows = found
            signatures = codes.label_signatures([key for key, _, _ in checks], rows)
            if signatures is not None:
                some, inverse = _distinct(signatures)
                decided = [verdict(nodes[i].labels) for i in some.tolist()]
                if decided.count(None) == len(decided):  # usual: every domain within the skew
                    return [None] * len(nodes)
                return list(map(decided.__getitem__, inverse.tolist()))
        statuses: list[Status | None] = []
        for node_info in nodes:
            require_node(node_info)
            statuses.append(verdict(node_info.labels))
        return statuses


def _distinct(signatures: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """A position of each distinct signature (any one: their nodes all get the same verdict), and for
    each signature the index of its own among those, as ``np.unique``'s index and inverse. Signatures
    are small codes when zones and the like decide: then a table as long as the largest code finds
    them without sorting."""
    if not len(signatures):
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    span = int(signatures.max()) + 1
    if span > 4 * len(signatures) + 64:
        _, first, inverse = np.unique(signatures, return_index=True, return_inverse=True)
        return first, inverse
    position_of = np.full(span, -1, dtype=np.intp)
    position_of[signatures] = np.arange(len(signatures), dtype=np.intp)
    present = np.flatnonzero(position_of >= 0)
    index_of = np.zeros(span, dtype=np.intp)
    index_of[present] = np.arange(len(present), dtype=np.intp)
    return position_of[present], index_of[signatures]
