"""The whole-tree cycle of a CompositePodGroup (KEP-4671's CompositePodGroup, KEP-5732's composite
constraints), after kube-scheduler's pod group cycle for a QueuedCompositePodGroupInfo and its
GangScheduling PlacementFeasible.

A pod whose PodGroup has a parent CompositePodGroup (``spec.parentCompositePodGroupName``) is scheduled
with its whole tree: the topmost composite above it, every PodGroup under that composite (at any depth)
and all their pending pods, taken out of the queue together. The tree is placed child by child, depth
first (child PodGroups by name, then child composites): each child PodGroup with the gang cycle's own
placing (cycle.py: its members one after the other, or, with its own topology key, in its best
placement among the nodes the tree may use). A child PodGroup is feasible when its bound, assumed and
placed pods reach its minCount (one for a basic group); one that is not has its placements undone at
once (a gang is all or nothing) and its pods go back to the queue. A composite is feasible when at least
``gang.minGroupCount`` of its children (one for ``basic``) are.

A composite with a topology constraint (``schedulingConstraints.topology[0].key``) is placed inside one
domain of its key: its subtree is simulated in each domain (only the domain of its already placed pods
once some are), each simulation undone, and among the feasible domains the PlacementScore plugins
choose on every pod the subtree's feasible PodGroups placed there (kube-scheduler's
findBestCompositePodGroupPlacement); the chosen domain's placements are assumed again. A child's own key
splits that domain further.

A feasible tree is bound with ONE fenced group bind of every placed pod of every feasible PodGroup. An
infeasible tree goes back whole: every member unschedulable with the tree's message (per domain when
the root has a constraint), on the members' events and conditions and on every PodGroup's condition and
event. Gang preemption is not tried for a tree.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cluster.api import objects_pb2
from scheduler.binding import BindingJob, GroupBindingJob
from scheduler.framework import (
    Code,
    CycleState,
    FitError,
    GangPolicy,
    NodeInfo,
    Placement,
    PodGroupAssignments,
    PodGroupInfo,
    PodGroupLister,
    PodInfo,
    ProposedAssignment,
    QueuedPodInfo,
    Status,
    placements_by_label,
)
from scheduler.framework.pod_groups import (
    CompositePolicy,
    composite_key,
    composite_policy,
    placement_policy,
)
from scheduler.gang.cycle import GangCycle, GroupAttempt, MemberRejection
from scheduler.gang.placements import best_scored, domain_label, explain_domains

if TYPE_CHECKING:
    from scheduler.framework.runtime import Framework

log = logging.getLogger(__name__)


@dataclass(slots=True)
class TreeAttempt:
    """One composite's subtree placed (or simulated) in one cycle."""

    policy: CompositePolicy
    groups: list[GroupAttempt] = field(default_factory=list)
    composites: list[TreeAttempt] = field(default_factory=list)
    #: Set when the composite's domains were tried and none is feasible: what its message says.
    no_placement: str = ""
    #: Per infeasible child PodGroup, how far it got (said before its placements were undone).
    shortfalls: dict[str, str] = field(default_factory=dict)
    #: Plugins that rejected a member in any simulation of the subtree: their events requeue the tree.
    plugins: set[str] = field(default_factory=set)

    @property
    def feasible_children(self) -> int:
        return (sum(1 for g in self.groups if group_feasible(g))
                + sum(1 for c in self.composites if c.feasible))

    @property
    def feasible(self) -> bool:
        return not self.no_placement and self.feasible_children >= self.policy.min_group_count

    def detail(self) -> str:
        """"1/2 groups feasible, minGroupCount 2: pod group default/b: 1/2 pods placeable, ..."."""
        if self.no_placement:
            return self.no_placement
        total = len(self.groups) + len(self.composites)
        head = f"{self.feasible_children}/{total} groups feasible"
        if self.policy.count_field:
            head = f"{head}, {self.policy.count_field} {self.policy.min_group_count}"
        for group in self.groups:
            if not group_feasible(group):
                why = self.shortfalls.get(group.policy.group) or group.no_placement or group.detail()
                return f"{head}: pod group {group.policy.group}: {why}"
        for composite in self.composites:
            if not composite.feasible:
                return f"{head}: composite pod group {composite.policy.key}: {composite.detail()}"
        return head

    def message(self) -> str:
        return f"composite pod group {self.policy.key}: {self.detail()}"

    def group_attempts(self) -> list[GroupAttempt]:
        return [*self.groups, *(g for c in self.composites for g in c.group_attempts())]


