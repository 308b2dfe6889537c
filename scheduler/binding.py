"""The binding cycle: everything after a pod has been assumed on a node, run in the background so that
the next scheduling cycle does not wait for the API (kube-scheduler's bindingCycle and
handleBindingCycleError).

For each assumed pod: WaitOnPermit, PreBind, Bind (an extender with a bind verb that is interested in the
pod binds it, else the Bind plugins: DefaultBinder writes the pods/binding subresource),
then the cache is told the binding finished (its assumed-pod TTL starts; the informer's event confirms
the pod), PostBind runs and the ``Scheduled`` event is recorded. When any step fails, the pod's
reservation is undone: Unreserve, the assumed pod is forgotten by the cache, the queue hears an
"assigned pod deleted" event (the resources it held may fit a waiting pod) and the pod goes back to the
queue through the scheduling failure handler: a rejection (Permit) is Unschedulable, anything else an
Error retried after backoff.

Concurrency: at most ``max_in_flight`` binding cycles run at once. ``submit`` waits for a free slot, so
a scheduler whose API server is slow stops assuming pods instead of piling up assumptions it cannot
write; otherwise it returns at once. Binding tasks belong to ``run()`` (a root task of the scheduler):
stopping the scheduler cancels the bindings in flight, which is safe (an unbound pod is scheduled again
by whoever schedules next; a bound one is seen bound).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cluster.api import objects_pb2
from scheduler.background import TaskOwner
from scheduler.cache import CacheError
from scheduler.clock import Clock
from scheduler.events import NORMAL, EventRecorder
from scheduler.extender.calls import bind_with_extenders
from scheduler.extender.interface import Extender, ExtenderError
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    CycleState,
    Diagnosis,
    EventResource,
    FitError,
    PodInfo,
    QueuedPodInfo,
    Status,
    is_success,
)
from scheduler.metrics import SchedulerMetrics

if TYPE_CHECKING:
    from scheduler.cache import Cache
    from scheduler.framework.runtime import Framework
    from scheduler.queue import SchedulingQueue

log = logging.getLogger(__name__)

#: Binding cycles in flight at most. Each is one or two API round trips; 64 keeps a loopback API server
#: busy without letting the cache run far ahead of what the API has accepted.
DEFAULT_MAX_BINDINGS = 64
#: The annotation of a scheduling event that carries the attempt's explanation (JSON).
EXPLANATION_ANNOTATION = "podsched.io/explanation"
#: An assumed pod that is not bound after all frees its resources: the event the queue hears.
ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")

#: The scheduling failure handler: (framework, queued pod, status, scheduling cycle, attempt start).
FailureHandler = Callable[["Framework", QueuedPodInfo, Status, int, float], Awaitable[None]]


@dataclass(slots=True)
class BindingJob:
    """A pod assumed on a node at the end of its scheduling cycle, to be bound."""

    framework: Framework
    state: CycleState
    #: The pod as it was queued (its attempts, its place in the queue if it must go back).
    queued: QueuedPodInfo
    #: The pod with spec.nodeName set, as the cache assumed it.
    assumed: PodInfo
    node_name: str
    #: The scheduling cycle in which the pod was popped (the queue's moveRequestCycle rule).
    cycle: int
    #: Clock time the scheduling attempt started.
    start: float
    #: The attempt's explanation (JSON) for the Scheduled event; "" for none.
    explanation: str


class Binder:
    """Runs binding cycles in the background, ``max_in_flight`` at most."""

    def __init__(
        self,
        *,
        cache: Cache,
        queue: SchedulingQueue,
        recorder: EventRecorder,
        metrics: SchedulerMetrics,
        clock: Clock,
        on_failure: FailureHandler,
        max_in_flight: int = DEFAULT_MAX_BINDINGS,
        extenders: Sequence[Extender] = (),
    ) -> None:
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be at least 1, got {max_in_flight}")
        self._cache = cache
        self._queue = queue
        self._recorder = recorder
        self._metrics = metrics
        self._clock = clock
        self._on_failure = on_failure
        self._extenders = tuple(extenders)
        self._slots = asyncio.Semaphore(max_in_flight)
        self._in_flight = 0
        self._tasks = TaskOwner("binder")

    @property
    def in_flight(self) -> int:
        """Binding cycles submitted and not finished."""
        return self._in_flight

    async def run(self) -> None:
        """Own the binding tasks until cancelled."""
        await self._tasks.run()

    async def submit(self, job: BindingJob) -> None:
        """Start binding ``job`` in the background once a slot is free."""
        if not self._tasks.running:
            raise RuntimeError("the binder is not running")
        await self._slots.acquire()
        self._in_flight += 1
        try:
            self._tasks.start(self._bind(job), name=f"bind {job.assumed.key} to {job.node_name}")
        except BaseException:
            self._release()
            raise

    def _release(self) -> None:
        self._in_flight -= 1
        self._slots.release()

    async def _bind(self, job: BindingJob) -> None:
        try:
            try:
                status = await self._binding_cycle(job)
            except Exception as err:  # a plugin raised: an error like any other, never a dead binder
                log.exception("binding cycle of %s failed", job.assumed.key)
                status = Status.as_error(err)
            if not is_success(status):
                assert status is not None
                await self._handle_error(job, status)
        except Exception:
            log.exception("handling the binding failure of %s failed", job.assumed.key)
        finally:
            self._release()

    async def _binding_cycle(self, job: BindingJob) -> Status | None:
        framework, state, assumed, node = job.framework, job.state, job.assumed, job.node_name
        status = await framework.wait_on_permit(assumed)
        if not is_success(status):
            assert status is not None
            return _rejection_as_fit_error(status, assumed.pod, node) if status.is_rejected else status
        status = await framework.run_pre_bind(state, assumed, node)
        if not is_success(status):
            return status
        status = await self._bind_pod(framework, state, assumed, node)
        # Bound or not, the binding is over: the assumed pod's expiry clock starts (kube's finishBinding).
        self._cache.finish_binding(assumed.pod)
        if not is_success(status):
            return status
        # Per pod, as kube-scheduler's V(2) "Successfully bound pod to node": at INFO, formatting and
        # writing this line cost the scheduler about 5% of its time under load.
        log.debug("bound %s to %s", assumed.key, node)
        self._recorder.record(
            assumed.pod, NORMAL, "Scheduled", "Binding",
            f"Successfully assigned {assumed.key} to {node}",
            component=framework.profile_name,
            annotations={EXPLANATION_ANNOTATION: job.explanation} if job.explanation else None,
        )
        queued = job.queued
        now = self._clock.now()
        self._metrics.pod_scheduled(
            framework.profile_name,
            now - job.start,
            queued.attempts,
            now - queued.initial_attempt_timestamp if queued.initial_attempt_timestamp is not None else None,
        )
        framework.run_post_bind(state, assumed, node)
        return None

    async def _bind_pod(self, framework: Framework, state: CycleState, assumed: PodInfo,
                        node: str) -> Status | None:
        """kube-scheduler's bind: a binding extender first; the Bind plugins only if none took the pod."""
        try:
            if await bind_with_extenders(self._extenders, assumed.pod, node):
                return None
        except ExtenderError as err:
            return Status.as_error(err)
        return await framework.run_bind(state, assumed, node)

    async def _handle_error(self, job: BindingJob, status: Status) -> None:
        framework, assumed = job.framework, job.assumed
        log.info("binding %s to %s failed: %s", assumed.key, job.node_name, status.message())
        framework.run_unreserve(job.state, assumed, job.node_name)
        try:
            self._cache.forget_pod(assumed.pod)
        except CacheError as err:  # the watch confirmed it bound meanwhile: nothing to give back
            log.info("%s stays in the cache: %s", assumed.key, err)
        else:
            # Forgetting the assumed pod frees what it held on the node: as for a deleted pod, pods
            # waiting for those resources may fit now.
            self._queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, assumed.pod, None)
        await self._on_failure(framework, job.queued, status, job.cycle, job.start)


def _rejection_as_fit_error(status: Status, pod: objects_pb2.Pod, node_name: str) -> Status:
    """A Permit plugin turned the pod down on its node: report it as a FitError over that one node, so
    that the pod waits for the events that plugin registered (kube-scheduler does the same)."""
    diagnosis = Diagnosis(node_to_status={node_name: status}, unschedulable_plugins={status.plugin})
    fit_error = FitError(pod, 1, diagnosis)
    return Status(status.code, (fit_error.message(),), status.plugin, error=fit_error)
