"""Replaying a trace in lock step on the virtual clock.

The replay driver is the simulation's (cluster/simulate/driver.py: settle after every step, so that
every write is answered and seen by every informer before anything else happens), with time in it:

1. At the current instant, in this order: the runs that end now are ended (the pod is deleted, grace
   period 0, as a finished pod's kubelet would have it removed), graceful deletions that are due are
   finished (preemption's victims), and the pods that arrive now are created, in trace order.
2. Then scheduling cycles run while activeQ holds a pod. Scheduling takes no virtual time: the replay
   measures where and when pods run, not how fast the scheduler is.
3. Then the clock jumps to the next instant at which anything can happen: an arrival, the end of a run
   (its bind time plus its duration), a graceful deletion's deadline, a backoff that ends, a pod's stay in
   unschedulablePods reaching the unschedulable timeout, or another timer of the scheduler (a gang's
   Permit timeout). kube-scheduler looks for ended backoffs every second and for stale unschedulable pods
   every 30 s; the replay looks at the instant each falls due, which is the same retry up to that
   polling granularity, and lets the clock skip the empty seconds between events of a long trace.
4. The replay ends when no pod is left to arrive, no run is left to end, nothing is terminating, and
   every pod still pending has been tried against the cluster as it now is (activeQ and podBackoffQ are
   empty and no timer is set): nothing can change any more.

Samples are taken every ``sample_every`` virtual seconds; between two steps the cluster does not change,
so every sample instant in a gap gets the state the earlier step left.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace

from cluster.api import errors, kinds
from cluster.controllers import DisruptionController
from cluster.simulate.controlplane import ControlPlane
from cluster.simulate.driver import TIMER_SPINS, Driver, SettlingController
from cluster.simulate.outcome import PodTracker
from cluster.simulate.replay.ledger import PodLedger
from cluster.simulate.replay.metrics import DEFAULT_SAMPLES, Sample, Workload, sample
from cluster.simulate.trace import TracePod
from scheduler.framework.types import pod_key
from scheduler.scheduler import Scheduler

log = logging.getLogger(__name__)

#: The most samples a run keeps (see ``_sample_until``).
MAX_SAMPLES = 2 * DEFAULT_SAMPLES
#: How often (wall seconds) the driver reports its progress.
PROGRESS_PERIOD_S = 0.5


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a replay stands, for the terminal."""

    virtual_seconds: float
    arrived: int
    placed: int
    total: int
    wall_seconds: float
    #: The replay is over (the last report).
    finished: bool = False


@dataclass(slots=True)
class WallTime:
    """Where the replay's wall time went: scheduling cycles, and the API server, store and informers
    (writes and the settling after each step, bindings included)."""

    scheduling_s: float = 0.0
    api_s: float = 0.0
    cycles: int = 0


@dataclass(slots=True)
class _Departures:
    """Runs that end, by (instant, order of binding)."""

    heap: list[tuple[float, int, str]] = field(default_factory=list)
    order: int = 0

    def add(self, when: float, key: str) -> None:
        heapq.heappush(self.heap, (when, self.order, key))
        self.order += 1

    def next_at(self) -> float | None:
        return self.heap[0][0] if self.heap else None

    def pop_due(self, now: float) -> list[str]:
        due = []
        while self.heap and self.heap[0][0] <= now:
            due.append(heapq.heappop(self.heap)[2])
        return due


