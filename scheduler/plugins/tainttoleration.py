"""TaintToleration: NoSchedule and NoExecute taints keep off pods that do not tolerate them (Filter);
each PreferNoSchedule taint a pod does not tolerate makes the node less attractive (Score, reversed
by NormalizeScore so that the node with the most such taints scores 0)."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import Any

from cluster.api import objects_pb2
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    NodeScore,
    PluginError,
    PodInfo,
    QueueingHint,
    ScoreExtensions,
    Signature,
    Status,
)
from scheduler.framework.cycle_state import NotFound
from scheduler.plugins.helpers import (
    DO_NOT_SCHEDULE_EFFECTS,
    PREFER_NO_SCHEDULE,
    default_normalize_score,
    default_normalize_values,
    find_untolerated_taint,
    messages_signature,
    tolerations_tolerate_taint,
)
from scheduler.plugins.nodeflags import flagged

NAME = "TaintToleration"

#: Filled with the first untolerated taint: ``node(s) had untolerated taint {dedicated: gpu}``.
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint {{{key}: {value}}}"

_PRE_SCORE_KEY = "PreScore" + NAME
_TAINTS = operator.attrgetter("taints")
_NODE = operator.attrgetter("node")
_NONES = itertools.repeat(None)


def untolerated_reason(taint: objects_pb2.Taint) -> str:
    return ERR_REASON_UNTOLERATED.format(key=taint.key, value=taint.value)


class TaintToleration:
    @property
    def name(self) -> str:
        return NAME

    def sign(self, pod: PodInfo) -> Signature:
        """Filter and Score look at the pod's tolerations alone."""
        return messages_signature(pod.pod.spec.tolerations)

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        assert node_info.node is not None
        taints = node_info.taints
        if not taints:
            return None
        taint = find_untolerated_taint(taints, pod.pod.spec.tolerations, DO_NOT_SCHEDULE_EFFECTS)
        return None if taint is None else Status.unresolvable(untolerated_reason(taint))

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        """``filter`` of each node: an untainted node passes without looking at the tolerations."""
        tolerations = pod.pod.spec.tolerations
        statuses: list[Status | None] = [None] * len(nodes)
        # The tainted nodes: from the node data where the nodes have rows, else found in C, not a Python
        # step per node.
        tainted = flagged(nodes, "tainted")
        if tainted is None:
            assert all(map(operator.is_not, map(_NODE, nodes), _NONES))
            tainted = list(itertools.compress(itertools.count(), map(_TAINTS, nodes)))
        for i in tainted:
            taint = find_untolerated_taint(nodes[i].taints, tolerations, DO_NOT_SCHEDULE_EFFECTS)
            if taint is not None:
                statuses[i] = Status.unresolvable(untolerated_reason(taint))
        return statuses

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        # Only tolerations that can tolerate a PreferNoSchedule taint (an empty effect means every
        # effect) matter for scoring; keep them once rather than filter per node.
        state.write(
            _PRE_SCORE_KEY,
            tuple(t for t in pod.pod.spec.tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE),
        )
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        return self.score_nodes(state, pod, (node_info,))[0]

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[int]:
        """``score`` of every node: the number of PreferNoSchedule taints the pod does not tolerate."""
        try:
            tolerations = state.read(_PRE_SCORE_KEY)
        except NotFound as exc:
            raise PluginError(
                f"reading {_PRE_SCORE_KEY!r} from the cycle state: PreScore did not run"
            ) from exc
        scores = [0] * len(nodes)
        for i, node_info in enumerate(nodes):
            assert node_info.node is not None
            if node_info.taints:
                scores[i] = sum(
                    1 for taint in node_info.taints
                    if taint.effect == PREFER_NO_SCHEDULE
                    and not tolerations_tolerate_taint(tolerations, taint)
                )
        return scores

    def score_extensions(self) -> ScoreExtensions:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(scores, reverse=True)
        return None

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: list[int]) -> Status | None:
        """``normalize_score`` of plain scores, in place."""
        default_normalize_values(scores, reverse=True)
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            # A new node, or a node whose taints changed, may now carry only taints the pod tolerates.
            # (A pod that gains a toleration is requeued by the queue's own update handling of the pod.)
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                _after_node_change,
            ),
        ]


def _untolerated(pod: objects_pb2.Pod, node: objects_pb2.Node) -> bool:
    return find_untolerated_taint(node.spec.taints, pod.spec.tolerations, DO_NOT_SCHEDULE_EFFECTS) is not None


def _after_node_change(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    was_untolerated = old is None or _untolerated(pod, old)
    if was_untolerated and not _untolerated(pod, new):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def new(args: None, handle: Handle) -> TaintToleration:
    return TaintToleration()
