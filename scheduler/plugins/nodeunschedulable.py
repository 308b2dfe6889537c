"""NodeUnschedulable: a cordoned node (``spec.unschedulable``) takes only pods that tolerate the
``node.kubernetes.io/unschedulable:NoSchedule`` taint (DaemonSet pods, typically)."""

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
    PodInfo,
    QueueingHint,
    Signature,
    Status,
)
from scheduler.plugins.helpers import (
    NO_SCHEDULE,
    TAINT_NODE_UNSCHEDULABLE,
    messages_signature,
    tolerations_tolerate_taint,
)
from scheduler.plugins.nodeflags import flagged

NAME = "NodeUnschedulable"

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
#: A NodeInfo without its Node object (the node was deleted while pods remain on it).
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"

_UNSCHEDULABLE_TAINT = objects_pb2.Taint(key=TAINT_NODE_UNSCHEDULABLE, effect=NO_SCHEDULE)


def _admits(pod: objects_pb2.Pod, node: objects_pb2.Node) -> bool:
    return not node.spec.unschedulable or tolerations_tolerate_taint(
        pod.spec.tolerations, _UNSCHEDULABLE_TAINT
    )

_UNSCHEDULABLE = operator.attrgetter("unschedulable")
_NODE = operator.attrgetter("node")
_NONES = itertools.repeat(None)


class NodeUnschedulable:
    @property
    def name(self) -> str:
        return NAME

    def sign(self, pod: PodInfo) -> Signature:
        """Only the tolerations decide whether a cordoned node admits the pod."""
        return messages_signature(pod.pod.spec.tolerations)

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return Status.unresolvable(ERR_REASON_UNKNOWN_CONDITION)
        if not _admits(pod.pod, node):
            return Status.unresolvable(ERR_REASON_UNSCHEDULABLE)
        return None

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        """``filter`` of each node, the pod's tolerations looked at once."""
        statuses: list[Status | None] = [None] * len(nodes)
        tolerates: bool | None = None
        # Only cordoned and node-less NodeInfos can fail: from the node data where the nodes have rows,
        # else found in C, not a Python step per node.
        suspects = flagged(nodes, "suspect")
        if suspects is None:
            suspects = list(itertools.compress(itertools.count(), map(
                operator.or_, map(_UNSCHEDULABLE, nodes), map(operator.is_, map(_NODE, nodes), _NONES))))
        for i in suspects:
            node_info = nodes[i]
            if node_info.node is None:
                statuses[i] = Status.unresolvable(ERR_REASON_UNKNOWN_CONDITION)
                continue
            if not node_info.unschedulable:
                continue
            if tolerates is None:
                tolerates = tolerations_tolerate_taint(pod.pod.spec.tolerations, _UNSCHEDULABLE_TAINT)
            if not tolerates:
                statuses[i] = Status.unresolvable(ERR_REASON_UNSCHEDULABLE)
        return statuses

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            # A new node, or one uncordoned, may admit the pod. (A pod that gains the toleration is
            # requeued by the queue's own update handling of the pod.)
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_UNSCHEDULABLE),
                _after_node_change,
            ),
        ]


def _after_node_change(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    # Only a node that admits the pod now, and did not before (or is new), changes this plugin's verdict.
    if _admits(pod, new) and (old is None or not _admits(pod, old)):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def new(args: None, handle: Handle) -> NodeUnschedulable:
    return NodeUnschedulable()
