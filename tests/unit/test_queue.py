"""The scheduling queue's transitions, as kube-scheduler's PriorityQueue makes
them, driven by a FakeClock: activeQ, podBackoffQ, unschedulablePods, the cycle counters, pop/close,
update and delete, backoff and the two flushes."""

from __future__ import annotations

import asyncio

import pytest

from cluster.api import objects_pb2
from scheduler.clock import FakeClock
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    PodInfo,
    QueuedPodInfo,
    Status,
)
from scheduler.queue import ACTIVE, BACKOFF, GATED, UNSCHEDULABLE, QueueClosed, SchedulingQueue
from tests.builders import pod

FIT = "NodeResourcesFit"
NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD, "NodeAdd")
#: NodeResourcesFit's interest, as far as these tests need it.
EVENTS = {FIT: [ClusterEventWithHint(NODE_ADD)]}


def make_pod(name: str, *, priority: int | None = None, labels: dict[str, str] | None = None,
             nominated: str = "", rv: str = "1") -> objects_pb2.Pod:
    return pod(name, uid=f"uid-{name}", resource_version=rv, labels=labels, priority=priority, image="nginx",
               nominated=nominated)


def changed(pod: objects_pb2.Pod, **labels: str) -> objects_pb2.Pod:
    """A newer version of ``pod`` with more labels (a change that matters for scheduling)."""
    new = objects_pb2.Pod()
    new.CopyFrom(pod)
    new.metadata.labels.update(labels)
    new.metadata.resource_version = str(int(pod.metadata.resource_version) + 1)
    return new


def status_changed(pod: objects_pb2.Pod) -> objects_pb2.Pod:
    """A newer version of ``pod`` that differs only in status and resourceVersion."""
    new = objects_pb2.Pod()
    new.CopyFrom(pod)
    new.status.conditions.add(type="PodScheduled", status="False", reason="Unschedulable")
    new.metadata.resource_version = str(int(pod.metadata.resource_version) + 1)
    return new


def priority_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """PrioritySort: higher priority first, then the earlier timestamp."""
    if a.pod_info.priority != b.pod_info.priority:
        return a.pod_info.priority > b.pod_info.priority
    return a.timestamp < b.timestamp


def new_queue(clock: FakeClock, **kwargs: object) -> SchedulingQueue:
    kwargs.setdefault("events_to_register", EVENTS)
    return SchedulingQueue(priority_less, clock=clock, **kwargs)  # type: ignore[arg-type]


def where(queue: SchedulingQueue, name: str) -> str | None:
    found = queue.lookup(f"default/{name}")
    return found[0] if found else None


async def settle() -> None:
    """Let every ready task run (FakeClock sleepers woken by advance, blocked pops)."""
    for _ in range(10):
        await asyncio.sleep(0)


async def attempt(queue: SchedulingQueue) -> tuple[QueuedPodInfo, int]:
    """Pop a pod and note its scheduling cycle, as the scheduler does right after popping."""
    qpi = await queue.pop()
    return qpi, queue.scheduling_cycle


def fail(queue: SchedulingQueue, qpi: QueuedPodInfo, cycle: int, *plugins: str) -> str | None:
    """The attempt failed: rejected by ``plugins`` (none: an error)."""
    qpi.unschedulable_plugins = set(plugins)
    return queue.add_unschedulable_if_not_present(qpi, cycle)


