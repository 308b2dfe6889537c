"""PrioritySort: the activeQ order. Higher priority first; among equals, the pod that entered (or was
last moved within) the queue earlier."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.framework import Handle, QueuedPodInfo

NAME = "PrioritySort"


class PrioritySort:
    @property
    def name(self) -> str:
        return NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.pod_info.priority, b.pod_info.priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)


def new(args: Mapping[str, Any] | None, handle: Handle) -> PrioritySort:
    return PrioritySort()
