"""A work queue of object keys for a controller's worker (client-go's workqueue, reduced to one worker).

- A key is waiting at most once: adding it again while it waits changes nothing, so a burst of events
  about one object costs one sync. A key added while the worker processes it waits again and is
  processed once more afterwards, so no change is lost.
- Keys come out in the order they were first added.
- A key may be added after a delay (``add_after``), for a controller that must look again later.
- A key whose sync failed comes back after a per-key exponential backoff (client-go's
  ItemExponentialFailureRateLimiter: 5 ms doubling up to a cap), reset by `forget` after a success.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
from collections.abc import Awaitable, Callable

from cluster.api import errors

#: The first retry of a failed key waits this long; each further failure doubles it (client-go: 5 ms).
BASE_RETRY_DELAY_S = 0.005
#: The longest a failed key waits (client-go caps at 1000 s; a minute keeps a controller whose API
#: server was briefly unreachable from lagging for long).
MAX_RETRY_DELAY_S = 60.0


class WorkQueue:
    """Keys to process, with delayed retries. Used from one event loop; ``get`` by one worker."""

    def __init__(
        self, *, base_retry_delay_s: float = BASE_RETRY_DELAY_S, max_retry_delay_s: float = MAX_RETRY_DELAY_S
    ) -> None:
        if not 0 < base_retry_delay_s <= max_retry_delay_s:
            raise ValueError(
                f"retry delays must satisfy 0 < base ({base_retry_delay_s}s) <= max ({max_retry_delay_s}s)"
            )
        self._base_s = base_retry_delay_s
        self._max_s = max_retry_delay_s
        #: Keys ready now, in the order they were added (a dict as an ordered set).
        self._ready: dict[str, None] = {}
        #: (due time, key) of keys waiting for a retry; an entry is stale when _due no longer says so.
        self._delayed: list[tuple[float, str]] = []
        self._due: dict[str, float] = {}
        self._failures: dict[str, int] = {}
        self._wakeup = asyncio.Event()

    def __len__(self) -> int:
        """Keys waiting, ready or delayed."""
        return len(self._ready.keys() | self._due.keys())

    def has_ready(self) -> bool:
        """Whether a key is ready now (keys waiting out a retry's backoff are not)."""
        return bool(self._ready)

    def add(self, key: str) -> None:
        """Make ``key`` ready (a no-op when it is ready already)."""
        self._due.pop(key, None)
        self._ready[key] = None
        self._wakeup.set()

    def add_after(self, key: str, delay_s: float) -> None:
        """Make ``key`` ready in ``delay_s`` seconds, unless it is ready or due sooner already."""
        if key in self._ready:
            return
        self._delay(key, asyncio.get_running_loop().time() + delay_s)

    def retry_delay_s(self, failures: int) -> float:
        """How long a key waits after its ``failures``-th failure in a row."""
        return min(self._base_s * 2 ** (failures - 1), self._max_s)

    def retry(self, key: str) -> float:
        """Count a failed sync of ``key`` and have it come back after the backoff; returns the delay."""
        failures = self._failures.get(key, 0) + 1
        self._failures[key] = failures
        delay = self.retry_delay_s(failures)
        if key not in self._ready:
            self._delay(key, asyncio.get_running_loop().time() + delay)
        return delay

    def _delay(self, key: str, due: float) -> None:
        if key not in self._due or due < self._due[key]:
            self._due[key] = due
            heapq.heappush(self._delayed, (due, key))
            self._wakeup.set()

    def forget(self, key: str) -> None:
        """Reset ``key``'s backoff (its sync succeeded, or it is gone)."""
        self._failures.pop(key, None)

    async def process(
        self, key: str, sync: Callable[[str], Awaitable[object]], what: str, log: logging.Logger
    ) -> None:
        """Run ``sync(key)`` once. On success ``key``'s backoff is reset; on a failure ``key`` comes back
        after it, logged to ``log`` about ``what`` (the object, as the log names it): a Conflict quietly,
        since the object only changed after it was read and the next sync reads it again; an API error as
        a warning; anything else with its traceback."""
        try:
            await sync(key)
        except errors.Conflict:
            log.debug("%s changed meanwhile; again in %.3fs", what, self.retry(key))
        except errors.ApiError as exc:
            log.warning("cannot sync %s (%s: %s); again in %.3fs",
                        what, type(exc).__name__, exc.message, self.retry(key))
        except Exception:
            log.exception("syncing %s failed; again in %.3fs", what, self.retry(key))
        else:
            self.forget(key)

    async def get(self) -> str:
        """The next ready key, waiting for one as long as it takes."""
        loop = asyncio.get_running_loop()
        while True:
            now = loop.time()
            while self._delayed and self._delayed[0][0] <= now:
                due, key = heapq.heappop(self._delayed)
                if self._due.get(key) == due:
                    del self._due[key]
                    self._ready[key] = None
            if self._ready:
                key = next(iter(self._ready))
                del self._ready[key]
                return key
            self._wakeup.clear()
            timeout = self._delayed[0][0] - now if self._delayed else None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._wakeup.wait()