# ------------------------------------------------------------------------------------ construction


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"pod_initial_backoff_s": 0}, "pod_initial_backoff_s must be positive"),
        ({"pod_initial_backoff_s": 5, "pod_max_backoff_s": 2}, "must be at least pod_initial_backoff_s"),
        ({"pod_max_in_unschedulable_s": 0}, "pod_max_in_unschedulable_s must be positive"),
    ],
    ids=["zero-initial-backoff", "max-below-initial", "zero-max-in-unschedulable"],
)
def test_nonsense_timing_is_refused(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        new_queue(FakeClock(), **kwargs)


# ------------------------------------------------------------------------------------- pop, close


@pytest.mark.parametrize(
    ("pods", "expected"),
    [
        ([("low", 1, 0), ("high", 10, 1), ("mid", 5, 2)], ["high", "mid", "low"]),
        ([("late", 5, 3), ("early", 5, 1), ("middle", 5, 2)], ["early", "middle", "late"]),
        ([("a", 0, 0), ("b", 0, 0), ("c", 0, 0)], ["a", "b", "c"]),
        ([("none", None, 0), ("neg", -5, 0), ("pos", 1, 0)], ["pos", "none", "neg"]),
    ],
    ids=["priority-first", "then-timestamp", "same-instant-fifo", "no-priority-is-zero"],
)
async def test_pop_order_is_priority_then_timestamp(
    pods: list[tuple[str, int | None, float]], expected: list[str]
) -> None:
    clock = FakeClock()
    queue = new_queue(clock)
    for name, priority, at in sorted(pods, key=lambda p: p[2]):
        clock.advance_to(at)
        queue.add(make_pod(name, priority=priority))
    assert [(await queue.pop()).pod.metadata.name for _ in pods] == expected


async def test_pop_starts_a_cycle() -> None:
    clock = FakeClock(start=10)
    queue = new_queue(clock)
    queue.add(make_pod("web"))
    assert queue.scheduling_cycle == 0
    qpi, cycle = await attempt(queue)
    assert (cycle, qpi.attempts, qpi.initial_attempt_timestamp) == (1, 1, 10)
    fail(queue, qpi, cycle)
    clock.advance(5)
    queue.flush_backoff_completed()
    qpi.pending_plugins = {"SomePermit"}
    qpi.unschedulable_plugins = {FIT}
    qpi, cycle = await attempt(queue)
    # A second attempt: the first attempt's time stays, the last attempt's verdicts are forgotten.
    assert (cycle, qpi.attempts, qpi.initial_attempt_timestamp) == (2, 2, 10)
    assert qpi.unschedulable_plugins == set() and qpi.pending_plugins == set()


async def test_pop_blocks_until_a_pod_is_added() -> None:
    queue = new_queue(FakeClock())
    popping = asyncio.create_task(queue.pop())
    await settle()
    assert not popping.done()
    queue.add(make_pod("web"))
    await settle()
    assert popping.done()
    assert popping.result().pod.metadata.name == "web"
    assert queue.is_empty_active()


async def test_close_wakes_blocked_pops_with_queue_closed() -> None:
    queue = new_queue(FakeClock())
    poppers = [asyncio.create_task(queue.pop()) for _ in range(2)]
    await settle()
    queue.close()
    for popper in poppers:
        with pytest.raises(QueueClosed):
            await popper
    queue.add(make_pod("late"))
    with pytest.raises(QueueClosed):
        await queue.pop()


async def test_run_stops_when_the_queue_closes() -> None:
    queue = new_queue(FakeClock())
    running = asyncio.create_task(queue.run())
    await settle()
    assert not running.done()
    queue.close()
    await asyncio.wait_for(running, timeout=5)


# ----------------------------------------------------------------- after a failed attempt (seed §1)


async def test_rejected_pod_without_a_move_request_goes_to_unschedulable() -> None:
    clock = FakeClock()
    queue = new_queue(clock)
    queue.add(make_pod("web"))
    qpi, cycle = await attempt(queue)
    clock.advance(3)
    assert fail(queue, qpi, cycle, FIT) == UNSCHEDULABLE
    assert where(queue, "web") == UNSCHEDULABLE
    assert qpi.timestamp == 3  # refreshed: the stay and the backoff count from the failure
    assert queue.pending_counts() == {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 1, GATED: 0}


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (NODE_ADD, BACKOFF),
        (ClusterEvent(EventResource.NODE, ActionType.DELETE, "NodeDelete"), UNSCHEDULABLE),
    ],
    ids=["registered-event-is-a-move-request", "unregistered-event-is-not"],
)
async def test_event_during_the_attempt_sends_the_pod_to_backoff(event: ClusterEvent, expected: str) -> None:
    """The event that could have helped came while the pod was being scheduled: the snapshot it saw may
    predate the event, so it must not wait in unschedulablePods for another one."""
    queue = new_queue(FakeClock())
    queue.add(make_pod("web"))
    qpi, cycle = await attempt(queue)
    queue.move_all_to_active_or_backoff(event)
    assert queue.move_request_cycle == (cycle if expected == BACKOFF else -1)
    assert fail(queue, qpi, cycle, FIT) == expected
    assert where(queue, "web") == expected


async def test_move_request_before_the_attempt_started_does_not_count() -> None:
    queue = new_queue(FakeClock())
    queue.add(make_pod("first"))
    queue.add(make_pod("second"))
    await attempt(queue)
    queue.move_all_to_active_or_backoff(NODE_ADD)
    assert queue.move_request_cycle == 1
    qpi, cycle = await attempt(queue)
    assert cycle == 2
    assert fail(queue, qpi, cycle, FIT) == UNSCHEDULABLE


