"""NodeAffinity: a pod's ``nodeSelector`` and required node affinity decide which nodes it may use
(Filter); its preferred node-affinity terms add their weights on the nodes they match (Score).

The profile may add affinity of its own (``NodeAffinityArgs.addedAffinity``): its required part
applies to every pod of the profile, its preferred terms score every pod.

PreFilter parses the pod's required affinity once for the whole cycle, and narrows the cycle to the
nodes named by ``matchFields metadata.name In`` when every term names some.

Batch Filter: when only labels decide (no matchFields), nodes with the same values of those labels get
the same verdict. NodeAffinity's node data (``NodeLabelCodes``) codes each node's value of every label
key asked about as a small integer, so that a batch's distinct combinations are found in a few vector
operations and each is decided once (hostnames differ, zones and instance types repeat).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from cluster.api import objects_pb2
from scheduler.config.argtypes import NodeAffinityArgs
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    NodeScore,
    NotFound,
    PodInfo,
    PreFilterResult,
    QueueingHint,
    ScoreExtensions,
    Signature,
    Status,
)
from scheduler.framework.nodedata import NodeSet, Rows
from scheduler.plugins.helpers import (
    NODE_NAME_FIELD,
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
    default_normalize_score,
    default_normalize_values,
)

NAME = "NodeAffinity"

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
#: Every required term names nodes, and no node is named by all the expressions of any one term.
ERR_REASON_CONFLICT = "pod affinity terms conflict"

_PRE_FILTER_KEY = "PreFilter" + NAME
_PRE_SCORE_KEY = "PreScore" + NAME
_REQUIRED = "required_during_scheduling_ignored_during_execution"

#: Label signatures combine the keys' value codes into one int64 while the product of the keys' value
#: counts stays below this.
SIGNATURE_LIMIT = 2**62


#: kube-scheduler's NodeAffinityArgs, decoded and parsed by scheduler.config.
ARGS = NodeAffinityArgs


class NodeLabelCodes:
    """NodeAffinity's node data: per label key asked about since the node list was laid out, each row's
    value code (0: no such label), and the codes by value."""

    __slots__ = ("_labels", "_nodes")

    def __init__(self, nodes: Sequence[NodeInfo]) -> None:
        #: The snapshot's node list (it puts a changed node in place before telling the row).
        self._nodes = nodes
        self._labels: dict[str, tuple[npt.NDArray[np.int64], dict[str | None, int]]] = {}

    def set_row(self, row: int, info: NodeInfo) -> None:
        for key, (codes, code_of) in self._labels.items():
            codes[row] = code_of.setdefault(info.labels.get(key), len(code_of))

    def label_signatures(self, keys: Sequence[str], rows: Rows) -> npt.NDArray[np.int64] | None:
        """For each of ``rows``, a number that is the same for two rows exactly when their nodes have the
        same values of the labels ``keys``; None when the keys have too many values to combine."""
        signature = np.zeros(len(rows), dtype=np.int64)
        span = 1
        for key in keys:
            codes, code_of = self._label_column(key)
            span *= len(code_of) + 1
            if span >= SIGNATURE_LIMIT:
                return None
            signature = signature * (len(code_of) + 1) + codes[rows]
        return signature

    def _label_column(self, key: str) -> tuple[npt.NDArray[np.int64], dict[str | None, int]]:
        column = self._labels.get(key)
        if column is None:
            code_of: dict[str | None, int] = {None: 0}
            values = (info.labels.get(key) for info in self._nodes)
            codes = np.fromiter((code_of.setdefault(value, len(code_of)) for value in values),
                                dtype=np.int64, count=len(self._nodes))
            column = self._labels[key] = (codes, code_of)
        return column


class NodeAffinity:
    def __init__(self, args: NodeAffinityArgs) -> None:
        self._added_selector = args.added_required
        self._added_preferred = args.added_preferred

    @property
    def name(self) -> str:
        return NAME

    def sign(self, pod: PodInfo) -> Signature:
        """The nodeSelector and the node affinity (required and preferred); addedAffinity is the
        profile's, the same for every pod."""
        spec = pod.pod.spec
        return (tuple(sorted(spec.node_selector.items())),
                spec.affinity.node_affinity.SerializeToString(deterministic=True))

    # ---------------------------------------------------------------------------------- filtering

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        spec = pod.pod.spec
        node_affinity = spec.affinity.node_affinity
        has_required = node_affinity.HasField(_REQUIRED)
        if not has_required and self._added_selector is None and not spec.node_selector:
            return None, Status.skip()
        state.write(_PRE_FILTER_KEY, RequiredNodeAffinity.from_pod(pod.pod))
        if not has_required:
            return None, None
        # Terms are ORed: the cycle can be narrowed only if every term pins node names; within a term
        # the pinned names are ANDed (intersected).
        names: frozenset[str] | None = None
        for term in getattr(node_affinity, _REQUIRED).node_selector_terms:
            term_names: frozenset[str] | None = None
            for expression in term.match_fields:
                if expression.key == NODE_NAME_FIELD and expression.operator == "In":
                    values = frozenset(expression.values)
                    term_names = values if term_names is None else term_names & values
            if term_names is None:
                return None, None
            names = term_names if names is None else names | term_names
        if names is None:
            return None, None
        if not names:
            return None, Status.unresolvable(ERR_REASON_CONFLICT)
        return PreFilterResult(names), None

    def pre_filter_extensions(self) -> None:
        # Other pods on a node never change whether its labels match.
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        assert node_info.node is not None
        return self._status(self._required(state, pod), node_info.labels, node_info.name)

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> list[Status | None]:
        """``filter`` of each node. For a batch of the snapshot's nodes, when only labels decide, each
        distinct combination of those labels' values is decided once and its nodes share the verdict
        (one Status object)."""
        required = self._required(state, pod)
        keys = required.label_keys()
        added = self._added_selector
        if keys is not None and added is not None:
            added_keys = added.label_keys()
            keys = None if added_keys is None else keys + added_keys
        signatures = None
        found = nodes.node_data(NodeLabelCodes) if keys is not None else None
        if keys is not None and found is not None:
            codes, rows = found
            signatures = codes.label_signatures(keys, rows)
        if signatures is None:
            return [self._status(required, node_info.labels, node_info.name) for node_info in nodes]
        # The distinct combinations of values, each decided once on the first node that has it.
        _, first, inverse = np.unique(signatures, return_index=True, return_inverse=True)
        listed = nodes.nodes
        decided = [self._status(required, listed[i].labels, listed[i].name) for i in first.tolist()]
        if decided.count(None) == len(decided):
            return [None] * len(nodes)
        return list(map(decided.__getitem__, inverse.tolist()))

    @staticmethod
    def _required(state: CycleState, pod: PodInfo) -> RequiredNodeAffinity:
        try:
            return state.read(_PRE_FILTER_KEY)
        except NotFound:
            # PreFilter is disabled in this profile: parse here, as kube-scheduler falls back to.
            return RequiredNodeAffinity.from_pod(pod.pod)

    def _status(self, required: RequiredNodeAffinity, labels: Mapping[str, str], name: str) -> Status | None:
        """Why the node does not fit, None if it does."""
        if self._added_selector is not None and not self._added_selector.matches_labels(labels, name):
            return Status.unresolvable(ERR_REASON_ENFORCED)
        if not required.matches_labels(labels, name):
            return Status.unresolvable(ERR_REASON_POD)
        return None

    # ------------------------------------------------------------------------------------ scoring

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        try:
            preferred = _pod_preferred(pod.pod)
        except ValueError as exc:
            return Status.as_error(exc)
        if preferred is None and self._added_preferred is None:
            return Status.skip()
        state.write(_PRE_SCORE_KEY, preferred)
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        node = node_info.node
        assert node is not None
        total = self._added_preferred.score(node) if self._added_preferred is not None else 0
        try:
            preferred: PreferredSchedulingTerms | None = state.read(_PRE_SCORE_KEY)
        except NotFound:
            preferred = _pod_preferred(pod.pod)
        if preferred is not None:
            total += preferred.score(node)
        return total

    def score_extensions(self) -> ScoreExtensions:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(scores)
        return None

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: list[int]) -> Status | None:
        """``normalize_score`` of plain scores, in place."""
        default_normalize_values(scores)
        return None

    # ------------------------------------------------------------------------------------- events

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            # Only a new node, or new labels on a node, can make a node match a pod's selector.
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self._after_node_change,
            ),
        ]

    def _after_node_change(self, pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
        if self._added_selector is not None and not self._added_selector.matches(new):
            return QueueingHint.SKIP
        required = RequiredNodeAffinity.from_pod(pod)
        if not required.matches(new):
            return QueueingHint.SKIP
        # Added, or updated from not matching to matching.
        if old is None or not required.matches(old):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP


def _pod_preferred(pod: objects_pb2.Pod) -> PreferredSchedulingTerms | None:
    terms = pod.spec.affinity.node_affinity.preferred_during_scheduling_ignored_during_execution
    return PreferredSchedulingTerms.from_proto(terms) if terms else None


def new(args: NodeAffinityArgs | None, handle: Handle) -> NodeAffinity:
    """None (a framework built without a configuration): the defaults."""
    return NodeAffinity(NodeAffinityArgs() if args is None else args)
