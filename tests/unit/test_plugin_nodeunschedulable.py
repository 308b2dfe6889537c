"""NodeUnschedulable: cordoned nodes take only pods tolerating node.kubernetes.io/unschedulable."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.api import objects_pb2
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    NodeInfo,
    PodInfo,
    QueueingHint,
)
from scheduler.plugins import nodeunschedulable
from tests.builders import node, node_info, pod
from tests.unit.framework_fakes import Snapshot, fake_handle

TOLERATES = {
    "tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]
}


# node_unschedulable_test.go's cases.
@pytest.mark.parametrize(
    ("spec", "unschedulable", "rejected"),
    [
        ({}, True, True),
        ({}, False, False),
        (TOLERATES, True, False),
        ({"tolerations": [{"operator": "Exists"}]}, True, False),
        (
            {
                "tolerations": [
                    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoExecute"}
                ]
            },
            True,
            True,
        ),
    ],
    ids=["cordoned", "schedulable", "tolerated", "tolerate-everything", "wrong-effect"],
)
def test_filter(spec: dict[str, Any], unschedulable: bool, rejected: bool) -> None:
    plugin = nodeunschedulable.new(None, fake_handle(Snapshot([])))
    assert isinstance(plugin, FilterPlugin)
    info = node_info(node(unschedulable=unschedulable))
    status = plugin.filter(CycleState(), PodInfo(pod(spec=spec)), info)
    if rejected:
        assert status is not None
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == ("node(s) were unschedulable",)
    else:
        assert status is None


def test_filter_without_the_node_object() -> None:
    plugin = nodeunschedulable.new(None, fake_handle(Snapshot([])))
    status = plugin.filter(CycleState(), PodInfo(pod()), NodeInfo())
    assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == ("node(s) had unknown conditions",)


def hint() -> Any:
    plugin = nodeunschedulable.new(None, fake_handle(Snapshot([])))
    assert isinstance(plugin, EnqueueExtensions)
    (registered,) = plugin.events_to_register()
    assert ClusterEvent(EventResource.NODE, ActionType.ADD).matches(registered.event)
    assert ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_UNSCHEDULABLE).matches(registered.event)
    assert registered.hint is not None
    return registered.hint


CORDONED = node(unschedulable=True)
OPEN = node()


@pytest.mark.parametrize(
    ("spec", "old", "new", "expected"),
    [
        ({}, None, OPEN, QueueingHint.QUEUE),
        ({}, None, CORDONED, QueueingHint.SKIP),
        (TOLERATES, None, CORDONED, QueueingHint.QUEUE),
        ({}, CORDONED, OPEN, QueueingHint.QUEUE),
        ({}, OPEN, CORDONED, QueueingHint.SKIP),
        ({}, OPEN, OPEN, QueueingHint.SKIP),
    ],
    ids=[
        "schedulable-added",
        "cordoned-added",
        "tolerated-cordoned-added",
        "uncordoned",
        "cordoned",
        "unchanged",
    ],
)
def test_node_change_hint(
    spec: dict[str, Any], old: objects_pb2.Node | None, new: objects_pb2.Node, expected: QueueingHint
) -> None:
    assert hint()(pod(spec=spec), old, new) is expected