async def test_failure_on_an_error_goes_to_backoff() -> None:
    """No plugin rejected the pod (an API error, a plugin error): retry after backoff."""
    queue = new_queue(FakeClock())
    queue.add(make_pod("web"))
    qpi, cycle = await attempt(queue)
    assert fail(queue, qpi, cycle) == BACKOFF
    assert where(queue, "web") == BACKOFF


async def test_failed_pod_already_queued_again_is_left_alone() -> None:
    """An update arrived during the attempt and queued the new version: that one wins."""
    queue = new_queue(FakeClock())
    pod = make_pod("web")
    queue.add(pod)
    qpi, cycle = await attempt(queue)
    queue.update(pod, changed(pod, tier="gold"))
    assert where(queue, "web") == ACTIVE
    assert fail(queue, qpi, cycle, FIT) is None
    found = queue.lookup("default/web")
    assert found is not None and found[1] is not qpi
    assert found[1].pod.metadata.labels["tier"] == "gold"
    assert queue.pending_counts() == {ACTIVE: 1, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 0}


# -------------------------------------------------------------------------------- backoff (seed §3)


@pytest.mark.parametrize(
    ("initial", "maximum", "expected"),
    [
        (1, 10, [1, 2, 4, 8, 10, 10, 10]),
        (2, 20, [2, 4, 8, 16, 20, 20, 20]),
        (3, 3, [3, 3, 3, 3, 3, 3, 3]),
    ],
    ids=["defaults", "custom", "initial-equals-max"],
)
async def test_backoff_doubles_with_attempts_up_to_the_max(
    initial: float, maximum: float, expected: list[float]
) -> None:
    clock = FakeClock()
    queue = new_queue(clock, pod_initial_backoff_s=initial, pod_max_backoff_s=maximum)
    queue.add(make_pod("web"))
    assert queue.backoff_duration(0) == 0  # a pod never tried owes no backoff
    seen = []
    for attempts in range(1, len(expected) + 1):
        qpi, cycle = await attempt(queue)
        assert qpi.attempts == attempts
        fail(queue, qpi, cycle)
        expiry = queue.next_backoff_expiry()
        assert expiry is not None
        seen.append(expiry - clock.now())
        clock.advance_to(expiry - 0.01)
        assert queue.flush_backoff_completed() == 0
        assert where(queue, "web") == BACKOFF
        clock.advance_to(expiry)
        assert queue.flush_backoff_completed() == 1
        assert where(queue, "web") == ACTIVE
    assert seen == pytest.approx(expected)
    assert queue.backoff_duration(10_000) == maximum


async def test_backoff_flush_runs_every_second_on_the_clock() -> None:
    clock = FakeClock()
    queue = new_queue(clock)
    running = asyncio.create_task(queue.run())
    queue.add(make_pod("web"))
    qpi, cycle = await attempt(queue)
    clock.advance(0.5)
    fail(queue, qpi, cycle)  # backoff 1 s: until 1.5
    popping = asyncio.create_task(queue.pop())
    for now in (1.0, 1.5):  # the flush ticks at 1 and 2; at 1 the backoff is not over
        clock.advance_to(now)
        await settle()
        assert where(queue, "web") == BACKOFF and not popping.done()
    clock.advance_to(2.0)
    await settle()
    assert popping.done() and popping.result() is qpi
    assert queue.next_backoff_expiry() is None
    queue.close()
    await running


async def test_backoff_queue_releases_pods_in_expiry_order() -> None:
    clock = FakeClock()
    queue = new_queue(clock)
    for name in ("a", "b", "c"):
        queue.add(make_pod(name))
    for attempts in (3, 1, 2):  # a: 4 s, b: 1 s, c: 2 s
        qpi, cycle = await attempt(queue)
        qpi.attempts = attempts
        fail(queue, qpi, cycle)
    assert queue.next_backoff_expiry() == 1
    clock.advance_to(1)
    assert queue.flush_backoff_completed() == 1
    assert [where(queue, name) for name in "abc"] == [BACKOFF, ACTIVE, BACKOFF]
    assert queue.next_backoff_expiry() == 2
    clock.advance_to(4)
    assert queue.flush_backoff_completed() == 2
    assert [(await queue.pop()).pod.metadata.name for _ in range(3)] == ["b", "c", "a"]


