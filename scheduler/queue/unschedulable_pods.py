"""unschedulablePods: pods that failed and wait for a cluster event that could help them.

A map by key. Pods enter it only from ``add_unschedulable_if_not_present``, stamped with the clock's
current (monotonic) time, and an in-place update keeps both a pod's position and its timestamp, so the
map's insertion order is timestamp order: the leftover flush reads from the oldest end and stops at the
first pod that has not stayed long enough.
"""

from __future__ import annotations

from collections.abc import Iterator

from scheduler.framework import QueuedPodInfo


class UnschedulablePods:
    __slots__ = ("_pods",)

    def __init__(self) -> None:
        self._pods: dict[str, QueuedPodInfo] = {}

    def __len__(self) -> int:
        return len(self._pods)

    def __contains__(self, key: object) -> bool:
        return key in self._pods

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        """Oldest first."""
        return iter(self._pods.values())

    def get(self, key: str) -> QueuedPodInfo | None:
        return self._pods.get(key)

    def add_or_update(self, qpi: QueuedPodInfo) -> None:
        """A new pod goes last (it is the newest); a known one keeps its place."""
        self._pods[qpi.key] = qpi

    def delete(self, key: str) -> QueuedPodInfo | None:
        return self._pods.pop(key, None)

    def oldest(self) -> QueuedPodInfo | None:
        return next(iter(self._pods.values()), None)

    def stayed_longer_than(self, now: float, max_stay_s: float) -> list[QueuedPodInfo]:
        """The pods that entered more than ``max_stay_s`` before ``now``, oldest first."""
        old: list[QueuedPodInfo] = []
        for qpi in self._pods.values():
            if now - qpi.timestamp <= max_stay_s:
                break
            old.append(qpi)
        return old
