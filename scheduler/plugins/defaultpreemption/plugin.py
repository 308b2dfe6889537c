"""DefaultPreemption: when no node fits a pod, evict the least harmful set of lower-priority pods on
one node, and nominate the pod to it (kube-scheduler's PostFilter plugin DefaultPreemption with
preemption.Evaluator.Preempt).

The steps, each in its own module:

1. eligibility (here): a pod with preemptionPolicy Never never preempts; a pod already nominated to a
   node where a lower-priority pod is terminating waits for it instead of preempting again;
2. the potential nodes (here): those Filter found Unschedulable; UnschedulableAndUnresolvable nodes
   (node selector, taints, ...), and nodes PreFilter left out, cannot be helped by evicting pods;
3. the dry run (candidates.py): the minimal victims on each of enough potential nodes (lowest.py rules
   out, in one comparison, the nodes without a pod of lower priority), each widened to
   its disruption unit (units.py: a PodGroup of disruptionMode all is evicted whole, and only if its
   priority is lower, or not at all; a pod of a PodGroup counts with the group's priority);
4. the extenders that support preemption may drop candidates or change their victims;
5. the choice of one node (selection.py);
6. the act (executor.py): delete the victims, record events, clear lower-priority nominations, in the
   background through the handle's API dispatcher (kube-scheduler's async preemption).

The PostFilterResult names the node; the scheduler's failure handler nominates the pod to it.

For a gang that did not fit in its whole-group cycle, the plugin is a PodGroupPostFilter too
(``pod_group_post_filter``): the victims that let the whole gang fit (group.py), evicted in the
background through the API dispatcher's ``start_group``.

Everything the plugin uses comes from its framework handle: the snapshot, the nominator, the client,
the profile's own Filter and PreFilter extensions for the dry run, the PodDisruptionBudgets, the event
recorder, the extenders, the waiting pods, the API dispatcher and the random source of the dry run's
starting offset.
"""

from __future__ import annotations

import functools
import itertools
import logging
import operator
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from cluster.api import objects_pb2, timeutil
from scheduler.config.argtypes import DefaultPreemptionArgs
from scheduler.extender.calls import preempt_with_extenders
from scheduler.extender.interface import Extender, ExtenderError, Victims
from scheduler.framework import (
    Code,
    CycleState,
    FailedPodGroup,
    Handle,
    NodeInfo,
    NodeInfoLister,
    PodGroupPostFilterResult,
    PodInfo,
    PostFilterResult,
    Status,
    as_node_table_lister,
    by_identity,
    count_statuses,
    summarize_statuses,
)
from scheduler.plugins.defaultpreemption.candidates import (
    NO_VICTIMS,
    Candidate,
    budgets,
    dry_run_preemption,
    num_candidates,
)
from scheduler.plugins.defaultpreemption.executor import Executor
from scheduler.plugins.defaultpreemption.group import GroupPlan, select_group_victims, widened
from scheduler.plugins.defaultpreemption.lowest import LowestPodPriority
from scheduler.plugins.defaultpreemption.requests_only import RequestsOnly
from scheduler.plugins.defaultpreemption.selection import pick_one_node_for_preemption
from scheduler.plugins.defaultpreemption.units import PREEMPT_NEVER, DisruptionUnits, group_preempts

log = logging.getLogger(__name__)

_name_of_node = operator.attrgetter("name")

NAME = "DefaultPreemption"

#: Every message of this plugin starts so, after the FitError's own ("0/3 nodes are available: ...").
MESSAGE_PREFIX = "preemption: "
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
#: The status of the nodes the dry run did not look at, in the no-candidate message.
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_CANDIDATE_NODE = "no candidate node for preemption"

#: The profile of pods that name no scheduler.
DEFAULT_SCHEDULER_NAME = "default-scheduler"

#: kube-scheduler's DefaultPreemptionArgs, decoded, defaulted and validated by scheduler.config.
ARGS = DefaultPreemptionArgs