# --------------------------------------------------------------- leftover flush (seed §2, 5 minutes)


@pytest.mark.parametrize(
    ("max_in_unschedulable", "stays_at", "moves_at"),
    [(None, 300, 300.5), (60, 60, 61), (600, 599, 601)],
    ids=["default-5-minutes", "configured-60s", "configured-10-minutes"],
)
async def test_pods_left_in_unschedulable_too_long_are_flushed(
    max_in_unschedulable: float | None, stays_at: float, moves_at: float
) -> None:
    clock = FakeClock()
    kwargs = {} if max_in_unschedulable is None else {"pod_max_in_unschedulable_s": max_in_unschedulable}
    queue = new_queue(clock, **kwargs)
    queue.add(make_pod("web"))
    qpi, cycle = await attempt(queue)
    fail(queue, qpi, cycle, FIT)
    clock.advance_to(stays_at)
    assert queue.flush_unschedulable_left_over() == 0
    assert where(queue, "web") == UNSCHEDULABLE
    clock.advance_to(moves_at)
    assert queue.flush_unschedulable_left_over() == 1
    assert where(queue, "web") == ACTIVE  # its 1 s backoff ended long ago


async def test_leftover_flush_only_moves_the_old_pods_and_counts_as_a_move_request() -> None:
    clock = FakeClock()
    queue = new_queue(clock, pod_max_in_unschedulable_s=60)
    for name in ("old", "young"):
        queue.add(make_pod(name))
    old = await attempt(queue)
    fail(queue, *old, FIT)
    clock.advance(50)
    young = await attempt(queue)
    fail(queue, *young, FIT)
    clock.advance(11)
    assert queue.flush_unschedulable_left_over() == 1
    assert (where(queue, "old"), where(queue, "young")) == (ACTIVE, UNSCHEDULABLE)
    assert queue.move_request_cycle == queue.scheduling_cycle


async def test_leftover_flush_respects_a_backoff_still_running() -> None:
    clock = FakeClock()
    queue = new_queue(clock, pod_initial_backoff_s=10, pod_max_backoff_s=10, pod_max_in_unschedulable_s=2)
    queue.add(make_pod("web"))
    fail(queue, *await attempt(queue), FIT)
    clock.advance(3)
    assert queue.flush_unschedulable_left_over() == 1
    assert where(queue, "web") == BACKOFF
    clock.advance(7)
    queue.flush_backoff_completed()
    assert where(queue, "web") == ACTIVE


async def test_leftover_flush_runs_every_30_seconds_on_the_clock() -> None:
    clock = FakeClock()
    queue = new_queue(clock, pod_max_in_unschedulable_s=60)
    running = asyncio.create_task(queue.run())
    queue.add(make_pod("web"))
    qpi, cycle = await attempt(queue)
    clock.advance(1)
    fail(queue, qpi, cycle, FIT)
    for now in (30, 60, 61, 89):  # ticks at 30 and 60 find it too young (29 s, 59 s)
        clock.advance_to(now)
        await settle()
        assert where(queue, "web") == UNSCHEDULABLE
    clock.advance_to(90)
    await settle()
    assert where(queue, "web") == ACTIVE
    queue.close()
    await running


# --------------------------------------------------------------------------------- informer events


async def test_add_queues_a_new_pod_and_takes_it_out_of_the_other_structures() -> None:
    clock = FakeClock()
    queue = new_queue(clock)
    pod = make_pod("web")
    queue.add(pod)
    fail(queue, *await attempt(queue), FIT)
    assert where(queue, "web") == UNSCHEDULABLE
    queue.add(pod)
    assert where(queue, "web") == ACTIVE
    assert queue.pending_counts() == {ACTIVE: 1, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 0}


async def test_update_in_active_replaces_the_pod_and_reorders() -> None:
    queue = new_queue(FakeClock())
    low, high = make_pod("low", priority=1), make_pod("high", priority=5)
    queue.add(low)
    queue.add(high)
    raised = changed(low)
    raised.spec.priority = 9
    queue.update(low, raised)
    first = await queue.pop()
    assert first.pod is raised and first.pod_info.priority == 9
    assert (await queue.pop()).pod.metadata.name == "high"


