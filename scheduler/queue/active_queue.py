"""activeQ: the pods ready to be scheduled, in QueueSort order, and the blocking ``pop``.

It also owns the scheduling-cycle counter, as kube-scheduler's activeQueue does: a cycle is one pop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

from scheduler.framework import QueuedPodInfo
from scheduler.queue.heap import KeyedHeap


class QueueClosed(Exception):
    """The scheduling queue was closed: ``pop`` returns no more pods."""


def _key(qpi: QueuedPodInfo) -> str:
    return qpi.key


class ActiveQueue:
    __slots__ = ("_closed", "_heap", "_ready", "scheduling_cycle")

    def __init__(self, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]) -> None:
        self._heap: KeyedHeap[QueuedPodInfo] = KeyedHeap(_key, less)
        #: Set whenever a pod is added or the queue closes: what a blocked ``pop`` waits for.
        self._ready = asyncio.Event()
        self._closed = False
        #: Incremented by every pop; the moveRequestCycle rule compares against it.
        self.scheduling_cycle = 0

    def __len__(self) -> int:
        return len(self._heap)

    def __contains__(self, key: object) -> bool:
        return key in self._heap

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        return iter(self._heap)

    def get(self, key: str) -> QueuedPodInfo | None:
        return self._heap.get(key)

    def add_or_update(self, qpi: QueuedPodInfo) -> None:
        """Queue the pod (or re-place it after an update) and wake a blocked ``pop``."""
        self._heap.add_or_update(qpi)
        self._ready.set()

    def delete(self, key: str) -> QueuedPodInfo | None:
        return self._heap.delete(key)

    def close(self) -> None:
        self._closed = True
        self._ready.set()

    async def pop(self) -> QueuedPodInfo:
        """The first pod, waiting for one if there is none; QueueClosed once the queue is closed (even
        with pods left: a closing scheduler starts no new cycle)."""
        while True:
            if self._closed:
                raise QueueClosed("scheduling queue is closed")
            if self._heap:
                break
            self._ready.clear()
            await self._ready.wait()
        qpi = self._heap.pop()
        self.scheduling_cycle += 1
        qpi.attempts += 1
        return qpi
