"""The quiescence driver of `podsched simulate`, against fakes of the scheduler, the disruption
controller, the tracker, the store and the client, on a FakeClock: when it runs cycles, how it moves
virtual time, when it stops, how it settles and how it finishes graceful deletions."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from cluster.api import kinds, objects_pb2
from cluster.simulate.controlplane import VIRTUAL_EPOCH, ControlPlane
from cluster.simulate.driver import INFORMER_KINDS, Driver, quiet_period
from scheduler.clock import FakeClock
from tests.builders import pod

QUIET_S = quiet_period(300.0, 10.0)


def make_pod(name: str, node: str = "", scheduler: str = "default-scheduler") -> objects_pb2.Pod:
    return pod(name, node_name=node, scheduler_name=scheduler)


class FakeTracker:
    def __init__(self, *pods: objects_pb2.Pod) -> None:
        self.pods = {pod.metadata.name: pod for pod in pods}
        self.progress = 0
        self.terminating_pods: dict[str, int] = {}
        self.informer = SimpleNamespace(resource_version="0")

    def place(self, name: str, node: str) -> None:
        self.pods[name].spec.node_name = node
        self.progress += 1

    def terminating(self) -> dict[str, int]:
        return dict(self.terminating_pods)

    def live_pods(self) -> list[objects_pb2.Pod]:
        return list(self.pods.values())


class FakeStore:
    def __init__(self) -> None:
        self.writes_in_flight = 0
        self.last: dict[str, int] = {}

    def last_write(self, kind: kinds.Kind) -> int:
        return self.last.get(kind.plural, 0)


class FakeScheduler:
    """activeQ is a list of names; a cycle places its pod where ``placement`` says (None: it fails)."""

    def __init__(self, tracker: FakeTracker, placement: Callable[[str], str | None]) -> None:
        self.tracker = tracker
        self.placement = placement
        self.active: list[str] = []
        self.queue = SimpleNamespace(is_empty_active=lambda: not self.active,
                                     pending_counts=lambda: {"active": len(self.active)})
        self.loop = SimpleNamespace(busy=False)
        self.binder = SimpleNamespace(in_flight=0)
        self.revisions = dict.fromkeys(INFORMER_KINDS, 0)
        self.tried: list[tuple[str, float]] = []
        self.clock: FakeClock | None = None

    @property
    def working(self) -> bool:
        return self.loop.busy or self.binder.in_flight > 0

    def informer_revisions(self) -> dict[str, int]:
        return dict(self.revisions)

    async def schedule_one(self) -> None:
        name = self.active.pop(0)
        assert self.clock is not None
        self.tried.append((name, self.clock.now()))
        node = self.placement(name)
        if node is not None:
            self.tracker.place(name, node)


class FakeDisruption:
    """The disruption controller as the driver sees it: busy or idle, and its informers' revisions."""

    def __init__(self) -> None:
        self.busy = False
        self.revisions = {"pods": 0, "poddisruptionbudgets": 0}

    def idle(self) -> bool:
        return not self.busy

    def informer_revisions(self) -> dict[str, int]:
        return dict(self.revisions)


class FakeClient:
    def __init__(self, tracker: FakeTracker) -> None:
        self.tracker = tracker
        self.deletes: list[tuple[str, str, int | None, float]] = []
        self.clock: FakeClock | None = None

    async def delete(
        self, kind: Any, name: str, namespace: str = "", *, grace_period_seconds: int | None = None, **_: Any
    ) -> None:
        assert self.clock is not None
        self.deletes.append((namespace, name, grace_period_seconds, self.clock.now()))
        self.tracker.terminating_pods.pop(f"{namespace}/{name}", None)
        self.tracker.pods.pop(name, None)
        self.tracker.progress += 1


def build(
    tracker: FakeTracker,
    placement: Callable[[str], str | None] = lambda name: None,
    disruption: FakeDisruption | None = None,
    controllers: tuple[FakeDisruption, ...] = (),
):
    clock = FakeClock()
    store = FakeStore()
    scheduler = FakeScheduler(tracker, placement)
    scheduler.clock = clock
    client = FakeClient(tracker)
    client.clock = clock
    plane = ControlPlane(clock, store, server=None, client=client)  # type: ignore[arg-type]
    driver = Driver(plane, scheduler, tracker, disruption or FakeDisruption(),  # type: ignore[arg-type]
                    scheduler_names={"default-scheduler"}, quiet_period_s=QUIET_S,
                    controllers=controllers)  # type: ignore[arg-type]
    return driver, clock, store, scheduler, client


