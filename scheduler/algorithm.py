"""One scheduling attempt for one pod: which node, or why none (kube-scheduler's schedulePod).

Follows pkg/scheduler/schedule_one.go: ``schedulePod`` -> ``findNodesThatFitPod`` (PreFilter, the
nominated node first, then ``findNodesThatPassFilters`` and ``findNodesThatPassExtenders``) ->
``prioritizeNodes`` (PreScore, Score, the extenders' scores) -> ``selectHost``. Filtering stops once
``num_feasible_nodes_to_find`` nodes fit, and starts where the previous attempt stopped, so that over many
pods every node gets its turn (``start_index`` in, ``next_start_index`` out). kube-scheduler filters
nodes on 16 goroutines; here one pass in node order gives the same result deterministically. The plugins
read the snapshot, never the network; only the extenders (extender/calls.py) are awaited.

Outcomes: a ``ScheduleResult``; ``ScheduleFitError`` (a ``FitError``) when no node fits, with the
Diagnosis of every node looked at; ``NoNodesAvailable`` with an empty cluster; ``SchedulingError``
when a plugin or a non-ignorable extender failed (an ERROR status: retried after backoff, nobody blamed).
"""

from __future__ import annotations

import functools
import itertools
import logging
import operator
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scheduler.extender.calls import ExtenderScores, extender_scores, find_nodes_that_pass_extenders
from scheduler.extender.interface import Extender, ExtenderError
from scheduler.framework.batching import SignatureMemo
from scheduler.framework.cycle_state import CycleState, NotFound
from scheduler.framework.explanation import LazyExplanation, explain
from scheduler.framework.interface import NodeInfoLister, NodeTableLister, SharedLister, as_node_table_lister
from scheduler.framework.nodedata import NodeSet
from scheduler.framework.runtime import PRE_FILTER_NARROWING_PLUGINS, Framework, ScoreResult
from scheduler.framework.status import Code, Status
from scheduler.framework.types import Diagnosis, FitError, NodeInfo, PodInfo

#: Below this many nodes every node is filtered; above it, at least this many feasible nodes are sought
#: (kube-scheduler's minFeasibleNodesToFind).
MIN_FEASIBLE_NODES_TO_FIND = 100
#: The adaptive percentage never goes below this (minFeasibleNodesPercentageToFind).
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
#: Filter asks the plugins about at least this many nodes at a time: fewer costs a round of calls per
#: few nodes when many are rejected; more filters nodes that will not be needed.
MIN_FILTER_BATCH = 32

NO_NODES_AVAILABLE = "no nodes available to schedule pods"

log = logging.getLogger(__name__)


class NoNodesAvailable(Exception):
    """The cluster has no nodes (kube-scheduler's ErrNoNodesAvailable)."""

    def __init__(self) -> None:
        super().__init__(NO_NODES_AVAILABLE)


class SchedulingError(Exception):
    """A plugin failed (an ERROR status); ``status`` names it."""

    def __init__(self, status: Status, next_start_index: int) -> None:
        self.status = status
        #: Where the next attempt starts filtering (nodes filtered before the error count as visited).
        self.next_start_index = next_start_index
        super().__init__(status.message())


class ScheduleFitError(FitError):
    """No node fits; ``message()`` reads as kube-scheduler's. Also carries the attempt's explanation and
    where the next attempt starts filtering."""

    def __init__(self, pod_info: PodInfo, num_all_nodes: int, diagnosis: Diagnosis, *,
                 next_start_index: int, explanation: LazyExplanation) -> None:
        self.next_start_index = next_start_index
        self.explanation = explanation
        super().__init__(pod_info.pod, num_all_nodes, diagnosis)