def group_feasible(attempt: GroupAttempt) -> bool:
    """A child PodGroup counts for its composite when its pods on a node (bound, assumed, placed now)
    reach its minimum, as GangScheduling's PlacementFeasible counts them."""
    return attempt.placeable >= attempt.policy.min_count


class CompositeCycle:
    """Runs the whole-tree cycle with the gang cycle's placing, undoing and binding."""

    def __init__(self, gang: GangCycle) -> None:
        self._gang = gang

    @staticmethod
    def tree_to_place(framework: Framework, pod_info: PodInfo) -> str | None:
        """The key of the topmost CompositePodGroup above the pod's PodGroup, None for a pod whose group
        has no parent (one dictionary look-up for those)."""
        key = pod_info.group_key
        if not key:
            return None
        groups = framework.handle.pod_groups
        return groups.composite_root(key)[0] if groups.parent_of(key) else None

    async def run(self, framework: Framework, leader: QueuedPodInfo, root: str, cycle: int,
                  start: float) -> None:
        groups = framework.handle.pod_groups
        missing = groups.composite_root(leader.pod_info.group_key)[1]
        if missing:
            # A composite deleted after the pod passed GangScheduling's door: never placed alone.
            plugin = next(iter(framework.pod_group_plugins), "")
            status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                            (f"waiting for CompositePodGroup {missing} to be created",), plugin)
            # In the name of the plugins that registered PodGroup events: the composite's add asks it again.
            await self._gang.on_failure(framework, leader, status, cycle, start,
                                        plugins=set(framework.pod_group_plugins))
            return
        pending = [pod for group in groups.tree_groups(root) for pod in groups.pending(group)]
        members, nominations = self._gang.take_members(framework, leader, pending)
        by_group: dict[str, list[QueuedPodInfo]] = {}
        for member in members:
            by_group.setdefault(member.pod_info.group_key, []).append(member)
        outcome = await self._place_composite(framework, root, by_group, None, frozenset())
        if isinstance(outcome, Status):
            log.error("placing composite pod group %s failed: %s", root, outcome.message())
            await self._gang.fail_all(framework, members, nominations, outcome, cycle, start)
            return
        if outcome.feasible:
            await self._admit(framework, outcome, cycle, start)
            return
        self._undo(framework, outcome)
        self._gang.restore_nominations(members, nominations)
        await self._release(framework, outcome, members, cycle, start)

    # ------------------------------------------------------------------------------------ placing

    async def _place_composite(self, framework: Framework, key: str,
                               by_group: dict[str, list[QueuedPodInfo]], nodes: Sequence[NodeInfo] | None,
                               above: frozenset[str]) -> TreeAttempt | Status:
        """``above``: the composites above this one (a loop of parents, which the API refuses, is an
        error rather than an endless descent)."""
        groups = framework.handle.pod_groups
        composite = groups.composite(key)
        if composite is None:
            return Status.as_error(KeyError(f"composite pod group {key} is gone"))
        if key in above:
            return Status.as_error(ValueError(f"composite pod group {key} is its own ancestor"))
        policy = composite_policy(composite)
        above |= {key}
        if not (policy.topology_key and framework.has_placement_generate_plugins):
            return await self._place_children(framework, policy, by_group, nodes, above)
        domains = self._domains(groups, policy, nodes)
        if isinstance(domains, str):
            return TreeAttempt(policy, no_placement=domains)
        trials: list[tuple[Placement, TreeAttempt]] = []
        for placement in domains:
            trial = await self._place_children(framework, policy, by_group, placement.nodes, above)
            if isinstance(trial, Status):
                return trial
            self._undo(framework, trial)
            trials.append((placement, trial))
        feasible = [(placement, trial) for placement, trial in trials if trial.feasible]
        plugins = {plugin for _, trial in trials for plugin in trial.plugins}
        if not feasible:
            why = explain_domains([(placement.name, trial.detail()) for placement, trial in trials],
                                  domain_label(policy.topology_key))
            return TreeAttempt(policy, no_placement=why, plugins=plugins)
        best = _best(framework, composite, feasible)
        if isinstance(best, Status):
            return best
        placed = self._place_again(framework, best)
        placed.plugins |= plugins
        return placed

    async def _place_children(self, framework: Framework, policy: CompositePolicy,
                              by_group: dict[str, list[QueuedPodInfo]], nodes: Sequence[NodeInfo] | None,
                              above: frozenset[str]) -> TreeAttempt | Status:
        groups = framework.handle.pod_groups
        attempt = TreeAttempt(policy)
        children, composites = groups.composite_children(policy.key)
        for child in children:
            placed = await self._place_group(framework, child, by_group.get(child, []), nodes)
            if isinstance(placed, Status):
                self._undo(framework, attempt)
                return placed
            attempt.plugins |= placed.rejecting_plugins()
            if not group_feasible(placed):
                # All or nothing per PodGroup: what it could place must not hold room from its siblings.
                attempt.shortfalls[child] = placed.no_placement or placed.detail()
                self._gang.undo(framework, placed)
                placed.rejections.extend(_as_rejections(placed))
                placed.placements.clear()
            attempt.groups.append(placed)
        for child in composites:
            sub = await self._place_composite(framework, child, by_group, nodes, above)
            if isinstance(sub, Status):
                self._undo(framework, attempt)
                return sub
            attempt.plugins |= sub.plugins
            if not sub.feasible:
                self._undo(framework, sub)
                sub = _emptied(sub)
            attempt.composites.append(sub)
        return attempt

    async def _place_group(self, framework: Framework, key: str, members: Sequence[QueuedPodInfo],
                           nodes: Sequence[NodeInfo] | None) -> GroupAttempt | Status:
        groups = framework.handle.pod_groups
        group = groups.pod_group(key)
        if group is None:
            return Status.as_error(KeyError(f"pod group {key} is gone"))
        policy = placement_policy(group)
        admitted = groups.bound_count(key) + groups.assumed_count(key)
        if members and framework.has_placement_generate_plugins and groups.topology_key(key):
            return await self._gang.place_in_best_placement(framework, members, policy, admitted,
                                                            nodes)
        attempt = GroupAttempt(policy, admitted)
        names = None if nodes is None else [info.name for info in nodes]
        for member in members:
            await self._gang.place(framework, member, attempt, names)
        return attempt

    def _domains(self, groups: PodGroupLister, policy: CompositePolicy,
                 nodes: Sequence[NodeInfo] | None) -> list[Placement] | str:
        """The domains of the composite's key among ``nodes`` (default: every node), only the one its
        subtree's placed pods are in once some are; a message when there is none to offer."""
        snapshot = self._gang.refreshed_snapshot()
        snapshot_nodes = snapshot.node_infos()
        within = snapshot_nodes.list() if nodes is None else nodes
        key = policy.topology_key
        required: str | None = None
        for group in groups.tree_groups(policy.key):
            for pod, node_name in groups.placed(group):
                try:
                    node = snapshot_nodes.get(node_name).node
                except KeyError:
                    node = None
                labels = node.metadata.labels if node is not None else {}
                if key not in labels or (required is not None and labels[key] != required):
                    return (f"no placement fits: the placed pods of the tree (pod {pod.metadata.name} on "
                            f"{node_name}) are not in one {domain_label(key)}")
                required = labels[key]
        return placements_by_label(within, key, required) or "no placement fits: no node offers one"

    def _place_again(self, framework: Framework, chosen: TreeAttempt) -> TreeAttempt:
        return TreeAttempt(
            chosen.policy,
            [self._gang.place_again(framework, g) if g.placements else g for g in chosen.groups],
            [self._place_again(framework, c) for c in chosen.composites],
            shortfalls=chosen.shortfalls,
            plugins=set(chosen.plugins),
        )

    def _undo(self, framework: Framework, attempt: TreeAttempt) -> None:
        for composite in reversed(attempt.composites):
            self._undo(framework, composite)
        for group in reversed(attempt.groups):
            self._gang.undo(framework, group)

    # ------------------------------------------------------------------------------------ outcome

    async def _admit(self, framework: Framework, tree: TreeAttempt, cycle: int, start: float) -> None:
        attempts = tree.group_attempts()
        for attempt in attempts:
            for rejection in attempt.rejections:
                # A member of an infeasible child was placed, then let go with its group: the events
                # that could help the group requeue it.
                plugins = (set(framework.pod_group_plugins) | tree.plugins
                           if rejection.status.code is Code.UNSCHEDULABLE
                           and not isinstance(rejection.status.error, FitError) else None)
                await self._gang.on_failure(framework, rejection.queued, rejection.status, cycle, start,
                                            explanation=rejection.explanation, plugins=plugins)
        placements = [p for attempt in attempts for p in attempt.placements]
        if not placements:
            return  # every pod the tree needs is bound already
        timeout = max(attempt.policy.timeout_s for attempt in attempts)
        await self._gang.binder.submit_group(GroupBindingJob(
            framework=framework,
            policy=GangPolicy(tree.policy.key, len(placements), timeout, tree.policy.count_field),
            members=[
                BindingJob(framework=framework, state=p.state, queued=p.queued, assumed=p.assumed,
                           node_name=p.node_name, cycle=cycle, start=start, explanation=p.explanation)
                for p in placements
            ],
            deadline=self._gang.clock.now() + timeout,
        ))

    async def _release(self, framework: Framework, tree: TreeAttempt, members: Sequence[QueuedPodInfo],
                       cycle: int, start: float) -> None:
        message = tree.message()
        log.info("%s", message)
        plugins = set(framework.pod_group_plugins) | tree.plugins
        status = Status(Code.UNSCHEDULABLE, (message,), next(iter(framework.pod_group_plugins), ""))
        for member in members:
            await self._gang.on_failure(framework, member, status, cycle, start, plugins=set(plugins),
                                        message=message)
        groups = framework.handle.pod_groups
        for key in groups.tree_groups(tree.policy.key):
            names = [m.pod.metadata.name for m in members if m.pod_info.group_key == key]
            await self._gang.reporter.unschedulable(key, message, {}, dict.fromkeys(names, message),
                                                    component=framework.profile_name)
        for key in _composites_of(groups, tree.policy.key):
            await self._gang.reporter.composite_unschedulable(key, message, component=framework.profile_name)


