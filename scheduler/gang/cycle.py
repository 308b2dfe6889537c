"""The whole-group scheduling cycle of a gang (upstream's workload scheduling cycle, KEP-4671).

When a pod of a gang pops and its group has fewer than minCount (minMember) pods bound or being bound,
``GangCycle.run`` takes the group's other pending pods out of the queue (active, backoff, unschedulable:
``SchedulingQueue.take``), orders them by the queue's order, and places them one after the other with the
real algorithm, each assumed in the cache (and the incremental snapshot refreshed, which copies only the
node that changed) so the next sees it, each through Reserve and Permit. Then:

* placed + already admitted >= minCount: ONE group binding job (``Binder.submit_group``) binds every
  placed member together; members that found no place go back to the queue on their own.
* fewer: every placement is undone (Unreserve, the cache forgets the pod), the profile's
  PodGroupPostFilter plugins run (gang preemption: DefaultPreemption), and the whole group goes back to
  the queue together: the same attempts and backoff for all, unschedulable with the union of the plugins
  that rejected any member and the plugins that registered PodGroup events (``pod_group_plugins``), so
  that any event that could help one member requeues them all. Each member's PodScheduled=False
  condition and FailedScheduling event carry the group's reason, and the PodGroup's condition and events
  say it too (status.py).

Why one cycle for the group: two gangs that each hold part of the room while they wait for the rest
would deadlock, and reservations held across cycles would keep room from everybody else. Placing a gang
inside one cycle means a gang either holds all it needs or nothing.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from scheduler.algorithm import NoNodesAvailable, ScheduleFitError, ScheduleResult, SchedulingError
from scheduler.binding import Binder, BindingJob, GroupBindingJob
from scheduler.cache import CacheError
from scheduler.clock import Clock
from scheduler.framework import (
    Code,
    CycleState,
    FailedPodGroup,
    FitError,
    GangPolicy,
    PodInfo,
    QueuedPodInfo,
    Status,
    is_success,
    pod_key,
    rejected_on_node,
)
from scheduler.framework.explanation import LazyExplanation
from scheduler.gang.status import PodGroupReporter

if TYPE_CHECKING:
    from scheduler.cache import Cache, Snapshot
    from scheduler.framework.runtime import Framework
    from scheduler.queue import SchedulingQueue

log = logging.getLogger(__name__)

#: The algorithm as the loop runs it (its node round robin included).
RunAlgorithm = Callable[["Framework", CycleState, PodInfo], Awaitable[ScheduleResult]]
#: Makes the assumed copy of a pod on a node.
AssumedCopy = Callable[[PodInfo, str], PodInfo]


class FailureHandler(Protocol):
    async def __call__(self, framework: Framework, queued: QueuedPodInfo, status: Status, cycle: int,
                       start: float, *, nominated_node: str | None = "",
                       explanation: LazyExplanation | None = None,
                       plugins: set[str] | None = None, message: str | None = None) -> None: ...


@dataclass(slots=True)
class MemberPlacement:
    queued: QueuedPodInfo
    state: CycleState
    assumed: PodInfo
    node_name: str
    explanation: LazyExplanation | None


@dataclass(slots=True)
class MemberRejection:
    queued: QueuedPodInfo
    status: Status
    explanation: LazyExplanation | None = None


@dataclass(slots=True)
class GroupAttempt:
    """One whole-group cycle: what was placed, what was not, and how many were admitted before."""

    policy: GangPolicy
    #: Members bound or being bound before this cycle.
    admitted: int
    placements: list[MemberPlacement] = field(default_factory=list)
    rejections: list[MemberRejection] = field(default_factory=list)

    @property
    def placeable(self) -> int:
        return self.admitted + len(self.placements)

    @property
    def fits(self) -> bool:
        return bool(self.placements) and self.placeable >= self.policy.min_count

    def message(self) -> str:
        """"pod group default/train: 3/4 pods placeable, minCount 4: pod w-3: 0/8 nodes are ..."."""
        total = self.admitted + len(self.placements) + len(self.rejections)
        head = (f"pod group {self.policy.group}: {self.placeable}/{total} pods placeable, "
                f"{self.policy.count_field} {self.policy.min_count}")
        if not self.rejections:
            return head
        first = self.rejections[0]
        return f"{head}: pod {first.queued.pod.metadata.name}: {_reason(first.status)}"


class GangCycle:
    def __init__(
        self,
        *,
        queue: SchedulingQueue,
        cache: Cache,
        snapshot: Snapshot,
        binder: Binder,
        clock: Clock,
        run_algorithm: RunAlgorithm,
        assumed_copy: AssumedCopy,
        on_failure: FailureHandler,
        reporter: PodGroupReporter,
    ) -> None:
        self._queue = queue
        self._cache = cache
        self._snapshot = snapshot
        self._binder = binder
        self._clock = clock
        self._run_algorithm = run_algorithm
        self._assumed_copy = assumed_copy
        self._on_failure = on_failure
        self._reporter = reporter

    @staticmethod
    def gang_to_place(framework: Framework, pod_info: PodInfo) -> GangPolicy | None:
        """The gang policy of the pod's group when the group is not admitted yet (fewer than minCount
        bound or being bound): then the pod is placed in a whole-group cycle."""
        key = pod_info.group_key
        if not key:
            return None
        groups = framework.handle.pod_groups
        policy = groups.policy(key)
        if policy is None or groups.bound_count(key) + groups.assumed_count(key) >= policy.min_count:
            return None
        return policy

    async def run(self, framework: Framework, leader: QueuedPodInfo, policy: GangPolicy, cycle: int,
                  start: float) -> None:
        groups = framework.handle.pod_groups
        admitted = groups.bound_count(policy.group) + groups.assumed_count(policy.group)
        siblings = self._queue.take(
            key for pod in groups.pending(policy.group) if (key := pod_key(pod)) != leader.key
        )
        less = framework.queue_sort_less
        siblings.sort(key=functools.cmp_to_key(lambda a, b: -1 if less(a, b) else int(less(b, a))))
        members = [leader, *siblings]
        # One attempt of the group: every member counts it, and so backs off alike.
        attempts = max(member.attempts + (member is not leader) for member in members)
        for member in members:
            member.attempts = attempts
            member.unschedulable_plugins = set()
            member.pending_plugins = set()
            if member.initial_attempt_timestamp is None:
                member.initial_attempt_timestamp = self._clock.now()

        # The members are placed anew in this cycle: the nominations of their earlier attempts must not
        # hold room against each other, nor a member against itself on another node. A released group
        # gets them back (gang preemption then keeps or replaces them).
        nominations = {
            member.key: node for member in members
            if (node := self._queue.nominated_node_of(member.key)) is not None
        }
        for member in members:
            self._queue.delete_nominated_pod_if_exists(member.pod)
        attempt = GroupAttempt(policy, admitted)
        for member in members:
            await self._place(framework, member, attempt)
        if attempt.fits:
            await self._admit(framework, attempt, cycle, start)
        else:
            for member in members:
                if member.key in nominations:
                    self._queue.add_nominated_pod(member.pod_info, nominations[member.key])
            await self._release(framework, attempt, cycle, start)

    async def _place(self, framework: Framework, member: QueuedPodInfo, attempt: GroupAttempt) -> None:
        state = CycleState()
        self._cache.update_snapshot(self._snapshot)
        try:
            result = await self._run_algorithm(framework, state, member.pod_info)
        except ScheduleFitError as fit_error:
            attempt.rejections.append(MemberRejection(
                member, Status(Code.UNSCHEDULABLE, error=fit_error), fit_error.explanation))
            return
        except NoNodesAvailable as err:
            attempt.rejections.append(MemberRejection(member, Status.unresolvable(str(err))))
            return
        except SchedulingError as err:
            attempt.rejections.append(MemberRejection(member, err.status))
            return
        host = result.suggested_host
        assumed = self._assumed_copy(member.pod_info, host)
        try:
            self._cache.assume_pod(assumed)
        except CacheError as err:
            log.exception("assuming %s on %s failed", member.key, host)
            attempt.rejections.append(MemberRejection(member, Status.as_error(err)))
            return
        status = framework.run_reserve(state, assumed, host)
        if is_success(status):
            status = framework.run_permit(state, assumed, host)
            if status is not None and status.is_wait:
                status = None  # the group's binding job waits for it, bounded by the group's timeout
        if not is_success(status):
            assert status is not None
            framework.run_unreserve(state, assumed, host)
            framework.waiting_pods.discard(assumed.key)
            self._cache.forget_pod(assumed.pod)
            if status.is_rejected:
                status = rejected_on_node(status, member.pod, host)
            attempt.rejections.append(MemberRejection(member, status))
            return
        attempt.placements.append(MemberPlacement(member, state, assumed, host, result.explanation))

    async def _admit(self, framework: Framework, attempt: GroupAttempt, cycle: int, start: float) -> None:
        # Members that found no place go back on their own: the group is admitted without them.
        for rejection in attempt.rejections:
            await self._on_failure(framework, rejection.queued, rejection.status, cycle, start,
                                   explanation=rejection.explanation)
        await self._binder.submit_group(GroupBindingJob(
            framework=framework,
            policy=attempt.policy,
            members=[
                BindingJob(framework=framework, state=p.state, queued=p.queued, assumed=p.assumed,
                           node_name=p.node_name, cycle=cycle, start=start, explanation=p.explanation)
                for p in attempt.placements
            ],
            deadline=self._clock.now() + attempt.policy.timeout_s,
        ))

    async def _release(self, framework: Framework, attempt: GroupAttempt, cycle: int, start: float) -> None:
        for placement in attempt.placements:
            framework.run_unreserve(placement.state, placement.assumed, placement.node_name)
            framework.waiting_pods.discard(placement.assumed.key)
            self._cache.forget_pod(placement.assumed.pod)
        nominations, found = self._post_filter(framework, attempt)
        message = attempt.message()
        if found:
            message = f"{message.rstrip('.')}. {found}"
        plugins = set(framework.pod_group_plugins)
        for rejection in attempt.rejections:
            if isinstance(rejection.status.error, FitError):
                plugins |= rejection.status.error.diagnosis.unschedulable_plugins
                plugins |= rejection.status.error.diagnosis.pending_plugins
        log.info("%s", message)
        status = Status(Code.UNSCHEDULABLE, (message,), next(iter(framework.pod_group_plugins), ""))
        explanations = {r.queued.key: r.explanation for r in attempt.rejections}
        members: Sequence[QueuedPodInfo] = [
            *(p.queued for p in attempt.placements), *(r.queued for r in attempt.rejections)]
        for member in members:
            nominated = None if nominations is None else nominations.get(member.key, "")
            await self._on_failure(framework, member, status, cycle, start, plugins=set(plugins),
                                   message=message, explanation=explanations.get(member.key),
                                   nominated_node=nominated)
        await self._reporter.unschedulable(
            attempt.policy.group, message,
            {p.queued.pod.metadata.name: p.node_name for p in attempt.placements},
            {r.queued.pod.metadata.name: _reason(r.status) for r in attempt.rejections},
            component=framework.profile_name,
        )

    def _post_filter(self, framework: Framework,
                     attempt: GroupAttempt) -> tuple[Mapping[str, str] | None, str]:
        """The profile's PodGroupPostFilter plugins on the failed group: where its members are nominated
        (None leaves their nominations) and what to add to the group's message."""
        if not framework.has_pod_group_post_filter_plugins:
            return {}, ""  # nothing can make room: old nominations are stale
        # The cycle's placements were just undone in the cache: the plugins see the snapshot without them.
        self._cache.update_snapshot(self._snapshot)
        members = [*(p.queued.pod_info for p in attempt.placements),
                   *(r.queued.pod_info for r in attempt.rejections)]
        group = FailedPodGroup(attempt.policy, attempt.admitted, members)
        result, status = framework.run_pod_group_post_filter(group)
        if status is not None and status.code is Code.ERROR:
            log.error("PodGroupPostFilter of pod group %s failed: %s", group.policy.group, status.message())
        nominations = None if result is None else result.nominations
        if status is not None:
            return nominations, status.message()
        return nominations, "" if result is None else result.message


def _reason(status: Status) -> str:
    if isinstance(status.error, FitError):
        return status.error.message()
    return status.message() or str(status.error or status.code.value)