@pytest.mark.parametrize(
    ("kind", "advance", "expected"),
    [
        ("relevant", 0.5, BACKOFF),
        ("relevant", 1.0, ACTIVE),
        ("status-only", 1.0, BACKOFF),
    ],
    ids=["relevant-while-backing-off-stays", "relevant-after-backoff-goes-active", "status-only-stays"],
)
async def test_update_in_backoff(kind: str, advance: float, expected: str) -> None:
    clock = FakeClock()
    queue = new_queue(clock)
    pod = make_pod("web")
    queue.add(pod)
    fail(queue, *await attempt(queue))
    clock.advance(advance)
    new = changed(pod, tier="gold") if kind == "relevant" else status_changed(pod)
    queue.update(pod, new)
    assert where(queue, "web") == expected
    assert queue.lookup("default/web")[1].pod is new


@pytest.mark.parametrize(
    ("kind", "advance", "expected"),
    [
        ("relevant", 0.5, BACKOFF),
        ("relevant", 1.0, ACTIVE),
        ("status-only", 1.0, UNSCHEDULABLE),
        ("resource-version-only", 1.0, UNSCHEDULABLE),
    ],
    ids=["relevant-while-backing-off", "relevant-after-backoff", "status-only-stays", "resync-stays"],
)
async def test_update_in_unschedulable(kind: str, advance: float, expected: str) -> None:
    clock = FakeClock()
    queue = new_queue(clock)
    pod = make_pod("web")
    queue.add(pod)
    fail(queue, *await attempt(queue), FIT)
    clock.advance(advance)
    if kind == "relevant":
        new = changed(pod, tier="gold")
    elif kind == "status-only":
        new = status_changed(pod)
    else:
        new = objects_pb2.Pod()
        new.CopyFrom(pod)
        new.metadata.resource_version = "7"
    queue.update(pod, new)
    assert where(queue, "web") == expected
    assert queue.lookup("default/web")[1].pod is new
    assert queue.move_request_cycle == -1  # an update of the pod itself is no move request


async def test_update_of_an_unknown_pod_adds_it() -> None:
    queue = new_queue(FakeClock())
    pod = make_pod("web")
    queue.update(None, pod)
    assert where(queue, "web") == ACTIVE


@pytest.mark.parametrize("structure", [ACTIVE, BACKOFF, UNSCHEDULABLE])
async def test_delete_removes_the_pod_from_where_it_is(structure: str) -> None:
    queue = new_queue(FakeClock())
    pod = make_pod("web", nominated="node-a")
    queue.add(make_pod("other"))
    queue.add(pod)
    if structure != ACTIVE:
        await queue.pop()  # other
        qpi, cycle = await attempt(queue)
        fail(queue, qpi, cycle, *([FIT] if structure == UNSCHEDULABLE else []))
    assert where(queue, "web") == structure
    assert [p.key for p in queue.nominated_pods_for_node("node-a")] == ["default/web"]
    queue.delete(pod)
    assert where(queue, "web") is None
    assert queue.nominated_pods_for_node("node-a") == []
    assert sum(queue.pending_counts().values()) == (1 if structure == ACTIVE else 0)


# ----------------------------------------------------------------- held pods (async preemption)


async def held_after_failing(queue: SchedulingQueue, clock: FakeClock, name: str) -> QueuedPodInfo:
    """``name`` popped, held (its preemption starts in the cycle), failed with NodeResourcesFit."""
    queue.add(make_pod(name))
    qpi, cycle = await attempt(queue)
    queue.hold(qpi.key)
    clock.advance(1)
    fail(queue, qpi, cycle, FIT)
    return qpi


async def test_an_event_does_not_send_a_held_pod_to_active() -> None:
    clock = FakeClock()
    queue = new_queue(clock)
    await held_after_failing(queue, clock, "web")
    clock.advance(30)  # the backoff is long over
    assert queue.move_all_to_active_or_backoff(NODE_ADD) == 1
    assert where(queue, "web") == UNSCHEDULABLE
    assert queue.is_held("default/web")
    queue.release("default/web")
    assert not queue.is_held("default/web")
    queue.move_all_to_active_or_backoff(NODE_ADD)
    assert where(queue, "web") == ACTIVE


