"""LeaderElector on a fake clock and an in-memory lock with the API server's rules (compare-and-swap on
the revision, tenure tokens kept across renewals, a watch), with failures injected.

Time only moves when a test moves it (``advance``), so every bound is checked exactly.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from prometheus_client import CollectorRegistry

from cluster.api import objects_pb2
from cluster.client import AlreadyExists, Conflict, Fence, Fenced, NotFound, Unavailable
from scheduler.clock import FakeClock
from scheduler.leaderelection import (
    FENCING_TOKEN_ANNOTATION,
    JITTER_FACTOR,
    LeaderElectionRecord,
    LeaderElectionTimings,
    LeaderElector,
    LeaseLock,
    LeaseLost,
    LeaseSnapshot,
    default_identity,
    replica_identity,
    validate_timings,
)
from scheduler.leaderelection.elector import EXPIRY_SPREAD_FACTOR
from scheduler.leaderelection.resourcelock import record_to_spec, snapshot_of, spec_to_record
from scheduler.metrics import SchedulerMetrics

LEASE, RENEW, RETRY = 15.0, 10.0, 2.0
TIMINGS = LeaderElectionTimings(LEASE, RENEW, RETRY)
EPOCH = datetime(2030, 1, 1, tzinfo=UTC)


# ------------------------------------------------------------------------------------------- fakes


class FakeLeaseStore:
    """One Lease as the API server keeps it: every write a new revision, updates compare-and-swap on the
    revision, the tenure token kept while the holder stays the same. Watchers hear every change at once
    unless the watch is paused."""

    def __init__(self) -> None:
        self.current: LeaseSnapshot | None = None
        self.revision = 0
        self.watchers: list[tuple[Callable[[LeaseSnapshot], None], Callable[[int], None]]] = []
        self.history: list[LeaseSnapshot] = []

    @property
    def record(self) -> LeaderElectionRecord:
        assert self.current is not None
        return self.current.record

    def create(self, record: LeaderElectionRecord) -> LeaseSnapshot:
        if self.current is not None:
            raise AlreadyExists('leases.coordination.k8s.io "kube-scheduler" already exists')
        self.revision += 1
        return self._store(record, self.revision)

    def update(self, record: LeaderElectionRecord, expected_revision: int) -> LeaseSnapshot:
        if self.current is None:
            raise NotFound('leases.coordination.k8s.io "kube-scheduler" not found')
        if expected_revision != self.current.revision:
            raise Conflict("the object has been modified")
        self.revision += 1
        same_tenure = record.holder_identity and record.holder_identity == self.record.holder_identity
        return self._store(record, self.current.token if same_tenure else self.revision)

    def delete(self) -> None:
        self.current = None
        self.revision += 1
        for _, on_delete in list(self.watchers):
            on_delete(self.revision)

    def _store(self, record: LeaderElectionRecord, token: int) -> LeaseSnapshot:
        spec = record_to_spec(record)
        self.current = LeaseSnapshot(record, spec.SerializeToString(deterministic=True), self.revision, token)
        self.history.append(self.current)
        for on_change, _ in list(self.watchers):
            on_change(self.current)
        return self.current


class FakeLock:
    """A `Lock` on a FakeLeaseStore, with its own cached revision (as LeaseLock's cached Lease).

    ``fail[op]`` makes every call of ``op`` raise; ops in ``hang`` never answer (until cancelled);
    ``watching=False`` gives a lock whose watch never reports anything."""

    def __init__(self, store: FakeLeaseStore, identity: str, *, watching: bool = True) -> None:
        self.store = store
        self._identity = identity
        self.watching = watching
        self.cached_revision: int | None = None
        self.fail: dict[str, Exception] = {}
        self.hang: set[str] = set()
        self.calls: list[str] = []
        #: The fence of every update, in order (None: unfenced).
        self.fences: list[Fence | None] = []

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def namespace(self) -> str:
        return "kube-system"

    @property
    def name(self) -> str:
        return "kube-scheduler"

    def describe(self) -> str:
        return "kube-system/kube-scheduler"

    async def _call(self, op: str) -> None:
        self.calls.append(op)
        if op in self.hang:
            await asyncio.Event().wait()
        if op in self.fail:
            raise self.fail[op]

    async def get(self) -> LeaseSnapshot:
        await self._call("get")
        if self.store.current is None:
            raise NotFound('leases.coordination.k8s.io "kube-scheduler" not found')
        self.cached_revision = self.store.current.revision
        return self.store.current

    async def create(self, record: LeaderElectionRecord) -> LeaseSnapshot:
        await self._call("create")
        written = self.store.create(record)
        self.cached_revision = written.revision
        return written

    async def update(self, record: LeaderElectionRecord, *, fence: Fence | None = None) -> LeaseSnapshot:
        await self._call("update")
        self.fences.append(fence)
        if self.cached_revision is None:
            raise RuntimeError("lease not initialized")
        written = self.store.update(record, self.cached_revision)
        self.cached_revision = written.revision
        return written

    async def watch(
        self, on_change: Callable[[LeaseSnapshot], None], on_delete: Callable[[int], None]
    ) -> None:
        if self.watching:
            if self.store.current is not None:
                on_change(self.store.current)  # as an informer's first list
            self.store.watchers.append((on_change, on_delete))
        try:
            await asyncio.Event().wait()
        finally:
            if (on_change, on_delete) in self.store.watchers:
                self.store.watchers.remove((on_change, on_delete))


class Leader:
    """A ``lead`` callable that records its terms and how they ended."""

    def __init__(self, store: FakeLeaseStore) -> None:
        self.store = store
        self.fences: list[Fence] = []
        self.started = asyncio.Event()
        self.cancelled = False
        #: The holder stored when the work was cancelled (the lease must still be ours then).
        self.holder_when_cancelled: str | None = None

    async def __call__(self, fence: Fence) -> None:
        self.fences.append(fence)
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            self.holder_when_cancelled = self.store.record.holder_identity if self.store.current else None
            raise


async def settle() -> None:
    for _ in range(50):
        await asyncio.sleep(0)


async def advance(clock: FakeClock, seconds: float) -> None:
    """Move time forward by ``seconds``, stopping at every sleeper's wake-up so that each runs in turn."""
    end = clock.now() + seconds
    await settle()
    while (wakeup := clock.next_wakeup()) is not None and wakeup <= end:
        clock.advance_to(wakeup)
        await settle()
    clock.advance_to(max(end, clock.now()))  # a test may have moved it on meanwhile
    await settle()


class Rig:
    def __init__(self) -> None:
        self.clock = FakeClock(start=1000.0)
        self.store = FakeLeaseStore()

    def wall(self) -> datetime:
        return EPOCH + timedelta(seconds=self.clock.now())

    def elector(
        self,
        identity: str,
        *,
        timings: LeaderElectionTimings = TIMINGS,
        watching: bool = True,
        rng: random.Random | None = None,
        **options: object,
    ) -> LeaderElector:
        lock = FakeLock(self.store, identity, watching=watching)
        return LeaderElector(
            lock, timings, clock=self.clock, wall_clock=self.wall, rng=rng or random.Random(7),
            **options,  # type: ignore[arg-type]
        )


@pytest.fixture
def rig() -> Rig:
    return Rig()


@contextlib.asynccontextmanager
async def running(elector: LeaderElector, lead: Leader) -> AsyncIterator[asyncio.Task[None]]:
    task: asyncio.Task[None] = asyncio.create_task(elector.run(lead))
    try:
        yield task
    finally:
        task.cancel()
        await asyncio.wait((task,))


def lock_of(elector: LeaderElector) -> FakeLock:
    lock = elector._lock
    assert isinstance(lock, FakeLock)
    return lock


# ---------------------------------------------------------------------------------------- acquiring


async def test_creates_the_lease_when_absent_and_leads_with_its_token(rig: Rig) -> None:
    elector, leader = rig.elector("a"), Leader(rig.store)
    assert not elector.is_leader and elector.fence is None
    async with running(elector, leader):
        await settle()
        assert leader.fences == [Fence("kube-system", "kube-scheduler", "a", 1)]
        assert elector.is_leader and elector.fence == leader.fences[0]
        record = rig.store.record
        assert record.holder_identity == "a"
        assert (record.lease_duration_seconds, record.leader_transitions) == (15, 0)
        assert record.acquire_time == record.renew_time == rig.wall()
        assert lock_of(elector).calls == ["get", "create"]


async def test_does_not_take_a_lease_held_by_a_renewing_leader(rig: Rig) -> None:
    a, b = rig.elector("a"), rig.elector("b")
    async with running(a, Leader(rig.store)), running(b, Leader(rig.store)):
        await advance(rig.clock, 10 * LEASE)
        assert a.is_leader and not b.is_leader
        assert rig.store.record.holder_identity == "a"
        assert b.observed_holder == "a"


@pytest.mark.parametrize(
    "renew_time",
    [EPOCH + timedelta(days=365 * 50), datetime(1971, 1, 1, tzinfo=UTC), None],
    ids=["renewTime-far-future", "renewTime-far-past", "renewTime-unset"],
)
async def test_expiry_is_judged_by_local_observation_only(rig: Rig, renew_time: datetime | None) -> None:
    # A dead holder's record: what its renewTime says must not matter, only when we saw it change.
    rig.store.create(LeaderElectionRecord("dead", 15, renew_time, renew_time, 4))
    b, leader = rig.elector("b", watching=False), Leader(rig.store)
    observed_at = rig.clock.now()
    async with running(b, leader):
        await advance(rig.clock, LEASE - 0.01)
        assert not b.is_leader
        await advance(rig.clock, 2.2 * RETRY)  # the next poll after the expiry
        assert b.is_leader
        record = rig.store.record
        assert record.holder_identity == "b" and record.leader_transitions == 5
        assert observed_at + LEASE <= rig.clock.now()


async def test_a_changing_record_restarts_the_expiry_clock(rig: Rig) -> None:
    rig.store.create(LeaderElectionRecord("other", 15, EPOCH, EPOCH, 0))
    b = rig.elector("b", watching=False)
    async with running(b, Leader(rig.store)):
        await advance(rig.clock, LEASE - 1)
        # The holder renews (its wall clock stands still: only the change counts).
        rig.store.update(replace(rig.store.record, leader_transitions=0, renew_time=EPOCH - timedelta(1)),
                         rig.store.revision)
        await advance(rig.clock, 2.2 * RETRY)  # b polls and sees the change
        changed_seen_by = rig.clock.now()
        await advance(rig.clock, LEASE - 2.2 * RETRY - 0.01)
        assert not b.is_leader
        await advance(rig.clock, changed_seen_by + LEASE + 2.2 * RETRY - rig.clock.now())
        assert b.is_leader


async def test_a_released_lease_is_taken_without_waiting_for_expiry(rig: Rig) -> None:
    rig.store.create(LeaderElectionRecord("", 1, EPOCH, EPOCH, 3))
    b = rig.elector("b", watching=False)
    async with running(b, Leader(rig.store)):
        await settle()
        assert b.is_leader and rig.store.record.leader_transitions == 4


# ------------------------------------------------------------------------------------------ renewing


async def test_renewals_keep_acquire_time_and_transitions_and_use_the_fast_path(rig: Rig) -> None:
    a, leader = rig.elector("a"), Leader(rig.store)
    async with running(a, leader):
        await settle()
        acquired = rig.store.record.acquire_time
        await advance(rig.clock, 5 * RETRY)
        record = rig.store.record
        assert record.holder_identity == "a"
        assert record.acquire_time == acquired
        assert record.renew_time == rig.wall() and record.renew_time > acquired
        assert record.leader_transitions == 0
        # Acquired by get + create, then five renewals straight from the cached lease.
        assert lock_of(a).calls == ["get", "create"] + ["update"] * 5
        assert a.fence is not None and a.fence.token == 1
        assert {snapshot.token for snapshot in rig.store.history} == {1}
        assert a.slowpath_total == 0
        assert a.healthz() is None


async def test_a_failed_fast_path_falls_back_to_reading_the_lease(rig: Rig) -> None:
    a = rig.elector("a")
    async with running(a, Leader(rig.store)):
        await settle()
        lock_of(a).cached_revision = 0  # the next optimistic update loses its compare-and-swap
        await advance(rig.clock, RETRY)
        assert lock_of(a).calls[-3:] == ["update", "get", "update"]
        assert a.is_leader and a.slowpath_total == 1
        assert rig.store.record.acquire_time == EPOCH + timedelta(seconds=1000)


async def test_no_renewal_within_the_deadline_loses_the_lease_and_cancels_the_work(rig: Rig) -> None:
    a, leader = rig.elector("a"), Leader(rig.store)
    async with running(a, leader) as task:
        await settle()
        acquired_at = rig.clock.now()
        lock_of(a).fail = {"update": Unavailable("no store"), "get": Unavailable("no store")}
        await advance(rig.clock, RENEW - 0.01)
        assert a.is_leader and not task.done()
        await advance(rig.clock, 0.02)
        assert task.done()
        with pytest.raises(LeaseLost, match="no renewal succeeded within the renew deadline"):
            task.result()
        assert rig.clock.now() - acquired_at <= RENEW + 0.02
        assert leader.cancelled and not a.is_leader and a.fence is None


async def test_a_hanging_renewal_does_not_outlive_the_deadline(rig: Rig) -> None:
    a, leader = rig.elector("a"), Leader(rig.store)
    async with running(a, leader) as task:
        await settle()
        acquired_at = rig.clock.now()
        lock_of(a).hang = {"update", "get"}
        await advance(rig.clock, RENEW)
        assert task.done() and isinstance(task.exception(), LeaseLost)
        assert rig.clock.now() == acquired_at + RENEW
        assert leader.cancelled


async def test_a_leader_that_sees_another_holder_stops_at_once(rig: Rig) -> None:
    a, leader = rig.elector("a"), Leader(rig.store)
    async with running(a, leader) as task:
        await settle()
        rig.store.update(LeaderElectionRecord("intruder", 15, EPOCH, EPOCH, 1), rig.store.revision)
        await settle()
        assert task.done()
        with pytest.raises(LeaseLost, match='held by "intruder"'):
            task.result()
        assert leader.cancelled


async def test_a_deleted_lease_ends_the_term(rig: Rig) -> None:
    a, leader = rig.elector("a", watching=False), Leader(rig.store)
    async with running(a, leader) as task:
        await settle()
        rig.store.delete()
        await advance(rig.clock, RETRY)
        assert task.done()
        with pytest.raises(LeaseLost, match="was deleted"):
            task.result()
        assert rig.store.current is None  # not silently re-created under the old token


# ------------------------------------------------------------------------------------- ending a term


async def test_cancel_stops_the_work_first_then_releases_the_lease(rig: Rig) -> None:
    a, leader = rig.elector("a"), Leader(rig.store)
    async with running(a, leader) as task:
        await advance(rig.clock, 3 * RETRY)
        transitions = rig.store.record.leader_transitions
        task.cancel()
        await asyncio.wait((task,))
        assert task.cancelled()
        assert leader.cancelled and leader.holder_when_cancelled == "a"
        record = rig.store.record
        assert record.holder_identity == ""
        assert record.lease_duration_seconds == 1
        assert record.acquire_time == record.renew_time == rig.wall()
        assert record.leader_transitions == transitions
        assert a.released and not a.is_leader
        # Released under the term's fence (a server enforcing leadership takes a release only so);
        # acquiring and renewing are not fenced.
        (term,) = leader.fences
        assert lock_of(a).fences[-1] == term
        assert set(lock_of(a).fences[:-1]) == {None}
        writes = len(rig.store.history)
        await advance(rig.clock, 5 * RETRY)
        assert len(rig.store.history) == writes  # no renewal after the release


async def test_release_after_a_renewal_landed_unanswered_still_releases(rig: Rig) -> None:
    a, leader = rig.elector("a"), Leader(rig.store)
    async with running(a, leader) as task:
        await advance(rig.clock, RETRY)
        # A renewal reached the store but its answer was lost: the lock's cached version is stale.
        rig.store.update(replace(rig.store.record, renew_time=rig.wall()), rig.store.revision)
        task.cancel()
        await asyncio.wait((task,))
        assert a.released and rig.store.record.holder_identity == ""
        assert lock_of(a).calls[-3:] == ["update", "get", "update"]
        assert lock_of(a).fences[-2:] == [leader.fences[0]] * 2


async def test_release_leaves_a_lease_that_changed_hands_alone(rig: Rig) -> None:
    a, leader = rig.elector("a", watching=False), Leader(rig.store)
    async with running(a, leader) as task:
        await settle()
        taken = rig.store.update(LeaderElectionRecord("b", 15, EPOCH, EPOCH, 1), rig.store.revision)
        task.cancel()  # before a's next renewal could notice
        await asyncio.wait((task,))
        assert not a.released
        assert rig.store.current == taken


async def test_cancel_without_release_on_cancel_leaves_the_lease_to_expire(rig: Rig) -> None:
    a = rig.elector("a", release_on_cancel=False)
    async with running(a, Leader(rig.store)) as task:
        await settle()
        task.cancel()
        await asyncio.wait((task,))
        assert rig.store.record.holder_identity == "a" and not a.released


async def test_step_down_ends_the_term_at_once_without_release(rig: Rig) -> None:
    a, leader = rig.elector("a"), Leader(rig.store)
    a.step_down("not leading yet")  # ignored: nothing to step down from
    async with running(a, leader) as task:
        await settle()
        assert a.is_leader
        a.step_down('the API server refused a bind: lease kube-system/kube-scheduler is held by "b"')
        assert not a.is_leader
        await settle()
        assert task.done()
        with pytest.raises(LeaseLost, match="refused a bind"):
            task.result()
        assert leader.cancelled
        assert rig.store.record.holder_identity == "a"  # fenced out: the lease is not ours to release


async def test_work_refused_under_its_fence_ends_with_lease_lost(rig: Rig) -> None:
    # As a scheduler wires it: the client tells the elector of a Fenced answer, then raises it.
    a = rig.elector("a")

    async def fenced(fence: Fence) -> None:
        await rig.clock.sleep(1)
        a.step_down("bind refused: lease kube-system/kube-scheduler is held by \"b\"")
        raise Fenced("lease kube-system/kube-scheduler is held by \"b\"")

    task = asyncio.create_task(a.run(fenced))
    await advance(rig.clock, 1)
    assert task.done()
    with pytest.raises(LeaseLost, match="bind refused"):
        task.result()
    assert rig.store.record.holder_identity == "a"  # not released: it is not ours any more


async def test_work_that_raises_releases_the_lease_and_the_error_propagates(rig: Rig) -> None:
    async def failing(fence: Fence) -> None:
        await rig.clock.sleep(1)
        raise ValueError("scheduler broke")

    a = rig.elector("a")
    task = asyncio.create_task(a.run(failing))
    await advance(rig.clock, 1)
    assert task.done()
    with pytest.raises(ValueError, match="scheduler broke"):
        task.result()
    assert rig.store.record.holder_identity == "" and a.released
    writes = len(rig.store.history)
    await advance(rig.clock, 5 * RETRY)
    assert len(rig.store.history) == writes


async def test_work_that_returns_is_an_error_and_releases_the_lease(rig: Rig) -> None:
    async def returning(fence: Fence) -> None:
        return None

    a = rig.elector("a")
    with pytest.raises(RuntimeError, match="ended by itself"):
        await a.run(returning)
    assert rig.store.record.holder_identity == ""


async def test_run_twice_at_once_is_refused(rig: Rig) -> None:
    a = rig.elector("a")
    async with running(a, Leader(rig.store)):
        await settle()
        with pytest.raises(RuntimeError, match="already running"):
            await a.run(Leader(rig.store))


# ------------------------------------------------------------------------------------------ handover


async def test_transitions_count_changes_of_holder_and_tokens_increase(rig: Rig) -> None:
    a, b, c = rig.elector("a"), rig.elector("b"), rig.elector("c", release_on_cancel=False)
    leaders = {name: Leader(rig.store) for name in "abc"}
    async with running(a, leaders["a"]) as task_a:
        await settle()
        async with running(b, leaders["b"]), running(c, leaders["c"]):
            await advance(rig.clock, RETRY)
            task_a.cancel()  # graceful: released; b or c takes over at once
            await settle()
            first = b if b.is_leader else c
            second = c if first is b else b
            assert first.is_leader and not second.is_leader
            assert rig.store.record.leader_transitions == 1
            first_task_fence = first.fence
            assert first_task_fence is not None
            # Kill the new leader without release: the other takes over after the lease expires.
            lock_of(first).hang = {"update", "get"}
            await advance(rig.clock, LEASE + RETRY)
            assert second.is_leader
            assert rig.store.record.leader_transitions == 2
            assert second.fence is not None
            tokens = [leaders["a"].fences[0].token, first_task_fence.token, second.fence.token]
            assert tokens == sorted(set(tokens))


async def test_the_watch_hands_a_released_lease_over_at_once(rig: Rig) -> None:
    a, b = rig.elector("a"), rig.elector("b")
    async with running(a, Leader(rig.store)) as task_a, running(b, Leader(rig.store)):
        await advance(rig.clock, 3.3)
        released_at = rig.clock.now()
        task_a.cancel()
        await settle()
        assert b.is_leader and rig.clock.now() == released_at


async def test_without_the_watch_a_release_is_noticed_at_the_next_poll(rig: Rig) -> None:
    a, b = rig.elector("a"), rig.elector("b", watching=False)
    async with running(a, Leader(rig.store)) as task_a, running(b, Leader(rig.store)):
        await advance(rig.clock, 0.1)
        task_a.cancel()
        await settle()
        assert not b.is_leader
        await advance(rig.clock, (1 + JITTER_FACTOR) * RETRY)
        assert b.is_leader


@pytest.mark.parametrize("seed", range(5))
async def test_the_watch_wakes_a_standby_when_the_lease_expires(rig: Rig, seed: int) -> None:
    # Polling alone would take over up to 2.2 retry periods after the expiry; the watch does it within
    # the spread, whatever the random draws.
    a = rig.elector("a", release_on_cancel=False)
    b = rig.elector("b", rng=random.Random(seed))
    acquired: list[float] = []
    async with running(a, Leader(rig.store)) as task_a, running(b, Leader(rig.store)):
        await advance(rig.clock, 2 * RETRY)
        task_a.cancel()  # a dies: no more renewals, no release
        await settle()
        last_renewal_seen = rig.clock.now()
        while not b.is_leader and (wakeup := rig.clock.next_wakeup()) is not None:
            rig.clock.advance_to(wakeup)
            await settle()
        acquired.append(rig.clock.now())
    spread = EXPIRY_SPREAD_FACTOR * RETRY
    assert last_renewal_seen + LEASE <= acquired[0] <= last_renewal_seen + LEASE + spread


async def test_on_new_leader_hears_each_holder(rig: Rig) -> None:
    seen: list[str] = []
    a = rig.elector("a")
    b = rig.elector("b", on_new_leader=seen.append)
    async with running(a, Leader(rig.store)) as task_a, running(b, Leader(rig.store)):
        await settle()
        task_a.cancel()
        await settle()
        assert seen == ["a", "", "b"]
    assert seen == ["a", "", "b", ""]  # b released it in turn


# -------------------------------------------------------------------------------------- jitter, timings


def test_jittered_retry_period_stays_within_client_go_bounds(rig: Rig) -> None:
    class Edge(random.Random):
        def __init__(self, value: float) -> None:
            super().__init__()
            self.value = value

        def random(self) -> float:
            return self.value

    assert rig.elector("a", rng=Edge(0.0)).jittered_retry_period() == RETRY
    assert rig.elector("a", rng=Edge(0.999999)).jittered_retry_period() == pytest.approx(
        (1 + JITTER_FACTOR) * RETRY, rel=1e-5)
    periods = [rig.elector("a", rng=random.Random(seed)).jittered_retry_period() for seed in range(200)]
    assert all(RETRY <= period < (1 + JITTER_FACTOR) * RETRY for period in periods)
    assert max(periods) - min(periods) > RETRY  # jitter, not a constant


async def test_polls_of_a_held_lease_come_every_jittered_retry_period(rig: Rig) -> None:
    rig.store.create(LeaderElectionRecord("other", 3600, EPOCH, EPOCH, 0))
    b = rig.elector("b", watching=False, rng=random.Random(1))
    times: list[float] = []
    lock = lock_of(b)
    original_get = lock.get

    async def timed_get() -> LeaseSnapshot:
        times.append(rig.clock.now())
        return await original_get()

    lock.get = timed_get  # type: ignore[method-assign]
    async with running(b, Leader(rig.store)):
        await advance(rig.clock, 100)
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert len(gaps) >= 20
    assert all(RETRY <= gap < (1 + JITTER_FACTOR) * RETRY for gap in gaps)


@pytest.mark.parametrize(
    ("lease", "renew", "retry", "message"),
    [
        (10, 10, 2,
         "leaseDuration must be greater than renewDeadline: got leaseDuration 10s, renewDeadline 10s"),
        (5, 10, 2, "leaseDuration must be greater than renewDeadline"),
        (15, 2.4, 2, "renewDeadline must be greater than retryPeriod*JitterFactor (JitterFactor 1.2): "
                     "got renewDeadline 2.4s, retryPeriod 2s"),
        (15, 10, 0, "retryPeriod must be greater than zero: got retryPeriod 0s"),
        (15, 10, -1, "retryPeriod must be greater than zero"),
        (-1, -3, -5, "leaseDuration must be greater than zero: got leaseDuration -1s"),
        (15, -3, 1, "renewDeadline must be greater than zero"),
        (float("inf"), 10, 2, "leaseDuration must be a finite number of seconds: got leaseDuration inf"),
        (15, float("nan"), 2, "renewDeadline must be a finite number of seconds"),
    ],
    ids=["lease=renew", "lease<renew", "renew<=1.2retry", "retry=0", "retry<0", "lease<0", "renew<0",
         "lease-inf", "renew-nan"],
)
def test_timings_client_go_rejects_are_rejected(
    lease: float, renew: float, retry: float, message: str
) -> None:
    assert any(problem.startswith(message) for problem in validate_timings(lease, renew, retry))
    with pytest.raises(ValueError) as raised:
        LeaderElectionTimings(lease, renew, retry)
    assert message in str(raised.value)


@pytest.mark.parametrize(("lease", "renew", "retry"), [(15, 10, 2), (2, 1.5, 0.5), (0.5, 0.4, 0.3)])
def test_timings_client_go_accepts_are_accepted(lease: float, renew: float, retry: float) -> None:
    assert validate_timings(lease, renew, retry) == []
    assert LeaderElectionTimings(lease, renew, retry).renew_deadline_s == renew


def test_defaults_are_kube_schedulers() -> None:
    timings = LeaderElectionTimings()
    assert (timings.lease_duration_s, timings.renew_deadline_s, timings.retry_period_s) == (15, 10, 2)


def test_an_empty_identity_is_refused(rig: Rig) -> None:
    with pytest.raises(ValueError, match="Lock identity is empty"):
        LeaderElector(FakeLock(rig.store, ""), TIMINGS)
    with pytest.raises(ValueError, match="non-empty name"):
        LeaseLock(None, "kube-system", "", "a")  # type: ignore[arg-type]


def test_default_identity_is_hostname_and_a_uuid() -> None:
    import socket

    first, second = default_identity(), default_identity()
    host, _, unique = first.rpartition("_")
    assert host == socket.gethostname() and len(unique) == 36 and first != second


def test_a_named_replicas_identity_carries_its_name_and_pid() -> None:
    first, second = replica_identity("scheduler-1", 4242), replica_identity("scheduler-1", 4242)
    assert re.fullmatch(r"scheduler-1_pid4242_[0-9a-f]{8}", first), first
    # Unique per process even were a pid used again: the suffix is random.
    assert first != second


async def test_a_fractional_lease_duration_is_rounded_up_in_the_record(rig: Rig) -> None:
    a = rig.elector("a", timings=LeaderElectionTimings(2.5, 2, 1))
    async with running(a, Leader(rig.store)):
        await settle()
        assert rig.store.record.lease_duration_seconds == 3


# ---------------------------------------------------------------------------------- health, metrics


async def test_healthz_fails_when_the_leader_has_not_renewed_within_the_deadline(rig: Rig) -> None:
    verdicts: list[str | None] = []
    a = rig.elector("a")

    async def stalls(fence: Fence) -> None:
        await rig.clock.sleep(RETRY + 0.5)  # one renewal happens meanwhile
        verdicts.append(a.healthz())
        # The process stalls (a long GC, SIGSTOP): time passes with nothing else running.
        rig.clock.advance(RENEW + 1)
        verdicts.append(a.healthz())
        await asyncio.Event().wait()

    assert a.healthz() is None  # a standby is healthy
    async with running(a, stalls) as task:  # type: ignore[arg-type]
        await advance(rig.clock, RETRY + 0.5)
        await settle()
        assert task.done() and isinstance(task.exception(), LeaseLost)
    assert verdicts[0] is None
    assert verdicts[1] == ("leader election: lease kube-system/kube-scheduler not renewed for 11.5s "
                           "(renew deadline 10s)")
    assert a.healthz() is None  # no longer leading


async def test_metrics_report_status_slow_path_and_transitions(rig: Rig) -> None:
    rig.store.create(LeaderElectionRecord("", 1, EPOCH, EPOCH, 6))
    metrics = SchedulerMetrics()
    a = rig.elector("a")
    metrics.register(a.collector())
    registry = CollectorRegistry()
    registry.register(a.collector())
    labels = {"name": "kube-scheduler"}

    def value(metric: str) -> float | None:
        return registry.get_sample_value(metric, labels)

    assert value("leader_election_master_status") == 0
    assert value("leader_election_slowpath_total") == 0
    async with running(a, Leader(rig.store)) as task:
        await settle()
        assert value("leader_election_master_status") == 1
        assert value("podsched_leader_election_lease_transitions") == 7
        lock_of(a).cached_revision = 0
        await advance(rig.clock, RETRY)
        assert value("leader_election_slowpath_total") == 1
        assert b'leader_election_master_status{name="kube-scheduler"} 1.0' in metrics.exposition()
        task.cancel()
        await asyncio.wait((task,))
    assert value("leader_election_master_status") == 0


# --------------------------------------------------------------------------------- the Lease adapter


def test_records_round_trip_through_a_lease_spec_in_utc() -> None:
    record = LeaderElectionRecord("a", 15, EPOCH + timedelta(microseconds=123456),
                                  EPOCH + timedelta(seconds=9, microseconds=1), 3)
    assert spec_to_record(record_to_spec(record)) == record
    assert spec_to_record(objects_pb2.LeaseSpec()) == LeaderElectionRecord()
    spec = record_to_spec(record)
    assert spec.acquire_time.ToDatetime() == datetime(2030, 1, 1, 0, 0, 0, 123456)


def test_a_snapshot_takes_its_token_from_the_annotation_when_the_server_wrote_one() -> None:
    lease = objects_pb2.Lease(metadata=objects_pb2.ObjectMeta(resource_version="42"),
                              spec=record_to_spec(LeaderElectionRecord("a", 15)))
    fresh = snapshot_of(lease)
    assert (fresh.revision, fresh.token, fresh.record.holder_identity) == (42, 42, "a")
    lease.metadata.annotations[FENCING_TOKEN_ANNOTATION] = "17"
    renewed = snapshot_of(lease)
    assert (renewed.revision, renewed.token) == (42, 17)
    assert renewed.raw == fresh.raw  # the record is what is compared, not the metadata


async def test_lease_lock_update_before_any_read_is_refused() -> None:
    lock = LeaseLock(None, "kube-system", "kube-scheduler", "a")  # type: ignore[arg-type]
    assert lock.describe() == "kube-system/kube-scheduler"
    with pytest.raises(RuntimeError, match="call get or create first"):
        await lock.update(LeaderElectionRecord("a", 15))


def test_a_replica_name_that_cannot_start_an_identity_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from cluster.cli.main import build_parser

    named = build_parser().parse_args(["scheduler", "--replica-name", "scheduler-2"])
    assert named.replica_name == "scheduler-2"
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["scheduler", "--replica-name", "bad name"])
    assert exited.value.code == 2
    assert "argument --replica-name: invalid replica name 'bad name'" in capsys.readouterr().err