async def flush_loop(clock: FakeClock, period: float, action: Callable[[], None] = lambda: None) -> None:
    """Stands for one of the queue's flush loops: runs ``action`` at once and every ``period``."""
    while True:
        action()
        await clock.sleep(period)


async def run_with_loops(driver: Driver, *loops: Any) -> None:
    tasks = [asyncio.create_task(loop) for loop in loops]
    try:
        await asyncio.wait_for(driver.run(), 10)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def test_stops_at_once_when_every_pod_is_placed() -> None:
    tracker = FakeTracker(make_pod("a", node="n1"), make_pod("other", scheduler="someone-else"))
    driver, clock, _, _, _ = build(tracker)
    await run_with_loops(driver, flush_loop(clock, 1.0))
    assert (driver.cycles, clock.now()) == (0, 0.0)


async def test_runs_one_cycle_per_active_pod_without_moving_time() -> None:
    tracker = FakeTracker(make_pod("a"), make_pod("b"))
    driver, clock, _, scheduler, _ = build(tracker, placement=lambda name: "n1")
    scheduler.active = ["a", "b"]
    await run_with_loops(driver, flush_loop(clock, 1.0))
    assert scheduler.tried == [("a", 0.0), ("b", 0.0)]
    assert all(pod.spec.node_name == "n1" for pod in tracker.pods.values())
    assert clock.now() == 0.0


async def test_a_pod_that_never_fits_ends_the_run_after_the_quiet_period() -> None:
    tracker = FakeTracker(make_pod("stuck"))
    driver, clock, _, scheduler, _ = build(tracker)
    scheduler.active = ["stuck"]

    def leftover_flush() -> None:
        # The unschedulable pod comes back every 300 s, as the queue's leftover flush brings it.
        if clock.now() > 0 and clock.now() % 300 == 0:
            scheduler.active.append("stuck")

    await run_with_loops(driver, flush_loop(clock, 1.0), flush_loop(clock, 30.0, leftover_flush))
    # Tried at 0 and once more at 300 (the leftover flush); stopped once a whole quiet period passed.
    assert scheduler.tried == [("stuck", 0.0), ("stuck", 300.0)]
    assert QUIET_S - 1 <= clock.now() <= QUIET_S
    assert tracker.pods["stuck"].spec.node_name == ""


async def test_a_retry_that_succeeds_after_backoff_ends_the_run() -> None:
    tracker = FakeTracker(make_pod("late"))
    driver, clock, _, scheduler, _ = build(tracker, placement=lambda name: "n1" if clock.now() >= 5 else None)
    scheduler.active = ["late"]

    def backoff_flush() -> None:
        if clock.now() in (2.0, 5.0):  # two backoff expiries
            scheduler.active.append("late")

    await run_with_loops(driver, flush_loop(clock, 1.0, backoff_flush))
    assert scheduler.tried == [("late", 0.0), ("late", 2.0), ("late", 5.0)]
    assert tracker.pods["late"].spec.node_name == "n1"
    assert clock.now() == 5.0


async def test_progress_restarts_the_quiet_period() -> None:
    tracker = FakeTracker(make_pod("stuck"), make_pod("later"))
    driver, clock, _, scheduler, _ = build(tracker, placement=lambda name: "n1" if name == "later" else None)
    scheduler.active = ["stuck"]

    def event_at_200() -> None:
        if clock.now() == 200.0:
            scheduler.active.append("later")

    await run_with_loops(driver, flush_loop(clock, 1.0, event_at_200))
    assert tracker.pods["later"].spec.node_name == "n1"
    assert 200 + QUIET_S - 1 <= clock.now() <= 200 + QUIET_S


async def test_due_graceful_deletion_is_finished_on_the_virtual_clock() -> None:
    tracker = FakeTracker(make_pod("victim", node="n1"))
    tracker.terminating_pods["default/victim"] = int(VIRTUAL_EPOCH) + 30
    driver, clock, _, _, client = build(tracker)
    # No timer at all: the deletion deadline alone moves the clock.
    await run_with_loops(driver)
    assert client.deletes == [("default", "victim", 0, 30.0)]
    assert clock.now() == 30.0


async def test_a_far_deletion_is_waited_for_beyond_the_quiet_period() -> None:
    tracker = FakeTracker(make_pod("victim", node="n1"), make_pod("stuck"))
    tracker.terminating_pods["default/victim"] = int(VIRTUAL_EPOCH + QUIET_S + 100)
    driver, clock, _, _, client = build(tracker)
    await run_with_loops(driver, flush_loop(clock, 30.0))
    assert [delete[:3] for delete in client.deletes] == [("default", "victim", 0)]
    assert client.deletes[0][3] == QUIET_S + 100