async def test_a_held_pod_whose_backoff_ends_waits_in_unschedulable() -> None:
    """It failed while an event was coming in (so to podBackoffQ); the flush parks it, and after its
    release the next event requeues it."""
    clock = FakeClock()
    queue = new_queue(clock)
    queue.add(make_pod("web"))
    qpi, cycle = await attempt(queue)
    queue.hold(qpi.key)
    queue.move_all_to_active_or_backoff(NODE_ADD)
    assert fail(queue, qpi, cycle, FIT) == BACKOFF
    clock.advance(30)
    assert queue.flush_backoff_completed() == 1
    assert where(queue, "web") == UNSCHEDULABLE
    queue.release(qpi.key)
    queue.move_all_to_active_or_backoff(NODE_ADD)
    assert where(queue, "web") == ACTIVE


@pytest.mark.parametrize("structure", [UNSCHEDULABLE, BACKOFF])
async def test_activate_skips_the_backoff(structure: str) -> None:
    clock = FakeClock()
    queue = new_queue(clock)
    queue.add(make_pod("web"))
    qpi, cycle = await attempt(queue)
    if structure == BACKOFF:
        queue.move_all_to_active_or_backoff(NODE_ADD)
    assert fail(queue, qpi, cycle, FIT) == structure
    assert queue.activate(qpi.key)
    assert where(queue, "web") == ACTIVE
    assert not queue.activate(qpi.key)  # already active
    assert (await queue.pop()) is qpi


async def test_activate_does_not_bypass_a_hold() -> None:
    clock = FakeClock()
    queue = new_queue(clock)
    qpi = await held_after_failing(queue, clock, "web")
    assert queue.activate(qpi.key)
    assert where(queue, "web") == UNSCHEDULABLE


async def test_deleting_a_held_pod_forgets_the_hold() -> None:
    clock = FakeClock()
    queue = new_queue(clock)
    await held_after_failing(queue, clock, "web")
    queue.delete(make_pod("web"))
    assert where(queue, "web") is None
    assert not queue.is_held("default/web")
    queue.add(make_pod("web"))  # a new pod of that name is not held
    assert where(queue, "web") == ACTIVE


# ------------------------------------------------------------------------------------- gated pods

GATE = "Gate"
GATE_OPENED = ClusterEvent(EventResource.WILDCARD, ActionType.UPDATE, "GateOpened")


class Gate:
    """A PreEnqueue verdict: the pods named in ``closed`` are rejected by the plugin "Gate"."""

    def __init__(self, *closed: str) -> None:
        self.closed = set(closed)

    def __call__(self, pod_info: PodInfo) -> Status | None:
        if pod_info.pod.metadata.name in self.closed:
            return Status.unresolvable("gated").with_plugin(GATE)
        return None


def gated_queue(clock: FakeClock, gate: Gate) -> SchedulingQueue:
    return new_queue(clock, pre_enqueue=gate,
                     events_to_register={**EVENTS, GATE: [ClusterEventWithHint(GATE_OPENED)]})


async def test_a_gated_pod_is_never_popped_and_is_asked_again_on_its_plugins_events() -> None:
    clock = FakeClock()
    gate = Gate("held")
    queue = gated_queue(clock, gate)
    queue.add(make_pod("held"))
    queue.add(make_pod("free"))
    assert queue.pending_counts() == {ACTIVE: 1, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 1}
    assert (await queue.pop()).key == "default/free"
    assert queue.move_all_to_active_or_backoff(NODE_ADD) == 0  # not an event the gate registered
    queue.update(make_pod("held"), status_changed(make_pod("held")))  # nothing that matters: still gated
    assert where(queue, "held") == UNSCHEDULABLE and queue.pending_counts()[GATED] == 1
    assert queue.move_all_to_active_or_backoff(GATE_OPENED) == 1  # asked again: still closed
    assert queue.pending_counts()[GATED] == 1
    gate.closed.clear()
    assert queue.move_to_active_or_backoff(["default/held"], GATE_OPENED) == 1
    assert queue.pending_counts() == {ACTIVE: 1, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 0}


def test_take_leaves_gated_pods_and_takes_the_others_from_every_structure() -> None:
    clock = FakeClock()
    queue = gated_queue(clock, Gate("gated"))
    for name in ("active", "gated", "failed"):
        queue.add(make_pod(name))
    failed = queue.take(["default/failed"])[0]
    failed.attempts = 1
    fail(queue, failed, queue.scheduling_cycle, FIT)
    taken = queue.take(["default/active", "default/gated", "default/failed", "default/unknown"])
    assert [qpi.key for qpi in taken] == ["default/active", "default/failed"]
    assert where(queue, "gated") == UNSCHEDULABLE and where(queue, "active") is None
