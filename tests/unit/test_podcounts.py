"""The helpers InterPodAffinity and PodTopologySpread share (plugins/podcounts.py): AddPod / RemovePod
on their PreFilter state, the state read by Filter, Score and NormalizeScore, and their events."""

from __future__ import annotations

import pytest

from scheduler.framework import (
    ActionType,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    PluginError,
    PodInfo,
    QueueingHint,
)
from scheduler.plugins import interpodaffinity, podtopologyspread
from scheduler.plugins.podcounts import (
    PodCountingFilter,
    filter_state,
    normalize_state,
    pod_and_node_events,
    require_node,
    score_state,
)
from tests.builders import node, pod
from tests.unit.framework_fakes import Snapshot, fake_handle

KEY = "PreFilterCounting"


class Counts:
    def __init__(self) -> None:
        self.changes: list[tuple[str, str, int]] = []

    def update_with_pod(self, pod_info: PodInfo, node_info: NodeInfo, sign: int) -> None:
        self.changes.append((pod_info.pod.metadata.name, node_info.name, sign))


class Counting(PodCountingFilter):
    state_key = KEY


def test_add_and_remove_pod_change_the_pre_filter_counts_by_one_pod() -> None:
    state, counts = CycleState(), Counts()
    state.write(KEY, counts)
    incoming, other, info = PodInfo(pod(name="in")), PodInfo(pod(name="other")), NodeInfo(node("n1"))
    assert Counting().add_pod(state, incoming, other, info) is None
    assert Counting().remove_pod(state, incoming, other, info) is None
    assert counts.changes == [("other", "n1", 1), ("other", "n1", -1)]


def test_without_pre_filter_state_add_pod_and_filter_are_errors() -> None:
    state, info = CycleState(), NodeInfo(node("n1"))
    status = Counting().add_pod(state, PodInfo(pod(name="in")), PodInfo(pod(name="other")), info)
    assert status is not None and status.code is Code.ERROR
    _, error = filter_state(state, KEY, info)
    assert error is not None and error.code is Code.ERROR


def test_a_node_without_its_node_object_is_an_error() -> None:
    state = CycleState()
    state.write(KEY, Counts())
    _, error = filter_state(state, KEY, NodeInfo())
    assert error is not None and error.code is Code.ERROR and "node not found" in error.message()
    with pytest.raises(PluginError, match="not found"):
        require_node(NodeInfo())


def test_score_state_names_the_missing_key() -> None:
    with pytest.raises(PluginError, match=f"reading '{KEY}' from the cycle state"):
        score_state(CycleState(), KEY)
    _, error = normalize_state(CycleState(), KEY)
    assert error is not None and error.code is Code.ERROR and KEY in error.message()


def queue(*_: object) -> QueueingHint:
    return QueueingHint.QUEUE


def test_both_plugins_register_assigned_pod_and_node_events() -> None:
    events = pod_and_node_events(queue, ActionType.ADD, queue)
    assert [(e.event.resource, e.event.action) for e in events] == [
        (EventResource.ASSIGNED_POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
        (EventResource.NODE, ActionType.ADD),
    ]
    for module in (interpodaffinity, podtopologyspread):
        registered = module.new(None, fake_handle(Snapshot([]))).events_to_register()
        assert [e.event.resource for e in registered][:2] == [EventResource.ASSIGNED_POD, EventResource.NODE]
    # InterPodAffinity also listens for namespaces (its namespaceSelectors).
    registered = interpodaffinity.new(None, fake_handle(Snapshot([]))).events_to_register()
    assert [e.event.resource for e in registered][2:] == [EventResource.NAMESPACE]
