"""One Watch call served from the cache: the frames it was given when it started (a snapshot or a replay
from the ring), then a bounded queue of the live events it sees.

The cache never waits for a watcher: a watcher whose queue is full is closed, its queue dropped, and its
stream ends, as kube-apiserver ends a watcher whose buffer is full; the client watches again from the
last resourceVersion it saw. A slow consumer therefore holds at most ``capacity`` events."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable

from cluster.apiserver.selection import Selection
from cluster.apiserver.watchcache.ring import CachedEvent


class CacheWatcher:
    def __init__(self, selection: Selection, prefix: str, capacity: int, initial: Iterable[bytes]) -> None:
        self.selection = selection
        self.prefix = prefix
        self._capacity = capacity
        self._initial: Iterable[bytes] | None = initial
        self._queue: deque[bytes] = deque()
        self._wakeup = asyncio.Event()
        self.closed = False
        #: Closed because it fell ``capacity`` events behind.
        self.overflowed = False

    def offer(self, event: CachedEvent) -> None:
        """Queue ``event``'s frame if this watcher sees it; close the watcher if its queue is full."""
        if self.closed or not event.key.startswith(self.prefix):
            return
        frame = event.frame_for(self.selection)
        if frame is None:
            return
        if len(self._queue) >= self._capacity:
            self.overflowed = True
            self._queue.clear()
            self.close()
            return
        self._queue.append(frame)
        self._wakeup.set()

    def close(self) -> None:
        """End the stream once what is queued has been sent."""
        self.closed = True
        self._wakeup.set()

    async def frames(self, caught_up: Callable[[], None] | None = None) -> AsyncIterator[bytes]:
        """The frames, forever; ``caught_up`` is called once, when the initial frames and those queued
        meanwhile have been sent and the watcher first waits for news."""
        if self._initial is not None:
            initial, self._initial = self._initial, None
            for frame in initial:
                yield frame
        queue = self._queue
        while True:
            while queue:
                yield queue.popleft()
            if self.closed:
                return
            if caught_up is not None:
                caught_up()
                caught_up = None
            self._wakeup.clear()
            await self._wakeup.wait()
