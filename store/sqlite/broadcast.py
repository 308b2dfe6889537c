"""In-process fan-out of committed log rows to watchers, with a bounded buffer per watcher.

The writer thread publishes each committed batch on the event loop (see writer.py); publishing appends
the rows a subscription's prefix matches to that subscription's buffer and wakes its reader. Publishing
never waits for a reader: when a buffer is full the subscription drops what it holds and is marked
``overflowed``, and its reader goes back to the log for everything after the last row it delivered
(see SqliteStore.watch). A slow watcher therefore costs at most one full buffer of memory and never
slows a writer.

Everything here runs on the event loop thread, so no locking is needed.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque

from store.sqlite.dialect import Row

#: Rows a subscription may hold before it overflows. A watcher that falls this far behind live traffic
#: reads the log instead, which costs a query per page but no memory; 1024 rows rides out bursts of
#: a few thousand writes per second without a fallback.
DEFAULT_CAPACITY = 1024


class Subscription:
    """One watcher's view of the live rows of a prefix."""

    def __init__(self, prefix: str, capacity: int) -> None:
        self.prefix = prefix
        self.capacity = capacity
        self.overflowed = False
        self.closed = False
        #: A progress mark is owed (SqliteStore.watch_progress).
        self.progress_requested = False
        self._rows: deque[Row] = deque()
        self._wakeup = asyncio.Event()

    def offer(self, rows: list[Row]) -> None:
        matched = [row for row in rows if row.name.startswith(self.prefix)]
        if not matched:
            return
        if len(self._rows) + len(matched) > self.capacity:
            self._rows.clear()
            self.overflowed = True
        else:
            self._rows.extend(matched)
        self._wakeup.set()

    @property
    def buffered(self) -> bool:
        """Whether rows wait in the buffer."""
        return bool(self._rows)

    def take(self) -> list[Row]:
        """The buffered rows, oldest first; the buffer is empty afterwards."""
        rows = list(self._rows)
        self._rows.clear()
        return rows

    def reset(self) -> None:
        """Forget the buffered rows and the overflow before the reader goes back to the log: everything
        published so far is committed, so the log read that follows sees it."""
        self._rows.clear()
        self.overflowed = False

    async def wait(self) -> None:
        """Until rows arrive, the buffer overflows, or the subscription is closed."""
        await self._wakeup.wait()
        self._wakeup.clear()

    def request_progress(self) -> None:
        self.progress_requested = True
        self._wakeup.set()

    def close(self) -> None:
        self.closed = True
        self._rows.clear()
        self._wakeup.set()


class Broadcaster:
    """The set of live subscriptions, and the newest revision published to them.

    Subscriptions are held weakly: a watch iterator that its consumer drops without closing it takes
    its subscription with it when it is garbage-collected, instead of leaking a buffer that fills up.
    """

    def __init__(self, revision: int, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError(f"watch buffer capacity must be at least 1, got {capacity}")
        self._capacity = capacity
        self._subscriptions: weakref.WeakSet[Subscription] = weakref.WeakSet()
        self._closed = False
        #: The newest revision published: a subscription made now receives every row after it.
        self.revision = revision

    def subscribe(self, prefix: str) -> Subscription:
        subscription = Subscription(prefix, self._capacity)
        if self._closed:
            subscription.close()
        else:
            self._subscriptions.add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self._subscriptions.discard(subscription)

    def publish(self, rows: list[Row]) -> None:
        self.revision = rows[-1].revision
        for subscription in self._subscriptions:
            subscription.offer(rows)

    def close(self) -> None:
        self._closed = True
        for subscription in list(self._subscriptions):
            subscription.close()
        self._subscriptions.clear()