@pytest.mark.parametrize(
    ("lagging", "catch_up"),
    [
        ("scheduler informer", lambda s, d, t, store: s.revisions.__setitem__("pods", 7)),
        ("scheduler podgroup informer", lambda s, d, t, store: s.revisions.__setitem__("podgroups", 5)),
        ("tracker informer", lambda s, d, t, store: setattr(t.informer, "resource_version", "7")),
        ("binding", lambda s, d, t, store: setattr(s.binder, "in_flight", 0)),
        ("write", lambda s, d, t, store: setattr(store, "writes_in_flight", 0)),
        ("disruption pod informer", lambda s, d, t, store: d.revisions.__setitem__("pods", 7)),
        ("disruption pdb informer",
         lambda s, d, t, store: d.revisions.__setitem__("poddisruptionbudgets", 9)),
        ("disruption sync", lambda s, d, t, store: setattr(d, "busy", False)),
    ],
    ids=["scheduler-informer", "scheduler-podgroup-informer", "tracker-informer", "binding", "write",
         "disruption-pod-informer", "disruption-pdb-informer", "disruption-sync"],
)
async def test_settle_waits_until_everything_is_seen(lagging: str, catch_up: Callable[..., None]) -> None:
    tracker = FakeTracker()
    disruption = FakeDisruption()
    driver, _, store, scheduler, _ = build(tracker, disruption=disruption)
    store.last["pods"] = 7
    store.last["poddisruptionbudgets"] = 9
    store.last["podgroups"] = 5
    scheduler.revisions["pods"] = 7
    scheduler.revisions["poddisruptionbudgets"] = 9
    scheduler.revisions["podgroups"] = 5
    disruption.revisions = {"pods": 7, "poddisruptionbudgets": 9}
    tracker.informer.resource_version = "7"
    if lagging == "scheduler informer":
        scheduler.revisions["pods"] = 6
    elif lagging == "scheduler podgroup informer":
        # The scheduler's own PodGroupInitiallyScheduled write (revision 5) is not back through its
        # informer yet.
        scheduler.revisions["podgroups"] = 4
    elif lagging == "tracker informer":
        tracker.informer.resource_version = "6"
    elif lagging == "binding":
        scheduler.binder.in_flight = 1
    elif lagging == "write":
        store.writes_in_flight = 1
    elif lagging == "disruption pod informer":
        disruption.revisions["pods"] = 6
    elif lagging == "disruption pdb informer":
        # The controller's own status write (revision 9) is not back through its informer yet.
        disruption.revisions["poddisruptionbudgets"] = 8
    else:
        # A budget is marked or being written, before the store has seen the write.
        disruption.busy = True
    assert not driver.settled()
    settling = asyncio.create_task(driver.settle())
    await asyncio.sleep(0.01)
    assert not settling.done()
    catch_up(scheduler, disruption, tracker, store)
    await asyncio.wait_for(settling, 1)
    assert driver.settled()


@pytest.mark.parametrize("lagging", ["claim informer", "template informer", "claim sync"])
async def test_settle_waits_for_the_other_controllers(lagging: str) -> None:
    """The resourceclaim controller is waited for as the disruption controller is: idle, and each of its
    informers at the last write of its kind (by the plural it reports)."""
    tracker = FakeTracker()
    claims = FakeDisruption()
    driver, _, store, scheduler, _ = build(tracker, controllers=(claims,))
    store.last.update({"resourceclaims": 4, "resourceclaimtemplates": 3})
    scheduler.revisions["resourceclaims"] = 4
    claims.revisions = {"pods": 0, "resourceclaims": 4, "resourceclaimtemplates": 3}
    assert driver.settled()
    if lagging == "claim informer":
        # The claim it generated (revision 4) is not back through its informer yet.
        claims.revisions["resourceclaims"] = 3
    elif lagging == "template informer":
        claims.revisions["resourceclaimtemplates"] = 2
    else:
        claims.busy = True
    assert not driver.settled()
    settling = asyncio.create_task(driver.settle())
    await asyncio.sleep(0.01)
    assert not settling.done()
    claims.revisions = {"pods": 0, "resourceclaims": 4, "resourceclaimtemplates": 3}
    claims.busy = False
    await asyncio.wait_for(settling, 1)
    assert driver.settled()


def test_quiet_period_covers_a_leftover_flush_and_a_backoff() -> None:
    # 300 s in unschedulablePods + up to 30 s until the flush notices + up to 10 s backoff + 1 s flush.
    assert quiet_period(300.0, 10.0) == 341.0
    assert quiet_period(60.0, 1.0) == 92.0
