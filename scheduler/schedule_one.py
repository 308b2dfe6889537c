"""One scheduling cycle, and what happens to a pod that does not fit (kube-scheduler's schedule_one.go).

``SchedulingLoop.schedule_one``:

1. pop the next pod (blocks while activeQ is empty);
2. skip it if it is being deleted or is already assumed (an update can requeue a pod whose binding is
   in flight);
3. bring the snapshot up to date and run the algorithm (PreFilter, Filter over enough nodes, the
   extenders' filters, PreScore, Score, the extenders' scores, pick a node) with the profile the pod's
   schedulerName selects;
4. assume the pod on the chosen node in the cache, then Reserve and Permit;
5. hand it to the binder (binding.py), which binds it in the background.

When no node fits (a ``FitError``), PostFilter runs (DefaultPreemption may nominate a node
there) and the failure handler (``handle_failure``) records the ``FailedScheduling`` event with the
FitError's message, puts the pod back in the queue with the plugins that rejected it (so that only
events those plugins registered requeue it), and writes the pod's condition PodScheduled=False,
reason Unschedulable. Other failures are errors: the same, with reason SchedulerError, and the pod is
retried after backoff.

A pod of a gang whose group is not admitted yet (fewer than minCount bound or being bound) is placed with
its pending siblings in one whole-group cycle instead (gang/cycle.py); a pod of an admitted group is
scheduled alone, as any pod, unless its group has a topology constraint: then every pod of the group is
placed in the group's cycle, inside the domain its placed pods are in.

The cycle is deterministic given the snapshot, the RNG and the extenders' answers; it awaits only the
extenders and, in the failure handler, the API (the status write), as kube-scheduler's does.
"""

from __future__ import annotations

import copy
import logging
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cluster.api import errors, objects_pb2, timeutil
from cluster.client import Client
from scheduler.algorithm import (
    NoNodesAvailable,
    ScheduleFitError,
    ScheduleResult,
    SchedulingError,
    schedule_pod,
)
from scheduler.binding import Binder, BindingJob, explanation_annotations
from scheduler.cache import CacheError
from scheduler.clock import Clock
from scheduler.events import WARNING, EventRecorder, truncate_message
from scheduler.extender.interface import Extender
from scheduler.framework import (
    Code,
    CycleState,
    FitError,
    NodeInfo,
    PodInfo,
    QueuedPodInfo,
    Status,
    is_success,
    rejected_on_node,
)
from scheduler.framework.explanation import LazyExplanation
from scheduler.gang.composite import CompositeCycle
from scheduler.gang.cycle import GangCycle
from scheduler.gang.status import PodGroupReporter
from scheduler.metrics import SchedulerMetrics

if TYPE_CHECKING:
    from scheduler.cache import Cache, Snapshot
    from scheduler.framework.runtime import Framework
    from scheduler.queue import SchedulingQueue

log = logging.getLogger(__name__)

#: The profile of pods that name no scheduler (the API leaves spec.schedulerName empty).
DEFAULT_SCHEDULER_NAME = "default-scheduler"
#: The PodScheduled condition and its reasons (core/v1's PodReasonUnschedulable, PodReasonSchedulerError).
POD_SCHEDULED = "PodScheduled"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
#: Attempts at writing a pod's status when it keeps changing under us.
STATUS_UPDATE_ATTEMPTS = 5

#: The latest version of a pod the scheduler knows (its informer's copy), or None if it is gone.
PodLister = Callable[[str], "objects_pb2.Pod | None"]


def scheduler_name(pod: objects_pb2.Pod) -> str:
    return pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME


@dataclass(frozen=True, slots=True)
class FailureDecision:
    """What the failure handler does with a pod that failed an attempt."""

    #: Put the pod back in the queue (False when it is gone or bound meanwhile).
    requeue: bool
    #: The PodScheduled=False condition's reason.
    reason: str
    #: Why the pod is not requeued, for the log ("" when it is).
    why_not: str = ""


def decide_failure(status: Status, current: objects_pb2.Pod | None) -> FailureDecision:
    """kube-scheduler's handleSchedulingFailure decisions: a rejection is Unschedulable, anything else a
    SchedulerError; a pod deleted meanwhile is dropped, and one bound meanwhile (a binding whose answer
    was lost, another scheduler) is not requeued."""
    reason = REASON_UNSCHEDULABLE if status.is_rejected else REASON_SCHEDULER_ERROR
    if current is None:
        return FailureDecision(False, reason, "it no longer exists")
    if current.spec.node_name:
        return FailureDecision(False, reason, f"it has been bound to {current.spec.node_name}")
    return FailureDecision(True, reason)


def failure_message(status: Status) -> str:
    """The message of the event and the condition: the FitError's for a rejection, else the error's."""
    if isinstance(status.error, FitError):
        return status.error.message()
    return status.message() or str(status.error or status.code.value)