class ReplayDriver(Driver):
    def __init__(
        self,
        plane: ControlPlane,
        scheduler: Scheduler,
        tracker: PodTracker,
        disruption: DisruptionController,
        ledger: PodLedger,
        pods: Sequence[TracePod],
        workload: Workload,
        *,
        sample_every: float,
        progress: Callable[[Progress], None] | None = None,
        controllers: Sequence[SettlingController] = (),
    ) -> None:
        super().__init__(plane, scheduler, tracker, disruption, scheduler_names=scheduler.profile_names,
                         quiet_period_s=0.0, controllers=controllers)
        self._ledger = ledger
        self._pods = pods
        self._next_arrival = 0
        self._durations = {pod_key(entry.pod): entry.duration_s for entry in pods}
        self._departures = _Departures()
        self._workload = workload
        self._sample_every = sample_every
        self._next_sample = 0.0
        self.samples: list[Sample] = []
        self.wall = WallTime()
        self._progress = progress
        self._started = time.perf_counter()
        self._reported = 0.0

    def bound(self, key: str, when: float) -> None:
        """The ledger's news of a first bind: the pod's run ends ``duration`` later."""
        duration = self._durations.get(key)
        if duration is not None:
            self._departures.add(when + duration, key)

    # ----------------------------------------------------------------------------------------- run

    async def run(self) -> None:
        await self._timed()
        queue = self._scheduler.queue
        while True:
            now = self._clock.now()
            if await self._step(now):
                continue
            if not queue.is_empty_active():
                await self._cycle()
                self._report()
                continue
            # kube-scheduler's periodic flushes and cache cleanup, at the instant they have work.
            moved = queue.flush_backoff_completed() + queue.flush_unschedulable_left_over()
            self._scheduler.cache.cleanup_expired_assumed_pods()
            if moved:
                continue
            next_at = self._next_instant()
            if next_at is None:
                break
            self._sample_until(next_at)
            self._clock.advance_to(next_at)
            await self._timed(wake_timers=True)
        self._sample_until(self._clock.now(), inclusive=True)
        self._report(force=True)

    async def _cycle(self) -> None:
        """One scheduling cycle, timed as the scheduler's, and the settling after it as the API's."""
        started = time.perf_counter()
        await self._scheduler.schedule_one()
        self.wall.scheduling_s += time.perf_counter() - started
        self.wall.cycles += 1
        self.cycles += 1
        await self._timed()

    async def _step(self, now: float) -> bool:
        """End the runs, finish the deletions and create the arrivals due at ``now``; whether any."""
        ending = self._departures.pop_due(now)
        if ending:
            await self._timed(self._end_runs(ending))
            return True
        due = self._due_deletions()
        if due:
            await self._timed(self._finish_deletions(due))
            return True
        arriving = []
        while self._next_arrival < len(self._pods) and self._pods[self._next_arrival].arrival_s <= now:
            arriving.append(self._pods[self._next_arrival])
            self._next_arrival += 1
        if arriving:
            await self._timed(self._create(arriving))
            return True
        return False

    def _next_instant(self) -> float | None:
        """The next instant at which anything can happen; None once nothing can."""
        queue = self._scheduler.queue
        arrival = self._pods[self._next_arrival].arrival_s if self._next_arrival < len(self._pods) else None
        candidates = [arrival, self._departures.next_at(), self._next_deletion(), self._clock.next_wakeup(),
                      queue.next_backoff_expiry()]
        if any(when is not None for when in candidates):
            # Pods still pending are retried at the unschedulable timeout only while something else can
            # still happen; once nothing can, a retry would find the same cluster and fail the same way.
            candidates.append(queue.next_unschedulable_timeout())
        instants = [when for when in candidates if when is not None]
        return min(instants) if instants else None

    # ------------------------------------------------------------------------------------- writes

    async def _create(self, arriving: list[TracePod]) -> None:
        """The arrivals' claims, then their pods, each in Batch calls (a pod's claim exists before it)."""
        for entry in arriving:
            self._ledger.arrived(pod_key(entry.pod))
        claims = [entry.claim for entry in arriving if entry.claim is not None]
        for objs in (claims, [entry.pod for entry in arriving]):
            for result in await self._client.create_many(objs) if objs else ():
                if isinstance(result, errors.ApiError):
                    raise result

    async def _end_runs(self, keys: list[str]) -> None:
        for key in keys:
            pod = self._tracker.informer.get(key)
            if pod is None or pod.metadata.HasField("deletion_timestamp"):
                continue  # preempted meanwhile: its eviction ends it
            self._ledger.departing(key)
            namespace, _, name = key.partition("/")
            try:
                await self._client.delete(kinds.POD, name, namespace, grace_period_seconds=0)
            except errors.NotFound:
                pass

    # ------------------------------------------------------------------------------------ helpers

    async def _timed(self, work: Awaitable[None] | None = None, *, wake_timers: bool = False) -> None:
        """Do ``work`` (API calls), then settle; the wall time counts as the API server's and store's."""
        started = time.perf_counter()
        if work is not None:
            await work
        if wake_timers:
            # Let the woken timers run (they are ready at once) before asking whether all is quiet.
            for _ in range(TIMER_SPINS):
                await asyncio.sleep(0)
        await self.settle()
        self.wall.api_s += time.perf_counter() - started

    def _sample_until(self, until: float, *, inclusive: bool = False) -> None:
        """Record the samples due before ``until`` (and at it, with ``inclusive``): the cluster as it is."""
        if self._next_sample > until or (self._next_sample == until and not inclusive):
            return
        ledger = self._ledger
        state = sample(self._next_sample, ledger.nodes, self._workload, running=ledger.running,
                       pending=ledger.pending, unschedulable=ledger.unschedulable)
        while self._next_sample < until or (inclusive and self._next_sample == until):
            self.samples.append(replace(state, t=self._next_sample))
            if len(self.samples) == MAX_SAMPLES:
                # A run that outlasts its arrivals by far: keep every other sample, twice as far apart.
                del self.samples[1::2]
                self._sample_every *= 2
            self._next_sample = len(self.samples) * self._sample_every

    def _report(self, *, force: bool = False) -> None:
        if self._progress is None:
            return
        elapsed = time.perf_counter() - self._started
        if not force and elapsed - self._reported < PROGRESS_PERIOD_S:
            return
        self._reported = elapsed
        self._progress(Progress(self._clock.now(), self._next_arrival, self._ledger.placed, len(self._pods),
                                elapsed, finished=force))
