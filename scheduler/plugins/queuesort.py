"""PrioritySort: the activeQ order. Higher priority first; among equals, the pod that entered (or was
last moved within) the queue earlier.

Pods of pod groups are ordered as scheduler-plugins' Coscheduling orders them, so that a group's pods
are adjacent and the group goes by its priority and age: the group's priority (its PodGroup's
spec.priority, else the pod's), then the PodGroup's creation time, then its name; pods of one group, and
a pod of a group beside one of none, by priority and queue time as any two pods.
"""

from __future__ import annotations

from cluster.api import timeutil
from scheduler.framework import Handle, PodGroupLister, QueuedPodInfo

NAME = "PrioritySort"


class PrioritySort:
    def __init__(self, groups: PodGroupLister) -> None:
        self._groups = groups

    @property
    def name(self) -> str:
        return NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        ga, gb = a.pod_info.group_key, b.pod_info.group_key
        pa, pb = self._priority(a, ga), self._priority(b, gb)
        if pa != pb:
            return pa > pb
        if ga and gb and ga != gb:
            ca, cb = self._created(ga), self._created(gb)
            if ca != cb:
                return ca < cb
            return ga < gb
        return a.timestamp < b.timestamp

    def _priority(self, qpi: QueuedPodInfo, group: str) -> int:
        if group:
            pod_group = self._groups.pod_group(group)
            if pod_group is not None and pod_group.spec.HasField("priority"):
                return pod_group.spec.priority
        return qpi.pod_info.priority

    def _created(self, group: str) -> float:
        pod_group = self._groups.pod_group(group)
        if pod_group is None or not timeutil.is_set(pod_group.metadata.creation_timestamp):
            return float("inf")
        return pod_group.metadata.creation_timestamp.ToNanoseconds() / 1e9


def new(args: None, handle: Handle) -> PrioritySort:
    return PrioritySort(handle.pod_groups)
