"""The framework runtime: one profile's plugins, built once, run at each extension point.

``build_framework(profile, registry, handle)`` instantiates every plugin the profile enables, once even
when it serves several extension points, expands multiPoint into the extension points each plugin
implements, and checks what kube-scheduler's NewFramework checks (a plugin enabled at a point must
implement it, exactly one QueueSort plugin, at least one Bind plugin). ``Framework``'s ``run_*`` methods
follow kube-scheduler's pkg/scheduler/framework/runtime/framework.go:

* PreEnqueue (``run_pre_enqueue``, asked by the queue before a pod enters activeQ): the first rejection
  gates the pod, stamped with its plugin, whose registered events ask again.
* PreFilter: SKIP puts the plugin in ``state.skip_filter_plugins`` (its Filter and PreFilterExtensions
  do not run); results are intersected, and an empty intersection rejects the pod everywhere
  ("node(s) didn't satisfy plugin(s) [A B] simultaneously"); UNSCHEDULABLE_AND_UNRESOLVABLE stops at
  once, UNSCHEDULABLE is remembered while the others still run (preemption needs their state).
* Filter: stops at the first rejection and stamps the plugin; any other non-success is an ERROR.
  ``run_filter_with_nominated_pods`` is RunFilterPluginsWithNominatedPods' two passes.
  ``run_filter_nodes`` filters a ``NodeSet`` for the scheduling cycle, choosing the route: a signature's
  memo, each plugin asked about many nodes at once when every active Filter plugin has the batch form
  (``BatchFilterPlugin``), or node by node; a plugin with only the batch form is asked about one node
  where the framework filters node by node.
* Score: raw scores per plugin (the batch form, ``BatchScorePlugin``, if the plugin has it, else
  ``score`` per node), NormalizeScore, a 0..100 check, times the weight, summed per node.
* Reserve in order, Unreserve in reverse; Permit's WAIT parks the pod in the waiting pods until every
  waiting plugin allows it, one rejects it, or a plugin's timeout passes; Bind stops at the first
  plugin that does not SKIP; PostFilter stops at the first success and otherwise combines the reasons.
* PodGroupPostFilter (``run_pod_group_post_filter``, after a gang's whole-group cycle that did not fit)
  runs as PostFilter does, for the group.
* PlacementGenerate (``run_placement_generate``): each plugin partitions the whole cluster; a plugin that
  answers with the cluster itself does not constrain the group and is left out; the others' placements
  are intersected, every combination that keeps a node ("a/b"), and nothing left is UNSCHEDULABLE.
  PlacementScore (``run_placement_score``): raw scores per plugin, NormalizePlacementScore, the
  0..100 check, times the plugin's weight, summed per placement.

Every returned non-success Status carries the plugin's name; an exception raised by a plugin becomes an
ERROR status of that plugin (the exception is kept in ``Status.error``), so a buggy plugin fails the
cycle, not the scheduler.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import operator
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

from scheduler.clock import Clock, SystemClock
from scheduler.framework.batching import BatchMemos, SignatureMemo, signatures_within_budget
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import FrameworkHandle
from scheduler.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    ActionType,
    BatchFilterPlugin,
    BatchNormalizeScore,
    BatchScorePlugin,
    BindPlugin,
    ClusterEvent,
    ClusterEventWithHint,
    DeviceRankPlugin,
    EventResource,
    FailedPodGroup,
    FilterPlugin,
    PermitPlugin,
    Placement,
    PlacementGeneratePlugin,
    PlacementScore,
    PlacementScorePlugin,
    Plugin,
    PluginError,
    PodGroupAssignments,
    PodGroupInfo,
    PodGroupPostFilterPlugin,
    PodGroupPostFilterResult,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
    Signature,
    SignPlugin,
)
from scheduler.framework.nodedata import NodeSet
from scheduler.framework.registry import ALL_PLUGINS, EXTENSION_POINTS, PluginLoadError, PluginSet, Registry
from scheduler.framework.score_totals import InvalidScore, weighted_totals
from scheduler.framework.status import Code, Status, by_identity
from scheduler.framework.types import (
    NodeInfo,
    PodInfo,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
    node_scores,
)
from scheduler.framework.verdicts import Verdicts
from scheduler.framework.waiting_pods import WaitingPod

log = logging.getLogger(__name__)

#: The method that makes a plugin an implementation of each extension point.
ENTRY_METHODS: Mapping[str, str] = {
    "preEnqueue": "pre_enqueue",
    "queueSort": "less",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "podGroupPostFilter": "pod_group_post_filter",
    "preScore": "pre_score",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
    "placementGenerate": "generate_placements",
    "placementScore": "score_placement",
}

#: The batch forms that also make a plugin an implementation of an extension point.
_BATCH_FORMS: Mapping[str, type] = {"filter": BatchFilterPlugin, "score": BatchScorePlugin}

#: The extension points whose plugins must sign a pod for it to be batched: their work is what a
#: signature's memo stands in for, and their state feeds it.
_SIGNING_POINTS = ("preFilter", "filter", "preScore", "score")

#: Extension points whose plugins can reject a pod, and so must say which events may change their mind
#: (kube-scheduler's shouldHaveEnqueueExtensions).
_REJECTING_POINTS = ("preEnqueue", "preFilter", "filter", "reserve", "permit", "placementGenerate")

#: A plugin that can reject pods but declares no events is requeued by every event (kube-scheduler's
#: defaultEnqueueExtension): slower, never stranded.
_ALL_EVENTS = (ClusterEventWithHint(ClusterEvent(EventResource.WILDCARD, ActionType.ALL)),)

#: The longest a Permit plugin may hold a pod (kube-scheduler's maxTimeout, 15 minutes).
MAX_PERMIT_TIMEOUT_SECONDS = 15 * 60.0

#: CycleState key under which ``run_pre_filter`` records the plugins whose PreFilterResult narrowed the
#: nodes (a frozenset of names): the plugins to blame when the pod fits none of the remaining nodes.
PRE_FILTER_NARROWING_PLUGINS = "framework/pre-filter-narrowing-plugins"


class FrameworkError(Exception):
    """A profile cannot be built into a framework (a plugin missing, failing to start, misplaced)."""


class ProfileSpec(Protocol):
    """What ``build_framework`` needs of a profile (``scheduler.config.Profile`` has it)."""

    @property
    def scheduler_name(self) -> str: ...

    @property
    def plugins(self) -> PluginSet: ...

    @property
    def plugin_args(self) -> Mapping[str, Any]: ...

    @property
    def percentage_of_nodes_to_score(self) -> int | None: ...


@dataclass(slots=True)
class ScoreResult:
    """What Score produced for the feasible nodes, each list in the order the nodes were given. Scores
    are plain ints next to the node names: NodeScore tuples are made only for NormalizeScore."""

    names: list[str]
    #: Per node: the sum over plugins of normalized score x weight.
    totals: list[int]
    #: Per plugin: its normalized score (0..100) of each node, before weighting.
    per_plugin: dict[str, list[int]]
    #: Per plugin: its weight.
    weights: dict[str, int]


# --------------------------------------------------------------------------------------- framework


def _error(context: str, status: Status, plugin: str) -> Status:
    """An ERROR status of ``plugin`` that says where it happened, keeping the cause."""
    return Status(Code.ERROR, (f"{context}: {status.message()}",), plugin=plugin, error=status.error)


def _raised(exc: BaseException) -> Status:
    return Status.as_error(exc)


class Framework:
    """One profile's plugins per extension point, in order, and the code that runs them."""

    def __init__(
        self,
        profile_name: str,
        handle: FrameworkHandle,
        plugins: Mapping[str, Sequence[Plugin]],
        score_weights: Mapping[str, int],
        placement_score_weights: Mapping[str, int] | None = None,
        *,
        clock: Clock | None = None,
        percentage_of_nodes_to_score: int | None = None,
        batching: bool = True,
    ) -> None:
        self.profile_name = profile_name
        self.handle = handle
        handle.attach(self)
        #: This profile's percentageOfNodesToScore, None to use the global one.
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.waiting_pods = handle.waiting_pods
        self._clock = clock or SystemClock()
        self._points = {point: list(plugins.get(point, ())) for point in EXTENSION_POINTS}
        self._weights = dict(score_weights)
        self._all: dict[str, Plugin] = {}
        for point in EXTENSION_POINTS:
            for plugin in self._points[point]:
                self._all.setdefault(plugin.name, plugin)
        # Bound methods with their plugin names, looked up once: Filter and Score run per node. Each
        # point's plugins implement its interface: build_framework admits no other (``_implements``).
        points = self._points
        self._pre_enqueue = [(p.name, p.pre_enqueue)
                             for p in cast("list[PreEnqueuePlugin]", points["preEnqueue"])]
        queue_sort = cast("list[QueueSortPlugin]", points["queueSort"])
        self._less = queue_sort[0].less if queue_sort else None
        self._pre_filter = [(p.name, p.pre_filter, _extensions(p, "pre_filter_extensions"))
                            for p in cast("list[PreFilterPlugin]", points["preFilter"])]
        self._filter = [(p.name, _node_filter(p)) for p in points["filter"]]
        #: The Filter plugins that run, and how to ask them, by the set of plugins skipped: a cycle asks
        #: once per node it filters one at a time (preemption's dry run: five times per candidate node),
        #: and there are few such sets.
        self._filter_plans: dict[frozenset[str], _FilterPlan] = {}
        #: The Filter plugins with the batch form (``BatchFilterPlugin``), by name.
        self._filter_nodes = {p.name: p.filter_nodes for p in points["filter"]
                              if isinstance(p, BatchFilterPlugin)}
        #: The Filter plugins with their own per-node form (``FilterPlugin``), by name.
        self._node_filters = frozenset(p.name for p in points["filter"] if isinstance(p, FilterPlugin))
        self._post_filter = [(p.name, p.post_filter)
                             for p in cast("list[PostFilterPlugin]", points["postFilter"])]
        self._pod_group_post_filter = [
            (p.name, p.pod_group_post_filter)
            for p in cast("list[PodGroupPostFilterPlugin]", points["podGroupPostFilter"])]
        self._pre_score = [(p.name, p.pre_score) for p in cast("list[PreScorePlugin]", points["preScore"])]
        self._score = [(p.name, _batch_scorer(p), *_normalizers(p), self._weights[p.name])
                       for p in points["score"]]
        self._reserve = [(p.name, p.reserve, p.unreserve)
                         for p in cast("list[ReservePlugin]", points["reserve"])]
        self._permit = [(p.name, p.permit) for p in cast("list[PermitPlugin]", points["permit"])]
        self._pre_bind = [(p.name, p.pre_bind) for p in cast("list[PreBindPlugin]", points["preBind"])]
        self._bind = [(p.name, p.bind) for p in cast("list[BindPlugin]", points["bind"])]
        self._post_bind = [(p.name, p.post_bind) for p in cast("list[PostBindPlugin]", points["postBind"])]
        self._placement_generate = [(p.name, p.generate_placements) for p in
                                    cast("list[PlacementGeneratePlugin]", points["placementGenerate"])]
        placement_weights = placement_score_weights or {}
        self._placement_score = [
            (p.name, p.score_placement, p.placement_score_extensions(), placement_weights.get(p.name, 1))
            for p in cast("list[PlacementScorePlugin]", points["placementScore"])]
        # Opportunistic batching: the plugins whose work a memo stands in for must all sign the pod.
        signing = {p.name: p for point in _SIGNING_POINTS for p in points[point]}
        #: Whether this profile batches (off: every pod is unbatchable, as with the feature gate off).
        self.batching = batching and all(isinstance(p, SignPlugin) for p in signing.values())
        self._signers = ([(name, cast(SignPlugin, p).sign) for name, p in signing.items()]
                         if self.batching else [])
        #: The memos of the signatures seen (framework/batching.py).
        self.batch_memos = BatchMemos()
        #: Cycles by batching outcome ("unsignable", "new_signature", "hit"): kube-scheduler's
        #: scheduler_batch_attempts_total.
        self.batch_attempts: Counter[str] = Counter()

    # ------------------------------------------------------------------------------ introspection

    def plugin_names(self, point: str) -> list[str]:
        """The plugins that run at ``point`` ("filter", "score", ...), in order."""
        return [plugin.name for plugin in self._points[point]]

    def plugin(self, name: str) -> Plugin | None:
        """The profile's instance of plugin ``name``, None if it runs at no extension point."""
        return self._all.get(name)

    @property
    def score_weights(self) -> dict[str, int]:
        return dict(self._weights)

    def device_ranker(self) -> DeviceRankPlugin | None:
        """The Score plugin that ranks devices (``Handle.device_ranker``)."""
        return self._device_ranker

    @functools.cached_property
    def _device_ranker(self) -> DeviceRankPlugin | None:
        rankers = [plugin for plugin in self._points["score"] if isinstance(plugin, DeviceRankPlugin)]
        # max keeps the first of equal weights: the profile's order breaks ties.
        return max(rankers, key=lambda plugin: self._weights[plugin.name], default=None)

    @property
    def has_filter_plugins(self) -> bool:
        return bool(self._filter)

    @property
    def has_score_plugins(self) -> bool:
        return bool(self._score)

    @property
    def has_post_filter_plugins(self) -> bool:
        return bool(self._post_filter)

    @property
    def has_pod_group_post_filter_plugins(self) -> bool:
        return bool(self._pod_group_post_filter)

    @property
    def has_placement_generate_plugins(self) -> bool:
        return bool(self._placement_generate)

    @functools.cached_property
    def pod_group_plugins(self) -> tuple[str, ...]:
        """The plugins that registered PodGroup events (GangScheduling in the default profile): a gang
        that failed as a whole is failed in their name, so that its PodGroup's changes requeue it."""
        return tuple(name for name, events in self.events_to_register().items()
                     if any(e.event.resource is EventResource.POD_GROUP for e in events))

    # ------------------------------------------------------------------------------------ queueing

    def queue_sort_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        assert self._less is not None, "a framework built by build_framework has one QueueSort plugin"
        return self._less(a, b)

    def run_pre_enqueue(self, pod: PodInfo) -> Status | None:
        """None if the pod may enter activeQ; else the first rejection, stamped with its plugin (the
        queue gates the pod until an event that plugin registered)."""
        for name, pre_enqueue in self._pre_enqueue:
            try:
                status = pre_enqueue(pod)
            except Exception as exc:
                status = _raised(exc)
            if status is None or status.code is Code.SUCCESS:
                continue
            if status.is_rejected:
                return status.with_plugin(name)
            return _error(f'running PreEnqueue plugin "{name}"', status, name)
        return None

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint]]:
        """Plugin name -> the cluster events that may make a pod it rejected schedulable."""
        events: dict[str, list[ClusterEventWithHint]] = {}
        for name, plugin in self._all.items():
            if not any(_implements(plugin, point) for point in _REJECTING_POINTS):
                continue
            declare = getattr(plugin, "events_to_register", None)
            events[name] = list(declare()) if callable(declare) else list(_ALL_EVENTS)
        return events

    # -------------------------------------------------------------------------------------- batching

    def sign(self, pod: PodInfo) -> tuple[tuple[str, Signature], ...] | None:
        """The pod's signature: every signing plugin's, None if batching is off or one cannot sign."""
        if not self.batching:
            return None
        signature = []
        for name, sign in self._signers:
            try:
                part = sign(pod)
            except Exception:
                log.exception("plugin %s failed to sign pod %s: scheduling it unbatched", name, pod.key)
                return None
            if part is None:
                return None
            signature.append((name, part))
        return tuple(signature)

    def batch_memo(self, pod: PodInfo) -> SignatureMemo | None:
        """The memo of the pod's signature (made on first use), None for an unbatchable pod."""
        signature = self.sign(pod)
        if signature is None:
            self.batch_attempts["unsignable"] += 1
            return None
        keep = signatures_within_budget(len(self.handle.snapshot().node_infos().list()), 1 + len(self._score))
        memo, known = self.batch_memos.get(signature, keep)
        self.batch_attempts["hit" if known else "new_signature"] += 1
        return memo

    # ----------------------------------------------------------------------------------- PreFilter

    def run_pre_filter(self, state: CycleState, pod: PodInfo) -> tuple[PreFilterResult | None, Status | None]:
        """Run every PreFilter plugin over all nodes of the snapshot. Also records in ``state`` the
        plugins that returned SKIP (``skip_filter_plugins``) and those whose result narrowed the nodes
        (``PRE_FILTER_NARROWING_PLUGINS``)."""
        nodes = self.handle.snapshot().node_infos().list()
        skipped: set[str] = set()
        narrowing: set[str] = set()
        result: PreFilterResult | None = None
        rejection: Status | None = None
        try:
            for name, pre_filter, _ in self._pre_filter:
                try:
                    plugin_result, status = pre_filter(state, pod, nodes)
                except Exception as exc:
                    plugin_result, status = None, _raised(exc)
                if status is not None and status.code is not Code.SUCCESS:
                    if status.code is Code.SKIP:
                        skipped.add(name)
                        continue
                    status.with_plugin(name)
                    if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                        return None, status  # preemption cannot help: no need to run the others
                    if status.code is Code.UNSCHEDULABLE:
                        rejection = status  # preemption may help: the others still prepare their state
                        continue
                    return None, _error(f'running PreFilter plugin "{name}"', status, name)
                if plugin_result is None or plugin_result.node_names is None:
                    continue
                narrowing.add(name)
                result = plugin_result if result is None else result.merge(plugin_result)
                if result.node_names is not None and not result.node_names:
                    plugins = sorted(narrowing)
                    message = (f"node(s) didn't satisfy plugin {plugins[0]}" if len(plugins) == 1 else
                               f"node(s) didn't satisfy plugin(s) [{' '.join(plugins)}] simultaneously")
                    return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,), plugin=name)
            return result, rejection
        finally:
            state.skip_filter_plugins = skipped
            state.write(PRE_FILTER_NARROWING_PLUGINS, frozenset(narrowing))

    def running_pre_filter_extensions(self, state: CycleState) -> list[str]:
        """The PreFilter plugins (that did not SKIP) whose AddPod and RemovePod run."""
        skipped = state.skip_filter_plugins
        return [name for name, _, extensions in self._pre_filter
                if extensions is not None and name not in skipped]

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Tell every PreFilter plugin (that did not SKIP) that ``pod_to_add`` now runs on the node."""
        return self._pre_filter_extensions(state, pod, pod_to_add, node_info, "add_pod", "AddPod")

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Tell every PreFilter plugin (that did not SKIP) that ``pod_to_remove`` left the node."""
        return self._pre_filter_extensions(state, pod, pod_to_remove, node_info, "remove_pod", "RemovePod")

    def _pre_filter_extensions(self, state: CycleState, pod: PodInfo, other: PodInfo, node_info: NodeInfo,
                               method: str, label: str) -> Status | None:
        skipped = state.skip_filter_plugins
        for name, _, extensions in self._pre_filter:
            if extensions is None or name in skipped:
                continue
            try:
                status = getattr(extensions, method)(state, pod, other, node_info)
            except Exception as exc:
                status = _raised(exc)
            if status is not None and status.code is not Code.SUCCESS:
                return _error(f'running {label} on PreFilter plugin "{name}"', status, name)
        return None

    # -------------------------------------------------------------------------------------- Filter

    def run_filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        """None if every Filter plugin (that did not SKIP in PreFilter) accepts the node; else the first
        rejection, or an ERROR."""
        return _run_filters(self._active_filters(state), state, pod, node_info)

    def running_filter_plugins(self, state: CycleState) -> list[str]:
        """The Filter plugins that did not SKIP at PreFilter, in order."""
        return [name for name, _ in self._active_filters(state)]

    def _active_filters(self, state: CycleState) -> list[tuple[str, Callable[..., Status | None]]]:
        if not state.skip_filter_plugins:
            return self._filter
        return self._filter_plan(state).per_node

    def _filter_plan(self, state: CycleState) -> _FilterPlan:
        key = frozenset(state.skip_filter_plugins)
        try:
            return self._filter_plans[key]
        except KeyError:
            plan = self._filter_plans[key] = self._plan_filters(key)
            return plan

    def _plan_filters(self, skipped: frozenset[str]) -> _FilterPlan:
        active = [entry for entry in self._filter if entry[0] not in skipped]
        batch = self._filter_nodes
        if any(name not in batch for name, _ in active):
            return _FilterPlan(active, None, 0)
        # A batch call costs tens of microseconds whatever its size: the few nodes a memo has to ask
        # about (those changed since a pod of its signature last looked) are cheaper one by one, where
        # every plugin has its own per-node form.
        by_node_below = NODE_BY_NODE_BELOW if all(name in self._node_filters for name, _ in active) else 0
        return _FilterPlan(active, [(name, filter_, batch[name]) for name, filter_ in active], by_node_below)

    def run_filter_nodes(
        self, state: CycleState, pod: PodInfo, nodes: NodeSet, *, wanted: int | None = None,
        memo: SignatureMemo | None = None,
    ) -> Verdicts:
        """Filter's verdict on each of ``nodes``, in order, each as ``run_filter_with_nominated_pods``
        gives it: the scheduling cycle's one way to filter many nodes. It takes one of three routes,
        which decide alike (property tests hold them equal):

        * memo: with ``memo`` (the pod's signature's) and nodes with rows, a node whose NodeInfo has not
          changed since a pod of that signature was filtered there gets the same verdict without asking
          the plugins; the others go the batch route. The verdicts are coded (``Verdicts.codes``).
        * batch: when every Filter plugin that runs this cycle has the batch form, each plugin filters,
          in plugin order, the nodes every plugin before it accepted, in one call (node by node below
          NODE_BY_NODE_BELOW nodes); nodes with nominated pods are filtered one at a time.
        * per node: a plugin that runs this cycle has only the per-node form: node by node, as that
          plugin expects, stopping after the ``wanted``-th node that fits or at the first ERROR (the
          verdicts are then of the first nodes only; the rest were not asked about).

        A Filter is a function of the state, the pod and the node alone (kube-scheduler runs it on 16
        goroutines in no set order), so the caller may ask about more nodes than it keeps."""
        plan = self._filter_plan(state)
        if plan.batch is None:
            return Verdicts(self._filter_node_by_node(state, pod, nodes, wanted))
        if memo is not None and nodes.rows is not None:
            return memo.filter(nodes, self._nominations(nodes),
                               lambda fresh: self._filter_batch(plan, state, pod, fresh).statuses)
        return self._filter_batch(plan, state, pod, nodes)

    def _filter_node_by_node(self, state: CycleState, pod: PodInfo, nodes: NodeSet,
                             wanted: int | None) -> list[Status | None]:
        if wanted is None:
            wanted = len(nodes)
        verdicts: list[Status | None] = []
        fitting = 0
        run_filter = functools.partial(self.run_filter_with_nominated_pods, state, pod)
        for node_info in nodes:
            status = run_filter(node_info)
            verdicts.append(status)
            if status is None:
                fitting += 1
                if fitting >= wanted:
                    break
            elif status.code is Code.ERROR:
                break
        return verdicts

    def _nominations(self, nodes: NodeSet) -> list[bool]:
        """Which of the nodes have nominated pods: nearly always none, known from one call."""
        nominator = self.handle.nominator
        names = nominator.nominated_node_names()
        if not names:
            return [False] * len(nodes)
        return [name in names and bool(nominator.nominated_pods_for_node(name))
                for name in map(_name_of_node, nodes)]

    def _filter_batch(self, plan: _FilterPlan, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Verdicts:
        """The batch route: the plugins' batch forms over the nodes without nominated pods, the others
        one at a time."""
        nominated = self._nominations(nodes)
        if not any(nominated):
            return self._run_batch(plan, state, pod, nodes)
        without = [i for i, has in enumerate(nominated) if not has]
        plain = iter(self._run_batch(plan, state, pod, nodes.subset(without)).statuses)
        return Verdicts([self.run_filter_with_nominated_pods(state, pod, node_info) if has else next(plain)
                         for node_info, has in zip(nodes, nominated, strict=True)])

    @staticmethod
    def _run_batch(plan: _FilterPlan, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Verdicts:
        assert plan.batch is not None
        if len(nodes) < plan.by_node_below:
            return Verdicts([_run_filters(plan.per_node, state, pod, node_info) for node_info in nodes])
        return _run_batch_filters(plan.batch, state, pod, nodes)

    def run_filter_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Filter the node as if the pods nominated to it with priority >= the pod's were running there,
        then (if that passes) as it is; the pod fits only if both pass. Assuming the nominated pods run
        keeps their room for them (resources, anti-affinity); not assuming it keeps the pod from relying
        on them (affinity), since they may land elsewhere."""
        nominated = self.handle.nominator.nominated_pods_for_node(node_info.name)
        if nominated:
            added = False
            state_with = state
            node_with = node_info
            for other in nominated:
                if other.priority < pod.priority or other.key == pod.key:
                    continue
                if not added:
                    state_with = state.clone()
                    node_with = node_info.clone()
                    added = True
                node_with.add_pod(other)
                status = self.run_pre_filter_extension_add_pod(state_with, pod, other, node_with)
                if status is not None:
                    return status
            if added:
                status = self.run_filter(state_with, pod, node_with)
                if status is not None and status.code is not Code.SUCCESS:
                    return status
        return self.run_filter(state, pod, node_info)

    # ---------------------------------------------------------------------------------- PostFilter

    async def run_post_filter(
        self, state: CycleState, pod: PodInfo, node_to_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Run PostFilter plugins (preemption) until one succeeds or one says nothing can help; if none
        does, an UNSCHEDULABLE status with every plugin's reasons, blaming the first."""
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for name, post_filter in self._post_filter:
            try:
                plugin_result, status = await post_filter(state, pod, node_to_status)
            except Exception as exc:
                plugin_result, status = None, _raised(exc)
            if status is None or status.code is Code.SUCCESS:
                return plugin_result, None
            if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return plugin_result, status.with_plugin(name)
            if not status.is_rejected:
                return None, _error(f'running PostFilter plugin "{name}"', status, name)
            # A result, even an empty nomination, overrides an earlier one (kube's ModeOverride): "" is
            # how preemption says the pod's old nomination is stale. None leaves it as it is (ModeNoop).
            if plugin_result is not None:
                result = plugin_result
            reasons.extend(status.reasons)
            rejector = rejector or name
        return result, Status(Code.UNSCHEDULABLE, tuple(reasons), plugin=rejector)

    def run_pod_group_post_filter(
        self, group: FailedPodGroup
    ) -> tuple[PodGroupPostFilterResult | None, Status | None]:
        """Run PodGroupPostFilter plugins as ``run_post_filter`` runs PostFilter's, except that an
        error is returned as the plugin gave it (its message goes after the group's)."""
        result: PodGroupPostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for name, post_filter in self._pod_group_post_filter:
            try:
                plugin_result, status = post_filter(group)
            except Exception as exc:
                plugin_result, status = None, _raised(exc)
            if status is None or status.code is Code.SUCCESS:
                return plugin_result, None
            if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE or not status.is_rejected:
                return plugin_result, status.with_plugin(name)
            if plugin_result is not None:
                result = plugin_result
            reasons.extend(status.reasons)
            rejector = rejector or name
        return result, Status(Code.UNSCHEDULABLE, tuple(reasons), plugin=rejector)

    # ------------------------------------------------------------------------------- PreScore/Score

    def run_pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        """Run PreScore over the feasible nodes; SKIP puts the plugin in ``state.skip_score_plugins``.
        Anything but success or SKIP is an ERROR."""
        skipped: set[str] = set()
        try:
            for name, pre_score in self._pre_score:
                try:
                    status = pre_score(state, pod, nodes)
                except Exception as exc:
                    status = _raised(exc)
                if status is None or status.code is Code.SUCCESS:
                    continue
                if status.code is Code.SKIP:
                    skipped.add(name)
                    continue
                return _error(f'running PreScore plugin "{name}"', status, name)
            return None
        finally:
            state.skip_score_plugins = skipped

    def run_score(
        self, state: CycleState, pod: PodInfo, nodes: NodeSet, memo: SignatureMemo | None = None,
    ) -> tuple[ScoreResult | None, Status | None]:
        """Score every node with every Score plugin that did not SKIP, normalize each plugin's scores,
        check they are within MIN_NODE_SCORE..MAX_NODE_SCORE, weight and sum them per node. With
        ``memo`` (the pod's signature's), the raw scores of snapshot nodes unchanged since a pod of that
        signature was scored there are reused."""
        memoized = memo is not None and nodes.rows is not None
        skipped = state.skip_score_plugins
        names = list(map(_name_of_node, nodes))
        per_plugin: dict[str, list[int]] = {}
        weights: dict[str, int] = {}
        plugins = [entry for entry in self._score if entry[0] not in skipped]
        for name, score_nodes, _, _, weight in plugins:
            try:
                if memoized:
                    assert memo is not None
                    scores = memo.score(name, nodes, functools.partial(score_nodes, state, pod))
                else:
                    scores = list(score_nodes(state, pod, nodes))
                if len(scores) != len(names):
                    raise PluginError(f"{len(scores)} scores for {len(names)} nodes")
            except Exception as exc:
                return None, _error(f'running Score plugins: plugin "{name}" failed with', _raised(exc), name)
            per_plugin[name] = scores
            weights[name] = weight
        for name, _, extensions, normalize_values, _ in plugins:
            if extensions is None:
                continue
            # NormalizeScore rewrites the scores in place: plain ints if the plugin takes them
            # (BatchNormalizeScore), else NodeScores.
            values = per_plugin[name]
            try:
                if normalize_values is not None:
                    status = normalize_values(state, pod, values)
                else:
                    scores_to_normalize = node_scores(names, values)
                    status = extensions.normalize_score(state, pod, scores_to_normalize)
                    values = per_plugin[name] = list(map(_score_of, scores_to_normalize))
                if len(values) != len(names):
                    raise PluginError(f"{len(values)} scores for {len(names)} nodes")
            except Exception as exc:
                status = _raised(exc)
            if status is not None and status.code is not Code.SUCCESS:
                return None, _error(f'running Normalize on Score plugins: plugin "{name}" failed with',
                                    status, name)
        totals = weighted_totals(per_plugin, weights, len(names))
        if isinstance(totals, InvalidScore):
            message = (f'plugin "{totals.plugin}" returns an invalid score {totals.value}, it should in the '
                       f"range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing")
            return None, Status(Code.ERROR, (message,), plugin=totals.plugin)
        return ScoreResult(names, totals, per_plugin, weights), None

    # ---------------------------------------------------------------------------------- placements

    def run_placement_generate(self, state: CycleState, group: PodGroupInfo,
                               nodes: Sequence[NodeInfo]) -> tuple[list[Placement], Status | None]:
        """The placements to try for ``group`` among ``nodes`` (kube-scheduler's
        RunPlacementGeneratePlugins): ``[parent]``, the whole cluster, when no plugin constrains the
        group; else the intersections of the constraining plugins' placements that keep a node, named
        "a/b"; none left is UNSCHEDULABLE, a plugin's failure an ERROR."""
        parent = Placement("", tuple(nodes))
        merged: list[Placement] | None = None
        for name, generate in self._placement_generate:
            try:
                placements = list(generate(state, group, parent))
            except Exception as exc:
                return [], _error(f'running PlacementGenerate plugins: plugin "{name}" failed with',
                                  _raised(exc), name)
            if len(placements) == 1 and placements[0] is parent:
                continue  # this plugin does not constrain the group
            merged = placements if merged is None else _intersect(merged, placements)
            if not merged:
                return [], Status(Code.UNSCHEDULABLE, ("no placement is left for the pod group",),
                                  plugin=name)
        return ([parent] if merged is None else merged), None

    def run_placement_score(self, state: CycleState, group: PodGroupInfo,
                            assignments: Sequence[PodGroupAssignments]) -> tuple[list[int], Status | None]:
        """Each feasible placement's total score (kube-scheduler's RunPlacementScorePlugins): every
        plugin's raw scores, normalized by its NormalizePlacementScore, checked to be within
        MIN_NODE_SCORE..MAX_NODE_SCORE, times its weight, summed; in the order of ``assignments``."""
        totals = [0] * len(assignments)
        for name, score, extensions, weight in self._placement_score:
            try:
                scores = [PlacementScore(a.placement, score(state, group, a)) for a in assignments]
                if extensions is not None:
                    extensions.normalize_placement_score(state, group, scores)
            except Exception as exc:
                return [], _error(f'running PlacementScore plugins: plugin "{name}" failed with',
                                  _raised(exc), name)
            for i, entry in enumerate(scores):
                if not MIN_NODE_SCORE <= entry.score <= MAX_NODE_SCORE:
                    message = (f'plugin "{name}" returns an invalid score {entry.score} for placement '
                               f'"{entry.placement.name}", it should be in the range of '
                               f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing")
                    return [], Status(Code.ERROR, (message,), plugin=name)
                totals[i] += entry.score * weight
        return totals, None

    # ----------------------------------------------------------------------------- Reserve/Permit

    def run_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Reserve in order, stopping at the first failure (the caller then runs ``run_unreserve``)."""
        for name, reserve, _ in self._reserve:
            try:
                status = reserve(state, pod, node_name)
            except Exception as exc:
                status = _raised(exc)
            if status is None or status.code is Code.SUCCESS:
                continue
            if status.is_rejected:
                return status.with_plugin(name)
            return _error(f'running Reserve plugin "{name}"', status, name)
        return None

    def run_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Undo Reserve, in reverse order; every plugin runs even if one raises."""
        for name, _, unreserve in reversed(self._reserve):
            try:
                unreserve(state, pod, node_name)
            except Exception:
                log.exception("Unreserve of plugin %s failed for pod %s on %s", name, pod.key, node_name)

    def run_permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """None to go on binding; a rejection; or WAIT, with the pod parked in ``waiting_pods`` until
        ``wait_on_permit`` learns the outcome."""
        timeouts: dict[str, float] = {}
        for name, permit in self._permit:
            try:
                status, timeout = permit(state, pod, node_name)
            except Exception as exc:
                status, timeout = _raised(exc), 0.0
            if status is None or status.code is Code.SUCCESS:
                continue
            if status.is_rejected:
                return status.with_plugin(name)
            if status.code is Code.WAIT:
                timeouts[name] = min(timeout, MAX_PERMIT_TIMEOUT_SECONDS)
                continue
            return _error(f'running Permit plugin "{name}"', status, name)
        if timeouts:
            self.waiting_pods._add(WaitingPod(pod, timeouts, self._clock.now()))
            message = "one or more plugins asked to wait and no plugin rejected pod"
            return Status(Code.WAIT, (f'{message} "{pod.pod.metadata.name}"',))
        return None

    async def wait_on_permit(self, pod: PodInfo) -> Status | None:
        """If Permit parked the pod: wait until it is allowed (None), rejected, or a plugin's timeout
        passes (UNSCHEDULABLE of that plugin). Timeouts run on the framework's clock."""
        waiting = self.waiting_pods.get(pod.key)
        if waiting is None:
            return None
        try:
            while not waiting._decided:
                plugin, deadline = waiting._next_deadline()
                remaining = deadline - self._clock.now()
                if remaining <= 0:
                    message = f"rejected due to timeout after waiting {waiting._timeouts[plugin]:g}s"
                    waiting.reject(plugin, f"{message} at plugin {plugin}")
                    break
                waiting._changed.clear()
                await self._changed_or_due(waiting._changed, deadline)
        finally:
            self.waiting_pods._remove(pod.key)
        return waiting._status

    async def _changed_or_due(self, changed: asyncio.Event, deadline: float) -> None:
        waiters = [asyncio.ensure_future(changed.wait()), asyncio.ensure_future(self._sleep_until(deadline))]
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
            await asyncio.gather(*waiters, return_exceptions=True)

    async def _sleep_until(self, deadline: float) -> None:
        # Measured when the sleep starts, not when it was asked for: the task may start later.
        await self._clock.sleep(deadline - self._clock.now())

    # ------------------------------------------------------------------------------ binding cycle

    async def run_pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        for name, pre_bind in self._pre_bind:
            try:
                status = await pre_bind(state, pod, node_name)
            except Exception as exc:
                status = _raised(exc)
            if status is None or status.code is Code.SUCCESS:
                continue
            if status.is_rejected:
                return status.with_plugin(name)
            return _error(f'running PreBind plugin "{name}"', status, name)
        return None

    async def run_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """The first Bind plugin that does not SKIP binds the pod; SKIP if all skip."""
        if not self._bind:
            return Status.skip()
        status: Status | None = None
        for name, bind in self._bind:
            try:
                status = await bind(state, pod, node_name)
            except Exception as exc:
                status = _raised(exc)
            if status is not None and status.code is Code.SKIP:
                status.with_plugin(name)
                continue
            if status is None or status.code is Code.SUCCESS:
                return None
            if status.is_rejected:
                return status.with_plugin(name)
            return _error(f'running Bind plugin "{name}"', status, name)
        return status

    def run_post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        for name, post_bind in self._post_bind:
            try:
                post_bind(state, pod, node_name)
            except Exception:
                log.exception("PostBind of plugin %s failed for pod %s on %s", name, pod.key, node_name)


def _run_filters(filters: Sequence[tuple[str, Callable[..., Status | None]]], state: CycleState, pod: PodInfo,
                 node_info: NodeInfo) -> Status | None:
    for name, filter_ in filters:
        status = _call_filter(filter_, state, pod, node_info)
        if status is not None and status.code is not Code.SUCCESS:
            return _filter_failure(name, status)
    return None


def _filter_failure(name: str, status: Status) -> Status:
    """A Filter plugin's failed status as the framework reports it: a rejection names the plugin; anything
    else is a bug (Filter plugins may only accept or reject), reported as an ERROR."""
    if status.is_rejected:
        return status.with_plugin(name)
    return _error(f'running "{name}" filter plugin', status, name)


#: Below this many nodes the batch Filter asks each plugin's own per-node Filter instead of its batch
#: form (both decide alike, which property tests check): a batch call's fixed cost is that of about a
#: dozen nodes filtered one by one.
NODE_BY_NODE_BELOW = 12
#: A NodeScore's score (its second field) and a NodeInfo's name, read in C.
_score_of = operator.itemgetter(1)
_name_of_node = operator.attrgetter("name")
_NONES = itertools.repeat(None)


@dataclass(frozen=True, slots=True)
class _FilterPlan:
    """The Filter plugins that run when some SKIPped in PreFilter, and how to ask them."""

    #: Each plugin's per-node Filter, in order.
    per_node: list[tuple[str, Callable[..., Status | None]]]
    #: Each plugin's per-node and batch Filter, or None when one has only the per-node form.
    batch: list[tuple[str, Callable[..., Status | None], Callable[..., list[Status | None]]]] | None
    #: Below this many nodes the batch route asks node by node (0: never).
    by_node_below: int


def _run_batch_filters(
    filters: Sequence[tuple[str, Callable[..., Status | None], Callable[..., list[Status | None]]]],
    state: CycleState, pod: PodInfo, nodes: NodeSet,
) -> Verdicts:
    """``_run_filters`` of every node, one ``filter_nodes`` call per plugin over the nodes still in; with
    the tally of the failures, which a plugin's call that rejects its nodes all alike gives without a
    pass over them (the others' are counted if the whole tally is asked for)."""
    results: list[Status | None] = [None] * len(nodes)
    counted: dict[int, tuple[Status, int]] = {}
    #: The reports of the calls with several distinct failures, each with those failures.
    uncounted: list[tuple[list[Status | None], list[Status]]] = []
    positions: Sequence[int] = range(len(nodes))
    remaining = nodes
    for name, filter_, filter_nodes in filters:
        if not remaining:
            break
        try:
            statuses = filter_nodes(state, pod, remaining)
            if len(statuses) != len(remaining):
                raise PluginError(f"{len(statuses)} statuses for {len(remaining)} nodes")
        except Exception:
            # Which node failed is unknown: ask node by node, so that the error lands on the node (and
            # reads) as the per-node Filter reports it.
            statuses = [_call_filter(filter_, state, pod, node_info) for node_info in remaining]
        # Identity, not list.count(None): that calls Status.__eq__ on every failed verdict.
        if all(map(operator.is_, statuses, _NONES)):
            continue  # every node passed (the common case)
        # A plugin hands one verdict to many nodes: each distinct one is reported once, and the report
        # shared as the verdict was. Whole-list operations in C, not a Python loop per node.
        reports = {ident: _filter_failure(name, status) for ident, status in by_identity(statuses).items()
                   if status is not None and status.code is not Code.SUCCESS}
        reported = list(map(reports.get, map(id, statuses)))
        if len(reported) == len(results):
            # No plugin before turned a node down: these are the results (a copy: the later plugins'
            # reports go into the results, and the tally may count these).
            results = reported.copy()
        else:
            for position, report in itertools.compress(zip(positions, reported, strict=True),
                                                       map(operator.is_not, reported, _NONES)):
                results[position] = report
        kept = list(itertools.compress(itertools.count(), map(operator.is_, reported, _NONES)))
        if len(reports) == 1:
            (report,) = reports.values()
            _count_in(counted, report, len(reported) - len(kept))
        elif reports:
            uncounted.append((reported, list(reports.values())))
        positions, remaining = list(map(positions.__getitem__, kept)), remaining.subset(kept)
    return Verdicts(results, tally=functools.partial(_tally, counted, uncounted))


def _tally(counted: dict[int, tuple[Status, int]],
           uncounted: list[tuple[list[Status | None], list[Status]]]) -> list[tuple[Status, int]]:
    """``counted`` with the failures of ``uncounted`` counted in: the batch's ``counted_failures()``."""
    for reported, failures in uncounted:
        distinct = {id(failure): failure for failure in failures}
        for ident, times in Counter(map(id, reported)).items():
            if ident in distinct:
                _count_in(counted, distinct[ident], times)
    uncounted.clear()
    return list(counted.values())


def _count_in(tally: dict[int, tuple[Status, int]], report: Status, times: int) -> None:
    # Two plugins may hand over one object (its report names the first): counted as one verdict.
    known = tally.get(id(report))
    tally[id(report)] = (report, times + (known[1] if known is not None else 0))


def _call_filter(filter_: Callable[..., Status | None], state: CycleState, pod: PodInfo,
                 node_info: NodeInfo) -> Status | None:
    try:
        return filter_(state, pod, node_info)
    except Exception as exc:
        return _raised(exc)


def _extensions(plugin: Plugin, method: str) -> Any:
    """A plugin's PreFilterExtensions / ScoreExtensions, asked once (a missing method means none)."""
    get: Callable[[], PreFilterExtensions | ScoreExtensions | None] | None = getattr(plugin, method, None)
    return get() if get is not None else None


def _node_filter(plugin: Plugin) -> Callable[[CycleState, PodInfo, NodeInfo], Status | None]:
    """The plugin's per-node Filter: ``filter``, or its batch form asked about one node."""
    if isinstance(plugin, FilterPlugin):
        return plugin.filter
    assert isinstance(plugin, BatchFilterPlugin), "build_framework places only Filter plugins at filter"
    filter_nodes = plugin.filter_nodes

    def one_node(state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        (status,) = filter_nodes(state, pod, NodeSet([node_info]))
        return status

    return one_node


def _batch_scorer(plugin: Plugin) -> Callable[[CycleState, PodInfo, NodeSet], list[int]]:
    """The plugin's batch Score (``score_nodes``), or its per-node ``score`` called for each node."""
    if isinstance(plugin, BatchScorePlugin):
        return plugin.score_nodes
    score = cast(ScorePlugin, plugin).score

    def per_node(state: CycleState, pod: PodInfo, nodes: NodeSet) -> list[int]:
        return [score(state, pod, node_info) for node_info in nodes]

    return per_node


def _normalizers(plugin: Plugin) -> tuple[ScoreExtensions | None, Callable[..., Status | None] | None]:
    """The plugin's ScoreExtensions, and their ``normalize_scores`` if they have the batch form."""
    extensions: ScoreExtensions | None = _extensions(plugin, "score_extensions")
    if isinstance(extensions, BatchNormalizeScore):
        return extensions, extensions.normalize_scores
    return extensions, None


def _intersect(first: Sequence[Placement], second: Sequence[Placement]) -> list[Placement]:
    """Every pair's common nodes, in ``first``'s order, where any are left; named "first/second"."""
    merged = []
    names_of = [{info.name for info in b.nodes} for b in second]
    for a in first:
        for b, names in zip(second, names_of, strict=True):
            nodes = tuple(info for info in a.nodes if info.name in names)
            if nodes:
                merged.append(Placement(f"{a.name}/{b.name}", nodes))
    return merged


def _implements(plugin: Plugin, point: str) -> bool:
    if callable(getattr(plugin, ENTRY_METHODS[point], None)):
        return True
    batch_form = _BATCH_FORMS.get(point)
    return batch_form is not None and isinstance(plugin, batch_form)


# ---------------------------------------------------------------------------------------- building


def build_framework(
    profile: ProfileSpec,
    registry: Registry | Mapping[str, Any],
    handle: FrameworkHandle,
    *,
    clock: Clock | None = None,
    batching: bool = True,
) -> Framework:
    """Instantiate ``profile``'s plugins from ``registry`` and arrange them per extension point, as
    kube-scheduler's NewFramework does. Raises FrameworkError naming the profile and the problem.
    ``batching``: opportunistic batching (kube-scheduler's SchedulerOpportunisticBatching gate)."""
    if not isinstance(registry, Registry):
        registry = Registry(registry)
    name = profile.scheduler_name
    plugin_set = profile.plugins

    def fail(message: str) -> FrameworkError:
        return FrameworkError(f'profile "{name}": {message}')

    instances: dict[str, Plugin] = {}
    for plugin_name in plugin_set.enabled_names():
        try:
            entry = registry.load(plugin_name)
        except (KeyError, PluginLoadError) as exc:
            raise fail(str(exc.args[0] if exc.args else exc)) from exc
        try:
            plugin = entry.factory(profile.plugin_args.get(plugin_name), handle)
        except Exception as exc:
            raise fail(f'initializing plugin "{plugin_name}" ({entry.source}): {exc}') from exc
        if getattr(plugin, "name", None) != plugin_name:
            raise fail(f'plugin registered as "{plugin_name}" calls itself {getattr(plugin, "name", None)!r}')
        if _implements(plugin, "reserve") and not callable(getattr(plugin, "unreserve", None)):
            raise fail(f'plugin "{plugin_name}" implements reserve but not unreserve')
        instances[plugin_name] = plugin

    points: dict[str, list[Plugin]] = {}
    for point in EXTENSION_POINTS:
        points[point] = [instances[n] for n in _expand(point, plugin_set, instances, fail)]

    if len(points["queueSort"]) != 1:
        raise fail(f"exactly one queueSort plugin is required, got {len(points['queueSort'])}")
    if not points["bind"]:
        raise fail("at least one bind plugin is required")

    return Framework(name, handle, points, _weights("score", plugin_set, instances),
                     _weights("placementScore", plugin_set, instances), clock=clock,
                     percentage_of_nodes_to_score=profile.percentage_of_nodes_to_score, batching=batching)


def _weights(point: str, plugin_set: PluginSet, instances: Mapping[str, Plugin]) -> dict[str, int]:
    """Weights at a scoring point: an explicit entry there wins over multiPoint's; unset (0) means 1, as
    in kube-scheduler."""
    weights: dict[str, int] = {}
    for ref in (*plugin_set.point(point).enabled, *plugin_set.multi_point.enabled):
        if ref.name not in weights and _implements(instances[ref.name], point):
            weights[ref.name] = ref.weight or 1
    return weights


def _expand(point: str, plugin_set: PluginSet, instances: Mapping[str, Plugin],
            fail: Callable[[str], FrameworkError]) -> list[str]:
    """The plugins of one extension point: kube-scheduler's updatePluginList + expandMultiPointPlugins.

    Order: plugins enabled both here and by multiPoint (an explicit override, in this point's order),
    then multiPoint's, then the rest of this point's."""
    configured = plugin_set.point(point)
    explicit: list[str] = []
    for ref in configured.enabled:
        if not _implements(instances[ref.name], point):
            raise fail(f'plugin "{ref.name}" is enabled at {point} but does not implement it '
                       f"(no {ENTRY_METHODS[point]} method)")
        if ref.name in explicit:
            raise fail(f'plugin "{ref.name}" is enabled twice at {point}')
        explicit.append(ref.name)
    if ALL_PLUGINS in configured.disabled:
        return explicit
    overrides: set[str] = set()
    from_multi_point: list[str] = []
    for ref in plugin_set.multi_point.enabled:
        if not _implements(instances[ref.name], point) or ref.name in configured.disabled:
            continue
        if ref.name in explicit:
            overrides.add(ref.name)
        elif ref.name in from_multi_point:
            raise fail(f'plugin "{ref.name}" is enabled twice through multiPoint')
        else:
            from_multi_point.append(ref.name)
    first = [n for n in explicit if n in overrides]
    rest = [n for n in explicit if n not in overrides]
    return first + from_multi_point + rest
