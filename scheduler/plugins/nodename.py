"""NodeName: a pod that names its node (``spec.nodeName``) fits only that node.

kube-scheduler has no PreFilter here (a pod with spec.nodeName is already bound and rarely reaches the
scheduler), so neither has this plugin."""

from __future__ import annotations

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

NAME = "NodeName"

ERR_REASON = "node(s) didn't match the requested node name"


class NodeName:
    @property
    def name(self) -> str:
        return NAME

    def sign(self, pod: PodInfo) -> Signature:
        return pod.pod.spec.node_name

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        wanted = pod.pod.spec.node_name
        if wanted and wanted != node_info.name:
            return Status.unresolvable(ERR_REASON)
        return None

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        """``filter`` of each node; a pod that names no node fits them all."""
        wanted = pod.pod.spec.node_name
        if not wanted:
            return [None] * len(nodes)
        # One Status for every node it rejects (the diagnosis groups by Status object).
        elsewhere = Status.unresolvable(ERR_REASON)
        return [None if wanted == node_info.name else elsewhere for node_info in nodes]

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            # Only the arrival of the named node can change the verdict: names never change.
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD), _after_node_add),
        ]


def _after_node_add(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    wanted = pod.spec.node_name
    return QueueingHint.QUEUE if not wanted or wanted == new.metadata.name else QueueingHint.SKIP


def new(args: None, handle: Handle) -> NodeName:
    return NodeName()
