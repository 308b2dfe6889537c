"""Running a simulation to quiescence, in lock step, on the virtual clock.

The driver, not the scheduler's own loop, decides when a scheduling cycle runs, so that the outcome
depends only on the scenario and the seed, never on how fast gRPC or SQLite answer:

1. **Settle**: wait until every write has been answered and seen by every informer (the scheduler's,
   the controllers' and the pod tracker's: each one's resourceVersion has reached the revision of the
   last write to its kind, ``WriteTrackingStore``), no scheduling cycle or binding is running, and every
   controller is idle: the disruption controller has written every PDB status it owes, the resourceclaim
   controller every claim it owes a pod's template (and by the first rule the scheduler has seen them:
   its preemption reads the one, its DynamicResources plugin waits for the other), the storage
   controllers every binding, claim and volume they owe (the scheduler's VolumeBinding waits for them).
   Only real time passes meanwhile; the virtual clock stands still.
2. If activeQ holds a pod, run one scheduling cycle (``Scheduler.schedule_one``) and settle again: its
   binding, the watch events it causes and the queue moves they trigger all land before the next cycle.
3. Else, if a graceful deletion is due (its deadline has passed on the virtual clock), finish it as a
   kubelet would (a delete with grace period 0) and settle.
4. Else, if every pod of the scheduler's profiles is bound and nothing is terminating, stop: nothing
   can change any more.
5. Else jump the virtual clock to the next timer (a queue flush, the cache's cleanup, a backoff
   expiring through the 1 s flush, a deletion deadline) and go on, unless that instant lies more than
   ``quiet_period_s`` past the last progress (a pod bound, nominated, created or deleted). The quiet
   period is the unschedulable timeout + the 30 s leftover flush period + the longest backoff + the 1 s
   backoff flush period: by then every pod still pending has been retried at least once against the
   unchanged cluster (the leftover flush requeues even pods no event would), and failed, so retrying
   again would fail again. Stopping there is the "one full leftover flush with no binding" rule.

The API server deletes pods whose grace period ended on its own, but it waits in real time, so the
driver finishes due deletions itself when it moves the virtual clock (the server's late attempt then
finds the pod gone, which it ignores).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Sequence
from typing import Any, Protocol

from cluster.api import errors, kinds
from cluster.client import Client
from cluster.controllers import DisruptionController
from cluster.simulate.controlplane import ControlPlane
from cluster.simulate.outcome import PodTracker
from scheduler.framework.storage import STORAGE_INFORMER_KINDS
from scheduler.queue.scheduling_queue import BACKOFF_FLUSH_PERIOD_S, LEFTOVER_FLUSH_PERIOD_S
from scheduler.scheduler import Scheduler

log = logging.getLogger(__name__)

#: The kinds the scheduler's informers follow, by the names ``Scheduler.informer_revisions`` uses
#: (``DisruptionController.informer_revisions`` uses the same names for its pods and PDBs).
INFORMER_KINDS: dict[str, kinds.Kind[Any]] = {
    "pods": kinds.POD,
    "nodes": kinds.NODE,
    "priorityclasses": kinds.PRIORITY_CLASS,
    "poddisruptionbudgets": kinds.POD_DISRUPTION_BUDGET,
    "podgroups": kinds.POD_GROUP,
    "namespaces": kinds.NAMESPACE,
    "services": kinds.SERVICE,
    "replicasets": kinds.REPLICA_SET,
    "statefulsets": kinds.STATEFUL_SET,
    "replicationcontrollers": kinds.REPLICATION_CONTROLLER,
    "resourceclaims": kinds.RESOURCE_CLAIM,
    "resourceslices": kinds.RESOURCE_SLICE,
    "deviceclasses": kinds.DEVICE_CLASS,
    **STORAGE_INFORMER_KINDS,
}
#: Passes of the event loop a settle makes before it sleeps in real time. The control plane is all in this
#: process and on this loop (an in-memory store, an in-process channel), so a settle is waiting for
#: callbacks, not for I/O: sleeping would only idle. Only an extender's HTTP call is I/O.
_SPINS_BEFORE_SLEEPING = 1000
#: Passes of the event loop that let timers woken by a jump of the clock run.
TIMER_SPINS = 8
#: The real sleep between checks once the loop is waiting on I/O (gRPC, the store's writer thread).
_SETTLE_POLL_S = 0.0005


class SettlingController(Protocol):
    """A controller as the driver waits for it."""

    def idle(self) -> bool:
        """Nothing to sync, owed or running."""

    def informer_revisions(self) -> dict[str, int]:
        """The resourceVersion each of its informers has applied, by kind plural."""


def quiet_period(config_unschedulable_s: float, max_backoff_s: float) -> float:
    """How long (virtual seconds) without progress proves that nothing pending can be placed."""
    return config_unschedulable_s + LEFTOVER_FLUSH_PERIOD_S + max_backoff_s + BACKOFF_FLUSH_PERIOD_S


class Driver:
    def __init__(
        self,
        plane: ControlPlane,
        scheduler: Scheduler,
        tracker: PodTracker,
        disruption: DisruptionController,
        *,
        scheduler_names: Collection[str],
        quiet_period_s: float,
        controllers: Sequence[SettlingController] = (),
    ) -> None:
        """``controllers``: the ones besides ``disruption`` that the settle waits for."""
        self._plane = plane
        self._clock = plane.clock
        self._store = plane.store
        self._client: Client = plane.client
        self._scheduler = scheduler
        self._tracker = tracker
        self._controllers: tuple[SettlingController, ...] = (disruption, *controllers)
        self._names = frozenset(scheduler_names)
        self._quiet_period_s = quiet_period_s
        self.cycles = 0

    # ------------------------------------------------------------------------------------ settling

    def settled(self) -> bool:
        """Every write answered and seen by every informer; no cycle, no binding and no controller's
        write (a PDB status, a claim) running or owed."""
        if self._store.writes_in_flight or self._scheduler.working:
            return False
        if not all(controller.idle() for controller in self._controllers):
            return False
        revisions = self._scheduler.informer_revisions()
        for name, kind in INFORMER_KINDS.items():
            if revisions[name] < self._store.last_write(kind):
                return False
        for controller in self._controllers:
            for name, revision in controller.informer_revisions().items():
                if revision < self._store.last_write(kinds.kind_by_name(name)):
                    return False
        tracked = int(self._tracker.informer.resource_version or 0)
        return tracked >= self._store.last_write(kinds.POD)

    async def settle(self) -> None:
        spins = 0
        while not self.settled():
            spins += 1
            await asyncio.sleep(0 if spins <= _SPINS_BEFORE_SLEEPING else _SETTLE_POLL_S)

    def describe(self) -> str:
        counts = self._scheduler.queue.pending_counts()
        return (f"at virtual time {self._clock.now():g}s after {self.cycles} scheduling cycles; queue: "
                f"{counts}; terminating pods: {len(self._tracker.terminating())}")

    # ----------------------------------------------------------------------------------------- run

    async def run(self) -> None:
        await self.settle()
        progress = self._tracker.progress
        last_progress_at = self._clock.now()
        while True:
            if not self._scheduler.queue.is_empty_active():
                await self._scheduler.schedule_one()
                self.cycles += 1
                await self.settle()
                continue
            if self._tracker.progress != progress:
                progress, last_progress_at = self._tracker.progress, self._clock.now()
            due = self._due_deletions()
            if due:
                await self._finish_deletions(due)
                await self.settle()
                continue
            if self._all_placed():
                log.info("quiescent: every pod is placed (%s)", self.describe())
                return
            timers = (self._clock.next_wakeup(), self._next_deletion())
            wakeups = [when for when in timers if when is not None]
            if not wakeups:
                log.info("quiescent: no timer left (%s)", self.describe())
                return
            next_at = min(wakeups)
            # A pending deletion is progress to come, however far off: only a cluster with none can be
            # declared stuck.
            if next_at - last_progress_at > self._quiet_period_s and not self._tracker.terminating():
                log.info("quiescent: no progress for %gs of virtual time (%s)", self._quiet_period_s,
                         self.describe())
                return
            self._clock.advance_to(next_at)
            # Let the woken timers run (they are ready at once) before asking whether all is quiet.
            for _ in range(TIMER_SPINS):
                await asyncio.sleep(0)
            await self.settle()

    def _all_placed(self) -> bool:
        if self._tracker.terminating():
            return False
        return all(
            pod.spec.node_name
            for pod in self._tracker.live_pods()
            if pod.spec.scheduler_name in self._names
        )

    # ---------------------------------------------------------------------------- graceful deletion

    def _next_deletion(self) -> float | None:
        deadlines = self._tracker.terminating().values()
        return self._plane.to_virtual(min(deadlines)) if deadlines else None

    def _due_deletions(self) -> list[str]:
        now = self._plane.wall_now()
        return sorted(key for key, deadline in self._tracker.terminating().items() if deadline <= now)

    async def _finish_deletions(self, keys: list[str]) -> None:
        for key in keys:
            namespace, _, name = key.partition("/")
            try:
                await self._client.delete(kinds.POD, name, namespace, grace_period_seconds=0)
            except errors.NotFound:
                pass  # the API server's own finisher was first
            log.info("deleted %s: its grace period ended", key)