class DefaultPreemption:
    """The PostFilter plugin. Stateless between cycles."""

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle) -> None:
        self.args = args
        self._handle = handle
        self._executor = Executor(handle, NAME)

    @property
    def name(self) -> str:
        return NAME

    async def post_filter(
        self, state: CycleState, pod: PodInfo, node_to_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]:
        result, status = await self._preempt(state, pod, node_to_status)
        if status is not None and status.message():
            status = Status(status.code, (MESSAGE_PREFIX + status.message(),), error=status.error)
        return result, status

    async def _preempt(
        self, state: CycleState, pod: PodInfo, node_to_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]:
        lister = self._handle.snapshot().node_infos()
        eligible, why = self.pod_eligible_to_preempt_others(pod, node_to_status)
        if not eligible:
            # None keeps the pod's nomination as it is: it waits for the victims it already chose.
            return None, Status.unschedulable(why)
        all_nodes = lister.list()
        if not all_nodes:
            return None, Status.as_error("no nodes available")
        below = _below(lister, pod.priority)
        if below is not None and not below.any():
            return self._nothing_to_evict(len(all_nodes), node_to_status)
        return await self._preempt_with_dry_run(state, pod, lister, all_nodes, node_to_status, below)

    def _nothing_to_evict(
        self, num_all_nodes: int, node_to_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]:
        """What ``_preempt_with_dry_run`` finds when no node holds a pod of lower priority than the
        preemptor (nearly always, in a cluster of one priority), counted instead of looked for: no
        candidate, each node where preemption might help saying there are no victims. Their number sizes
        the dry run's random offset, which is drawn all the same."""
        helpful = sum(times for status, times in count_statuses(node_to_status)
                      if status.code is Code.UNSCHEDULABLE)
        if not helpful:
            return _no_candidate(num_all_nodes, [], 0)
        self.offset_and_num_candidates(helpful)
        return _no_candidate(num_all_nodes, [(Status.unresolvable(NO_VICTIMS), helpful)], helpful)

    async def _preempt_with_dry_run(
        self, state: CycleState, pod: PodInfo, lister: NodeInfoLister, all_nodes: Sequence[NodeInfo],
        node_to_status: Mapping[str, Status], below: npt.NDArray[np.bool_] | None,
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Preemption proper: the dry run over the nodes where it might help, the extenders, the choice
        of a node and the eviction. ``below``: which of ``all_nodes`` hold a pod of lower priority than
        the preemptor, if known."""
        helpful = _unschedulable(all_nodes, node_to_status)
        potential = list(itertools.compress(all_nodes, helpful))
        units = DisruptionUnits(lister, self._handle.pod_groups)
        if potential:
            offset, wanted = self.offset_and_num_candidates(len(potential))
            pdbs = budgets(self._handle.pod_disruption_budgets())
            lower = None if below is None else list(itertools.compress(below.tolist(), helpful))
            fast_path = RequestsOnly.of(self._handle, state, node_to_status)
            dry_run = dry_run_preemption(self._handle, state, pod, potential, pdbs, offset, wanted,
                                         _lower_and(pod, units.evictable_for(pod.priority)), lower,
                                         units.importance, None if fast_path is None else fast_path.victims)
            candidates = [widened(candidate, units, pdbs) for candidate in dry_run.candidates]
            node_statuses = dry_run.node_statuses
            if not candidates and dry_run.errors:
                first = dry_run.errors[0]
                return None, Status(Code.ERROR, first.reasons, first.plugin, first.error)
        else:
            candidates, node_statuses = [], {}
        if not candidates:
            # Counted by distinct status object, as a FitError counts its diagnosis.
            counted = count_statuses(node_statuses)
            return _no_candidate(len(all_nodes), counted, len(node_statuses))

        extenders = self._handle.extenders
        if extenders:
            try:
                candidates = await _ask_extenders(extenders, pod, candidates, lister)
            except ExtenderError as err:
                return None, Status.as_error(err)
        best = pick_one_node_for_preemption(candidates)
        if best is None:
            return None, Status.unschedulable(NO_CANDIDATE_NODE)
        log.info("preempting %d pod(s) on %s for %s", len(best.victims), best.node_name, pod.key)
        component = _scheduler_name(pod.pod)
        evict = functools.partial(
            self._executor.prepare_candidate_async, pod, best.node_name, best.victims, component)
        victim_groups = sorted({group for v in best.victims if (group := units.group_of(v))})
        if victim_groups:
            evict = functools.partial(evict, victim_groups=victim_groups)
        self._handle.api_dispatcher.start(pod, best.node_name, evict)
        return PostFilterResult(best.node_name), None

    # ------------------------------------------------------------------------------------- steps

    def pod_eligible_to_preempt_others(
        self, pod: PodInfo, node_to_status: Mapping[str, Status]
    ) -> tuple[bool, str]:
        """Whether the pod may preempt, and why not (kube-scheduler's PodEligibleToPreemptOthers)."""
        spec = pod.pod.spec
        if spec.HasField("preemption_policy") and spec.preemption_policy == PREEMPT_NEVER:
            return False, NOT_ELIGIBLE_NEVER
        nominated = pod.pod.status.nominated_node_name
        if not nominated:
            return True, ""
        status = node_to_status.get(nominated)
        if status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return True, ""  # its nominated node can no longer take it: it may preempt elsewhere
        if self._lower_pod_terminating(pod, nominated):
            return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def _lower_pod_terminating(self, pod: PodInfo, node_name: str) -> bool:
        """Whether a pod of lower priority than ``pod`` is terminating on ``node_name`` (evicted for it)."""
        try:
            node_info = self._handle.snapshot().node_infos().get(node_name)
        except KeyError:
            return False
        return any(other.priority < pod.priority and timeutil.is_set(other.pod.metadata.deletion_timestamp)
                   for other in node_info.pods.values())

    # ------------------------------------------------------------------------------------- gangs

    def pod_group_post_filter(
        self, group: FailedPodGroup
    ) -> tuple[PodGroupPostFilterResult | None, Status | None]:
        """Preemption for a gang whose whole-group cycle did not fit (KEP-5710's workload-aware
        preemption): the victims that let the WHOLE gang fit (group.py), evicted in the background
        through the API dispatcher, which holds every member meanwhile. Nothing is evicted unless every
        needed member gets a node; then each placed member is nominated to its node."""
        members = group.members
        eligible, why = self._group_eligible_to_preempt(group.policy.group, members)
        if not eligible:
            return None, Status.unschedulable(MESSAGE_PREFIX + why)  # None: the nominations stay
        handle = self._handle
        plan, status = select_group_victims(
            handle, handle.snapshot().node_infos(), handle.nominator, handle.pod_groups, members,
            group.needed, budgets(handle.pod_disruption_budgets()), self.offset_and_num_candidates,
        )
        if plan is None:
            assert status is not None
            prefixed = Status(status.code, (MESSAGE_PREFIX + status.message(),), error=status.error)
            return (None if status.is_error else PodGroupPostFilterResult({})), prefixed
        placements = dict(plan.placements)
        if not plan.evictions:
            return PodGroupPostFilterResult(placements), None
        key = group.policy.group
        log.info("preempting %d pod(s) on %d node(s) for pod group %s", len(plan.evictions),
                 len({e.node_name for e in plan.evictions}), key)
        handle.api_dispatcher.start_group(members, key, functools.partial(
            self._evict_for_group, key, plan, members))
        return PodGroupPostFilterResult(placements, evicting_message(len(plan.evictions))), None

    def _group_eligible_to_preempt(self, key: str, members: Sequence[PodInfo]) -> tuple[bool, str]:
        """Whether a gang may preempt, and why not: its PodGroup's preemptionPolicy is not Never
        (units.py), and no member waits for a lower-priority pod terminating on its nominated node,
        which an earlier preemption for the gang is evicting."""
        if not group_preempts(self._handle.pod_groups.pod_group(key), members):
            return False, NOT_ELIGIBLE_NEVER
        for member in members:
            nominated = member.pod.status.nominated_node_name
            if nominated and self._lower_pod_terminating(member, nominated):
                return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    async def _evict_for_group(self, group: str, plan: GroupPlan, members: Sequence[PodInfo],
                               release: Callable[[], None]) -> Status | None:
        """Carry out ``plan`` for gang ``group`` (run in the background by the API dispatcher): see
        ``Executor.prepare_group_async``."""
        component = _scheduler_name(members[0].pod) if members else DEFAULT_SCHEDULER_NAME
        by_key = {member.key: member for member in members}
        placements = [(by_key[key], node) for key, node in plan.placements.items() if key in by_key]
        return await self._executor.prepare_group_async(group, placements, plan.evictions, plan.victim_groups,
                                                        component, release)

    def offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """Where the dry run starts among the potential nodes (random, so that preemptions spread) and how
        many candidates it looks for (kube-scheduler's GetOffsetAndNumCandidates)."""
        wanted = num_candidates(
            num_nodes, self.args.min_candidate_nodes_percentage, self.args.min_candidate_nodes_absolute
        )
        return self._handle.rng.randrange(num_nodes), wanted


def evicting_message(count: int) -> str:
    """The end of a gang's message when its preemption is under way."""
    return f"{MESSAGE_PREFIX}evicting {count} lower-priority pod(s) to make room for the whole gang"


async def _ask_extenders(
    extenders: Sequence[Extender], pod: PodInfo, candidates: Sequence[Candidate], lister: NodeInfoLister
) -> list[Candidate]:
    """The candidates as the extenders leave them (kube-scheduler's callExtenders)."""
    victims = {c.node_name: Victims(tuple(c.victims), c.num_pdb_violations) for c in candidates}
    kept = await preempt_with_extenders(extenders, pod.pod, victims, lister)
    return [Candidate(name, list(v.pods), v.num_pdb_violations) for name, v in kept.items()]


def _lower_and(pod: PodInfo, evictable: Callable[[PodInfo], bool]) -> Callable[[PodInfo], bool]:
    """A single pod's victims: of lower priority than the pod by their own priority, and ``evictable``
    (their unit by the priority it counts with)."""
    priority = pod.priority

    def lower_and_evictable(other: PodInfo) -> bool:
        return other.priority < priority and evictable(other)

    return lower_and_evictable


def _below(lister: NodeInfoLister, priority: int) -> npt.NDArray[np.bool_] | None:
    """Which of the lister's nodes (in its order) hold a pod of priority below ``priority``, read from
    the snapshot's node data; None for a lister without any."""
    tables = as_node_table_lister(lister)
    if tables is None:
        return None
    found = tables.rotated(0).node_data(LowestPodPriority)
    if found is None:
        return None
    lowest, rows = found
    below: npt.NDArray[np.bool_] = lowest.values[rows] < priority
    return below


def _no_candidate(num_all_nodes: int, counted: list[tuple[Status, int]],
                  looked: int) -> tuple[PostFilterResult, Status]:
    """Preemption found no candidate among the ``looked`` nodes whose statuses are ``counted``: every
    other node counts as one preemption cannot help, and the empty nomination clears one the pod may
    have from an earlier preemption."""
    if num_all_nodes > looked:
        counted = [*counted, (Status.unresolvable(NOT_HELPFUL), num_all_nodes - looked)]
    return PostFilterResult(""), Status.unschedulable(summarize_statuses(num_all_nodes, counted))


def _unschedulable(all_nodes: Sequence[NodeInfo], node_to_status: Mapping[str, Status]) -> list[bool]:
    """For each node, whether evicting pods there might help: whether Filter found it Unschedulable. A
    node without a status was not filtered (PreFilter left it out), which kube-scheduler counts as
    UnschedulableAndUnresolvable. Whole-list operations, each distinct status looked at once."""
    codes = {status.code for status, _ in count_statuses(node_to_status)}
    if Code.UNSCHEDULABLE not in codes:
        return [False] * len(all_nodes)
    if codes == {Code.UNSCHEDULABLE} and len(node_to_status) == len(all_nodes):
        return [True] * len(all_nodes)  # every node has a status (they are of these nodes), all helpful
    statuses = list(map(node_to_status.get, map(_name_of_node, all_nodes)))
    helpful = {ident for ident, status in by_identity(statuses).items()
               if status is not None and status.code is Code.UNSCHEDULABLE}
    return list(map(helpful.__contains__, map(id, statuses)))


def _scheduler_name(pod: objects_pb2.Pod) -> str:
    return pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME


def new(args: DefaultPreemptionArgs | None, handle: Handle) -> DefaultPreemption:
    """None (a framework built without a configuration): the defaults."""
    return DefaultPreemption(DefaultPreemptionArgs() if args is None else args, handle)
