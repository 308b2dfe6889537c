"""Preemption units and the priority pods count with in preemption (KEP-5710's workload-aware
preemption, as kube-scheduler's pkg/scheduler/framework/preemption has them).

A victim: a pod alone, or, when its PodGroup says ``disruptionMode: {all: {}}``, every bound pod of that
group, wherever it runs: evicted whole or not at all. ``single`` (the API's default when unset) lets the
group's pods go one by one. A pod naming a PodGroup the scheduler does not know is a unit of its own, as
upstream falls back to it. Coscheduling's spelling (scheduling.x-k8s.io) has no disruptionMode: podsched
keeps a gang of that spelling whole, as before the field existed.

The priority a pod of a scheduling.k8s.io PodGroup counts with, as a victim and as a preemptor, is its
PodGroup's ``spec.priority`` (resolved from priorityClassName by admission; 0 when unset, upstream's
PodGroupPriority), not the pod's own. A Coscheduling group has no priority: its pods count with theirs,
and a Coscheduling gang preempts with its members' lowest. A group preemptor's preemptionPolicy is its
PodGroup's (PreemptLowerPriority when unset), whatever its pods say; for Coscheduling's spelling, any
member saying Never keeps the gang from preempting (upstream's rule when the group has no policy field).

Preemption does not look at CompositePodGroups (the scheduling cycle does: scheduler/gang/composite.py):
a PodGroup's own mode and priority decide (upstream's preemption with the CompositePodGroup feature off).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cluster.api import objects_pb2, podgroups
from scheduler.framework import NodeInfoLister, PodGroupLister, PodInfo, pod_key
from scheduler.framework.pod_groups import gang_policy

PREEMPT_NEVER = "Never"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"


def group_priority(group: objects_pb2.PodGroup) -> int | None:
    """The priority every pod of ``group`` counts with: its spec.priority (0 when unset); None for
    Coscheduling's spelling, which has none (its pods keep their own)."""
    if podgroups.is_coscheduling(group):
        return None
    return group.spec.priority if group.spec.HasField("priority") else 0


def evicted_whole(group: objects_pb2.PodGroup) -> bool:
    """Whether ``group``'s bound pods are one victim: disruptionMode all (a Coscheduling gang, whose API
    has no mode, too)."""
    if podgroups.is_coscheduling(group):
        return gang_policy(group) is not None
    return group.spec.disruption_mode.HasField("all")


def preemptor_priority(group: objects_pb2.PodGroup | None, members: Sequence[PodInfo]) -> int:
    """The priority a group preempts with: its PodGroup's, else (Coscheduling, or not known) its members'
    lowest, so that a victim is below every member."""
    priority = None if group is None else group_priority(group)
    if priority is not None:
        return priority
    return min(member.priority for member in members)


def group_preempts(group: objects_pb2.PodGroup | None, members: Sequence[PodInfo]) -> bool:
    """Whether a group may preempt at all: its PodGroup's preemptionPolicy (PreemptLowerPriority when
    unset, the pods' own ignored); without a policy field (Coscheduling), no member may say Never."""
    if group is not None and not podgroups.is_coscheduling(group):
        spec = group.spec
        return not (spec.HasField("preemption_policy") and spec.preemption_policy == PREEMPT_NEVER)
    return not any(member.pod.spec.HasField("preemption_policy")
                   and member.pod.spec.preemption_policy == PREEMPT_NEVER for member in members)


class DisruptionUnits:
    """Which pods go together when one of them is a victim, and the priority each counts with. Computed
    once per group per preemption."""

    def __init__(self, nodes: NodeInfoLister, groups: PodGroupLister) -> None:
        self._nodes = nodes
        self._groups = groups
        self._units: dict[str, list[tuple[PodInfo, str]]] = {}

    def group_of(self, pod_info: PodInfo) -> str:
        """The key of the group ``pod_info`` is evicted with as a whole, "" if it goes alone."""
        key = pod_info.group_key
        if not key:
            return ""
        group = self._groups.pod_group(key)
        if group is None or not evicted_whole(group):
            return ""
        return key

    def priority_of(self, pod_info: PodInfo) -> int:
        """The priority ``pod_info`` counts with as a victim: its PodGroup's, else its own."""
        key = pod_info.group_key
        group = self._groups.pod_group(key) if key else None
        priority = None if group is None else group_priority(group)
        return pod_info.priority if priority is None else priority

    def importance(self, pod_info: PodInfo) -> tuple[int, int, int, float]:
        """A sort key putting the more important victim first (upstream's MoreImportantVictim): the higher
        priority it counts with; then a pod of a group before a pod of none; then the larger unit; then
        the unit that started first."""
        if not pod_info.group_key:
            return -pod_info.priority, -1, -1, pod_info.start_time  # a unit of its own, with its own priority
        key = self.group_of(pod_info)
        if not key:
            return -self.priority_of(pod_info), -2 if pod_info.group_key else -1, -1, pod_info.start_time
        unit = self.unit(pod_info, pod_info.pod.spec.node_name)
        started = min(info.start_time for info, _ in unit)
        return -self.priority_of(pod_info), -2, -len(unit), started

    def unit(self, pod_info: PodInfo, node_name: str) -> list[tuple[PodInfo, str]]:
        """(pod, node) for every pod evicted with ``pod_info`` (itself included)."""
        key = self.group_of(pod_info)
        if not key:
            return [(pod_info, node_name)]
        unit = self._units.get(key)
        if unit is None:
            unit = [(self._bound_info(pod), pod.spec.node_name)
                    for pod in self._groups.members(key) if pod.spec.node_name]
            if not any(info.key == pod_info.key for info, _ in unit):
                unit.append((pod_info, node_name))  # the informer has not seen it bound yet
            self._units[key] = unit
        return unit

    def evictable_for(self, priority: int) -> Callable[[PodInfo], bool]:
        """Whether a pod may be a victim of a preemptor of ``priority``: every pod of its unit counts
        lower."""

        def evictable(pod_info: PodInfo) -> bool:
            if not pod_info.group_key:
                return pod_info.priority < priority  # a unit of its own, with its own priority
            node_name = pod_info.pod.spec.node_name
            return all(self.priority_of(other) < priority for other, _ in self.unit(pod_info, node_name))

        return evictable

    def _bound_info(self, pod: objects_pb2.Pod) -> PodInfo:
        """The snapshot's PodInfo of a bound pod (parsed already), or a new one if the snapshot lacks it."""
        try:
            found = self._nodes.get(pod.spec.node_name).pods.get(pod_key(pod))
        except KeyError:
            found = None
        return found if found is not None else PodInfo(pod)
