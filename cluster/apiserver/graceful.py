"""Graceful deletion of pods: deciding it (``plan_pod_deletion``) and finishing it (``DeletionFinisher``).

Deciding follows Kubernetes' pod strategy and rest.BeforeDelete. The grace period is the request's,
else the pod's terminationGracePeriodSeconds (30 by default); a pod that never got a node, or whose
containers already finished (Succeeded/Failed), has nothing to stop and goes at once, as does a grace of
0; a negative grace counts as 1. Otherwise the pod is marked: deletionTimestamp = now + grace,
deletionGracePeriodSeconds = grace. A pod already marked can only have its grace shortened (the
deadline moves earlier by the difference); a delete with a longer or no grace leaves it as it is.

Finishing is the kubelet's job in Kubernetes: it stops the containers, then deletes the pod for good.
podsched has no kubelets, so every API server runs a ``DeletionFinisher`` that deletes marked pods when
their deadline passes. It learns about marked pods from the watch cache, which is a list + watch of the
store (not from its own Delete calls), so it also finishes deletions another API server on the same etcd
marked, and ones pending before a restart; it shares the cache's one store watch and its decoded pods
rather than having the store send, and the server decode, every pod event a second time. The final
delete is a compare-and-swap on the revision it saw, so a pod changed meanwhile is re-read, and two
servers never delete a pod that was recreated under the name.
"""

from __future__ import annotations

import asyncio
import enum
import heapq
import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import objects_pb2, timeutil
from cluster.api.kinds import POD
from cluster.api.quota import FINISHED_PHASES
from cluster.apiserver import quota
from cluster.apiserver.defaults import DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS
from cluster.apiserver.storage import Storage
from store.base import KeyValue, StoreUnavailable

if TYPE_CHECKING:
    from cluster.apiserver.watchcache import Cacher

log = logging.getLogger(__name__)

#: After the store fails, how long the finisher waits before it tries a deletion again.
RETRY_DELAY_S = 1.0


class Action(enum.Enum):
    #: Delete the pod now.
    DELETE = "delete"
    #: Store the pod with the plan's deletion timestamp and grace period.
    MARK = "mark"
    #: The pod is already being deleted at least as soon as asked: leave it.
    KEEP = "keep"


@dataclass(frozen=True, slots=True)
class DeletionPlan:
    action: Action
    #: For MARK: when the pod is to disappear, and the grace period that led there.
    deletion_timestamp: Timestamp | None = None
    grace_period_seconds: int | None = None


def plan_pod_deletion(pod: objects_pb2.Pod, requested_grace: int | None, now_s: float) -> DeletionPlan:
    """What a Delete of ``pod`` with ``requested_grace`` (None: not given) does at wall time ``now_s``."""
    meta = pod.metadata
    if meta.HasField("deletion_timestamp"):
        current = meta.deletion_grace_period_seconds if meta.HasField("deletion_grace_period_seconds") else 0
        if current == 0:
            return DeletionPlan(Action.DELETE)
        if requested_grace is None or requested_grace >= current:
            return DeletionPlan(Action.KEEP)
        period = max(requested_grace, 0)
        if period == 0:
            return DeletionPlan(Action.DELETE)
        marked = meta.deletion_timestamp.seconds - current + period
        return DeletionPlan(Action.MARK, timeutil.from_seconds(marked), period)

    if requested_grace is not None:
        period = requested_grace
    elif pod.spec.HasField("termination_grace_period_seconds"):
        period = pod.spec.termination_grace_period_seconds
    else:
        period = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS
    if not pod.spec.node_name or pod.status.phase in FINISHED_PHASES:
        period = 0
    if period < 0:
        period = 1
    if period == 0:
        return DeletionPlan(Action.DELETE)
    # Timestamps hold whole seconds: round up, so a pod never goes before its grace period is over.
    return DeletionPlan(Action.MARK, timeutil.from_seconds(math.ceil(now_s + period)), period)


def apply_plan(pod: objects_pb2.Pod, plan: DeletionPlan) -> objects_pb2.Pod:
    """A copy of ``pod`` marked for deletion as a MARK plan says."""
    assert plan.deletion_timestamp is not None and plan.grace_period_seconds is not None
    marked = objects_pb2.Pod()
    marked.CopyFrom(pod)
    marked.metadata.deletion_timestamp.CopyFrom(plan.deletion_timestamp)
    marked.metadata.deletion_grace_period_seconds = plan.grace_period_seconds
    return marked


