"""The scheduling failure handler's decisions: requeue or not, the condition's reason and message, and
the pod status it writes (kube-scheduler's handleSchedulingFailure and updatePod)."""

from __future__ import annotations

import pytest

from cluster.api import objects_pb2
from scheduler.framework import Diagnosis, FitError, NodeToStatus, Status
from scheduler.schedule_one import (
    REASON_SCHEDULER_ERROR,
    REASON_UNSCHEDULABLE,
    decide_failure,
    failure_message,
    with_failure_status,
)
from tests import builders

Condition = tuple[str, str, str, str]
#: The condition the handler writes for the message "msg".
SAID = ("PodScheduled", "False", "Unschedulable", "msg")


def pod(node_name: str = "", nominated: str = "", conditions: tuple[Condition, ...] = ()) -> objects_pb2.Pod:
    listed = [{"type": t, "status": s, "reason": r, "message": m} for t, s, r, m in conditions]
    return builders.pod("web", node_name=node_name, nominated=nominated, status={"conditions": listed})


def fit_error_status() -> Status:
    diagnosis = Diagnosis(
        node_to_status=NodeToStatus({name: Status.unschedulable("Insufficient cpu") for name in ("a", "b")}),
        unschedulable_plugins={"NodeResourcesFit"},
    )
    fit_error = FitError(pod(), 2, diagnosis)
    status = Status.unschedulable(fit_error.message())
    status.error = fit_error
    return status


@pytest.mark.parametrize(
    ("status", "current", "requeue", "reason"),
    [
        (fit_error_status(), pod(), True, REASON_UNSCHEDULABLE),
        (Status.as_error(RuntimeError("boom")), pod(), True, REASON_SCHEDULER_ERROR),
        (Status.unresolvable("no nodes available to schedule pods"), pod(), True, REASON_UNSCHEDULABLE),
        (fit_error_status(), None, False, REASON_UNSCHEDULABLE),
        (Status.as_error(RuntimeError("bind: conflict")), pod(node_name="a"), False, REASON_SCHEDULER_ERROR),
    ],
    ids=["fit-error", "error", "rejected-without-fit-error", "pod-deleted", "pod-bound-meanwhile"],
)
def test_decide_failure(status: Status, current: objects_pb2.Pod | None, requeue: bool, reason: str) -> None:
    decision = decide_failure(status, current)
    assert (decision.requeue, decision.reason) == (requeue, reason)
    assert bool(decision.why_not) == (not requeue)


def test_the_message_of_a_fit_error_reads_as_kubernetes() -> None:
    assert failure_message(fit_error_status()) == "0/2 nodes are available: 2 Insufficient cpu."


def test_the_message_of_an_error_is_the_error() -> None:
    assert failure_message(Status.as_error(RuntimeError("the API is down"))) == "the API is down"


@pytest.mark.parametrize(
    ("before", "nominated", "expect_write", "expect_nominated"),
    [
        (pod(), None, True, ""),
        (pod(conditions=(("PodScheduled", "False", "Unschedulable", "old message"),)), None, True, ""),
        (pod(conditions=(SAID,)), None, False, ""),
        (pod(conditions=(SAID,)), "node-b", True, "node-b"),
        (pod(nominated="node-b", conditions=(SAID,)), "", True, ""),
        (pod(nominated="node-b", conditions=(SAID,)), None, False, "node-b"),
    ],
    ids=["first-failure", "new-message", "unchanged", "nominate", "clear-nomination", "keep-nomination"],
)
def test_failure_status(
    before: objects_pb2.Pod, nominated: str | None, expect_write: bool, expect_nominated: str
) -> None:
    after = with_failure_status(before, REASON_UNSCHEDULABLE, "msg", nominated)
    if not expect_write:
        assert after is None
        return
    assert after is not None
    (condition,) = [c for c in after.status.conditions if c.type == "PodScheduled"]
    assert (condition.status, condition.reason, condition.message) == ("False", "Unschedulable", "msg")
    assert after.status.nominated_node_name == expect_nominated
    assert before.status.conditions != after.status.conditions or before.status.nominated_node_name != (
        after.status.nominated_node_name)


def test_the_transition_time_moves_only_when_the_condition_status_changes() -> None:
    fresh = with_failure_status(pod(), REASON_UNSCHEDULABLE, "first", None)
    assert fresh is not None
    (first,) = fresh.status.conditions
    assert first.last_transition_time.seconds > 0
    first.last_transition_time.seconds = 12345
    again = with_failure_status(fresh, REASON_UNSCHEDULABLE, "second", None)
    assert again is not None
    assert again.status.conditions[0].last_transition_time.seconds == 12345