def _composites_of(groups: PodGroupLister, root: str) -> list[str]:
    """``root`` and every composite under it."""
    found, todo = [], [root]
    while todo:
        key = todo.pop(0)
        if key not in found:
            found.append(key)
            todo.extend(groups.composite_children(key)[1])
    return found


def _as_rejections(attempt: GroupAttempt) -> list[MemberRejection]:
    """The placed members of an infeasible child PodGroup, now rejected with the group's reason."""
    why = Status(Code.UNSCHEDULABLE, (f"pod group {attempt.policy.group}: {attempt.detail()}",))
    return [MemberRejection(p.queued, why) for p in attempt.placements]


def _emptied(tree: TreeAttempt) -> TreeAttempt:
    """An infeasible child composite whose placements were undone: its members all rejected."""
    for group in tree.group_attempts():
        group.rejections.extend(_as_rejections(group))
        group.placements.clear()
    return tree


def _best(framework: Framework, composite: objects_pb2.CompositePodGroup,
          feasible: Sequence[tuple[Placement, TreeAttempt]]) -> TreeAttempt | Status:
    """The feasible domain the PlacementScore plugins like best, given every pod the tree's feasible
    PodGroups placed there (kube-scheduler's findBestCompositePodGroupPlacement); equal totals are
    drawn by the scheduler's seeded random source."""
    members = tuple(p.queued.pod_info for _, trial in feasible for g in trial.group_attempts()
                    for p in g.placements)
    best, status = best_scored(
        framework, CycleState(), PodGroupInfo(composite_key(composite), _as_pod_group(composite), members),
        [(trial, PodGroupAssignments(placement, tuple(ProposedAssignment(p.queued.pod_info, p.node_name)
                                                      for g in trial.group_attempts() for p in g.placements)))
         for placement, trial in feasible],
        framework.handle.rng)
    if status is not None:
        return status
    assert best is not None
    return best


def _as_pod_group(composite: objects_pb2.CompositePodGroup) -> objects_pb2.PodGroup:
    """The composite as the placement plugins see a group: its name and its topology constraint."""
    view = objects_pb2.PodGroup()
    view.metadata.CopyFrom(composite.metadata)
    view.spec.scheduling_constraints.CopyFrom(composite.spec.scheduling_constraints)
    return view
