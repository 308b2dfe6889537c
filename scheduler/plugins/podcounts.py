"""What InterPodAffinity and PodTopologySpread share: both count placed pods per topology domain in their
PreFilter and PreScore state. Filter and Score read that state for one node at a time, AddPod / RemovePod
change it by one pod (``PodCountingFilter``), and both are requeued by the same pod events
(``pod_and_node_events``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from scheduler.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    NodeInfo,
    NotFound,
    PluginError,
    PodInfo,
    QueueingHintFn,
    Status,
)


class PodCounts(Protocol):
    """A PreFilter state that counts pods by topology domain."""

    def update_with_pod(self, pod_info: PodInfo, node_info: NodeInfo, sign: int) -> None:
        """Account for ``pod_info`` being added to (+1) or removed from (-1) the node."""
        ...


class PodCountingFilter:
    """AddPod and RemovePod of a plugin whose PreFilter state (``PodCounts``, under ``state_key``)
    counts pods: the pod counted on, or taken off, the node."""

    #: The cycle-state key of the PreFilter state; set by the subclass.
    state_key: str

    def add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._update(state, pod_to_add, node_info, +1)

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._update(state, pod_to_remove, node_info, -1)

    def _update(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo, sign: int) -> Status | None:
        try:
            counts: PodCounts = state.read(self.state_key)
        except NotFound as exc:
            return Status.as_error(exc)
        counts.update_with_pod(pod_info, node_info, sign)
        return None


def filter_state(state: CycleState, key: str, node_info: NodeInfo) -> tuple[Any, Status | None]:
    """What Filter starts with: PreFilter's state under ``key``, or the error to return instead (a node
    without its Node object, or no such state)."""
    if node_info.node is None:
        return None, Status.as_error("node not found")
    try:
        return state.read(key), None
    except NotFound as exc:
        return None, Status.as_error(exc)


def require_node(node_info: NodeInfo) -> None:
    """Raise PluginError for a node without its Node object (batch Filter and Score cannot decide it)."""
    if node_info.node is None:
        raise PluginError(f"node {node_info.name!r} not found")


def score_state(state: CycleState, key: str) -> Any:
    """PreScore's state under ``key``; PluginError when PreScore left none."""
    try:
        return state.read(key)
    except NotFound as exc:
        raise PluginError(f"reading {key!r} from the cycle state: {exc}") from exc


def normalize_state(state: CycleState, key: str) -> tuple[Any, Status | None]:
    """What NormalizeScore starts with: PreScore's state under ``key``, or the error to return instead."""
    try:
        return score_state(state, key), None
    except PluginError as exc:
        return None, Status.as_error(exc)


def pod_and_node_events(
    pod_hint: QueueingHintFn, node_actions: ActionType, node_hint: QueueingHintFn
) -> Sequence[ClusterEventWithHint]:
    """The events that may change a pod-counting plugin's verdict: a placed pod added, relabelled or
    deleted (it changes the counts of its domain), and the plugin's ``node_actions`` on nodes (they
    change the domains)."""
    return [
        ClusterEventWithHint(
            ClusterEvent(
                EventResource.ASSIGNED_POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
            ),
            pod_hint,
        ),
        ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions), node_hint),
    ]
