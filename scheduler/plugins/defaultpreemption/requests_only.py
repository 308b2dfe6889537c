"""The dry run's fast path for nodes where only resource requests decide (podsched's own; kube-scheduler
runs SelectVictimsOnNode on 16 goroutines instead).

On such a node, ``select_victims_on_node`` (candidates.py, the reference) comes down to arithmetic:
taking the lower-priority pods off subtracts their requests, each Filter call is NodeResourcesFit's
verdict on the requests that are left and the pod count, and each reprieve adds a pod's requests back.
``RequestsOnly.victims`` does exactly that, on the node's summed requests instead of a copy of the node
and the cycle state, with the reference's order of reprieves (candidates.reprieve); where the preemptor
does not fit even with all of them gone, it gives NodeResourcesFit's rejection. It applies when:

* every Filter plugin that runs in the preemptor's cycle, but NodeResourcesFit, reads the node alone
  (``NODE_ONLY_FILTERS``: their verdict does not change with the pods), and NodeResourcesFit runs last;
* no PreFilter plugin's AddPod or RemovePod runs (they could fail, or change what Filter reads);
* the node failed the cycle's Filter at NodeResourcesFit: the plugins before it passed there, so they
  pass whatever pods the node runs;
* no pod is nominated to the node (Filter would count those pods as well).

Anywhere else the dry run takes the reference path. test_preemption_requests_only_property.py checks
that both find the same candidates, victims, statuses and node on generated clusters.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from scheduler.framework import CycleState, Handle, NodeInfo, NotFound, PodInfo, Status
from scheduler.plugins import nodeaffinity, nodename, nodeunschedulable, tainttoleration
from scheduler.plugins.defaultpreemption.candidates import Budget, reprieve
from scheduler.plugins.noderesources import fit

#: The Filter plugins whose verdict on a node reads the node and the pod alone, never the node's pods.
NODE_ONLY_FILTERS = frozenset({
    nodeunschedulable.NAME, nodename.NAME, tainttoleration.NAME, nodeaffinity.NAME,
})


class RequestsOnly:
    """The fast path for one preemptor's dry run (built by ``of``)."""

    __slots__ = ("_fit", "_node_to_status", "_nominated")

    def __init__(self, requests_fit: fit.RequestsFit, node_to_status: Mapping[str, Status],
                 nominated: Collection[str]) -> None:
        self._fit = requests_fit
        self._node_to_status = node_to_status
        self._nominated = nominated

    @classmethod
    def of(cls, handle: Handle, state: CycleState,
           node_to_status: Mapping[str, Status]) -> RequestsOnly | None:
        """The fast path for the preemptor of ``state``'s cycle, whose Filter found ``node_to_status``;
        None when its plugins are not those it stands in for."""
        running = handle.running_filter_plugins(state)
        if not running or running[-1] != fit.NAME or not NODE_ONLY_FILTERS.issuperset(running[:-1]):
            return None
        if handle.running_pre_filter_extensions(state):
            return None
        try:
            fits = fit.RequestsFit(state)
        except NotFound:
            return None
        return cls(fits, node_to_status, handle.nominator.nominated_node_names())

    def victims(
        self, node_info: NodeInfo, potential: list[PodInfo], budgets_: Sequence[Budget],
        importance_of: Callable[[PodInfo], tuple[Any, ...]],
    ) -> tuple[list[PodInfo], int, Status | None] | None:
        """``select_victims_on_node``'s answer for the node, whose pods the preemptor may evict are
        ``potential`` (reordered here); None where the fast path does not apply."""
        name = node_info.name
        status = self._node_to_status.get(name)
        if status is None or status.plugin != fit.NAME or name in self._nominated:
            return None
        allocatable = node_info.allocatable
        requested = node_info.requested.clone()
        for pod_info in potential:
            requested.sub(pod_info.requests)
        left = len(node_info.pods) - len(potential)
        fits = self._fit.fits
        if not fits(allocatable, requested, left):
            # Filter's rejection, named after the plugin as the framework names it.
            failed = self._fit.status(allocatable, requested, left)
            assert failed is not None
            return [], 0, failed.with_plugin(fit.NAME)

        def stays(pod_info: PodInfo) -> bool:
            nonlocal left
            requested.add(pod_info.requests)
            if fits(allocatable, requested, left + 1):
                left += 1
                return True
            requested.sub(pod_info.requests)
            return False

        victims, violations = reprieve(potential, budgets_, importance_of, stays)
        return victims, violations, None
