"""The scheduling queue: every pending pod of this scheduler, in one of three structures.

kube-scheduler's PriorityQueue (pkg/scheduler/backend/queue), with its moveRequestCycle rule:

* **activeQ** (active_queue.py): a heap in QueueSort order (PrioritySort: higher priority first, then
  earlier timestamp). ``pop`` takes its head, blocking while it is empty.
* **podBackoffQ** (backoff_queue.py): a heap by backoff expiry. A pod that failed waits there for
  ``initial * 2**(attempts-1)`` seconds (capped) before going back to activeQ.
* **unschedulablePods** (unschedulable_pods.py): a map of pods that failed and wait for a cluster
  event that could help them (or for the leftover flush).

Beside them, the nominator (nominator.py) records pods nominated to nodes.

Transitions:

* informer add of a pending pod → activeQ (``add``); pop → in flight (in no structure).
* failed attempt (``add_unschedulable_if_not_present``): → unschedulablePods, unless a move request
  happened since the pod's cycle started (``move_request_cycle >= pod_scheduling_cycle``: the event
  that could have helped it came while it was being scheduled) or the attempt failed on an error (no
  plugin rejected it): → podBackoffQ.
* cluster event (``move_all_to_active_or_backoff``, ``assigned_pod_added/updated``): the unschedulable
  pods that one of their rejecting plugins' hints says Queue for (requeue.py) → podBackoffQ if still
  backing off, else activeQ (a Pending plugin's Queue → activeQ directly).
* backoff over → activeQ (``flush_backoff_completed``, every 1 s).
* in unschedulablePods longer than ``pod_max_in_unschedulable_s`` (default 5 min) → podBackoffQ or
  activeQ (``flush_unschedulable_left_over``, every 30 s).
* gated pods: whatever would send a pod to activeQ first asks the PreEnqueue plugins of its profile
  (``pre_enqueue``); a pod one of them rejects waits in unschedulablePods flagged ``gated``, with that
  plugin as its rejecting plugin, so the events it registered (and updates of the pod) ask again. Gated
  pods are counted apart (``GATED``), as kube-scheduler's scheduler_pending_pods{queue="gated"}.
* a gang's cycle takes the pending members of its group out of every structure at once (``take``);
  group events requeue the unschedulable members of one group, and most ResourceClaim events the pods
  that use the claim (``move_to_active_or_backoff``), in O(those pods).
* held pods (``hold``: their preemption's API calls are running in the background, kube-scheduler's
  async preemption) never enter activeQ: whatever would send one there parks it in unschedulablePods
  instead (kube's PreEnqueue rejection), until ``release``; ``activate`` sends a pod from
  unschedulablePods or podBackoffQ to activeQ at once (a failed preemption retries without waiting).
* informer update: in activeQ → re-placed; in podBackoffQ → updated in place, or to activeQ if the
  change matters for scheduling and the backoff is over; in unschedulablePods → if the change matters
  (anything but status and resourceVersion), to podBackoffQ or activeQ, else updated in place; in no
  structure (new, or in flight) → activeQ. Informer delete → removed from everything.

Cycle counters: ``scheduling_cycle`` counts pops. ``move_request_cycle`` is the scheduling cycle at the
last event that some plugin registered (a move request), even one that moved no pod; -1 before any.

Concurrency: everything runs on one asyncio event loop. Every method but ``pop`` and ``run`` is
synchronous, so each transition is atomic with respect to the others without a lock; they must be
called from the loop's thread (informer handlers and the scheduling loop are). ``pop`` awaits an
``asyncio.Event`` set by every addition to activeQ and by ``close``. ``run`` owns the two flush loops,
timed by the injected clock (a FakeClock in tests and in ``podsched simulate``), until closed or
cancelled.

Cost: O(log n) per pod operation; the moves scan the unschedulable pods (O(unschedulable)), as
kube-scheduler's do, and the leftover flush reads only the pods it moves (plus one).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from cluster.api import objects_pb2
from scheduler.clock import Clock
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    NamespaceIndex,
    NamespaceLister,
    PodInfo,
    QueuedPodInfo,
    Status,
    pod_key,
)
from scheduler.queue.active_queue import ActiveQueue
from scheduler.queue.backoff_queue import BackoffQueue
from scheduler.queue.nominator import Nominator
from scheduler.queue.requeue import EventHints, RequeueRules, Strategy
from scheduler.queue.unschedulable_pods import UnschedulablePods

log = logging.getLogger(__name__)

#: Backoff after the first failed attempt (kube-scheduler's podInitialBackoffSeconds default, 1 s);
#: short, so that a pod that lost a race retries quickly.
DEFAULT_POD_INITIAL_BACKOFF_S = 1.0
#: Cap of the doubling backoff (podMaxBackoffSeconds, 10 s): bounds how long a repeatedly failing pod
#: waits once an event could help it, at the cost of more attempts for hopeless pods.
DEFAULT_POD_MAX_BACKOFF_S = 10.0
#: How long a pod may sit in unschedulablePods before it is retried anyway
#: (podMaxInUnschedulablePodsDuration, 5 min; the seed's older release used 60 s): a safety net for an
#: event no plugin registered, traded against retrying hopeless pods.
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_S = 300.0
#: Period of the podBackoffQ → activeQ flush (kube-scheduler's 1 s): a pod waits at most this much
#: past its backoff.
BACKOFF_FLUSH_PERIOD_S = 1.0
#: Period of the unschedulablePods leftover flush (kube-scheduler's 30 s).
LEFTOVER_FLUSH_PERIOD_S = 30.0

#: Sub-queue names: keys of ``pending_counts`` and the ``queue`` label of scheduler_pending_pods.
ACTIVE = "active"
BACKOFF = "backoff"
UNSCHEDULABLE = "unschedulable"
GATED = "gated"

#: A pod rejected by this plugin may fit once a pod lands in its namespace (a new domain count can
#: change the skew), so assigned-pod events consider it as they do pods with matching affinity terms.
POD_TOPOLOGY_SPREAD = "PodTopologySpread"

#: The leftover flush's event: a wildcard, so it requeues every pod it is given.
UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "UnschedulableTimeout")
ASSIGNED_POD_ADD = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD, "AssignedPodAdd")
ASSIGNED_POD_UPDATE_LABEL = ClusterEvent(
    EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_LABEL, "AssignedPodUpdate"
)

Less = Callable[[QueuedPodInfo, QueuedPodInfo], bool]
#: The PreEnqueue plugins of the pod's profile: None to admit the pod to activeQ, else the rejection.
PreEnqueue = Callable[[PodInfo], Status | None]


def is_scheduling_relevant_update(old: objects_pb2.Pod | None, new: objects_pb2.Pod) -> bool:
    """Whether ``new`` differs from ``old`` in anything but status, resourceVersion, generation and
    managedFields (kube-scheduler's isPodUpdated, which also ignores finalizers, a field podsched's pods
    lack): only such a change can make the pod schedulable."""
    if old is None or old.spec != new.spec:
        return True
    old_meta, new_meta = objects_pb2.ObjectMeta(), objects_pb2.ObjectMeta()
    old_meta.CopyFrom(old.metadata)
    new_meta.CopyFrom(new.metadata)
    for meta in (old_meta, new_meta):
        meta.resource_version = ""
        meta.generation = 0
        meta.ClearField("managed_fields")
    return old_meta != new_meta


class SchedulingQueue:
    def __init__(
        self,
        less: Less,
        *,
        clock: Clock,
        pod_initial_backoff_s: float = DEFAULT_POD_INITIAL_BACKOFF_S,
        pod_max_backoff_s: float = DEFAULT_POD_MAX_BACKOFF_S,
        pod_max_in_unschedulable_s: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_S,
        events_to_register: Mapping[str, Sequence[ClusterEventWithHint]] = MappingProxyType({}),
        pre_enqueue: PreEnqueue | None = None,
        namespaces: NamespaceLister | None = None,
    ) -> None:
        """``less`` is the profile's QueueSort; ``events_to_register`` maps each plugin name to the
        events (with hints) that can change its verdict; ``pre_enqueue`` gates pods (None: none is);
        ``namespaces`` gives the labels affinity terms' namespaceSelectors match (None: no Namespace
        objects, every namespace carries only its name label)."""
        if not pod_initial_backoff_s > 0:
            raise ValueError(f"pod_initial_backoff_s must be positive, not {pod_initial_backoff_s}")
        if not pod_max_backoff_s >= pod_initial_backoff_s:
            raise ValueError(f"pod_max_backoff_s ({pod_max_backoff_s}) must be at least "
                             f"pod_initial_backoff_s ({pod_initial_backoff_s})")
        if not pod_max_in_unschedulable_s > 0:
            raise ValueError(
                f"pod_max_in_unschedulable_s must be positive, not {pod_max_in_unschedulable_s}"
            )
        self._clock = clock
        self._active = ActiveQueue(less)
        self._backoff = BackoffQueue(clock, pod_initial_backoff_s, pod_max_backoff_s)
        self._unschedulable = UnschedulablePods()
        self._nominator = Nominator()
        self._rules = RequeueRules(events_to_register)
        self._max_in_unschedulable_s = pod_max_in_unschedulable_s
        self._pre_enqueue = pre_enqueue
        self._namespaces: NamespaceLister = namespaces if namespaces is not None else NamespaceIndex()
        self._move_request_cycle = -1
        self._closed = asyncio.Event()
        #: Keys of the pods kept out of activeQ (``hold``).
        self._held: set[str] = set()

    # ----------------------------------------------------------------------------------- counters

    @property
    def scheduling_cycle(self) -> int:
        return self._active.scheduling_cycle

    @property
    def move_request_cycle(self) -> int:
        return self._move_request_cycle

    # --------------------------------------------------------------------------- informer events

    def add(self, pod: objects_pb2.Pod) -> None:
        """A new pending pod: to activeQ (out of the other structures, should it be there)."""
        qpi = QueuedPodInfo(PodInfo(pod), timestamp=self._clock.now())
        self._to_active(qpi, "PodAdd")
        self._nominator.add(qpi.pod_info)

    def update(self, old: objects_pb2.Pod | None, new: objects_pb2.Pod) -> None:
        """A pending pod changed (``old`` None when unknown): see the module docstring's transitions."""
        key = pod_key(new)
        if (qpi := self._active.get(key)) is not None:
            qpi.pod_info = PodInfo(new)
            self._active.add_or_update(qpi)  # the priority may have changed
            self._nominator.update(old, qpi.pod_info)
            return
        if (qpi := self._backoff.get(key)) is not None:
            qpi.pod_info = PodInfo(new)
            self._nominator.update(old, qpi.pod_info)
            if is_scheduling_relevant_update(old, new) and not self._backoff.is_backing_off(qpi):
                # Its backoff is over: do not make the change wait for the next flush.
                self._to_active(qpi, "PodUpdate")
            else:
                self._backoff.add_or_update(qpi)
            return
        if (qpi := self._unschedulable.get(key)) is not None:
            qpi.pod_info = PodInfo(new)
            self._nominator.update(old, qpi.pod_info)
            if is_scheduling_relevant_update(old, new):
                self._unschedulable.delete(key)
                self._requeue(qpi, Strategy.AFTER_BACKOFF, "PodUpdate")
            return
        # Not queued: new to us, or in flight (then it is tried again with this version, and the
        # failed attempt's add_unschedulable_if_not_present finds it queued already). An in-flight pod
        # may have just been nominated by preemption: update the nomination, do not reset it.
        qpi = QueuedPodInfo(PodInfo(new), timestamp=self._clock.now())
        self._to_active(qpi, "PodUpdate")
        self._nominator.update(old, qpi.pod_info)

    def delete(self, pod: objects_pb2.Pod) -> None:
        """The pod is gone (or bound): out of every structure and of the nominator."""
        key = pod_key(pod)
        self._nominator.delete(key)
        self._held.discard(key)
        if self._active.delete(key) is None and self._backoff.delete(key) is None:
            self._unschedulable.delete(key)

    # ----------------------------------------------------------------------------- the scheduler

    async def pop(self) -> QueuedPodInfo:
        """The next pod to schedule, waiting for one; raises QueueClosed after ``close``. Starts a
        scheduling cycle: increments ``scheduling_cycle`` and the pod's attempts, and forgets the
        plugins that rejected it last time (the new attempt records its own)."""
        qpi = await self._active.pop()
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self._clock.now()
        qpi.unschedulable_plugins = set()
        qpi.pending_plugins = set()
        return qpi

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo, pod_scheduling_cycle: int) -> str | None:
        """Requeue a pod whose attempt (started in ``pod_scheduling_cycle``) failed, with its
        ``unschedulable_plugins`` / ``pending_plugins`` set by the caller (both empty: an error).
        Returns the structure it went to, or None if the pod is queued already (an update arrived
        during its attempt)."""
        key = qpi.key
        if key in self._unschedulable or key in self._active or key in self._backoff:
            return None
        # The backoff and the stay in unschedulablePods count from this failure.
        qpi.timestamp = self._clock.now()
        qpi.gated = False
        failed_on_error = not qpi.unschedulable_plugins and not qpi.pending_plugins
        if self._move_request_cycle >= pod_scheduling_cycle or failed_on_error:
            self._backoff.add_or_update(qpi)
            log.debug("%s -> %s (ScheduleAttemptFailure)", key, BACKOFF)
            return BACKOFF
        self._unschedulable.add_or_update(qpi)
        log.debug("%s -> %s (ScheduleAttemptFailure)", key, UNSCHEDULABLE)
        return UNSCHEDULABLE

    # ------------------------------------------------------------------------------ cluster events

    def move_all_to_active_or_backoff(self, event: ClusterEvent, old: Any = None, new: Any = None) -> int:
        """Requeue the unschedulable pods that ``event`` may help; returns how many moved."""
        hints = self._rules.for_event(event)
        if hints is None:
            return 0
        return self._move(list(self._unschedulable), hints, old, new)

    def assigned_pod_added(self, pod: objects_pb2.Pod) -> int:
        """A pod was bound (or assumed): it may satisfy pending pods' affinity terms."""
        hints = self._rules.for_event(ASSIGNED_POD_ADD)
        if hints is None:
            return 0
        return self._move(self._with_cross_topology_term(pod), hints, None, pod)

    def assigned_pod_updated(self, old: objects_pb2.Pod | None, new: objects_pb2.Pod) -> int:
        """A bound pod changed: only a label change can make it match other pods' affinity terms."""
        if old is not None and old.metadata.labels == new.metadata.labels:
            return 0
        hints = self._rules.for_event(ASSIGNED_POD_UPDATE_LABEL)
        if hints is None:
            return 0
        return self._move(self._with_cross_topology_term(new), hints, old, new)

    def _with_cross_topology_term(self, pod: objects_pb2.Pod) -> list[QueuedPodInfo]:
        """The unschedulable pods with a required affinity term matching ``pod``, or rejected by
        PodTopologySpread in ``pod``'s namespace (kube-scheduler's
        getUnschedulablePodsWithCrossTopologyTerm)."""
        namespace = pod.metadata.namespace
        namespaces = self._namespaces.snapshot()
        return [
            qpi for qpi in self._unschedulable
            if (POD_TOPOLOGY_SPREAD in qpi.unschedulable_plugins and qpi.pod.metadata.namespace == namespace)
            or any(term.matches(pod, namespaces) for term in qpi.pod_info.required_affinity_terms)
        ]

    def _move(self, candidates: Iterable[QueuedPodInfo], hints: EventHints, old: Any, new: Any) -> int:
        moved = 0
        for qpi in candidates:
            strategy = hints.strategy(qpi, old, new)
            if strategy is Strategy.SKIP:
                continue
            self._unschedulable.delete(qpi.key)
            self._requeue(qpi, strategy, hints.event.label)
            moved += 1
        self._move_request_cycle = self.scheduling_cycle
        return moved

    def move_to_active_or_backoff(self, keys: Iterable[str], event: ClusterEvent, old: Any = None,
                                  new: Any = None) -> int:
        """Requeue the unschedulable pods among ``keys`` (one pod group's, one claim's users) that
        ``event`` may help; returns how many moved. O(len(keys)), where ``move_all_to_active_or_backoff``
        scans them all. A move request even when no key is queued."""
        hints = self._rules.for_event(event)
        if hints is None:
            return 0
        candidates = [qpi for key in keys if (qpi := self._unschedulable.get(key)) is not None]
        return self._move(candidates, hints, old, new)

    def take(self, keys: Iterable[str]) -> list[QueuedPodInfo]:
        """Take the pods with ``keys`` out of activeQ, podBackoffQ and unschedulablePods (a gang's cycle
        schedules them together); keys not queued, and gated pods (a PreEnqueue plugin still holds
        them), are left."""
        taken = []
        for key in keys:
            unschedulable = self._unschedulable.get(key)
            if unschedulable is not None and unschedulable.gated:
                continue
            qpi = self._active.delete(key) or self._backoff.delete(key) or self._unschedulable.delete(key)
            if qpi is not None:
                taken.append(qpi)
        return taken

    # --------------------------------------------------------------------------- held pods

    def hold(self, key: str) -> None:
        """Keep the pod out of activeQ until ``release``: its preemption is under way, and a new attempt
        before the victims are gone would only preempt again elsewhere."""
        self._held.add(key)

    def release(self, key: str) -> None:
        """The pod may go to activeQ again, at the next event or flush that sends it there."""
        self._held.discard(key)

    def is_held(self, key: str) -> bool:
        return key in self._held

    def activate(self, key: str) -> bool:
        """Move the pod from unschedulablePods or podBackoffQ to activeQ now, backoff or not
        (kube-scheduler's Activate); False if it is in neither (queued already, in flight or gone)."""
        qpi = self._unschedulable.get(key) or self._backoff.get(key)
        if qpi is None:
            return False
        self._to_active(qpi, "ForceActivate")
        return True

    # ------------------------------------------------------------------------------------ flushes

    def flush_backoff_completed(self) -> int:
        """Move every pod whose backoff is over from podBackoffQ to activeQ; returns how many."""
        done = self._backoff.pop_completed()
        for qpi in done:
            self._to_active(qpi, "BackoffComplete")
        return len(done)

    def flush_unschedulable_left_over(self) -> int:
        """Requeue the pods that stayed in unschedulablePods longer than pod_max_in_unschedulable_s;
        returns how many."""
        stale = self._unschedulable.stayed_longer_than(self._clock.now(), self._max_in_unschedulable_s)
        if not stale:
            return 0
        hints = self._rules.for_event(UNSCHEDULABLE_TIMEOUT)
        assert hints is not None  # a wildcard event always yields hints
        return self._move(stale, hints, None, None)

    async def run(self) -> None:
        """Run the two flush loops until ``close`` (or cancellation)."""
        async with asyncio.TaskGroup() as group:
            loops = [
                group.create_task(self._every(BACKOFF_FLUSH_PERIOD_S, self.flush_backoff_completed),
                                  name="queue-flush-backoff"),
                group.create_task(self._every(LEFTOVER_FLUSH_PERIOD_S, self.flush_unschedulable_left_over),
                                  name="queue-flush-unschedulable"),
            ]
            await self._closed.wait()
            for loop in loops:
                loop.cancel()

    async def _every(self, period_s: float, flush: Callable[[], int]) -> None:
        # As wait.Until: run at once, then once per period.
        while True:
            flush()
            await self._clock.sleep(period_s)

    def close(self) -> None:
        """Wake blocked pops with QueueClosed and stop ``run``."""
        self._active.close()
        self._closed.set()

    # ----------------------------------------------------------------------------------- nominator

    def add_nominated_pod(self, pod_info: PodInfo, node_name: str) -> None:
        """Preemption nominated the pod to ``node_name`` (an empty name clears its nomination)."""
        self._nominator.add(pod_info, node_name)

    def nominated_node_of(self, key: str) -> str | None:
        """The node the pod ``key`` is nominated to, None when it is not."""
        return self._nominator.node_of(key)

    def delete_nominated_pod_if_exists(self, pod: objects_pb2.Pod) -> None:
        self._nominator.delete(pod_key(pod))

    def update_nominated_pod(self, old: objects_pb2.Pod | None, new_pod_info: PodInfo) -> None:
        self._nominator.update(old, new_pod_info)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self._nominator.for_node(node_name)

    def nominated_node_names(self) -> Collection[str]:
        return self._nominator.nodes()

    # -------------------------------------------------------------------------------- inspection

    def pending_counts(self) -> dict[str, int]:
        gated = sum(1 for qpi in self._unschedulable if qpi.gated)
        return {
            ACTIVE: len(self._active),
            BACKOFF: len(self._backoff),
            UNSCHEDULABLE: len(self._unschedulable) - gated,
            GATED: gated,
        }

    def is_empty_active(self) -> bool:
        return len(self._active) == 0

    def next_backoff_expiry(self) -> float | None:
        """When the earliest backoff in podBackoffQ ends (for a virtual clock to jump to)."""
        return self._backoff.next_expiry()

    def next_unschedulable_timeout(self) -> float | None:
        """The first instant at which the leftover flush would requeue a pod of unschedulablePods (for a
        virtual clock to jump to), or None when it holds none."""
        oldest = self._unschedulable.oldest()
        if oldest is None:
            return None
        # The flush takes pods that stayed strictly longer than the limit.
        return math.nextafter(oldest.timestamp + self._max_in_unschedulable_s, math.inf)

    def lookup(self, key: str) -> tuple[str, QueuedPodInfo] | None:
        """Which structure holds the pod with ``key`` ("namespace/name"), and its entry."""
        for name, structure in ((ACTIVE, self._active), (BACKOFF, self._backoff),
                                (UNSCHEDULABLE, self._unschedulable)):
            qpi = structure.get(key)
            if qpi is not None:
                return name, qpi
        return None

    def backoff_duration(self, attempts: int) -> float:
        """The backoff a pod gets after ``attempts`` attempts."""
        return self._backoff.backoff_duration(attempts)

    # -------------------------------------------------------------------------------- transitions

    def _to_active(self, qpi: QueuedPodInfo, event: str) -> None:
        self._unschedulable.delete(qpi.key)
        self._backoff.delete(qpi.key)
        if qpi.key in self._held:
            # Parked as kube parks a pod its PreEnqueue rejects. It goes last in unschedulablePods with
            # its old timestamp, so the leftover flush may find it a period late: it is held anyway.
            self._unschedulable.add_or_update(qpi)
            log.debug("%s -> %s (%s while held)", qpi.key, UNSCHEDULABLE, event)
            return
        rejection = self._pre_enqueue(qpi.pod_info) if self._pre_enqueue is not None else None
        if rejection is not None:
            # Gated: only the events its PreEnqueue plugin registered (or an update) ask again.
            qpi.gated = True
            qpi.unschedulable_plugins = {rejection.plugin} if rejection.plugin else set()
            qpi.pending_plugins = set()
            self._unschedulable.add_or_update(qpi)
            log.debug("%s -> %s (%s, gated: %s)", qpi.key, GATED, event, rejection.message())
            return
        qpi.gated = False
        self._active.add_or_update(qpi)
        log.debug("%s -> %s (%s)", qpi.key, ACTIVE, event)

    def _requeue(self, qpi: QueuedPodInfo, strategy: Strategy, event: str) -> None:
        """An unschedulable pod (already out of unschedulablePods) goes back: to podBackoffQ while its
        backoff lasts, unless a Pending plugin asked for it now."""
        if strategy is Strategy.AFTER_BACKOFF and self._backoff.is_backing_off(qpi):
            self._backoff.add_or_update(qpi)
            log.debug("%s -> %s (%s)", qpi.key, BACKOFF, event)
        else:
            self._to_active(qpi, event)
