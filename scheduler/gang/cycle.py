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

A group with a topology constraint (``spec.schedulingConstraints.topology``), gang or basic, is placed
in this cycle for every pod, and first asks where it may go: the profile's PlacementGenerate plugins
give its placements (one per domain of the key), the whole group is simulated inside each placement
(the same placing, restricted to the placement's nodes, then undone), the feasible placements are
scored and the best one is placed again, as kube-scheduler's placement algorithm does (placements.py).
When none is feasible the group goes back whole, its message saying per domain how far it got; no
gang preemption is tried for it, as kube-scheduler does not yet for constrained groups. A group without
a constraint costs what it cost before: no placement is generated.

Why one cycle for the group: two gangs that each hold part of the room while they wait for the rest
would deadlock, and reservations held across cycles would keep room from everybody else. Placing a gang
inside one cycle means a gang either holds all it needs or nothing.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from cluster.api import objects_pb2
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
    NodeInfo,
    NodeInfoLister,
    PodGroupInfo,
    PodInfo,
    QueuedPodInfo,
    Status,
    is_success,
    pod_key,
    rejected_on_node,
)
from scheduler.framework.explanation import LazyExplanation
from scheduler.framework.pod_groups import placement_policy
from scheduler.gang.placements import PlacementTrial, choose, domain_label, no_placement_fits
from scheduler.gang.status import PodGroupReporter

if TYPE_CHECKING:
    from scheduler.cache import Cache, Snapshot
    from scheduler.framework.runtime import Framework
    from scheduler.queue import SchedulingQueue

log = logging.getLogger(__name__)

