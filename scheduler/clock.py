"""The scheduler's clock, injected everywhere time matters (backoff, flushes, assumed-pod expiry).

``SystemClock`` is the real one. ``FakeClock`` only moves when told to: unit tests drive backoff and
expiry with it, and ``podsched simulate`` uses it as a virtual clock, jumping straight to the next
timer whenever the control plane has nothing else to do.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds on a monotonic scale (only differences mean anything)."""
        ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class FakeClock:
    """A clock that stands still until ``advance`` or ``advance_to`` moves it; sleepers wake when the
    time they wait for is reached, in order."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._now + seconds, next(self._order), future))
        await future

    def next_wakeup(self) -> float | None:
        """When the earliest pending sleeper wakes, or None if nobody sleeps."""
        while self._sleepers and self._sleepers[0][2].done():
            heapq.heappop(self._sleepers)  # cancelled sleepers
        return self._sleepers[0][0] if self._sleepers else None

    def advance(self, seconds: float) -> None:
        self.advance_to(self._now + seconds)

    def advance_to(self, when: float) -> None:
        """Move time forward to ``when`` and wake every sleeper due by then (they run at the next await)."""
        if when < self._now:
            raise ValueError(f"a clock does not go backwards ({when} < {self._now})")
        self._now = when
        while self._sleepers and self._sleepers[0][0] <= when:
            _, _, future = heapq.heappop(self._sleepers)
            if not future.done():
                future.set_result(None)