class SchedulingLoop:
    """The scheduling cycles of one scheduler: all its profiles share the queue, cache and snapshot."""

    def __init__(
        self,
        *,
        profiles: Mapping[str, Framework],
        queue: SchedulingQueue,
        cache: Cache,
        snapshot: Snapshot,
        client: Client,
        pod_lister: PodLister,
        binder: Binder,
        recorder: EventRecorder,
        metrics: SchedulerMetrics,
        clock: Clock,
        rng: random.Random,
        percentage_of_nodes_to_score: Mapping[str, int | None],
        extenders: Sequence[Extender] = (),
        tie_order: Mapping[str, int] | None = None,
    ) -> None:
        """``percentage_of_nodes_to_score``: by profile name (None: kube-scheduler's adaptive rule).
        ``extenders``: asked after the Filter and Score plugins, in this order. ``tie_order``: how equally
        scored nodes are chosen between (``algorithm.select_host``; None: at random)."""
        self._profiles = profiles
        self._queue = queue
        self._cache = cache
        self._snapshot = snapshot
        self._client = client
        self._pod_lister = pod_lister
        self._binder = binder
        self._recorder = recorder
        self._metrics = metrics
        self._clock = clock
        self._rng = rng
        self._percentage = dict(percentage_of_nodes_to_score)
        self._extenders = tuple(extenders)
        self._tie_order = tie_order
        #: Where the next cycle's Filter starts in the node list (round robin across cycles).
        self._next_start_index = 0
        #: True while a cycle runs (between pop and the binder taking over, or the failure handled).
        self.busy = False
        self.pod_group_reporter = PodGroupReporter(
            client, recorder, next((f.handle.pod_groups for f in profiles.values()), None))
        self._gang_cycle = GangCycle(
            queue=queue, cache=cache, snapshot=snapshot, binder=binder, clock=clock,
            run_algorithm=self._run_algorithm, assumed_copy=_assumed_copy, on_failure=self.handle_failure,
            reporter=self.pod_group_reporter,
        )
        self._composite_cycle = CompositeCycle(self._gang_cycle)

    async def _run_algorithm(self, framework: Framework, state: CycleState, pod_info: PodInfo,
                             nodes_within: Sequence[NodeInfo] | None = None) -> ScheduleResult:
        """The algorithm for one pod of a gang, carrying the node round robin across its members;
        ``nodes_within``: the nodes of the placement tried (None: every node)."""
        try:
            result = await schedule_pod(
                framework, state, pod_info, self._snapshot,
                percentage_of_nodes_to_score=self._percentage.get(framework.profile_name),
                rng=self._rng,
                start_index=self._next_start_index,
                extenders=self._extenders,
                tie_order=self._tie_order,
                nodes_within=nodes_within,
            )
        except (ScheduleFitError, SchedulingError) as err:
            self._next_start_index = err.next_start_index
            raise
        self._next_start_index = result.next_start_index
        return result

    async def schedule_one(self) -> None:
        """Schedule the next pod (waiting for one)."""
        queued = await self._queue.pop()
        # The queue's rule for a pod that fails this cycle: any move request from now on sends it to
        # backoff rather than to the unschedulable pods.
        cycle = self._queue.scheduling_cycle
        self.busy = True
        try:
            await self._attempt(queued, cycle)
        except Exception:
            # A bug in one cycle must not stop scheduling for every pod: retry this one after backoff
            # (if it is not queued already) and go on.
            log.exception("the scheduling cycle of %s failed", queued.key)
            queued.unschedulable_plugins = set()
            queued.pending_plugins = set()
            self._queue.add_unschedulable_if_not_present(queued, cycle)
        finally:
            self.busy = False

    async def _attempt(self, queued: QueuedPodInfo, cycle: int) -> None:
        pod = queued.pod
        framework = self._profiles.get(scheduler_name(pod))
        if framework is None:
            # The event handlers queue only pods of our profiles, and schedulerName is immutable.
            log.error("no profile for scheduler name %r of pod %s", scheduler_name(pod), queued.key)
            return
        if self._skip(framework, queued):
            return
        start = self._clock.now()
        if (root := CompositeCycle.tree_to_place(framework, queued.pod_info)) is not None:
            await self._composite_cycle.run(framework, queued, root, cycle, start)
            return
        if (policy := self._gang_cycle.gang_to_place(framework, queued.pod_info)) is not None:
            await self._gang_cycle.run(framework, queued, policy, cycle, start)
            return
        state = CycleState()
        self._cache.update_snapshot(self._snapshot)
        try:
            result = await schedule_pod(
                framework, state, queued.pod_info, self._snapshot,
                percentage_of_nodes_to_score=self._percentage.get(framework.profile_name),
                rng=self._rng,
                start_index=self._next_start_index,
                extenders=self._extenders,
                tie_order=self._tie_order,
            )
        except ScheduleFitError as fit_error:
            self._next_start_index = fit_error.next_start_index
            self._metrics.scheduling_algorithm_duration.observe(self._clock.now() - start)
            status, nominated = await self._post_filter(framework, state, queued.pod_info, fit_error)
            await self.handle_failure(framework, queued, status, cycle, start, nominated_node=nominated,
                                      explanation=fit_error.explanation)
            return
        except NoNodesAvailable as err:
            await self.handle_failure(framework, queued, Status.unresolvable(str(err)), cycle, start)
            return
        except SchedulingError as err:  # a plugin failed: retried after backoff, nobody blamed
            self._next_start_index = err.next_start_index
            log.error("scheduling %s failed: %s", queued.key, err)
            await self.handle_failure(framework, queued, err.status, cycle, start)
            return
        self._next_start_index = result.next_start_index
        self._metrics.scheduling_algorithm_duration.observe(self._clock.now() - start)
        await self._assume_and_bind(framework, state, queued, result, cycle, start)

    def _skip(self, framework: Framework, queued: QueuedPodInfo) -> bool:
        pod = queued.pod
        if timeutil.is_set(pod.metadata.deletion_timestamp):
            self._recorder.record(
                pod, WARNING, "FailedScheduling", "Scheduling", f"skip schedule deleting pod: {queued.key}",
                component=framework.profile_name,
            )
            log.info("skipping %s: it is being deleted", queued.key)
            return True
        # An update can queue a pod again while its binding (from an earlier cycle) is in flight.
        return self._cache.is_assumed(queued.key)

    async def _post_filter(
        self, framework: Framework, state: CycleState, pod_info: PodInfo, fit_error: FitError
    ) -> tuple[Status, str | None]:
        """Run PostFilter (preemption) after a FitError: the status to fail the attempt with and the node
        to nominate the pod to ("" clears a nomination, None leaves it as it is)."""
        rejection = Status(Code.UNSCHEDULABLE, error=fit_error)
        if not framework.has_post_filter_plugins:
            return rejection, ""  # nothing can make room: a nomination left from before is stale
        result, status = await framework.run_post_filter(state, pod_info, fit_error.diagnosis.node_to_status)
        if status is not None and status.message():
            # "0/3 nodes are available: 3 Insufficient cpu. preemption: ..." in the event and condition.
            fit_error.diagnosis.post_filter_message = status.message()
        if status is not None and status.is_error:
            log.error("PostFilter for %s failed: %s", pod_info.key, status.message())
        return rejection, result.nominated_node_name if result is not None else None

    async def _assume_and_bind(self, framework: Framework, state: CycleState, queued: QueuedPodInfo,
                               result: ScheduleResult, cycle: int, start: float) -> None:
        host = result.suggested_host
        assumed = _assumed_copy(queued.pod_info, host)
        try:
            self._cache.assume_pod(assumed)
        except CacheError as err:
            # A bug in the retry logic: retried after backoff, as kube-scheduler does (the failure
            # handler does not requeue a pod that is bound meanwhile).
            log.exception("assuming %s on %s failed", queued.key, host)
            await self.handle_failure(framework, queued, Status.as_error(err), cycle, start)
            return
        # An assumed pod is no longer waiting for its nominated node.
        self._queue.delete_nominated_pod_if_exists(assumed.pod)

        status = framework.run_reserve(state, assumed, host)
        if is_success(status):
            status = framework.run_permit(state, assumed, host)
            if status is not None and status.is_wait:
                status = None  # the binding cycle waits for the permit
        else:
            assert status is not None
        if not is_success(status):
            assert status is not None
            framework.run_unreserve(state, assumed, host)
            self._cache.forget_pod(assumed.pod)
            if status.is_rejected:
                status = rejected_on_node(status, queued.pod, host)
            await self.handle_failure(framework, queued, status, cycle, start, nominated_node="")
            return
        await self._binder.submit(BindingJob(
            framework=framework, state=state, queued=queued, assumed=assumed, node_name=host,
            cycle=cycle, start=start, explanation=result.explanation,
        ))

    # ------------------------------------------------------------------------------------ failures

    async def handle_failure(
        self,
        framework: Framework,
        queued: QueuedPodInfo,
        status: Status,
        cycle: int,
        start: float,
        *,
        nominated_node: str | None = "",
        explanation: LazyExplanation | None = None,
        plugins: set[str] | None = None,
        message: str | None = None,
    ) -> None:
        """A failed attempt: metrics, requeue, nomination, event, pod condition (kube-scheduler's
        handleSchedulingFailure). ``nominated_node``: the node PostFilter nominated, "" to clear a
        nomination, None to leave it. A gang's member that failed with its group gets the group's
        rejecting ``plugins`` and ``message``."""
        duration = self._clock.now() - start
        if status.is_rejected:
            self._metrics.pod_unschedulable(framework.profile_name, duration)
        else:
            self._metrics.pod_schedule_error(framework.profile_name, duration)
        if plugins is not None:
            queued.unschedulable_plugins = set(plugins)
            queued.pending_plugins = set()
        elif isinstance(status.error, FitError):
            # Only the events these plugins registered can requeue the pod.
            queued.unschedulable_plugins = set(status.error.diagnosis.unschedulable_plugins)
            queued.pending_plugins = set(status.error.diagnosis.pending_plugins)
        else:
            queued.unschedulable_plugins = set()
            queued.pending_plugins = set()

        message = message if message is not None else failure_message(status)
        current = self._pod_lister(queued.key)
        decision = decide_failure(status, current)
        if decision.requeue:
            assert current is not None
            log.info("%s is unschedulable (%s): %s", queued.key, decision.reason, message)
            # Requeue with the latest version of the pod, as the informer has it.
            queued.pod_info = PodInfo(current) if current is not queued.pod else queued.pod_info
            self._queue.add_unschedulable_if_not_present(queued, cycle)
        else:
            log.info("not requeueing %s: %s", queued.key, decision.why_not)
        if nominated_node is not None:
            self._queue.add_nominated_pod(queued.pod_info, nominated_node)

        self._recorder.record(
            queued.pod, WARNING, "FailedScheduling", "Scheduling", truncate_message(message),
            component=framework.profile_name,
            annotations=explanation_annotations(explanation),
        )
        if decision.requeue:
            await self._write_condition(queued.key, decision.reason, message, nominated_node)

    async def _write_condition(self, key: str, reason: str, message: str, nominated_node: str | None) -> None:
        """Set PodScheduled=False (and the nominated node) on the pod's status, retrying on conflicts;
        nothing when the pod is gone, bound, or already says so (kube-scheduler's updatePod)."""
        pod = self._pod_lister(key)
        for _ in range(STATUS_UPDATE_ATTEMPTS):
            if pod is None or pod.spec.node_name:
                return
            updated = with_failure_status(pod, reason, message, nominated_node)
            if updated is None:
                return
            try:
                await self._client.update_status(updated)
                return
            except errors.Conflict:
                namespace, _, name = key.partition("/")
                try:
                    pod = await self._client.get("pods", name, namespace)  # type: ignore[assignment]
                except errors.NotFound:
                    return
            except errors.NotFound:
                return
            except errors.ApiError as err:
                log.warning("could not write the scheduling condition of %s: %s", key, err.message)
                return
        log.warning("gave up writing the scheduling condition of %s: it keeps changing", key)