#: The algorithm as the loop runs it (its node round robin included), over the given nodes only when
#: they are given.
RunAlgorithm = Callable[
    ["Framework", CycleState, PodInfo, "Sequence[NodeInfo] | None"], Awaitable[ScheduleResult]]
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
    #: Set when the group's placements were tried and none fits: what the group's message says instead.
    no_placement: str = ""
    #: Plugins that rejected members in the placements tried (their events may requeue the group).
    placement_plugins: set[str] = field(default_factory=set)
    #: Members a placement's simulation did not try, once they could no longer make it feasible.
    untried: int = 0

    @property
    def placeable(self) -> int:
        return self.admitted + len(self.placements)

    def rejecting_plugins(self) -> set[str]:
        """The plugins that rejected a member, in this attempt or the placements tried for it: their
        events may make the group placeable."""
        plugins = set(self.placement_plugins)
        for rejection in self.rejections:
            if isinstance(rejection.status.error, FitError):
                plugins |= rejection.status.error.diagnosis.unschedulable_plugins
                plugins |= rejection.status.error.diagnosis.pending_plugins
        return plugins

    def out_of_reach(self, remaining: int) -> bool:
        """Whether placing all ``remaining`` members could not make the attempt fit (kube-scheduler's
        early rejection of a placement)."""
        return self.placeable + remaining < max(self.policy.min_count, 1)

    @property
    def fits(self) -> bool:
        return bool(self.placements) and self.placeable >= self.policy.min_count

    def detail(self) -> str:
        """"3/4 pods placeable, minCount 4: pod w-3: 0/8 nodes are ..." (a basic group has no minimum)."""
        total = self.admitted + len(self.placements) + len(self.rejections) + self.untried
        head = f"{self.placeable}/{total} pods placeable"
        if self.policy.count_field:
            head = f"{head}, {self.policy.count_field} {self.policy.min_count}"
        if not self.rejections:
            return head
        first = self.rejections[0]
        return f"{head}: pod {first.queued.pod.metadata.name}: {_reason(first.status)}"

    def message(self) -> str:
        """"pod group default/train: 3/4 pods placeable, minCount 4: pod w-3: 0/8 nodes are ..."."""
        return f"pod group {self.policy.group}: {self.no_placement or self.detail()}"


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

    # What the composite cycle (composite.py) places and binds with.
    def refreshed_snapshot(self) -> Snapshot:
        """The snapshot, brought up to the cache's state."""
        self._cache.update_snapshot(self._snapshot)
        return self._snapshot

    @property
    def binder(self) -> Binder:
        return self._binder

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def on_failure(self) -> FailureHandler:
        return self._on_failure

    @property
    def reporter(self) -> PodGroupReporter:
        return self._reporter

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
            # A constrained group's later pods too must go where its placed pods are.
            if framework.has_placement_generate_plugins and groups.topology_key(key):
                group = groups.pod_group(key)
                return placement_policy(group) if group is not None else None
            return None
        return policy

    async def run(self, framework: Framework, leader: QueuedPodInfo, policy: GangPolicy, cycle: int,
                  start: float) -> None:
        groups = framework.handle.pod_groups
        admitted = groups.bound_count(policy.group) + groups.assumed_count(policy.group)
        members, nominations = self.take_members(framework, leader, groups.pending(policy.group))
        if framework.has_placement_generate_plugins and groups.topology_key(policy.group):
            outcome = await self.place_in_best_placement(framework, members, policy, admitted)
            if isinstance(outcome, Status):
                log.error("placing pod group %s failed: %s", policy.group, outcome.message())
                await self.fail_all(framework, members, nominations, outcome, cycle, start)
                return
            attempt = outcome
        else:
            attempt = GroupAttempt(policy, admitted)
            for member in members:
                await self.place(framework, member, attempt)
        if attempt.fits:
            await self._admit(framework, attempt, cycle, start)
        else:
            self.restore_nominations(members, nominations)
            await self._release(framework, attempt, cycle, start)

    def take_members(self, framework: Framework, leader: QueuedPodInfo,
                     pending: Iterable[objects_pb2.Pod]) -> tuple[list[QueuedPodInfo], dict[str, str]]:
        """The leader and the ``pending`` pods taken out of the queue, in the queue's order, as one
        attempt (the same attempts for all), with the nominations of their earlier attempts (removed)."""
        siblings = self._queue.take(key for pod in pending if (key := pod_key(pod)) != leader.key)
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
        return members, nominations

    def restore_nominations(self, members: Iterable[QueuedPodInfo], nominations: Mapping[str, str]) -> None:
        """A released group gets its earlier nominations back (gang preemption keeps or replaces them)."""
        for member in members:
            if member.key in nominations:
                self._queue.add_nominated_pod(member.pod_info, nominations[member.key])

    async def fail_all(self, framework: Framework, members: Sequence[QueuedPodInfo],
                       nominations: Mapping[str, str], status: Status, cycle: int, start: float) -> None:
        """Every member back to the queue with ``status`` (a placement plugin's error)."""
        self.restore_nominations(members, nominations)
        for member in members:
            await self._on_failure(framework, member, status, cycle, start)

    async def place_in_best_placement(self, framework: Framework, members: Sequence[QueuedPodInfo],
                                      policy: GangPolicy, admitted: int,
                                      nodes: Sequence[NodeInfo] | None = None) -> GroupAttempt | Status:
        """The group placed in its best feasible placement (placements.py) among ``nodes`` (default:
        every node), or an attempt that places nobody and says why no placement fits; an ERROR status
        when a placement plugin failed."""
        groups = framework.handle.pod_groups
        pod_group = groups.pod_group(policy.group)
        if pod_group is None:
            return Status.as_error(KeyError(f"pod group {policy.group} is gone"))
        group = PodGroupInfo(policy.group, pod_group, [member.pod_info for member in members])
        state = CycleState()
        self._cache.update_snapshot(self._snapshot)
        within = self._snapshot.node_infos().list() if nodes is None else _nodes_named(
            self._snapshot.node_infos(), [info.name for info in nodes])
        placements, status = framework.run_placement_generate(state, group, within)
        if status is not None and status.code is not Code.UNSCHEDULABLE:
            return status
        trials = []
        for placement in placements:
            names = [info.name for info in placement.nodes]
            attempt = GroupAttempt(policy, admitted)
            for index, member in enumerate(members):
                # A placement that can no longer reach the minimum is given up: with many domains
                # mostly full, trying every member in every domain would cost most of the cycle.
                if attempt.out_of_reach(len(members) - index):
                    attempt.untried = len(members) - index
                    break
                await self.place(framework, member, attempt, names)
            self.undo(framework, attempt)
            trials.append(PlacementTrial(placement, attempt))
        feasible = [trial for trial in trials if trial.attempt.fits]
        if not feasible:
            attempt = _unplaced(policy, admitted, members, trials,
                                no_placement_fits(trials, domain_label(groups.topology_key(policy.group))))
            if status is not None and status.plugin:
                attempt.placement_plugins.add(status.plugin)  # no placement: its events may bring one
            return attempt
        best, status = choose(framework, state, group, feasible, framework.handle.rng)
        if best is None:
            assert status is not None
            return status
        return self.place_again(framework, best.attempt)

    def place_again(self, framework: Framework, chosen: GroupAttempt) -> GroupAttempt:
        """The chosen placement's members assumed again where its simulation put them, through Reserve
        and Permit with their own cycle states (kube-scheduler's prepareForBindingCycle)."""
        attempt = GroupAttempt(chosen.policy, chosen.admitted, rejections=list(chosen.rejections))
        for placed in chosen.placements:
            try:
                self._cache.assume_pod(placed.assumed)
            except CacheError as err:
                log.exception("assuming %s on %s failed", placed.queued.key, placed.node_name)
                attempt.rejections.append(MemberRejection(placed.queued, Status.as_error(err)))
                continue
            status = self._reserve_and_permit(framework, placed.queued, placed.state, placed.assumed,
                                              placed.node_name)
            if status is not None:
                attempt.rejections.append(MemberRejection(placed.queued, status))
            else:
                attempt.placements.append(placed)
        return attempt

    async def place(self, framework: Framework, member: QueuedPodInfo, attempt: GroupAttempt,
                     within: Sequence[str] | None = None) -> None:
        """Place one member on any node, or on the nodes named ``within`` (a placement's)."""
        state = CycleState()
        self._cache.update_snapshot(self._snapshot)
        nodes = None if within is None else _nodes_named(self._snapshot.node_infos(), within)
        try:
            result = await self._run_algorithm(framework, state, member.pod_info, nodes)
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
        status = self._reserve_and_permit(framework, member, state, assumed, host)
        if status is not None:
            attempt.rejections.append(MemberRejection(member, status))
            return
        attempt.placements.append(MemberPlacement(member, state, assumed, host, result.explanation))

    def _reserve_and_permit(self, framework: Framework, member: QueuedPodInfo, state: CycleState,
                            assumed: PodInfo, host: str) -> Status | None:
        """Reserve and Permit for a member assumed on ``host``; on a failure it is undone and the status
        returned."""
        status = framework.run_reserve(state, assumed, host)
        if is_success(status):
            status = framework.run_permit(state, assumed, host)
            if status is not None and status.is_wait:
                status = None  # the group's binding job waits for it, bounded by the group's timeout
        if is_success(status):
            return None
        assert status is not None
        framework.run_unreserve(state, assumed, host)
        framework.waiting_pods.discard(assumed.key)
        self._cache.forget_pod(assumed.pod)
        return rejected_on_node(status, member.pod, host) if status.is_rejected else status

    def undo(self, framework: Framework, attempt: GroupAttempt) -> None:
        """Every placement of the attempt undone, the last first: Unreserve, and the cache forgets it."""
        for placement in reversed(attempt.placements):
            framework.run_unreserve(placement.state, placement.assumed, placement.node_name)
            framework.waiting_pods.discard(placement.assumed.key)
            self._cache.forget_pod(placement.assumed.pod)

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
        self.undo(framework, attempt)
        # Gang preemption does not know placements: a constrained group waits for room to free up.
        nominations, found = (({}, "") if framework.handle.pod_groups.topology_key(attempt.policy.group)
                              and framework.has_placement_generate_plugins
                              else self._post_filter(framework, attempt))
        message = attempt.message()
        if found:
            message = f"{message.rstrip('.')}. {found}"
        plugins = set(framework.pod_group_plugins) | attempt.rejecting_plugins()
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


