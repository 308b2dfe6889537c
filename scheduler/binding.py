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

A gang's placed members are bound by ONE group binding job (``submit_group``, from gang/cycle.py):
WaitOnPermit of each, all bounded by the group's timeout (past it every member still waiting is
rejected), PreBind of each, then ONE ``bind_group`` call through the profile's Handle client (the
leader's fence applies) that binds all of them in one store transaction or none; then, per pod, the
cache's finish_binding, the Scheduled event, the metrics and PostBind, and the PodGroup's condition.
Bind plugins and binding extenders do not bind gang members. When any step fails every member is
released as above, the group bind's failure (conflict, fenced, error) as an error (backoff).

DefaultBinder binds through the Handle's client, which coalesces the binds that arrive together into one
Batch call (scheduler/coalescedbinds.py): each pod is still bound, fenced and answered on its own.

Concurrency: at most ``max_in_flight`` binding cycles run at once. ``submit`` waits for a free slot, so
a scheduler whose API server is slow stops assuming pods instead of piling up assumptions it cannot
write; otherwise it returns at once. Binding tasks belong to ``run()`` (a root task of the scheduler):
stopping the scheduler cancels the bindings in flight, which is safe (an unbound pod is scheduled again
by whoever schedules next; a bound one is seen bound).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cluster.api.errors import ApiError
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
    EventResource,
    GangPolicy,
    PodInfo,
    QueuedPodInfo,
    Status,
    is_success,
    rejected_on_node,
)
from scheduler.framework.explanation import EXPLANATION_ANNOTATION, LazyExplanation
from scheduler.metrics import SchedulerMetrics

if TYPE_CHECKING:
    from scheduler.cache import Cache
    from scheduler.framework.runtime import Framework
    from scheduler.queue import SchedulingQueue

log = logging.getLogger(__name__)

#: Binding cycles in flight at most. Each is one or two API round trips; 64 keeps a loopback API server
#: busy without letting the cache run far ahead of what the API has accepted.
DEFAULT_MAX_BINDINGS = 64


def explanation_annotations(explanation: LazyExplanation | None) -> Callable[[], dict[str, str]] | None:
    """The annotations of an event about an attempt: its explanation, made when the event is written."""
    if explanation is None:
        return None
    return lambda: {EXPLANATION_ANNOTATION: explanation.to_json()}
#: An assumed pod that is not bound after all frees its resources: the event the queue hears.
ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")

#: The scheduling failure handler: (framework, queued pod, status, scheduling cycle, attempt start).
FailureHandler = Callable[["Framework", QueuedPodInfo, Status, int, float], Awaitable[None]]
#: Told that a gang (or a CompositePodGroup's tree) was bound: (pods bound per PodGroup key, profile name).
GroupBound = Callable[[Mapping[str, int], str], Awaitable[None]]


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
    explanation: LazyExplanation | None


