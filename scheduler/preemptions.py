"""Preemptions whose API calls run in the background (kube-scheduler's async preemption, KEP-4832).

DefaultPreemption decides in the scheduling cycle: the dry run, the choice of a node, and the
preemptor's nomination (the failure handler records it in the nominator at once, so the next cycles
keep the room for it). What takes API round trips (deleting the victims, recording their events,
clearing lower-priority nominations) it hands to ``start``, and the next cycle begins without waiting.

While a preemption runs, the queue holds its preemptor out of activeQ (``SchedulingQueue.hold``): a new
attempt before the victims are gone would find no room and preempt again elsewhere. The evicting
coroutine releases it just before it deletes the last victim, so that this deletion's event is the one
that requeues the preemptor (released later, the event could come first and find it held, leaving it in
unschedulablePods until the leftover flush). When the evicting fails, the preemptor loses its
nomination (the room it was promised may never come) and goes straight to activeQ to try again. A
gang's preemption (``start_group``, from DefaultPreemption's PodGroupPostFilter) holds and releases
every pod of the gang alike.

Concurrency: preemptions are not bounded in number (each is a few API calls, and at most one starts per
scheduling cycle). Their tasks belong to ``run()``, a root task of the scheduler's leader term: losing
the lease cancels them, which is safe (a victim not deleted stays; the preemptor, unbound, is scheduled
again by the next leader).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Protocol

from cluster.api import objects_pb2
from scheduler.background import TaskOwner
from scheduler.framework import BackgroundCalls, PodInfo, Status

log = logging.getLogger(__name__)


class HoldingQueue(Protocol):
    """What the preemptions need of the scheduling queue (``SchedulingQueue`` or ``PluggedQueue``)."""

    def hold(self, key: str) -> None: ...

    def release(self, key: str) -> None: ...

    def activate(self, key: str) -> bool: ...

    def delete_nominated_pod_if_exists(self, pod: objects_pb2.Pod) -> None: ...


class Preemptions:
    """The handle's ``APIDispatcher``: runs preemptions' API calls in the background, holding each
    preemptor in the queue meanwhile."""

    def __init__(self, queue: HoldingQueue) -> None:
        self._queue = queue
        self._tasks = TaskOwner("preemptions")
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def in_flight(self) -> int:
        """Preemptions started and not finished."""
        return self._in_flight

    async def run(self) -> None:
        """Own the preemption tasks until cancelled."""
        await self._tasks.run()

    async def wait_idle(self) -> None:
        """Return once no preemption is in flight."""
        await self._idle.wait()

    def start(self, preemptor: PodInfo, node_name: str, evict: BackgroundCalls) -> None:
        """Hold ``preemptor`` and run ``evict`` in the background."""
        self._start([preemptor], f"on {node_name} for {preemptor.key}", evict)

    def start_group(self, members: Sequence[PodInfo], group: str, evict: BackgroundCalls) -> None:
        """Hold every member of gang ``group`` and run ``evict`` in the background: the release before
        the last victim's deletion releases them all, so that its event requeues the group (whose
        first member to pop takes the others along)."""
        self._start(members, f"for pod group {group}", evict)

    def _start(self, preemptors: Sequence[PodInfo], what: str, evict: BackgroundCalls) -> None:
        if not self._tasks.running:
            raise RuntimeError("the preemptions are not running")
        for preemptor in preemptors:
            self._queue.hold(preemptor.key)
        self._in_flight += 1
        self._idle.clear()
        try:
            self._tasks.start(self._preempt(preemptors, what, evict), name=f"preempt {what}")
        except BaseException:
            self._finished(preemptors)
            raise

    async def _preempt(self, preemptors: Sequence[PodInfo], what: str, evict: BackgroundCalls) -> None:
        try:
            try:
                status = await evict(lambda: self._release(preemptors))
            except Exception as err:  # a bug must not leave the preemptor held forever
                log.exception("preempting %s failed", what)
                status = Status.as_error(err)
            if status is not None:
                log.warning("preempting %s failed: %s; retrying", what, status.message())
                for preemptor in preemptors:
                    self._queue.delete_nominated_pod_if_exists(preemptor.pod)
                    self._queue.release(preemptor.key)
                    self._queue.activate(preemptor.key)
        finally:
            self._finished(preemptors)

    def _release(self, preemptors: Sequence[PodInfo]) -> None:
        for preemptor in preemptors:
            self._queue.release(preemptor.key)

    def _finished(self, preemptors: Sequence[PodInfo]) -> None:
        self._release(preemptors)
        self._in_flight -= 1
        if self._in_flight == 0:
            self._idle.set()