@dataclass(frozen=True, slots=True)
class ScheduleResult:
    suggested_host: str
    #: Nodes filtered in this attempt (feasible or not).
    evaluated_nodes: int
    feasible_nodes: int
    next_start_index: int
    explanation: LazyExplanation


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int | None) -> int:
    """How many feasible nodes are enough (kube-scheduler's numFeasibleNodesToFind): every node in a
    cluster under 100 nodes; otherwise ``percentage`` of them (None or 0: 50% - nodes/125, at least
    5%), and never fewer than 100."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if not percentage:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


async def schedule_pod(
    framework: Framework,
    state: CycleState,
    pod_info: PodInfo,
    snapshot: SharedLister,
    *,
    percentage_of_nodes_to_score: int | None,
    rng: random.Random,
    start_index: int,
    extenders: Sequence[Extender] = (),
    tie_order: Mapping[str, int] | None = None,
    nodes_within: Sequence[NodeInfo] | None = None,
) -> ScheduleResult:
    """Pick a node for ``pod_info`` from ``snapshot`` (which the framework's handle must also serve),
    asking ``extenders`` after the plugins; ``tie_order``: see ``select_host``. ``nodes_within``: the
    snapshot's nodes of the placement a pod group's cycle tries, the only ones considered (None: all)."""
    lister = snapshot.node_infos()
    all_nodes = lister.list() if nodes_within is None else nodes_within
    num_all = len(all_nodes)
    if num_all == 0:
        raise NoNodesAvailable()
    # The batch plugins' vector paths need the nodes' rows in the snapshot's node data.
    tables = as_node_table_lister(lister)
    # Opportunistic batching reuses per-node work of earlier pods signed alike; the extenders' verdicts
    # are nobody's signature, so a cycle that asks them is unbatched.
    memo = framework.batch_memo(pod_info) if tables is not None and not extenders else None
    start = start_index % num_all  # the cluster may have shrunk since the index was computed
    diagnosis = Diagnosis()

    pre_result, status = framework.run_pre_filter(state, pod_info)
    narrowing = _narrowing_plugins(state)
    diagnosis.unschedulable_plugins.update(narrowing)
    if status is not None and status.code is not Code.SUCCESS:
        if not status.is_rejected:
            raise SchedulingError(status, start)
        # Every node gets the same status, so that preemption sees them all as PreFilter left them.
        for node_info in all_nodes:
            diagnosis.node_to_status[node_info.name] = status
        diagnosis.pre_filter_message = status.message()
        _add_plugin_status(diagnosis, status)
        raise _fit_error(pod_info, num_all, diagnosis, evaluated=0, next_start_index=start)

    # A nominated node is where preemption made room for this pod: likely the only one that fits.
    nominated = pod_info.pod.status.nominated_node_name
    if nominated and (nodes_within is None or any(info.name == nominated for info in nodes_within)):
        chosen = await _evaluate_nominated_node(framework, state, pod_info, lister, nominated, diagnosis,
                                                extenders)
        if chosen is not None:
            evaluated = 1 + len(diagnosis.node_to_status)
            return ScheduleResult(chosen.name, evaluated, 1, start, LazyExplanation(functools.partial(
                explain, num_all, diagnosis, evaluated_nodes=evaluated, feasible_nodes=1,
                chosen_node=chosen.name)))

    nodes = all_nodes
    if pre_result is not None and pre_result.node_names is not None:
        nodes = (_nodes_named(lister, pre_result.node_names) if nodes_within is None
                 else [info for info in nodes_within if info.name in pre_result.node_names])
    to_find = num_feasible_nodes_to_find(len(nodes), percentage_of_nodes_to_score)
    if not framework.has_score_plugins and not any(e.is_prioritizer or e.is_filter for e in extenders):
        to_find = min(to_find, 1)  # nothing to compare them by, nobody to veto them: the first that fits
    feasible = _find_nodes_that_pass_filters(framework, state, pod_info, diagnosis, nodes, start, to_find,
                                             num_all, tables, memo)
    evaluated = len(diagnosis.node_to_status) + len(feasible)
    next_start = (start + evaluated) % num_all
    if extenders:
        try:
            passed = await find_nodes_that_pass_extenders(extenders, pod_info.pod, feasible.nodes,
                                                          diagnosis.node_to_status)
        except ExtenderError as err:
            raise SchedulingError(Status.as_error(err), next_start) from err
        feasible = NodeSet(passed) if tables is None else tables.node_set(passed)

    if not feasible:
        if nodes is not all_nodes:
            _mark_absent_nodes(diagnosis, all_nodes, narrowing)
        raise _fit_error(pod_info, num_all, diagnosis, evaluated=evaluated, next_start_index=next_start)
    if len(feasible) == 1:
        host = feasible[0].name
        return ScheduleResult(host, evaluated, 1, next_start, LazyExplanation(functools.partial(
            explain, num_all, diagnosis, evaluated_nodes=evaluated, feasible_nodes=1, chosen_node=host)))

    scores = _prioritize_nodes(framework, state, pod_info, feasible, next_start, memo)
    if extenders:
        _add_extender_scores(scores, await extender_scores(extenders, pod_info.pod, feasible.nodes))
    host = select_host(scores.names, scores.totals, rng, tie_order)
    return ScheduleResult(host, evaluated, len(feasible), next_start, LazyExplanation(functools.partial(
        explain, num_all, diagnosis, evaluated_nodes=evaluated, feasible_nodes=len(feasible),
        chosen_node=host, node_names=scores.names, totals=scores.totals, per_plugin=scores.per_plugin,
        score_weights=scores.weights)))


def select_host(names: Sequence[str], totals: Sequence[int], rng: random.Random,
                tie_order: Mapping[str, int] | None = None) -> str:
    """The node with the highest total; among equals each has the same chance, drawn in one pass by
    reservoir sampling (kube-scheduler's selectHost). With ``tie_order`` (a position per node name), the
    equal node placed first wins instead, and nodes it does not place come after, by name: the tie rule
    of the FGD paper's simulator, whose selectHost takes the smallest name among randomly numbered nodes
    (the replay's ``--fill`` runs it, cluster/simulate/replay)."""
    if tie_order is not None:
        best_total = max(totals)
        # In C: the tied names, then the least (position, name) pair among them.
        tied = list(itertools.compress(names, map(operator.eq, totals, itertools.repeat(best_total))))
        places = map(tie_order.get, tied, itertools.repeat(len(tie_order)))
        return min(zip(places, tied, strict=True))[1]
    best = totals[0]
    selected = 0
    ties = 1
    # Only a node scoring at least the best so far changes anything; those are found in C, and the
    # loop below draws for the ties exactly as a loop over every node would.
    running_best = itertools.accumulate(totals, max)
    contenders = itertools.compress(range(1, len(totals)), map(operator.ge, totals[1:], running_best))
    # Hundreds of nodes often tie: for the scheduler's own Random, randrange(ties) is drawn inline, as
    # Random draws it (getrandbits of ties' bit length until below ties), the same numbers in the same
    # order without its two Python calls per tie.
    getrandbits = rng.getrandbits if _draws_as_random(rng) else None
    for i in contenders:
        score = totals[i]
        if score > best:
            best = score
            selected = i
            ties = 1
            continue
        ties += 1
        if getrandbits is None:
            draw = rng.randrange(ties)
        else:
            bits = ties.bit_length()
            draw = getrandbits(bits)
            while draw >= ties:
                draw = getrandbits(bits)
        if draw == 0:  # replace the candidate with probability 1/ties
            selected = i
    return names[selected]


def _draws_as_random(rng: random.Random) -> bool:
    """Whether ``rng.randrange(n)`` is ``random.Random``'s own, which draws from ``getrandbits``: a plain
    Random whose methods nobody replaced."""
    return type(rng) is random.Random and not {"randrange", "getrandbits"} & vars(rng).keys()


# ----------------------------------------------------------------------------------------- helpers


def _find_nodes_that_pass_filters(
    framework: Framework, state: CycleState, pod_info: PodInfo, diagnosis: Diagnosis,
    nodes: Sequence[NodeInfo], start: int, to_find: int, num_all: int, tables: NodeTableLister | None,
    memo: SignatureMemo | None = None,
) -> NodeSet:
    """Filter ``nodes`` round robin from ``start`` until ``to_find`` fit, recording every failure, asking
    the framework about as many nodes at a time as are still to find (at least MIN_FILTER_BATCH): the
    same nodes are recorded, in the same order, as if asked one by one, and the verdicts on nodes past
    the last one needed are dropped unrecorded, as if never asked for. A Filter error ends the attempt;
    the nodes visited until then still count for the next start. ``tables``: the snapshot ``nodes``
    come from, to hand the plugins their rows; ``memo``: the pod's signature's verdicts
    (framework/batching.py), which answer for the nodes unchanged since it looked, so a verdict not
    needed costs little, and after the first batch the rest of the nodes are asked about at once (a pod
    that fits few nodes, or none, asks twice, not once per batch)."""
    first = start % len(nodes) if nodes else 0  # PreFilter may have left fewer nodes than the start index
    ordered = _rotated(nodes, first, tables)
    if not framework.has_filter_plugins:
        return ordered.window(0, to_find)
    #: Where each feasible node is in ``ordered``: their rows follow them to the Score plugins.
    positions: list[int] = []
    statuses = diagnosis.node_to_status
    #: The (plugin, code) pairs of the statuses noted in the diagnosis already.
    noted: set[tuple[str, Code]] = set()
    visited = 0
    while visited < len(ordered) and len(positions) < to_find:
        needed = to_find - len(positions)
        # With a memo, the nodes past the first batch are asked about at once, and all of them at once
        # when the memo says none fits: a retry that fails again costs one pass, not two.
        whole = memo is not None and (visited > 0 or memo.predicts_failure())
        stop = len(ordered) if whole else visited + max(needed, MIN_FILTER_BATCH)
        batch = ordered.window(visited, stop)
        offset = visited
        verdicts = framework.run_filter_nodes(state, pod_info, batch, wanted=needed, memo=memo)
        visited += len(verdicts)  # node by node, the framework stops once enough fit
        if verdicts.all_fit():  # every node fits (the common case)
            positions.extend(range(offset, offset + min(needed, len(verdicts))))
            continue
        # Whole-batch operations in C rather than a Python loop per node: at thousands of nodes a pod
        # that fits few of them spends most of its Filter time here.
        fitting = verdicts.fitting_positions()
        end = len(verdicts)
        if len(fitting) >= needed:
            fitting = fitting[:needed]
            end = fitting[-1] + 1  # the verdicts past the last node needed are dropped
        counted = verdicts.counted_failures(end)
        error = next((status for status, _ in counted if status.code is Code.ERROR), None)
        results = verdicts.statuses
        if error is not None:  # the first ERROR ends the attempt: what came before it still counts
            end = next(i for i, status in enumerate(results) if status is error)
            fitting = [i for i in fitting if i < end]
            counted = verdicts.counted_failures(end)
        # Only the first ``end`` nodes of the batch are recorded.
        statuses.record(batch, results if end == len(results) else results[:end], counted)
        for status, _ in counted:
            # What the diagnosis notes depends on the plugin and the code alone.
            if (status.plugin, status.code) not in noted:
                noted.add((status.plugin, status.code))
                _add_plugin_status(diagnosis, status)
        positions.extend(offset + i for i in fitting)
        if error is not None:
            raise SchedulingError(error, (start + len(statuses) + len(positions)) % num_all)
    return ordered.subset(positions)


def _rotated(nodes: Sequence[NodeInfo], first: int, tables: NodeTableLister | None) -> NodeSet:
    """``nodes`` from position ``first`` round to the one before it, with their rows if ``tables`` has
    them."""
    if tables is None:
        return NodeSet([*nodes[first:], *nodes[:first]])
    if nodes is tables.list():
        return tables.rotated(first)
    return tables.node_set([*nodes[first:], *nodes[:first]])


async def _evaluate_nominated_node(
    framework: Framework, state: CycleState, pod_info: PodInfo, lister: NodeInfoLister, node_name: str,
    diagnosis: Diagnosis, extenders: Sequence[Extender],
) -> NodeInfo | None:
    """The nominated node if it passes Filter and the extenders (kube-scheduler's evaluateNominatedNode).
    A node that is gone, or an error there, just means the usual search follows."""
    try:
        node_info = lister.get(node_name)
    except KeyError:
        return None
    status = framework.run_filter_with_nominated_pods(state, pod_info, node_info)
    if status is not None and status.code is not Code.SUCCESS:
        if status.code is not Code.ERROR:
            diagnosis.node_to_status[node_name] = status
            _add_plugin_status(diagnosis, status)
        return None
    if not extenders:
        return node_info
    try:
        passed = await find_nodes_that_pass_extenders(extenders, pod_info.pod, [node_info],
                                                      diagnosis.node_to_status)
    except ExtenderError as err:
        log.warning("evaluating the nominated node %s of %s failed: %s", node_name, pod_info.key, err)
        return None
    return node_info if passed else None


def _prioritize_nodes(framework: Framework, state: CycleState, pod_info: PodInfo,
                      feasible: NodeSet, next_start: int, memo: SignatureMemo | None) -> ScoreResult:
    status = framework.run_pre_score(state, pod_info, feasible)
    if status is not None:
        raise SchedulingError(status, next_start)
    result, status = framework.run_score(state, pod_info, feasible, memo)
    if status is not None:
        raise SchedulingError(status, next_start)
    assert result is not None
    return result


def _add_extender_scores(scores: ScoreResult, extender_results: Sequence[ExtenderScores]) -> None:
    """Add each extender's scaled scores times its weight to the nodes' totals; the explanation lists
    the extender next to the plugins."""
    for result in extender_results:
        per_node = [result.scores.get(name, 0) for name in scores.names]
        scores.totals = [total + score * result.weight
                         for total, score in zip(scores.totals, per_node, strict=True)]
        scores.per_plugin[result.name] = per_node
        scores.weights[result.name] = result.weight


def _narrowing_plugins(state: CycleState) -> frozenset[str]:
    try:
        return state.read(PRE_FILTER_NARROWING_PLUGINS)
    except NotFound:
        return frozenset()


def _nodes_named(lister: NodeInfoLister, names: frozenset[str]) -> list[NodeInfo]:
    """The nodes PreFilter left, in a stable order; names the snapshot does not have are dropped."""
    nodes = []
    for name in sorted(names):
        try:
            nodes.append(lister.get(name))
        except KeyError:
            continue
    return nodes


def _mark_absent_nodes(diagnosis: Diagnosis, all_nodes: Sequence[NodeInfo], plugins: frozenset[str]) -> None:
    """The nodes PreFilter's result left out failed too, for a reason preemption cannot change: say so
    for each, as kube-scheduler's NodeToStatus does for absent nodes."""
    status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]",))
    statuses = diagnosis.node_to_status
    for node_info in all_nodes:
        statuses.setdefault(node_info.name, status)


def _add_plugin_status(diagnosis: Diagnosis, status: Status) -> None:
    """Remember which plugin turned the pod down: only events it registered can requeue the pod."""
    if not status.plugin:
        return
    if status.is_rejected:
        diagnosis.unschedulable_plugins.add(status.plugin)
    if status.code is Code.PENDING:
        diagnosis.pending_plugins.add(status.plugin)


def _fit_error(pod_info: PodInfo, num_all: int, diagnosis: Diagnosis, *, evaluated: int,
               next_start_index: int) -> ScheduleFitError:
    explanation = LazyExplanation(functools.partial(explain, num_all, diagnosis, evaluated_nodes=evaluated,
                                                    feasible_nodes=0))
    return ScheduleFitError(pod_info, num_all, diagnosis, next_start_index=next_start_index,
                            explanation=explanation)