@dataclass(slots=True)
class GroupBindingJob:
    """A gang's members assumed on their nodes by one group cycle, to be bound together."""

    framework: Framework
    policy: GangPolicy
    members: list[BindingJob]
    #: Clock time past which members still waiting at Permit are rejected, and all released.
    deadline: float


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
        on_group_bound: GroupBound | None = None,
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
        self._on_group_bound = on_group_bound
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

    async def submit_group(self, job: GroupBindingJob) -> None:
        """Start binding a gang's members together in the background once a slot is free."""
        if not self._tasks.running:
            raise RuntimeError("the binder is not running")
        await self._slots.acquire()
        self._in_flight += 1
        try:
            self._tasks.start(self._bind_group(job), name=f"bind pod group {job.policy.group}")
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
            return rejected_on_node(status, assumed.pod, node) if status.is_rejected else status
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
        self._bound(job)
        return None

    async def _bind_group(self, job: GroupBindingJob) -> None:
        try:
            try:
                status = await self._group_binding_cycle(job)
            except Exception as err:
                log.exception("binding cycle of pod group %s failed", job.policy.group)
                status = Status.as_error(err)
            if not is_success(status):
                assert status is not None
                await self._handle_group_error(job, status)
        except Exception:
            log.exception("handling the binding failure of pod group %s failed", job.policy.group)
        finally:
            self._release()

    async def _group_binding_cycle(self, job: GroupBindingJob) -> Status | None:
        framework = job.framework
        status = await self._wait_on_permits(job)
        if not is_success(status):
            return status
        for member in job.members:
            status = await framework.run_pre_bind(member.state, member.assumed, member.node_name)
            if not is_success(status):
                return status
        bindings = [(m.assumed.pod.metadata.namespace, m.assumed.pod.metadata.name, m.node_name)
                    for m in job.members]
        try:
            await framework.handle.client.bind_group(bindings)
        except ApiError as err:
            return Status.as_error(err)
        finally:
            for member in job.members:
                self._cache.finish_binding(member.assumed.pod)
        for member in job.members:
            self._bound(member)
        log.info("bound pod group %s: %d pods", job.policy.group, len(job.members))
        if self._on_group_bound is not None:
            # A CompositePodGroup's tree is bound at once: the pods bound per PodGroup.
            await self._on_group_bound(Counter(m.queued.pod_info.group_key for m in job.members),
                                       framework.profile_name)
        return None

    async def _wait_on_permits(self, job: GroupBindingJob) -> Status | None:
        """Every member's WaitOnPermit, at once; past the group's deadline every member still waiting
        is rejected. The first refusal fails the group."""
        framework = job.framework

        async def reject_when_due() -> None:
            await self._clock.sleep(job.deadline - self._clock.now())
            # Refused in the name of the plugins that gate gangs: a change of the PodGroup may help.
            plugin = next(iter(framework.pod_group_plugins), "")
            for member in job.members:
                framework.waiting_pods.reject(
                    member.assumed.key, plugin,
                    f"pod group {job.policy.group} was not allowed within its timeout "
                    f"of {job.policy.timeout_s:g}s")

        timer = asyncio.ensure_future(reject_when_due())
        try:
            statuses = await asyncio.gather(*(framework.wait_on_permit(m.assumed) for m in job.members))
        finally:
            timer.cancel()
            await asyncio.gather(timer, return_exceptions=True)
        for member, status in zip(job.members, statuses, strict=True):
            if not is_success(status):
                assert status is not None
                if status.is_rejected:
                    return rejected_on_node(status, member.assumed.pod, member.node_name)
                return status
        return None

    def _bound(self, job: BindingJob) -> None:
        """A member's binding succeeded: its event, metrics and PostBind, as for a pod bound alone."""
        framework, assumed, node = job.framework, job.assumed, job.node_name
        self._recorder.record(
            assumed.pod, NORMAL, "Scheduled", "Binding",
            f"Successfully assigned {assumed.key} to {node}",
            component=framework.profile_name,
            annotations=explanation_annotations(job.explanation),
        )
        queued = job.queued
        now = self._clock.now()
        self._metrics.pod_scheduled(
            framework.profile_name,
            now - job.start,
            queued.attempts,
            now - queued.initial_attempt_timestamp if queued.initial_attempt_timestamp is not None else None,
        )
        framework.run_post_bind(job.state, assumed, node)

    async def _handle_group_error(self, job: GroupBindingJob, status: Status) -> None:
        log.info("binding pod group %s failed: %s", job.policy.group, status.message())
        released = False
        for member in job.members:
            job.framework.run_unreserve(member.state, member.assumed, member.node_name)
            job.framework.waiting_pods.discard(member.assumed.key)
            try:
                self._cache.forget_pod(member.assumed.pod)
            except CacheError as err:
                log.info("%s stays in the cache: %s", member.assumed.key, err)
            else:
                released = True
        if released:
            self._queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, job.members[0].assumed.pod, None)
        for member in job.members:
            await self._on_failure(job.framework, member.queued, status, member.cycle, member.start)

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
