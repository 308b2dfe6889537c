"""Preemption for a gang: the victims that let the WHOLE gang fit, chosen for the group (KEP-5710's
workload-aware preemption, built on the single-pod dry run of candidates.py).

``select_group_victims`` simulates on a copy of the snapshot (nodes are copied when first changed): the
gang's unplaced members are placed one after the other, each with the profile's PreFilter and Filter as
the scheduling cycle runs them, the previous members' placements and evictions included (replayed
into each member's PreFilter state with AddPod / RemovePod, as the single-pod dry run does for one node).
For each member:

1. if a node fits it as the simulation stands, it goes there (the first such node), evicting nothing;
2. else the single-pod dry run runs over the nodes Filter found Unschedulable, from a random offset and
   bounded as for one pod (``num_candidates``): the fewest lowest-priority victims per node, those whose
   eviction violates no PodDisruptionBudget first. Each candidate's victims are widened to their
   disruption units (units.py); the victims and PDB violations the earlier members already caused count
   against the budgets. kube-scheduler's node choice (selection.py) picks among the candidates: fewest
   PDB violations, lowest highest priority, smallest priority sum, fewest victims, latest start;
3. a member no node can take even so is skipped; the plan fails as soon as too few members are left.

Nothing is evicted unless ``needed`` members (the group's minCount minus its members already bound)
found a node; then the plan says where each goes and which pods to evict.

Disruption units (units.py): a pod of a PodGroup whose disruptionMode is all goes with every bound pod
of its group, and may be a victim only if the group's priority is below the preemptor's; other pods go
one by one, each counting with its PodGroup's priority.

Only pods counting lower than the gang are victims: the gang preempts with its PodGroup's priority
(units.py); the gang's own nominations are left out of Filter (the simulation places its members
itself).

Cost: per member, one PreFilter, one replay of the changes so far, Filter on every node (as one
scheduling attempt), and the dry run on at most ``num_candidates`` potential nodes (all of them only
when fewer candidates exist), each O(pods on the node) Filter calls. So O(members x (nodes + candidates
x pods per node)), linear in the gang's size as for that many single-pod preemptions; never a search
over node sets.

Nothing here writes to the API or changes the snapshot.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from scheduler.framework import (
    Code,
    CycleState,
    NodeInfo,
    NodeInfoLister,
    PluginsRunner,
    PodGroupLister,
    PodInfo,
    PodNominator,
    PreFilterResult,
    Status,
)
from scheduler.plugins.defaultpreemption.candidates import (
    Budget,
    Candidate,
    dry_run_preemption,
    split_by_pdb_violation,
)
from scheduler.plugins.defaultpreemption.selection import pick_one_node_for_preemption
from scheduler.plugins.defaultpreemption.units import DisruptionUnits, preemptor_priority

#: The gang does not fit even with every lower-priority pod it may evict gone.
NOT_ENOUGH_ROOM = "not enough room for the whole gang even after evicting lower-priority pods"


@dataclass(frozen=True, slots=True)
class Eviction:
    """A victim, where it runs, and the member (and its node) it is evicted for."""

    victim: PodInfo
    node_name: str
    member: PodInfo
    member_node: str


@dataclass(slots=True)
class GroupPlan:
    """Where each placed member goes and what to evict for it."""

    #: Member key -> node, in the order the members were placed.
    placements: dict[str, str] = field(default_factory=dict)
    #: Most important first.
    evictions: list[Eviction] = field(default_factory=list)
    #: "namespace/name" of each group evicted whole.
    victim_groups: list[str] = field(default_factory=list)
    #: Victims evicted in spite of a PodDisruptionBudget.
    num_pdb_violations: int = 0


# ---------------------------------------------------------------------------------- disruption units


def widened(candidate: Candidate, units: DisruptionUnits, budgets_: Sequence[Budget]) -> Candidate:
    """A single pod's candidate with every pod evicted with its victims (a group of disruptionMode all
    goes whole), most important first and its PDB violations counted again; the candidate itself if
    none is added."""
    if not any(victim.group_key for victim in candidate.victims):
        return candidate  # each victim is a unit of its own
    pods: dict[str, PodInfo] = {}
    for victim in candidate.victims:
        for info, _ in units.unit(victim, candidate.node_name):
            pods.setdefault(info.key, info)
    if len(pods) == len(candidate.victims):
        return candidate
    victims = sorted(pods.values(), key=units.importance)
    return Candidate(candidate.node_name, victims, len(split_by_pdb_violation(victims, budgets_)[0]))


# -------------------------------------------------------------------------------------- simulation


class _Simulation:
    """The snapshot's nodes with the changes of the plan so far; a node is copied when first changed."""

    def __init__(self, nodes: NodeInfoLister) -> None:
        self._lister = nodes
        self._changed: dict[str, NodeInfo] = {}
        #: (pod, node, added?) in the order they happened, for replaying into a member's PreFilter state.
        self.changes: list[tuple[PodInfo, str, bool]] = []

    def node(self, name: str) -> NodeInfo | None:
        changed = self._changed.get(name)
        if changed is not None:
            return changed
        try:
            return self._lister.get(name)
        except KeyError:
            return None

    def nodes(self, names: frozenset[str] | None) -> list[NodeInfo]:
        out = []
        for node_info in self._lister.list():
            if names is None or node_info.name in names:
                out.append(self._changed.get(node_info.name, node_info))
        return out

    def _own(self, name: str) -> NodeInfo | None:
        node_info = self._changed.get(name)
        if node_info is None:
            original = self.node(name)
            if original is None:
                return None
            node_info = self._changed[name] = original.clone()
        return node_info

    def remove(self, pod_info: PodInfo, node_name: str) -> None:
        node_info = self._own(node_name)
        if node_info is not None and node_info.remove_pod(pod_info.key):
            self.changes.append((pod_info, node_name, False))

    def add(self, pod_info: PodInfo, node_name: str) -> None:
        node_info = self._own(node_name)
        if node_info is not None:
            node_info.add_pod(pod_info)
            self.changes.append((pod_info, node_name, True))


