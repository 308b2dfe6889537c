"""Pod scheduling readiness (spec.schedulingGates): the SchedulingGates PreEnqueue plugin, the queue's
gated set driven by it on a fake clock, the API's validation and the status the server and the CLI
give a gated pod."""

from __future__ import annotations

import random
from typing import Any

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import objects_pb2, validation
from cluster.api.kinds import POD
from cluster.api.schedulinggates import SCHEDULING_GATED, SCHEDULING_GATED_MESSAGE
from cluster.apiserver import strategy
from cluster.printers.pods import pod_status
from scheduler.clock import FakeClock
from scheduler.framework import Code, PodInfo
from scheduler.plugins import schedulinggates
from scheduler.queue import ACTIVE, BACKOFF, GATED, UNSCHEDULABLE, SchedulingQueue
from scheduler.queue.scheduling_queue import DEFAULT_POD_MAX_IN_UNSCHEDULABLE_S
from tests.builders import pod
from tests.unit.framework_fakes import Snapshot, fake_handle


def gated(*gates: str, name: str = "p", rv: str = "1", **spec: Any) -> objects_pb2.Pod:
    return pod(name, uid=f"uid-{name}", resource_version=rv, image="nginx",
               spec={"schedulingGates": [{"name": gate} for gate in gates], **spec})


def without_gates(current: objects_pb2.Pod, *kept: str) -> objects_pb2.Pod:
    """The next version of ``current`` with only the gates ``kept``."""
    new = objects_pb2.Pod()
    new.CopyFrom(current)
    new.spec.ClearField("scheduling_gates")
    new.spec.scheduling_gates.extend(objects_pb2.PodSchedulingGate(name=gate) for gate in kept)
    new.metadata.resource_version = str(int(current.metadata.resource_version) + 1)
    return new


REQUIRED_TERMS = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"


def required_zone(zones: list[str], *more: dict[str, Any]) -> dict[str, Any]:
    expressions = [{"key": "zone", "operator": "In", "values": zones}, *more]
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": expressions}]}}}


# ------------------------------------------------------------------------------------- the plugin


# scheduling_gates_test.go's TestPreEnqueue cases.
@pytest.mark.parametrize(
    ("subject", "message"),
    [
        pytest.param(gated(), None, id="pod-does-not-carry-scheduling-gates"),
        pytest.param(gated("foo", "bar"), "waiting for scheduling gates: [foo bar]",
                     id="pod-carries-scheduling-gates"),
    ],
)
def test_pre_enqueue(subject: objects_pb2.Pod, message: str | None) -> None:
    plugin = schedulinggates.new(None, fake_handle(Snapshot([])))
    status = plugin.pre_enqueue(PodInfo(subject))
    if message is None:
        assert status is None
    else:
        assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.message() == message


# -------------------------------------------------------------------------------------- the queue


def queue_with_gates(clock: FakeClock) -> SchedulingQueue:
    plugin = schedulinggates.new(None, fake_handle(Snapshot([])))

    def pre_enqueue(pod_info: PodInfo) -> Any:
        status = plugin.pre_enqueue(pod_info)
        return status.with_plugin(schedulinggates.NAME) if status is not None else None

    return SchedulingQueue(lambda a, b: a.timestamp < b.timestamp, clock=clock, pre_enqueue=pre_enqueue)


async def test_a_gated_pod_waits_gated_until_its_last_gate_is_removed() -> None:
    clock = FakeClock()
    queue = queue_with_gates(clock)
    first = gated("example.com/quota", "example.com/capacity")
    queue.add(first)
    assert queue.pending_counts() == {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 1}
    # Nothing a cluster event or a flush does lets it through.
    clock.advance(DEFAULT_POD_MAX_IN_UNSCHEDULABLE_S + 1)
    queue.flush_unschedulable_left_over()
    queue.flush_backoff_completed()
    assert queue.pending_counts()[GATED] == 1
    # One gate of two removed: still gated.
    second = without_gates(first, "example.com/capacity")
    queue.update(first, second)
    assert queue.pending_counts() == {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 1}
    # The last one removed: tried at once, never having been attempted before.
    queue.update(second, without_gates(second))
    assert queue.pending_counts() == {ACTIVE: 1, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 0}
    popped = await queue.pop()
    assert popped.key == "default/p" and popped.attempts == 1
    assert not popped.pod.spec.scheduling_gates


