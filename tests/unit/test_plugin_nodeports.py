"""NodePorts: host ports must be free; 0.0.0.0 takes a port on every address."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    FilterPlugin,
    PodInfo,
    PreFilterPlugin,
    QueueingHint,
)
from scheduler.plugins import nodeports
from tests.builders import container, node, node_info, pod
from tests.unit.framework_fakes import Snapshot, fake_handle

Port = int | tuple[str, str, int]


def with_ports(*ports: Port, name: str = "pod", node_name: str = "") -> Any:
    return pod(spec={"containers": [container(host_ports=ports)]}, name=name, node_name=node_name)


# node_ports_test.go's TestNodePorts cases.
@pytest.mark.parametrize(
    ("wanted", "used", "fits"),
    [
        ((), (), True),
        (((("127.0.0.1", "UDP", 8080)),), (("127.0.0.1", "UDP", 9090),), True),
        ((("127.0.0.1", "UDP", 8080),), (("127.0.0.1", "UDP", 8080),), False),
        ((("127.0.0.1", "TCP", 8080),), (("127.0.0.1", "UDP", 8080),), True),
        ((("127.0.0.1", "TCP", 8080),), (("127.0.0.1", "TCP", 8080),), False),
        ((("127.0.0.1", "TCP", 8001), ("127.0.0.1", "UDP", 8080)), (("127.0.0.1", "UDP", 8080),), False),
        ((("127.0.0.1", "TCP", 8001), ("127.0.0.1", "UDP", 8080)), (("127.0.0.1", "UDP", 8081),), True),
        ((("127.0.0.1", "TCP", 8080),), (("0.0.0.0", "TCP", 8080),), False),
        ((("10.0.10.10", "TCP", 8001), ("0.0.0.0", "TCP", 8001)), (("127.0.0.1", "TCP", 8001),), False),
        ((("0.0.0.0", "TCP", 8001),), (("127.0.0.1", "TCP", 8001),), False),
        ((("0.0.0.0", "TCP", 8001),), (("127.0.0.1", "UDP", 8001),), True),
        ((("10.0.10.10", "TCP", 8001),), (("127.0.0.1", "TCP", 8001),), True),
        ((8080,), ((("", "", 8080)),), False),
    ],
    ids=[
        "nothing-running",
        "other-port",
        "same-udp-port",
        "same-port-other-protocol",
        "same-tcp-port",
        "second-udp-port",
        "second-udp-port-other-number",
        "wildcard-on-node-conflicts",
        "wildcard-in-pod-conflicts",
        "wildcard-in-pod-conflicts-any-address",
        "wildcard-other-protocol-fits",
        "other-addresses-fit",
        "defaults-tcp-wildcard",
    ],
)
def test_filter(wanted: tuple[Port, ...], used: tuple[Port, ...], fits: bool) -> None:
    plugin = nodeports.new(None, fake_handle(Snapshot([])))
    assert isinstance(plugin, PreFilterPlugin) and isinstance(plugin, FilterPlugin)
    state = CycleState()
    pod_info = PodInfo(with_ports(*wanted))
    info = node_info(node(), [with_ports(*used, name="existing", node_name="node")])
    result, status = plugin.pre_filter(state, pod_info, [info])
    assert result is None
    if not wanted:
        # No ports: nothing for Filter to check this cycle.
        assert status is not None and status.is_skip
        return
    assert status is None
    status = plugin.filter(state, pod_info, info)
    if fits:
        assert status is None
    else:
        assert status is not None
        assert status.code is Code.UNSCHEDULABLE
        assert status.reasons == ("node(s) didn't have free ports for the requested pod ports",)


def test_events() -> None:
    events = nodeports.new(None, fake_handle(Snapshot([]))).events_to_register()
    assert any(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE).matches(e.event) for e in events)
    assert any(ClusterEvent(EventResource.NODE, ActionType.ADD).matches(e.event) for e in events)


# node_ports_test.go's TestNodePorts_isSchedulableAfterPodDeleted.
@pytest.mark.parametrize(
    ("deleted", "expected"),
    [
        (with_ports(8080, name="other", node_name="node"), QueueingHint.QUEUE),
        (with_ports(8080, name="other"), QueueingHint.SKIP),
        (with_ports(9090, name="other", node_name="node"), QueueingHint.SKIP),
        (with_ports(name="other", node_name="node"), QueueingHint.SKIP),
    ],
    ids=["bound-pod-with-same-port", "unbound-pod", "other-port", "no-ports"],
)
def test_pod_delete_hint(deleted: Any, expected: QueueingHint) -> None:
    events = nodeports.new(None, fake_handle(Snapshot([]))).events_to_register()
    (pod_event,) = [e for e in events if e.event.resource is EventResource.POD]
    assert pod_event.hint is not None
    assert pod_event.hint(with_ports(8080), deleted, None) is expected