# ------------------------------------------------------------------------------------------ helpers


def _assumed_copy(pod_info: PodInfo, node_name: str) -> PodInfo:
    """The pod as assumed on ``node_name``: a new Pod object (the queued one stays as the API has it)
    and a shallow copy of its PodInfo, so nothing is parsed again."""
    pod = objects_pb2.Pod()
    pod.CopyFrom(pod_info.pod)
    pod.spec.node_name = node_name
    assumed = copy.copy(pod_info)
    assumed.pod = pod
    return assumed


def with_failure_status(
    pod: objects_pb2.Pod, reason: str, message: str, nominated_node: str | None
) -> objects_pb2.Pod | None:
    """A copy of ``pod`` with PodScheduled=False and the nominated node, or None if it already has them."""
    if _has_failure_status(pod.status, reason, message, nominated_node):
        return None  # a retry that failed the same way: nothing to write, nothing to copy
    updated = objects_pb2.Pod()
    updated.CopyFrom(pod)
    status = updated.status
    changed = False
    if nominated_node is not None and status.nominated_node_name != nominated_node:
        status.nominated_node_name = nominated_node
        changed = True
    condition = next((c for c in status.conditions if c.type == POD_SCHEDULED), None)
    if condition is None:
        condition = status.conditions.add(type=POD_SCHEDULED)
    if (condition.status, condition.reason, condition.message) != ("False", reason, message):
        if condition.status != "False":
            condition.last_transition_time.CopyFrom(timeutil.now())
        condition.status, condition.reason, condition.message = "False", reason, message
        changed = True
    return updated if changed else None


def _has_failure_status(status: objects_pb2.PodStatus, reason: str, message: str,
                        nominated_node: str | None) -> bool:
    """Whether ``status`` says PodScheduled=False for ``reason`` with ``message``, nominated to
    ``nominated_node`` (None: whatever it is nominated to)."""
    if nominated_node is not None and status.nominated_node_name != nominated_node:
        return False
    condition = next((c for c in status.conditions if c.type == POD_SCHEDULED), None)
    return condition is not None and (condition.status, condition.reason, condition.message) == (
        "False", reason, message)