# ------------------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("subject", "problems"),
    [
        pytest.param(gated("example.com/queue"), [], id="valid"),
        pytest.param(
            gated("a", "a"), ['spec.schedulingGates[1]: Duplicate value: "a"'], id="duplicate-gate"
        ),
        pytest.param(
            gated("not a name"),
            ['spec.schedulingGates[0].name: Invalid value: "not a name": name part must consist of '
             "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
             "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"],
            id="bad-gate-name",
        ),
        pytest.param(
            gated("a", nodeName="n1"),
            ["spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"],
            id="node-name-with-gates",
        ),
    ],
)
def test_create_validation(subject: objects_pb2.Pod, problems: list[str]) -> None:
    assert [p for p in validation.validate_object(subject) if "chedulingGates" in p or "nodeName" in p] \
        == problems


@pytest.mark.parametrize(
    ("old", "new", "problems"),
    [
        pytest.param(gated("a", "b"), gated("b"), [], id="remove-one"),
        pytest.param(gated("a"), gated(), [], id="remove-the-last"),
        pytest.param(
            gated("a"), gated("a", "b"),
            ["spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling "
             "gate 'b'"],
            id="add-a-gate",
        ),
        pytest.param(
            gated(), gated("a"),
            ["spec.schedulingGates[0].name: Forbidden: only deletion is allowed, but found new scheduling "
             "gate 'a'"],
            id="gate-a-released-pod",
        ),
        pytest.param(
            gated("a", nodeSelector={"zone": "a"}), gated("a", nodeSelector={"zone": "a", "gpu": "h100"}), [],
            id="gated-pod-node-selector-grows",
        ),
        pytest.param(
            gated("a", nodeSelector={"zone": "a"}), gated("a", nodeSelector={"zone": "b"}),
            ["spec.nodeSelector: Forbidden: only additions to spec.nodeSelector are allowed (no mutations "
             "or deletions)"],
            id="gated-pod-node-selector-changed",
        ),
        pytest.param(
            gated("a"), gated("a", affinity=required_zone(["a"])), [], id="gated-pod-gains-affinity"
        ),
        pytest.param(
            gated("a", affinity=required_zone(["a"])),
            gated("a", affinity=required_zone(["a"], {"key": "gpu", "operator": "Exists"})), [],
            id="gated-pods-term-gains-a-requirement",
        ),
        pytest.param(
            gated("a", affinity=required_zone(["a"])), gated("a", affinity=required_zone(["b"])),
            [f"{REQUIRED_TERMS}[0]: "
             'Invalid value: "{\\"matchExpressions\\":[{\\"key\\":\\"zone\\",\\"operator\\":\\"In\\",'
             '\\"values\\":[\\"b\\"]}]}": only additions are allowed (no mutations or deletions)'],
            id="gated-pods-term-changed",
        ),
    ],
)
def test_update_validation(old: objects_pb2.Pod, new: objects_pb2.Pod, problems: list[str]) -> None:
    assert validation.validate_update(old, new) == problems


def test_a_gated_pods_required_terms_may_not_be_added_or_removed() -> None:
    two_terms = required_zone(["a"])
    two_terms["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"].append(
        {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]})
    (problem,) = validation.validate_update(gated("a", affinity=required_zone(["a"])),
                                            gated("a", affinity=two_terms))
    assert problem.startswith(f"{REQUIRED_TERMS}: Invalid")
    assert problem.endswith("no additions/deletions to non-empty NodeSelectorTerms list are allowed")


def test_a_released_pods_node_selector_is_immutable_again() -> None:
    problems = validation.validate_update(gated(nodeSelector={"zone": "a"}),
                                          gated(nodeSelector={"zone": "a", "gpu": "h100"}))
    assert problems and problems[0].startswith("spec: Forbidden: pod updates may not change fields")
    assert problems[0].endswith("changed: spec.nodeSelector")


# --------------------------------------------------------------------------------------- status


def test_the_server_says_why_a_gated_pod_is_not_scheduled_and_the_cli_shows_it() -> None:
    subject = gated("a")
    subject.metadata.resource_version = ""
    strategy.prepare_for_create(POD, subject, Timestamp(seconds=1), random.Random(0))
    (condition,) = subject.status.conditions
    assert (condition.type, condition.status, condition.reason, condition.message) == (
        "PodScheduled", "False", SCHEDULING_GATED, SCHEDULING_GATED_MESSAGE
    )
    assert pod_status(subject) == "SchedulingGated"
    plain = gated()
    plain.metadata.resource_version = ""
    strategy.prepare_for_create(POD, plain, Timestamp(seconds=1), random.Random(0))
    assert not plain.status.conditions and pod_status(plain) == "Pending"
