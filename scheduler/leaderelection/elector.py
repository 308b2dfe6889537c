"""Leader election on a Lease, as client-go's leaderelection does it, and then further: a watch, and a
fencing token.

The rules (client-go's):
- Candidates try to acquire the lease every RetryPeriod, with jitter. The lease is free when it has no
  holder, or when this candidate has not seen its record change for the record's leaseDurationSeconds.
- Time is judged only by this process's own monotonic clock, measured from the moment it *observed* a
  change of the record; the renewTime a peer wrote is never compared with the local clock, so clock skew
  between machines does not matter (only a difference in clock *rates* does, which LeaseDuration >
  RenewDeadline absorbs).
- A leader renews every RetryPeriod. If it cannot renew within RenewDeadline it stops leading; a
  standby takes over LeaseDuration after it last saw a renewal.
- A leader that stops on purpose releases the lease (no holder, leaseDurationSeconds 1), so that a
  standby takes over at once. It releases under its term's fence: an API server that enforces
  leadership (--enforce-leader-fencing) takes a change of holder before expiry only from the holder.

Beyond client-go:
- Candidates watch the Lease. A watched change counts as an observation, a released lease wakes them at
  once, and an expiring one wakes them when it expires (plus a small random spread so that standbys do
  not all write at the same instant), instead of up to 2.2 RetryPeriods later.
- The renew deadline counts from the last successful renewal, not from the start of a renewal round:
  a leader always stops at least LeaseDuration - RenewDeadline before any standby may take over.
- A leader that sees the lease in someone else's hands (on a renewal's read or on the watch) stops at
  once rather than retrying until its deadline.
- The leader works under a fencing token, the revision of the write that gave it the lease; the API
  server refuses fenced writes from any other tenure, so a leader that lost its lease without knowing
  (paused, partitioned) cannot write. When the server says so, ``step_down`` ends the term at once.

Concurrency: ``run`` owns every task it starts (the watch, the leader's work, the renewals) and none
outlives it. All of them run on one event loop; state changes happen between awaits.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import socket
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import replace
from datetime import datetime
from typing import Any, NoReturn, TypeVar

from cluster.api import timeutil
from cluster.client import ApiError, Conflict, Fence, NotFound
from scheduler.clock import Clock, SystemClock
from scheduler.leaderelection.metrics import LeaderElectionCollector
from scheduler.leaderelection.resourcelock import LeaderElectionRecord, LeaseSnapshot, Lock
from scheduler.leaderelection.timings import JITTER_FACTOR, LeaderElectionTimings

log = logging.getLogger(__name__)

T = TypeVar("T")

#: A standby attempts at the observed expiry plus a random spread of at most this share of RetryPeriod:
#: enough for the standbys' writes not to collide, small against the failover bound.
EXPIRY_SPREAD_FACTOR = 0.2
#: The leaseDurationSeconds of a released lease (client-go's): it has no holder, so nobody waits on it.
RELEASED_LEASE_DURATION_SECONDS = 1


class LeaseLost(Exception):
    """The leader's term ended without its consent: renewals failed, the lease changed hands, or the API
    server refused a write under its fence."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def default_identity() -> str:
    """kube-scheduler's identity: "<hostname>_<uuid4>", unique per process."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def replica_identity(name: str, pid: int) -> str:
    """A named replica's identity, "<name>_pid<pid>_<8 hex>" (`podsched up` names its replicas
    scheduler-1..N), so that people tell the replicas apart and see a restarted one come back under a new
    pid. Still unique per process: a new process must never pass for a holder that is gone, pid reused
    or not."""
    return f"{name}_pid{pid}_{uuid.uuid4().hex[:8]}"


class LeaderElector:
    """One candidate for the lease ``lock`` names. ``run(lead)`` waits to acquire it, then runs
    ``lead(fence)`` while renewing, and ends only by an exception (see ``run``)."""

    def __init__(
        self,
        lock: Lock,
        timings: LeaderElectionTimings | None = None,
        *,
        release_on_cancel: bool = True,
        on_new_leader: Callable[[str], None] | None = None,
        clock: Clock | None = None,
        wall_clock: Callable[[], datetime] = timeutil.utc_now,
        rng: random.Random | None = None,
    ) -> None:
        if not lock.identity:
            raise ValueError("Lock identity is empty")
        self._lock = lock
        self.timings = timings or LeaderElectionTimings()
        #: Release the lease when ``run`` is cancelled (kube-scheduler's SIGTERM). Only safe when the
        #: leader's work has stopped writing by then, which ``run`` ensures by awaiting it first.
        self.release_on_cancel = release_on_cancel
        #: Told the identity of every new holder observed, the first one included ("" when released).
        self.on_new_leader = on_new_leader
        self._clock: Clock = clock or SystemClock()
        self._wall_clock = wall_clock
        self._rng = rng or random.Random()
        self._desc = lock.describe()

        # What this candidate last observed of the record, and when (its own monotonic clock).
        self._observed: LeaderElectionRecord | None = None
        self._observed_raw = b""
        self._observed_revision = 0
        self._observed_time = 0.0
        #: Drawn at each observation: how long after the observed expiry this candidate attempts.
        self._expiry_spread = 0.0
        #: Set at each observation: wakes a candidate waiting for its next attempt.
        self._changed = asyncio.Event()
        #: Counts observations, to tell one made after an attempt began.
        self._observations = 0
        self._reported_leader: str | None = None
        #: The fencing token of the tenure this candidate's last write belongs to.
        self._written_token = 0

        # The current term (fence is None when not leading).
        self._fence: Fence | None = None
        self._last_renewal = 0.0
        self._lost = asyncio.Event()
        self._lost_why = ""
        self._running = False
        self._slowpath_total = 0
        #: Whether the last ``run`` released the lease on its way out.
        self.released = False

    # ------------------------------------------------------------------------------------------ state

    @property
    def identity(self) -> str:
        return self._lock.identity

    @property
    def name(self) -> str:
        """The lease's name (the ``name`` label of the metrics)."""
        return self._lock.name

    @property
    def is_leader(self) -> bool:
        """Whether this candidate leads now (from acquiring the lease until its term ends)."""
        return self._fence is not None

    @property
    def fence(self) -> Fence | None:
        """The fence of the current term; None unless leading."""
        return self._fence

    @property
    def observed_holder(self) -> str:
        """The holder of the lease as last observed ("" when none, or nothing observed yet)."""
        return self._observed.holder_identity if self._observed is not None else ""

    @property
    def observed_transitions(self) -> int:
        """The lease's leaseTransitions as last observed."""
        return self._observed.leader_transitions if self._observed is not None else 0

    @property
    def slowpath_total(self) -> int:
        """How many renewals had to read the lease first (the fast path's optimistic update failed)."""
        return self._slowpath_total

    def healthz(self) -> str | None:
        """The leader-election health check (kube-scheduler's /healthz adaptor): a problem when this
        candidate leads but has not renewed within the renew deadline; None otherwise."""
        if self._fence is None:
            return None
        since = self._clock.now() - self._last_renewal
        if since <= self.timings.renew_deadline_s:
            return None
        return (f"leader election: lease {self._desc} not renewed for {since:.1f}s "
                f"(renew deadline {self.timings.renew_deadline_s:g}s)")

    def collector(self) -> LeaderElectionCollector:
        """A Prometheus collector of this elector's metrics, read at scrape time."""
        return LeaderElectionCollector(self)

    def step_down(self, why: str) -> None:
        """End the current term at once (``run`` cancels the leader's work and raises LeaseLost(why)):
        the API server refused a write under this leader's fence. Nothing happens when not leading."""
        if self._fence is None:
            log.info("step down from lease %s requested while not leading (%s); ignored", self._desc, why)
            return
        self._lose(why)

    # -------------------------------------------------------------------------------------------- run

    async def run(self, lead: Callable[[Fence], Awaitable[None]]) -> NoReturn:
        """Acquire the lease, then run ``lead(fence)`` as a child task while renewing the lease.

        Never returns. Raises:
        - LeaseLost when the term ends without our consent (``lead`` cancelled and awaited first);
        - what ``lead`` raised, after the lease is released (best effort); RuntimeError if it returned;
        - CancelledError when cancelled: ``lead`` is cancelled and awaited (renewals go on meanwhile),
          then the lease is released (if ``release_on_cancel``) within the renew deadline.
        """
        if self._running:
            raise RuntimeError(f"the elector of lease {self._desc} is already running")
        self._running = True
        self.released = False
        watch = asyncio.create_task(self._watch(), name=f"watch lease {self._desc}")
        try:
            await self._acquire()
            await self._lead(lead, self._begin_term())
        finally:
            self._fence = None
            watch.cancel()
            await asyncio.wait((watch,))
            self._running = False

    async def _lead(self, lead: Callable[[Fence], Awaitable[None]], fence: Fence) -> NoReturn:
        async def leading() -> None:
            await lead(fence)

        work = asyncio.create_task(leading(), name=f"leading on lease {self._desc}")
        renewals = asyncio.create_task(self._renew(), name=f"renew lease {self._desc}")
        lost = asyncio.create_task(self._lost.wait(), name=f"lease {self._desc} lost")
        tasks = (work, renewals, lost)
        try:
            try:
                await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                # Stopping on purpose: the work winds down while the lease is still renewed, so that
                # nobody else leads before it has stopped writing; then hand the lease over.
                lost.cancel()
                await _cancel_and_wait(work, f"the work on lease {self._desc}")
                await _cancel_and_wait(renewals, f"the renewals of lease {self._desc}")
                if self.release_on_cancel and self._fence is not None:
                    term, self._fence = self._fence, None
                    self.released = await self._release(term)
                raise
            if self._lost.is_set():
                # The term ended under us (the work may have failed of it: a write refused under its
                # fence). Stop the work before saying so.
                await _cancel_and_wait(work, f"the work on lease {self._desc}")
                raise LeaseLost(self._lost_why)
            if work.done():
                await _cancel_and_wait(renewals, f"the renewals of lease {self._desc}")
                self._fence = None
                self.released = await self._release(fence)
                if not work.cancelled() and work.exception() is not None:
                    raise work.exception()  # type: ignore[misc]
                raise RuntimeError(f"the work on lease {self._desc} ended by itself; lease released")
            # Only a failing renewal loop is left (it ends by itself only on a loss, handled above).
            await _cancel_and_wait(work, f"the work on lease {self._desc}")
            raise renewals.exception() or RuntimeError(f"the renewals of lease {self._desc} ended")
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks)

    def _begin_term(self) -> Fence:
        fence = Fence(self._lock.namespace, self._lock.name, self.identity, self._written_token)
        self._fence = fence
        self._last_renewal = self._clock.now()
        self._lost.clear()
        self._lost_why = ""
        log.info("successfully acquired lease %s (fencing token %d)", self._desc, fence.token)
        return fence

    def _lose(self, why: str) -> None:
        if self._fence is None:
            return
        log.error("leader election lost: %s", why)
        self._fence = None
        self._lost_why = why
        self._lost.set()

    # ---------------------------------------------------------------------------------------- acquire

    async def _acquire(self) -> None:
        log.info("attempting to acquire leader lease %s...", self._desc)
        while True:
            started, observations = self._clock.now(), self._observations
            if await self._attempt(self.timings.renew_deadline_s):
                return
            await self._wait_to_retry(started, observations)

    async def _wait_to_retry(self, attempt_started: float, observations: int) -> None:
        """Wait for the next attempt: the jittered retry period, unless the observed record expires (or
        is released) sooner. An expiry already past when the failed attempt began, of a record observed
        before it began, does not count: that attempt saw it and failed, so trying again at once would
        only spin."""
        retry_at = self._clock.now() + self.jittered_retry_period()
        while True:
            self._changed.clear()
            expiry = self._expiry()
            stale = expiry is not None and expiry <= attempt_started and self._observations == observations
            target = retry_at if expiry is None or stale else min(retry_at, expiry)
            remaining = target - self._clock.now()
            if remaining <= 0:
                return
            try:
                await self._within(remaining, self._changed.wait())
            except TimeoutError:
                return

    def jittered_retry_period(self) -> float:
        """client-go's wait.Jitter(RetryPeriod, JitterFactor): in [RetryPeriod, 2.2 * RetryPeriod)."""
        return self.timings.retry_period_s * (1 + self._rng.random() * JITTER_FACTOR)

    def _expiry(self) -> float | None:
        """When (local monotonic time) the observed record lets this candidate try to take over."""
        if self._observed is None:
            return None
        if not self._observed.holder_identity:
            return self._observed_time
        return self._observed_time + self._observed.lease_duration_seconds + self._expiry_spread

    # ------------------------------------------------------------------------------------------ renew

    async def _renew(self) -> None:
        """Renew every RetryPeriod while leading; end the term when no renewal succeeds within the renew
        deadline of the last one."""
        retry = self.timings.retry_period_s
        while self._fence is not None:
            await self._clock.sleep(retry)
            deadline = self._last_renewal + self.timings.renew_deadline_s
            while self._fence is not None:
                remaining = deadline - self._clock.now()
                if remaining <= 0:
                    self._lose(f"failed to renew lease {self._desc}: no renewal succeeded within the "
                               f"renew deadline ({self.timings.renew_deadline_s:g}s)")
                    return
                if await self._attempt(remaining):
                    if self._fence is not None:
                        self._last_renewal = self._clock.now()
                    break
                await self._clock.sleep(min(retry, max(0.0, deadline - self._clock.now())))

    # ---------------------------------------------------------------------------- try acquire or renew

    async def _attempt(self, timeout_s: float) -> bool:
        """One tryAcquireOrRenew, given up (as failed) after ``timeout_s``."""
        try:
            return await self._within(timeout_s, self._try_acquire_or_renew())
        except TimeoutError:
            log.warning("acquiring or renewing lease %s took longer than %.2fs; gave up",
                        self._desc, timeout_s)
            return False

    async def _try_acquire_or_renew(self) -> bool:
        """client-go's tryAcquireOrRenew: True when this candidate holds the lease after the call."""
        now = self._wall_clock()
        desired = LeaderElectionRecord(
            holder_identity=self.identity,
            # Rounded up, never down: a lease of 2.5 s must not look like 2 s to standbys.
            lease_duration_seconds=math.ceil(self.timings.lease_duration_s),
            acquire_time=now,
            renew_time=now,
        )

        # 1. The leader's fast path: update from the record it last wrote, without reading first. (Only
        # in a term: a record naming this identity seen before any write of ours is read first.)
        if self._fence is not None and self._holds() and self._lease_valid() and self._observed is not None:
            renewal = replace(desired, acquire_time=self._observed.acquire_time,
                              leader_transitions=self._observed.leader_transitions)
            try:
                self._wrote(await self._lock.update(renewal))
                return True
            except ApiError as err:
                log.info("optimistic renewal of lease %s failed (%s: %s); reading it",
                         self._desc, type(err).__name__, err.message)

        # 2. Read the record, or create it.
        try:
            current = await self._lock.get()
        except NotFound:
            if self._fence is not None:
                self._lose(f"lease {self._desc} was deleted")
                return False
            try:
                self._wrote(await self._lock.create(desired))
            except ApiError as err:
                log.info("creating lease %s failed (%s: %s)", self._desc, type(err).__name__, err.message)
                return False
            return True
        except ApiError as err:
            log.warning("reading lease %s failed (%s: %s)", self._desc, type(err).__name__, err.message)
            return False

        # 3. Note a change, and back off from a lease someone else holds and has renewed lately.
        self._observe(current)
        record = current.record
        if record.holder_identity and record.holder_identity != self.identity and self._lease_valid():
            log.debug("lease %s is held by %s and has not yet expired", self._desc, record.holder_identity)
            return False

        # 4. Renew (keeping acquireTime and transitions) or take over (one more transition).
        if self._holds():
            desired = replace(desired, acquire_time=record.acquire_time,
                              leader_transitions=record.leader_transitions)
            self._slowpath_total += 1
        else:
            desired = replace(desired, leader_transitions=record.leader_transitions + 1)
        try:
            self._wrote(await self._lock.update(desired))
        except ApiError as err:
            log.info("updating lease %s failed (%s: %s)", self._desc, type(err).__name__, err.message)
            return False
        return True

    def _holds(self) -> bool:
        """client-go's IsLeader: the last observed record names this candidate."""
        return self._observed is not None and self._observed.holder_identity == self.identity

    def _lease_valid(self) -> bool:
        """Whether the observed record's lease runs on, counted from when it was observed."""
        if self._observed is None:
            return False
        return self._clock.now() < self._observed_time + self._observed.lease_duration_seconds

    async def _release(self, fence: Fence) -> bool:
        """Hand the lease over (no holder, client-go's release), within the renew deadline, under the
        ``fence`` of the term that ends (an API server that enforces leadership lets a holder release only
        so)."""
        if not self._holds() or self._observed is None:
            return False
        try:
            released = await self._within(self.timings.renew_deadline_s, self._write_release(fence))
        except (ApiError, TimeoutError) as err:
            log.warning("failed to release lease %s: %s", self._desc, err)
            return False
        if released:
            log.info("released lease %s", self._desc)
        else:
            log.info("lease %s is no longer ours to release (held by %r)", self._desc, self.observed_holder)
        return released

    async def _write_release(self, fence: Fence) -> bool:
        now = self._wall_clock()
        released = LeaderElectionRecord(
            lease_duration_seconds=RELEASED_LEASE_DURATION_SECONDS,
            acquire_time=now,
            renew_time=now,
            leader_transitions=self.observed_transitions,
        )
        try:
            self._wrote(await self._lock.update(released, fence=fence))
            return True
        except Conflict:
            # A renewal cancelled on its way out may have landed unanswered, leaving the lock's version
            # stale: read the lease and release it if it is still ours.
            current = await self._lock.get()
            self._observe(current)
            if current.record.holder_identity != self.identity:
                return False
            self._wrote(await self._lock.update(replace(
                released, leader_transitions=current.record.leader_transitions), fence=fence))
            return True

    # ------------------------------------------------------------------------------------ observation

    async def _watch(self) -> None:
        try:
            await self._lock.watch(self._observe, self._observe_deleted)
        except Exception:
            log.exception("watching lease %s failed; candidates poll every retry period instead", self._desc)
        else:
            log.warning("the watch of lease %s ended; candidates poll every retry period instead", self._desc)

    def _observe(self, snapshot: LeaseSnapshot) -> None:
        """Take in a version of the record read or watched: a changed one restarts the expiry clock."""
        if snapshot.revision < self._observed_revision:
            return  # older than what we know (a late watch event, or a read from a lagging server)
        self._observed_revision = snapshot.revision
        if snapshot.raw != self._observed_raw:
            self._set_observed(snapshot.record, snapshot.raw)
        self._check_term()

    def _observe_deleted(self, revision: int) -> None:
        if revision < self._observed_revision:
            return
        self._observed_revision = revision
        self._set_observed(LeaderElectionRecord(), b"")
        if self._fence is not None:
            self._lose(f"lease {self._desc} was deleted")

    def _wrote(self, snapshot: LeaseSnapshot) -> None:
        """Take in a version of the record this candidate wrote."""
        self._observed_revision = max(self._observed_revision, snapshot.revision)
        self._set_observed(snapshot.record, snapshot.raw)
        self._written_token = snapshot.token
        self._check_term()

    def _set_observed(self, record: LeaderElectionRecord, raw: bytes) -> None:
        self._observed = record
        self._observed_raw = raw
        self._observed_time = self._clock.now()
        self._observations += 1
        self._expiry_spread = self._rng.uniform(0, EXPIRY_SPREAD_FACTOR * self.timings.retry_period_s)
        self._changed.set()
        if record.holder_identity != self._reported_leader:
            self._reported_leader = record.holder_identity
            if self.on_new_leader is not None:
                try:
                    self.on_new_leader(record.holder_identity)
                except Exception:
                    log.exception("on_new_leader failed for lease %s", self._desc)

    def _check_term(self) -> None:
        """A leader that observes the lease in other hands has lost it, whatever its renewals say."""
        holder = self.observed_holder
        if self._fence is not None and holder != self.identity:
            self._lose(f'lease {self._desc} is held by "{holder}" now' if holder
                       else f"lease {self._desc} was released by someone else")

    # -------------------------------------------------------------------------------------- timeouts

    async def _within(self, seconds: float, coro: Coroutine[Any, Any, T]) -> T:
        """``await coro``, cancelled after ``seconds`` on the elector's clock (TimeoutError). Built on
        the injected clock rather than asyncio.timeout, so that a fake clock drives it in tests."""
        work = asyncio.ensure_future(coro)
        timer = asyncio.ensure_future(self._clock.sleep(seconds))
        try:
            await asyncio.wait((work, timer), return_when=asyncio.FIRST_COMPLETED)
            timed_out = not work.done()
        finally:
            work.cancel()
            timer.cancel()
            await asyncio.wait((work, timer))
        if timed_out:
            raise TimeoutError(f"no answer within {seconds:.2f}s")
        return work.result()


async def _cancel_and_wait(task: asyncio.Task[Any], what: str) -> None:
    """Cancel ``task`` and wait for it to end; a failure other than the cancellation is logged."""
    task.cancel()
    await asyncio.wait((task,))
    if not task.cancelled() and task.exception() is not None:
        log.warning("%s ended with an error", what, exc_info=task.exception())
