"""NodePorts: a pod's host ports must be free on the node. An address of 0.0.0.0 (or none) takes the
port on every address, so it conflicts with any use of the same protocol and port."""

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
    PreFilterResult,
    QueueingHint,
    Signature,
    Status,
)
from scheduler.framework.types import HostPorts, pod_host_ports

NAME = "NodePorts"

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"


class NodePorts:
    @property
    def name(self) -> str:
        return NAME

    def sign(self, pod: PodInfo) -> Signature:
        return pod.host_ports

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        # PodInfo already holds the pod's host ports; a pod without any needs no Filter at all.
        return None, (None if pod.host_ports else Status.skip())

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        used = node_info.used_ports
        for ip, protocol, port in pod.host_ports:
            if used.conflicts(ip, protocol, port):
                return Status.unschedulable(ERR_REASON)
        return None

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        """``filter`` of each node."""
        ports = pod.host_ports
        # One Status for every node it rejects (the diagnosis groups by Status object).
        conflict = Status.unschedulable(ERR_REASON)
        return [
            conflict
            if any(node_info.used_ports.conflicts(ip, protocol, port) for ip, protocol, port in ports)
            else None
            for node_info in nodes
        ]

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            # A deleted pod frees its host ports. (Ports are immutable, so pod updates never do.)
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE), _after_pod_delete),
            # A new node has every port free.
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
        ]


def _after_pod_delete(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    deleted: objects_pb2.Pod = old
    # An unbound (and not nominated) pod held no port anywhere.
    if not deleted.spec.node_name and not deleted.status.nominated_node_name:
        return QueueingHint.SKIP
    freed = HostPorts()
    for ip, protocol, port in pod_host_ports(deleted):
        freed.add(ip, protocol, port)
    if any(freed.conflicts(ip, protocol, port) for ip, protocol, port in pod_host_ports(pod)):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def new(args: None, handle: Handle) -> NodePorts:
    return NodePorts()
