"""The binding cycle with stand-ins for the framework, cache, queue and recorder: what happens on
success, on each kind of failure, and how many bindings run at once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from cluster.api import objects_pb2
from scheduler.binding import ASSIGNED_POD_DELETE, EXPLANATION_ANNOTATION, Binder, BindingJob
from scheduler.clock import FakeClock
from scheduler.events import Annotations, made_annotations
from scheduler.framework import CycleState, FitError, PodInfo, QueuedPodInfo, Status
from scheduler.framework.explanation import Explanation, LazyExplanation
from scheduler.metrics import SchedulerMetrics
from tests.unit.binder_util import bindings_done, running_binder
from tests.unit.extender_fakes import FakeExtender

#: What the cycle explained about the pod bound in these tests: its Scheduled event carries it.
EXPLANATION = LazyExplanation(lambda: Explanation(num_all_nodes=2, evaluated_nodes=2, feasible_nodes=1,
                                                  chosen_node="node-a"))

@dataclass
class FakeFramework:
    profile_name: str = "default-scheduler"
    permit: Status | None = None
    pre_bind: Status | None = None
    bind: Status | None = None
    bind_gate: asyncio.Event = field(default_factory=asyncio.Event)
    calls: list[str] = field(default_factory=list)
    binding_now: int = 0
    most_binding_at_once: int = 0

    def __post_init__(self) -> None:
        self.bind_gate.set()

    async def wait_on_permit(self, pod: PodInfo) -> Status | None:
        self.calls.append("wait_on_permit")
        return self.permit

    async def run_pre_bind(self, state: CycleState, pod: PodInfo, node: str) -> Status | None:
        self.calls.append("pre_bind")
        return self.pre_bind

    async def run_bind(self, state: CycleState, pod: PodInfo, node: str) -> Status | None:
        self.calls.append("bind")
        self.binding_now += 1
        self.most_binding_at_once = max(self.most_binding_at_once, self.binding_now)
        try:
            await self.bind_gate.wait()
        finally:
            self.binding_now -= 1
        return self.bind

    def run_post_bind(self, state: CycleState, pod: PodInfo, node: str) -> None:
        self.calls.append("post_bind")

    def run_unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
        self.calls.append("unreserve")


@dataclass
class FakeCache:
    calls: list[tuple[str, str]] = field(default_factory=list)

    def finish_binding(self, pod: objects_pb2.Pod) -> None:
        self.calls.append(("finish_binding", pod.spec.node_name))

    def forget_pod(self, pod: objects_pb2.Pod) -> None:
        self.calls.append(("forget_pod", pod.spec.node_name))


@dataclass
class FakeQueue:
    moves: list[Any] = field(default_factory=list)

    def move_all_to_active_or_backoff(self, event: Any, old: Any, new: Any) -> int:
        self.moves.append((event, old.metadata.name if old is not None else None, new))
        return 0


@dataclass
class FakeRecorder:
    events: list[tuple[str, str, str, dict[str, str] | None]] = field(default_factory=list)

    def record(self, obj: objects_pb2.Pod, type_: str, reason: str, action: str, message: str, *,
               component: str, annotations: Annotations | None = None) -> None:
        made = None if annotations is None else made_annotations(annotations)
        self.events.append((type_, reason, message, made))


@dataclass
class Failures:
    seen: list[tuple[str, Status, int]] = field(default_factory=list)

    async def __call__(self, framework: Any, queued: QueuedPodInfo, status: Status, cycle: int, start: float
                       ) -> None:
        self.seen.append((queued.key, status, cycle))


class Rig:
    def __init__(self, max_in_flight: int = 64, extenders: tuple[FakeExtender, ...] = ()) -> None:
        self.clock = FakeClock(100.0)
        self.framework = FakeFramework()
        self.cache = FakeCache()
        self.queue = FakeQueue()
        self.recorder = FakeRecorder()
        self.failures = Failures()
        self.metrics = SchedulerMetrics()
        self.binder = Binder(
            cache=self.cache, queue=self.queue, recorder=self.recorder,  # type: ignore[arg-type]
            metrics=self.metrics, clock=self.clock, on_failure=self.failures, max_in_flight=max_in_flight,
            extenders=extenders,
        )

    def job(self, name: str = "web", node: str = "node-a") -> BindingJob:
        pod = objects_pb2.Pod(metadata=objects_pb2.ObjectMeta(name=name, namespace="default"))
        queued = QueuedPodInfo(PodInfo(pod), timestamp=90.0, attempts=2, initial_attempt_timestamp=95.0)
        assumed_pod = objects_pb2.Pod()
        assumed_pod.CopyFrom(pod)
        assumed_pod.spec.node_name = node
        return BindingJob(
            framework=self.framework, state=CycleState(), queued=queued,  # type: ignore[arg-type]
            assumed=PodInfo(assumed_pod), node_name=node, cycle=7, start=99.0, explanation=EXPLANATION,
        )

    async def settle(self) -> None:
        await bindings_done(self.binder)


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    rig = Rig()
    async with running_binder(rig.binder):
        yield rig


async def test_success_binds_records_and_measures(rig: Rig) -> None:
    await rig.binder.submit(rig.job())
    await rig.settle()
    assert rig.framework.calls == ["wait_on_permit", "pre_bind", "bind", "post_bind"]
    assert rig.cache.calls == [("finish_binding", "node-a")]
    assert rig.recorder.events == [
        ("Normal", "Scheduled", "Successfully assigned default/web to node-a",
         {EXPLANATION_ANNOTATION: EXPLANATION.to_json()})
    ]
    assert rig.failures.seen == [] and rig.queue.moves == []
    samples = rig.metrics.exposition().decode()
    assert 'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1.0' in samples
    assert "scheduler_pod_scheduling_attempts_sum 2.0" in samples


@pytest.mark.parametrize(
    ("setup", "calls", "finished"),
    [
        (dict(bind=Status.as_error(RuntimeError("conflict"))),
         ["wait_on_permit", "pre_bind", "bind", "unreserve"], True),
        (dict(pre_bind=Status.as_error(RuntimeError("volume"))),
         ["wait_on_permit", "pre_bind", "unreserve"], False),
        (dict(permit=Status.as_error(RuntimeError("permit broke"))), ["wait_on_permit", "unreserve"], False),
    ],
    ids=["bind-error", "pre-bind-error", "permit-error"],
)
async def test_an_error_undoes_the_reservation_and_requeues(
    rig: Rig, setup: dict[str, Status], calls: list[str], finished: bool
) -> None:
    for name, status in setup.items():
        setattr(rig.framework, name, status)
    await rig.binder.submit(rig.job())
    await rig.settle()
    assert rig.framework.calls == calls
    finish = [("finish_binding", "node-a")] if finished else []
    assert rig.cache.calls == [*finish, ("forget_pod", "node-a")]
    # The assumed pod's room is free again: pods waiting for room may fit.
    assert rig.queue.moves == [(ASSIGNED_POD_DELETE, "web", None)]
    ((key, status, cycle),) = rig.failures.seen
    assert (key, status.is_error, cycle) == ("default/web", True, 7)
    assert [e[1] for e in rig.recorder.events] == []


async def test_a_binding_extender_binds_instead_of_the_bind_plugins() -> None:
    binder = FakeExtender(binds=True)
    rig = Rig(extenders=(binder,))
    async with running_binder(rig.binder):
        await rig.binder.submit(rig.job())
        await rig.settle()
    assert binder.bound == [("web", "node-a")]
    assert rig.framework.calls == ["wait_on_permit", "pre_bind", "post_bind"]
    assert [e[1] for e in rig.recorder.events] == ["Scheduled"]


async def test_a_failed_extender_binding_undoes_the_reservation_and_requeues() -> None:
    rig = Rig(extenders=(FakeExtender(name="http://b/x", binds=True, error="code 500"),))
    async with running_binder(rig.binder):
        await rig.binder.submit(rig.job())
        await rig.settle()
    assert rig.framework.calls == ["wait_on_permit", "pre_bind", "unreserve"]
    assert rig.cache.calls == [("finish_binding", "node-a"), ("forget_pod", "node-a")]
    ((key, status, _),) = rig.failures.seen
    assert key == "default/web" and status.is_error
    assert status.message() == "extender http://b/x: bind failed: code 500"


async def test_a_permit_rejection_is_a_fit_error_of_that_plugin(rig: Rig) -> None:
    rig.framework.permit = Status.unschedulable("waiting for the gang").with_plugin("Coscheduling")
    await rig.binder.submit(rig.job())
    await rig.settle()
    ((_, status, _),) = rig.failures.seen
    assert status.is_rejected and isinstance(status.error, FitError)
    assert status.error.diagnosis.unschedulable_plugins == {"Coscheduling"}
    assert status.error.message() == "0/1 nodes are available: 1 waiting for the gang."


async def test_a_plugin_that_raises_is_an_error_not_a_dead_binder(rig: Rig) -> None:
    async def explode(*_: Any) -> Status | None:
        raise RuntimeError("plugin bug")

    rig.framework.run_pre_bind = explode  # type: ignore[method-assign]
    await rig.binder.submit(rig.job("first"))
    await rig.settle()
    rig.framework.run_pre_bind = FakeFramework.run_pre_bind.__get__(rig.framework)  # type: ignore[method-assign]
    await rig.binder.submit(rig.job("second"))
    await rig.settle()
    assert [key for key, _, _ in rig.failures.seen] == ["default/first"]
    assert [e[2] for e in rig.recorder.events] == ["Successfully assigned default/second to node-a"]


async def test_at_most_max_in_flight_bindings_run_at_once() -> None:
    rig = Rig(max_in_flight=3)
    task = asyncio.create_task(rig.binder.run())
    await asyncio.sleep(0)
    rig.framework.bind_gate.clear()
    submitted = 0

    async def submit_all() -> None:
        nonlocal submitted
        for i in range(5):
            await rig.binder.submit(rig.job(f"p{i}"))
            submitted += 1

    submitter = asyncio.create_task(submit_all())
    for _ in range(20):
        await asyncio.sleep(0)
    # The fourth submission waits for a slot: the scheduling loop slows down instead of piling up.
    assert (submitted, rig.binder.in_flight) == (3, 3)
    rig.framework.bind_gate.set()
    await submitter
    await rig.settle()
    assert rig.framework.most_binding_at_once == 3
    assert len(rig.recorder.events) == 5
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_submit_needs_a_running_binder() -> None:
    rig = Rig()
    with pytest.raises(RuntimeError, match="not running"):
        await rig.binder.submit(rig.job())