def _nodes_named(lister: NodeInfoLister, names: Sequence[str]) -> list[NodeInfo]:
    """The snapshot's current NodeInfos of ``names`` (a node deleted meanwhile is left out)."""
    nodes = []
    for name in names:
        try:
            nodes.append(lister.get(name))
        except KeyError:
            continue
    return nodes


def _unplaced(policy: GangPolicy, admitted: int, members: Sequence[QueuedPodInfo],
              trials: Sequence[PlacementTrial], why: str) -> GroupAttempt:
    """The attempt of a group no placement fits: nobody placed, each member failed with its first
    rejection in a placement (or the group's reason), every rejecting plugin kept for requeueing."""
    attempt = GroupAttempt(policy, admitted, no_placement=why)
    first: dict[str, MemberRejection] = {}
    for trial in trials:
        for rejection in trial.attempt.rejections:
            first.setdefault(rejection.queued.key, rejection)
        attempt.placement_plugins |= trial.attempt.rejecting_plugins()
    for member in members:
        attempt.rejections.append(
            first.get(member.key) or MemberRejection(member, Status(Code.UNSCHEDULABLE, (why,))))
    return attempt


def _reason(status: Status) -> str:
    if isinstance(status.error, FitError):
        return status.error.message()
    return status.message() or str(status.error or status.code.value)
