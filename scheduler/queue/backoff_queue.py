"""podBackoffQ: pods that failed and wait out their backoff before going back to activeQ.

A pod's backoff is ``initial * 2**(attempts-1)``, capped at ``max`` (kube-scheduler's
calculateBackoffDuration: 1, 2, 4, 8, 10, 10 s with the defaults), counted from the pod's timestamp,
which the queue refreshes when an attempt fails. A pod never attempted has no backoff. The heap is
ordered by expiry, so the 1 s flush looks only at its head.
"""

from __future__ import annotations

from collections.abc import Iterator

from scheduler.clock import Clock
from scheduler.framework import QueuedPodInfo
from scheduler.queue.heap import KeyedHeap


def _key(qpi: QueuedPodInfo) -> str:
    return qpi.key


class BackoffQueue:
    __slots__ = ("_clock", "_heap", "initial_s", "max_s")

    def __init__(self, clock: Clock, initial_s: float, max_s: float) -> None:
        self._clock = clock
        self.initial_s = initial_s
        self.max_s = max_s
        self._heap: KeyedHeap[QueuedPodInfo] = KeyedHeap(_key, self._expires_first)

    def backoff_duration(self, attempts: int) -> float:
        """Seconds of backoff after ``attempts`` attempts."""
        if attempts <= 0:
            return 0.0
        duration = self.initial_s
        # Doubling stops at the cap, so this runs at most log2(max/initial) times.
        for _ in range(1, attempts):
            duration *= 2
            if duration >= self.max_s:
                return self.max_s
        return min(duration, self.max_s)

    def expiry(self, qpi: QueuedPodInfo) -> float:
        """When the pod's backoff ends (on the clock's scale)."""
        return qpi.timestamp + self.backoff_duration(qpi.attempts)

    def is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        return self.expiry(qpi) > self._clock.now()

    def _expires_first(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.expiry(a) < self.expiry(b)

    def __len__(self) -> int:
        return len(self._heap)

    def __contains__(self, key: object) -> bool:
        return key in self._heap

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        return iter(self._heap)

    def get(self, key: str) -> QueuedPodInfo | None:
        return self._heap.get(key)

    def add_or_update(self, qpi: QueuedPodInfo) -> None:
        self._heap.add_or_update(qpi)

    def delete(self, key: str) -> QueuedPodInfo | None:
        return self._heap.delete(key)

    def pop_completed(self) -> list[QueuedPodInfo]:
        """Remove and return every pod whose backoff has ended, earliest expiry first."""
        done: list[QueuedPodInfo] = []
        while (head := self._heap.peek()) is not None and not self.is_backing_off(head):
            done.append(self._heap.pop())
        return done

    def next_expiry(self) -> float | None:
        head = self._heap.peek()
        return None if head is None else self.expiry(head)
