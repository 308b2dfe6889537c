"""NodeName: a pod naming a node fits only that node."""

from __future__ import annotations

import pytest

from scheduler.framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    FilterPlugin,
    PodInfo,
    QueueingHint,
)
from scheduler.plugins import nodename
from tests.builders import node, node_info, pod
from tests.unit.framework_fakes import Snapshot, fake_handle


# node_name_test.go's cases.
@pytest.mark.parametrize(
    ("wanted", "node_name", "rejected"),
    [("", "foo", False), ("foo", "foo", False), ("bar", "foo", True)],
    ids=["no-host-specified", "host-matches", "host-does-not-match"],
)
def test_filter(wanted: str, node_name: str, rejected: bool) -> None:
    plugin = nodename.new(None, fake_handle(Snapshot([])))
    assert isinstance(plugin, FilterPlugin)
    status = plugin.filter(CycleState(), PodInfo(pod(node_name=wanted)), node_info(node(node_name)))
    if rejected:
        assert status is not None
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == ("node(s) didn't match the requested node name",)
    else:
        assert status is None


def test_only_the_named_node_arriving_requeues() -> None:
    (registered,) = nodename.new(None, fake_handle(Snapshot([]))).events_to_register()
    assert ClusterEvent(EventResource.NODE, ActionType.ADD).matches(registered.event)
    assert registered.hint is not None
    assert registered.hint(pod(node_name="a"), None, node("a")) is QueueingHint.QUEUE
    assert registered.hint(pod(node_name="a"), None, node("b")) is QueueingHint.SKIP