class DeletionFinisher:
    """Deletes pods whose deletionTimestamp has passed; runs forever (cancel it to stop).

    State: ``_pending`` maps each terminating pod's key to (deadline, revision seen) and ``_deadlines``
    is a heap of the same entries ordered by deadline; a heap entry that no longer equals the map's
    entry is stale and skipped. ``_changed`` wakes the timer loop when a sooner deadline arrives. The
    watch cache keeps both up to date (``reset`` and ``changed``, as its listener of pods), whether or
    not ``run`` has started.
    """

    def __init__(self, registry: Storage, cache: Cacher, *, clock: Callable[[], float] = time.time) -> None:
        self._registry = registry
        self._store = registry.store
        self._clock = clock
        self._pending: dict[str, tuple[float, int]] = {}
        self._deadlines: list[tuple[float, str, int]] = []
        self._changed = asyncio.Event()
        cache.listen(POD, self)

    # --------------------------------------------------------------------------- learning deadlines

    def reset(self, objects: Mapping[str, Message]) -> None:
        """Rebuild the pending deletions from every pod (the cache listed the store)."""
        pending: dict[str, tuple[float, int]] = {}
        for key, pod in objects.items():
            meta = pod.metadata
            if meta.HasField("deletion_timestamp"):
                pending[key] = (float(meta.deletion_timestamp.seconds), int(meta.resource_version))
        self._pending = pending
        self._deadlines = [(deadline, key, rev) for key, (deadline, rev) in pending.items()]
        heapq.heapify(self._deadlines)
        self._changed.set()

    def changed(self, key: str, obj: Message | None) -> None:
        if obj is None or not obj.metadata.HasField("deletion_timestamp"):
            self._pending.pop(key, None)
            return
        meta = obj.metadata
        self._schedule(key, float(meta.deletion_timestamp.seconds), int(meta.resource_version))

    def _deadline_of(self, kv: KeyValue) -> float | None:
        pod = self._registry.decode_kv(POD, kv)
        if not pod.metadata.HasField("deletion_timestamp"):
            return None
        return float(pod.metadata.deletion_timestamp.seconds)

    def _schedule(self, key: str, deadline: float, revision: int) -> None:
        if self._pending.get(key) == (deadline, revision):
            return
        self._pending[key] = (deadline, revision)
        heapq.heappush(self._deadlines, (deadline, key, revision))
        if self._deadlines[0] == (deadline, key, revision):
            self._changed.set()
        # Stale entries pile up only while terminating pods keep changing; drop them when they dominate.
        if len(self._deadlines) > 2 * len(self._pending) + 64:
            self._deadlines = [(d, k, r) for k, (d, r) in self._pending.items()]
            heapq.heapify(self._deadlines)

    # ------------------------------------------------------------------------------------ finishing

    async def run(self) -> None:
        while True:
            self._changed.clear()
            now = self._clock()
            while self._deadlines and self._deadlines[0][0] <= now:
                deadline, key, revision = heapq.heappop(self._deadlines)
                if self._pending.get(key) == (deadline, revision):
                    await self._finish(key, revision)
            delay = self._deadlines[0][0] - now if self._deadlines else None
            try:
                async with asyncio.timeout(delay):
                    await self._changed.wait()
            except TimeoutError:
                pass

    async def _finish(self, key: str, revision: int) -> None:
        try:
            result = await self._store.delete(key, revision)
        except StoreUnavailable as exc:
            log.warning("deletion finisher: cannot delete %s (%s); retrying in %gs", key, exc, RETRY_DELAY_S)
            self._pending.pop(key, None)
            self._schedule(key, self._clock() + RETRY_DELAY_S, revision)
            return
        if result.succeeded:
            log.info("deleted %s: its grace period ended", key)
            self._pending.pop(key, None)
            if result.current is not None:
                deleted = self._registry.decode_kv(POD, result.current)
                await quota.release(self._registry, deleted)  # type: ignore[arg-type]
            return
        if result.current is None:
            self._pending.pop(key, None)
            return
        # Changed since we saw it (a status update, a shorter grace): go by what is stored now.
        deadline = self._deadline_of(result.current)
        if deadline is None:
            self._pending.pop(key, None)
        else:
            self._schedule(key, deadline, result.current.mod_revision)
