"""Periodic compaction of any Store, as kube-apiserver compacts etcd and kine compacts its log.

Without it the history grows forever: a Lease renewed every few seconds adds a revision each time, and
SQLite-backed stores have been seen holding gigabytes of stale revisions (k3s-io/kine issue 213).

The rule, from kube-apiserver (k8s.io/apiserver/pkg/storage/etcd3/compact.go) and kine: at every tick,
compact to the revision observed at the *previous* tick, so that every revision stays readable for at
least one interval (a watcher or a paginated list that started just before is not cut off at once), but
never into the newest ``min_retained_revisions`` revisions (kine keeps 1000), so a burst of writes does
not expire a client's resourceVersion within seconds. The first tick only observes.

Several API servers may share one etcd and each run a compactor; whoever compacts first wins, and the
others see TooOldRevision for the same target and carry on.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Protocol

from store.base import Store, StoreUnavailable, TooOldRevision

log = logging.getLogger(__name__)

#: Seconds between compactions, measured from one tick's scheduled time to the next. kube-apiserver's
#: default (--etcd-compaction-interval=5m): long enough that a relist after a watch error normally
#: finds its resourceVersion still there, short enough that history stays small.
DEFAULT_INTERVAL_S = 300.0

#: The newest revisions a compaction never touches, whatever the interval (kine's default). Bounds
#: how fast a write burst can expire a resourceVersion a client just read.
DEFAULT_MIN_RETAINED_REVISIONS = 1000


class Clock(Protocol):
    """Time as the compactor sees it; tests inject a fake one so nothing sleeps for real."""

    def monotonic(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class Compactor:
    def __init__(
        self,
        store: Store,
        interval_s: float = DEFAULT_INTERVAL_S,
        min_retained_revisions: int = DEFAULT_MIN_RETAINED_REVISIONS,
        clock: Clock | None = None,
    ) -> None:
        if not interval_s > 0:
            raise ValueError(f"compaction interval must be positive, got {interval_s} s")
        if min_retained_revisions < 0:
            raise ValueError(f"min_retained_revisions must be >= 0, got {min_retained_revisions}")
        self.store = store
        self.interval_s = interval_s
        self.min_retained_revisions = min_retained_revisions
        self._clock: Clock = clock if clock is not None else SystemClock()
        # The store's revision at the previous tick (None before the first tick).
        self._observed: int | None = None

    async def compact_once(self) -> int | None:
        """One tick: compact if the rule allows it. Returns the revision compacted to, or None."""
        current = await self.store.current_revision()
        previous, self._observed = self._observed, current
        if previous is None:
            return None
        target = min(previous, current - self.min_retained_revisions)
        if target <= await self.store.compacted_revision():
            return None
        started = self._clock.monotonic()
        try:
            await self.store.compact(target)
        except TooOldRevision as exc:
            log.info("compaction to revision %d skipped: already compacted to %d", target, exc.compacted)
            return None
        log.info(
            "compacted the store to revision %d (current %d) in %.3f s",
            target,
            current,
            self._clock.monotonic() - started,
        )
        return target

    async def run(self) -> None:
        """Tick every ``interval_s`` seconds until cancelled. An unreachable store is logged and retried
        at the next tick; any other error is a bug and ends the loop."""
        next_tick = self._clock.monotonic() + self.interval_s
        while True:
            await self._clock.sleep(max(0.0, next_tick - self._clock.monotonic()))
            try:
                await self.compact_once()
            except StoreUnavailable as exc:
                log.warning("compaction failed, retrying in %.0f s: %s", self.interval_s, exc)
            next_tick += self.interval_s
            now = self._clock.monotonic()
            if next_tick <= now:  # a compaction overran whole ticks: skip them, do not run back to back
                next_tick = now + self.interval_s