class _WithoutOwnNominations:
    """The profile's plugins as the dry run calls them, with Filter counting the pods nominated to a node
    (priority >= the pod's, as the scheduling cycle does) except the gang's own: where its members go
    is what the simulation decides, and counting their old nominations too would count them twice."""

    def __init__(self, runner: PluginsRunner, nominator: PodNominator, own: frozenset[str]) -> None:
        self._runner = runner
        self._nominator = nominator
        self._own = own

    def run_filter_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        others = [other for other in self._nominator.nominated_pods_for_node(node_info.name)
                  if other.priority >= pod.priority and other.key not in self._own]
        if others:
            state_with = state.clone()
            node_with = node_info.clone()
            for other in others:
                node_with.add_pod(other)
                status = self._runner.run_pre_filter_extension_add_pod(state_with, pod, other, node_with)
                if status is not None and status.code is not Code.SUCCESS:
                    return status
            status = self._runner.run_filter(state_with, pod, node_with)
            if status is not None and status.code is not Code.SUCCESS:
                return status
        return self._runner.run_filter(state, pod, node_info)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._runner.run_pre_filter_extension_add_pod(state, pod, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._runner.run_pre_filter_extension_remove_pod(state, pod, pod_to_remove, node_info)

    def run_pre_filter(self, state: CycleState, pod: PodInfo) -> tuple[PreFilterResult | None, Status | None]:
        return self._runner.run_pre_filter(state, pod)

    def run_filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        return self._runner.run_filter(state, pod, node_info)


# ---------------------------------------------------------------------------------- the selection


def budgets_after(budgets_: Sequence[Budget], evicted: Sequence[PodInfo]) -> list[Budget]:
    """``budgets_`` with the disruptions ``evicted`` would already take counted."""
    if not budgets_ or not evicted:
        return list(budgets_)
    out = []
    for budget in budgets_:
        used = sum(
            1 for victim in evicted
            if victim.pod.metadata.namespace == budget.namespace and victim.pod.metadata.labels
            and victim.pod.metadata.name not in budget.disrupted_pods
            and budget.selector.matches(victim.pod.metadata.labels)
        )
        out.append(dataclasses.replace(budget, disruptions_allowed=budget.disruptions_allowed - used))
    return out


@dataclass(slots=True)
class _Planner:
    runner: PluginsRunner
    filters: _WithoutOwnNominations
    units: DisruptionUnits
    budgets: Sequence[Budget]
    offset_and_wanted: Callable[[int], tuple[int, int]]
    priority: int
    sim: _Simulation
    plan: GroupPlan = field(default_factory=GroupPlan)
    victims: dict[str, tuple[PodInfo, str, PodInfo]] = field(default_factory=dict)

    def place(self, member: PodInfo) -> Status | None:
        """Place ``member`` in the simulation, evicting what it needs: None, or why not (ERROR: a
        plugin failed)."""
        state = CycleState()
        pre_result, status = self.runner.run_pre_filter(state, member)
        if status is not None and status.code is not Code.SUCCESS and (
                status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE or not status.is_rejected):
            return status
        replayed = self._replay(state, member)
        if replayed is not None:
            return replayed
        names = pre_result.node_names if pre_result is not None else None
        nodes = self.sim.nodes(names)
        if status is None or status.code is Code.SUCCESS:
            potential = []
            for node_info in nodes:
                fit = self.filters.run_filter_with_nominated_pods(state, member, node_info)
                if fit is None or fit.code is Code.SUCCESS:
                    self._put(member, node_info.name, [])
                    return None
                if fit.code is Code.ERROR:
                    return fit
                if fit.code is Code.UNSCHEDULABLE:
                    potential.append(node_info)
        else:
            potential = nodes  # PreFilter said Unschedulable: every node may be helped
        if not potential:
            return Status.unschedulable(NOT_ENOUGH_ROOM)
        chosen = [victim for victim, _, _ in self.victims.values()]
        left = budgets_after(self.budgets, chosen)
        offset, wanted = self.offset_and_wanted(len(potential))
        dry_run = dry_run_preemption(self.filters, state, member, potential, left, offset, wanted,
                                     self.units.evictable_for(self.priority),
                                     importance_of=self.units.importance)
        if not dry_run.candidates:
            errors = dry_run.errors
            return errors[0] if errors else Status.unschedulable(NOT_ENOUGH_ROOM)
        widened: dict[str, list[tuple[PodInfo, str]]] = {}
        candidates = []
        for candidate in dry_run.candidates:
            victims = self._widen(candidate)
            widened[candidate.node_name] = victims
            infos = [info for info, _ in victims]
            violations = len(split_by_pdb_violation(infos, left)[0])
            candidates.append(Candidate(candidate.node_name, infos, violations))
        best = pick_one_node_for_preemption(candidates)
        assert best is not None
        self._put(member, best.node_name, widened[best.node_name])
        return None

    def _widen(self, candidate: Candidate) -> list[tuple[PodInfo, str]]:
        """The candidate's victims and every pod evicted with them, not yet chosen, most important first."""
        seen: dict[str, tuple[PodInfo, str]] = {}
        for victim in candidate.victims:
            for info, node_name in self.units.unit(victim, candidate.node_name):
                if info.key not in self.victims:
                    seen.setdefault(info.key, (info, node_name))
        return sorted(seen.values(), key=lambda pair: self.units.importance(pair[0]))

    def _replay(self, state: CycleState, member: PodInfo) -> Status | None:
        for pod_info, node_name, added in self.sim.changes:
            node_info = self.sim.node(node_name)
            assert node_info is not None
            if added:
                status = self.runner.run_pre_filter_extension_add_pod(state, member, pod_info, node_info)
            else:
                status = self.runner.run_pre_filter_extension_remove_pod(state, member, pod_info, node_info)
            if status is not None and status.code is not Code.SUCCESS:
                return status
        return None

    def _put(self, member: PodInfo, node_name: str, victims: Sequence[tuple[PodInfo, str]]) -> None:
        for info, victim_node in victims:
            self.victims[info.key] = (info, victim_node, member)
            self.sim.remove(info, victim_node)
        self.sim.add(member, node_name)
        self.plan.placements[member.key] = node_name

    def finish(self) -> GroupPlan:
        plan = self.plan
        ordered = sorted(self.victims.values(), key=lambda entry: self.units.importance(entry[0]))
        plan.evictions = [Eviction(info, node_name, member, plan.placements[member.key])
                          for info, node_name, member in ordered]
        infos = [info for info, _, _ in ordered]
        plan.num_pdb_violations = len(split_by_pdb_violation(infos, self.budgets)[0])
        groups = {self.units.group_of(info) for info in infos}
        plan.victim_groups = sorted(group for group in groups if group)
        return plan


def select_group_victims(
    runner: PluginsRunner,
    nodes: NodeInfoLister,
    nominator: PodNominator,
    groups: PodGroupLister,
    members: Sequence[PodInfo],
    needed: int,
    budgets_: Sequence[Budget],
    offset_and_wanted: Callable[[int], tuple[int, int]],
) -> tuple[GroupPlan | None, Status | None]:
    """A plan placing at least ``needed`` of ``members`` (in their order) with the fewest, least
    important victims, or (None, why not): UNSCHEDULABLE with ``NOT_ENOUGH_ROOM`` when the gang cannot
    fit whole, ERROR when a plugin failed. ``offset_and_wanted(number of potential nodes)``: where each
    member's dry run starts and how many candidates it looks for."""
    if not members or needed <= 0:
        return GroupPlan(), None
    planner = _Planner(
        runner=runner,
        filters=_WithoutOwnNominations(runner, nominator, frozenset(member.key for member in members)),
        units=DisruptionUnits(nodes, groups),
        budgets=budgets_,
        offset_and_wanted=offset_and_wanted,
        priority=preemptor_priority(groups.pod_group(members[0].group_key), members),
        sim=_Simulation(nodes),
    )
    for index, member in enumerate(members):
        status = planner.place(member)
        if status is not None and status.code is Code.ERROR:
            return None, status
        if len(planner.plan.placements) >= needed:
            return planner.finish(), None
        if len(planner.plan.placements) + len(members) - index - 1 < needed:
            break
    return None, Status.unschedulable(NOT_ENOUGH_ROOM)
