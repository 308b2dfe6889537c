"""The dry run of preemption: on copies of the candidate nodes, which pods would have to go.

kube-scheduler's preemption.Evaluator.DryRunPreemption and DefaultPreemption.SelectVictimsOnNode:

* ``select_victims_on_node`` works on a clone of one node and a clone of the cycle state. It removes
  every pod of lower priority than the preemptor (telling the PreFilter plugins through RemovePod, so
  their per-cycle state stays right); if the preemptor still does not pass Filter (with the nominated
  pods, as the scheduling cycle filters), the node cannot help. Otherwise it puts pods back, most
  important first: first those whose eviction would violate a PodDisruptionBudget, then the others,
  keeping each one the preemptor still fits beside. Whatever could not be put back is the victim set,
  minimal in that no single victim could have stayed.
* ``dry_run_preemption`` visits the potential nodes round robin from a random offset and stops once it
  has enough candidates (``num_candidates``), as kube-scheduler does to bound the cost on big clusters.

Nothing here writes to the API or mutates the snapshot.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from cluster.api import errors, objects_pb2
from cluster.api.selectors import LabelSelector
from scheduler.framework import Code, CycleState, NodeInfo, PluginsRunner, PodInfo, Status, by_identity

_name_of_node = operator.attrgetter("name")

#: A node where the preemptor could not fit even if every lower-priority pod left: nothing to evict.
NO_VICTIMS = "No preemption victims found for incoming pod"


@dataclass(slots=True)
class Candidate:
    """A node where preemption would make room, and the pods it would take (kube's Victims)."""

    node_name: str
    #: Most important first (``importance`` order).
    victims: list[PodInfo]
    #: How many victims are evicted in spite of a PodDisruptionBudget.
    num_pdb_violations: int


# --------------------------------------------------------------------------------------- importance


def importance(pod_info: PodInfo) -> tuple[int, float]:
    """A sort key putting the more important pod first (kube-scheduler's MoreImportantPod): higher
    priority, then the pod that has been running longer (one not started yet counts as starting now:
    ``PodInfo.start_time``)."""
    return -pod_info.priority, pod_info.start_time


# ------------------------------------------------------------------------------------------- PDBs


@dataclass(frozen=True, slots=True)
class Budget:
    """A PodDisruptionBudget as preemption reads it: which pods, how many may still go."""

    namespace: str
    selector: LabelSelector
    disruptions_allowed: int
    #: Pods the API server already counted as disrupted (evictions in flight): not counted again.
    disrupted_pods: frozenset[str]


def budgets(pdbs: Iterable[objects_pb2.PodDisruptionBudget]) -> list[Budget]:
    """The PDBs that can protect a pod. A PDB without a selector, with an empty one, or with one that
    does not parse matches nothing (as in kube-scheduler), so it is left out."""
    out = []
    for pdb in pdbs:
        if not pdb.spec.HasField("selector"):
            continue
        try:
            selector = LabelSelector.from_proto(pdb.spec.selector)
        except errors.Invalid:
            continue
        if selector.empty:
            continue
        out.append(Budget(pdb.metadata.namespace, selector, pdb.status.disruptions_allowed,
                          frozenset(pdb.status.disrupted_pods)))
    return out


def split_by_pdb_violation(
    pods: Sequence[PodInfo], budgets_: Sequence[Budget]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """(violating, non-violating), each in the given order (kube-scheduler's
    filterPodsWithPDBViolation): going through the pods in order, each matching budget loses one
    allowed disruption; a pod that takes any of its budgets below zero would violate it."""
    if not budgets_:
        return [], list(pods)  # the usual case; the dry run asks for every candidate node
    allowed = [budget.disruptions_allowed for budget in budgets_]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for pod_info in pods:
        pod = pod_info.pod
        violated = False
        labels = pod.metadata.labels
        if labels:  # a pod without labels matches no selector
            for index, budget in enumerate(budgets_):
                if budget.namespace != pod.metadata.namespace or not budget.selector.matches(labels):
                    continue
                if pod.metadata.name in budget.disrupted_pods:
                    continue
                allowed[index] -= 1
                if allowed[index] < 0:
                    violated = True
        (violating if violated else non_violating).append(pod_info)
    return violating, non_violating


# ----------------------------------------------------------------------------------- one node


class _Failed(Exception):
    def __init__(self, status: Status) -> None:
        self.status = status


def potential_victims(pod: PodInfo, node_info: NodeInfo,
                      evictable: Callable[[PodInfo], bool] | None) -> list[PodInfo]:
    """The pods of ``node_info`` that ``pod`` may evict: those ``evictable`` allows if given (it compares
    the priorities: a group preempts with its PodGroup's, units.py), else those of lower priority."""
    if evictable is None:
        return [other for other in node_info.pods.values() if other.priority < pod.priority]
    return list(filter(evictable, node_info.pods.values()))


def select_victims_on_node(
    framework: PluginsRunner,
    state: CycleState,
    pod: PodInfo,
    node_info: NodeInfo,
    budgets_: Sequence[Budget],
    evictable: Callable[[PodInfo], bool] | None = None,
    importance_of: Callable[[PodInfo], tuple[Any, ...]] = importance,
    potential: list[PodInfo] | None = None,
) -> tuple[list[PodInfo], int, Status | None]:
    """The fewest pods to evict from ``node_info`` for ``pod`` to fit: (victims, PDB violations, None),
    or ([], 0, why not). ``state`` and ``node_info`` must be copies: both are changed. ``evictable``, if
    given, says which pods may be victims instead of their priority alone (a pod of a group counts with
    its PodGroup's priority, and a group evicted whole only if all of it may go); ``importance_of`` the
    order in which pods are reprieved (by the priority they count with); ``potential``, if given, the
    pods ``evictable`` allows (``potential_victims``), found already."""

    def remove(victim: PodInfo) -> None:
        node_info.remove_pod(victim.key)
        status = framework.run_pre_filter_extension_remove_pod(state, pod, victim, node_info)
        if status is not None and not status.is_success:
            raise _Failed(status)

    def add(victim: PodInfo) -> None:
        node_info.add_pod(victim)
        status = framework.run_pre_filter_extension_add_pod(state, pod, victim, node_info)
        if status is not None and not status.is_success:
            raise _Failed(status)

    def fits() -> Status | None:
        status = framework.run_filter_with_nominated_pods(state, pod, node_info)
        return None if status is None or status.is_success else status

    def stays(candidate: PodInfo) -> bool:
        add(candidate)
        if fits() is None:
            return True
        remove(candidate)
        return False

    if potential is None:
        potential = potential_victims(pod, node_info, evictable)
    if not potential:
        return [], 0, Status.unresolvable(NO_VICTIMS)
    try:
        for victim in potential:
            remove(victim)
        status = fits()
        if status is not None:
            # Even with every lower-priority pod gone the pod does not fit (affinity to one of them is
            # deliberately not considered, as in kube-scheduler).
            return [], 0, status
        victims, violations = reprieve(potential, budgets_, importance_of, stays)
    except _Failed as failed:
        return [], 0, Status(Code.ERROR, failed.status.reasons, failed.status.plugin, failed.status.error)
    return victims, violations, None


def reprieve(potential: list[PodInfo], budgets_: Sequence[Budget],
             importance_of: Callable[[PodInfo], tuple[Any, ...]],
             stays: Callable[[PodInfo], bool]) -> tuple[list[PodInfo], int]:
    """With every pod of ``potential`` off the node, put them back most important first, those whose
    eviction would violate a PDB before the others: ``stays(pod)`` puts one back and says whether the
    preemptor still fits (else it takes it off again). The victims, most important first, and how many
    of them violate a PDB. ``potential`` is sorted in place."""
    potential.sort(key=importance_of)
    violating, non_violating = split_by_pdb_violation(potential, budgets_)
    victims: list[PodInfo] = []
    violations = 0
    for group, counts in ((violating, True), (non_violating, False)):
        for candidate in group:
            if not stays(candidate):
                victims.append(candidate)
                violations += counts
    if violating and non_violating:
        victims.sort(key=importance_of)
    return victims, violations


# ------------------------------------------------------------------------------------- dry run

#: A fast path for ``select_victims_on_node``: given a node, the pods the preemptor may evict there, the
#: budgets and the order of importance, what ``select_victims_on_node`` answers, or None where it does not
#: apply (requests_only.py).
VictimsFastPath = Callable[
    [NodeInfo, list[PodInfo], Sequence[Budget], Callable[[PodInfo], tuple[Any, ...]]],
    "tuple[list[PodInfo], int, Status | None] | None",
]


def num_candidates(num_nodes: int, min_percentage: int, min_absolute: int) -> int:
    """How many candidates the dry run looks for (kube-scheduler's calculateNumCandidates): the
    percentage of the nodes, at least the absolute number, at most every node."""
    return min(max(num_nodes * min_percentage // 100, min_absolute), num_nodes)


@dataclass(slots=True)
class DryRun:
    """What the dry run found: candidates (those without PDB violations first) and, for every node it
    looked at that cannot be a candidate, why."""

    candidates: list[Candidate]
    node_statuses: dict[str, Status]

    @property
    def errors(self) -> list[Status]:
        statuses = list(self.node_statuses.values())
        # Nodes share status objects: look at each distinct one first, as nearly always none is an error.
        if all(status.code is not Code.ERROR for status in by_identity(statuses).values()):
            return []
        return [status for status in statuses if status.code is Code.ERROR]


def dry_run_preemption(
    framework: PluginsRunner,
    state: CycleState,
    pod: PodInfo,
    potential_nodes: Sequence[NodeInfo],
    budgets_: Sequence[Budget],
    offset: int,
    wanted: int,
    evictable: Callable[[PodInfo], bool] | None = None,
    lower: Sequence[bool] | None = None,
    importance_of: Callable[[PodInfo], tuple[Any, ...]] = importance,
    fast_path: VictimsFastPath | None = None,
) -> DryRun:
    """Try the potential nodes from ``offset`` round robin, each on its own copies of the node and the
    state, until ``wanted`` candidates are found of which at least one violates no PDB (kube-scheduler's
    DryRunPreemption, sequential: each list keeps at most ``wanted`` candidates). ``lower``, if given,
    says for each potential node whether it may hold a pod of lower priority than ``pod``: the nodes it
    rules out are recorded as having no victims without looking at their pods. ``fast_path``, if given,
    is asked first on each node, and ``select_victims_on_node`` where it does not apply."""
    non_violating: list[Candidate] = []
    violating: list[Candidate] = []
    statuses: dict[str, Status] = {}
    rotated = [*potential_nodes[offset:], *potential_nodes[:offset]]
    names = list(map(_name_of_node, rotated))
    looked_at: Iterable[int] = range(len(rotated))
    if lower is not None:
        looked_at = itertools.compress(looked_at, [*lower[offset:], *lower[:offset]])
    no_victims = Status.unresolvable(NO_VICTIMS)
    settled = 0  # the rotated nodes before this one have a status or are candidates
    for at in looked_at:
        statuses.update(zip(names[settled:at], itertools.repeat(no_victims)))  # ruled out by ``lower``
        settled = at + 1
        node_info = rotated[at]
        potential = potential_victims(pod, node_info, evictable)
        if not potential:
            # What select_victims_on_node would say, without copying the node and the state first.
            statuses[node_info.name] = no_victims
            continue
        answer = None if fast_path is None else fast_path(node_info, potential, budgets_, importance_of)
        if answer is None:
            answer = select_victims_on_node(framework, state.clone(), pod, node_info.clone(), budgets_,
                                            evictable, importance_of, potential)
        victims, violations, status = answer
        if status is None and victims:
            found = non_violating if violations == 0 else violating
            if len(found) < wanted:
                found.append(Candidate(node_info.name, victims, violations))
            if non_violating and len(non_violating) + len(violating) >= wanted:
                return DryRun(non_violating + violating, statuses)
            continue
        if status is None:
            status = Status.as_error(f'expected at least one victim pod on node "{node_info.name}"')
        statuses[node_info.name] = status
    statuses.update(zip(names[settled:], itertools.repeat(no_victims)))
    return DryRun(non_violating + violating, statuses)
