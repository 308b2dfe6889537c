"""The pods that Permit told to wait (kube-scheduler's waitingPodsMap): one map for every profile, as in
kube-scheduler, so that a Permit plugin can see (and allow) pods of other profiles, and preemption can reject
a victim that waits instead of deleting it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from typing import Any

from scheduler.framework.status import Code, Status
from scheduler.framework.types import PodInfo


class WaitingPod:
    """A pod that Permit told to wait: it goes on to bind when every waiting plugin has allowed it, and
    fails when one rejects it or one's timeout passes. The first decision wins."""

    def __init__(self, pod_info: PodInfo, timeouts: Mapping[str, float], now: float) -> None:
        self.pod_info = pod_info
        self._timeouts = dict(timeouts)
        self._deadlines = {plugin: now + timeout for plugin, timeout in timeouts.items()}
        self._decided = False
        self._status: Status | None = None
        self._changed = asyncio.Event()

    @property
    def pod(self) -> Any:
        return self.pod_info.pod

    def pending_plugins(self) -> list[str]:
        return list(self._deadlines)

    def allow(self, plugin: str) -> None:
        """``plugin`` no longer holds the pod; the pod goes on when no plugin does."""
        self._deadlines.pop(plugin, None)
        if not self._deadlines and not self._decided:
            self._decided = True
        self._changed.set()

    def reject(self, plugin: str, message: str) -> None:
        if not self._decided:
            self._decided = True
            self._status = Status(Code.UNSCHEDULABLE, (message,), plugin=plugin)
        self._changed.set()

    def _next_deadline(self) -> tuple[str, float]:
        plugin = min(self._deadlines, key=self._deadlines.__getitem__)
        return plugin, self._deadlines[plugin]


class WaitingPods:
    """The pods waiting at Permit, by pod key. One map serves every profile, as in kube-scheduler, so a
    Permit plugin can see (and allow) pods of other profiles."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def get(self, key: str) -> WaitingPod | None:
        return self._pods.get(key)

    def reject(self, key: str, plugin: str = "", message: str = "removed") -> bool:
        """Reject the pod if it is waiting (it was deleted, say); whether it was."""
        waiting = self._pods.get(key)
        if waiting is None:
            return False
        waiting.reject(plugin, message)
        return True

    def discard(self, key: str) -> None:
        """Reject the pod if it is waiting and forget it: no binding cycle will wait for it (a gang's
        cycle released it before handing it to the binder)."""
        self.reject(key, message="released")
        self._pods.pop(key, None)

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._pods.values()))

    def __len__(self) -> int:
        return len(self._pods)

    def _add(self, waiting: WaitingPod) -> None:
        self._pods[waiting.pod_info.key] = waiting

    def _remove(self, key: str) -> None:
        self._pods.pop(key, None)
