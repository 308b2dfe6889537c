"""The cache's one store watch: a List of every cached kind at one revision, then one watch of the whole
registry from the revision after it, each event handed to its kind's cache.

One watch for every kind, rather than one per kind, because a consistent read waits until the cache has
seen the store's current revision, and any write of any kind advances it. Writes outside the registry
(etcd's compaction record, other users' keys) advance it too without an event: while a read waits, the
reflector asks the store for a progress mark (``Store.request_progress``, etcd's watch progress requests,
as kube-apiserver's cacher does), which says that the watch has yielded every event up to the store's
revision then, and records that revision as seen. Events of kinds that are not cached are skipped
undecoded.

When the watch breaks (etcd restarted or compacted past it, the store closed) every watcher of the cache
is closed, so its client watches again from its last resourceVersion, and the reflector lists again."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging

from cluster.apiserver.watchcache.kindcache import KindCache
from store.base import KeyValue, ProgressMark, Store

log = logging.getLogger(__name__)

#: Every kind's objects live under it (cluster.api.kinds.Kind.key_prefix).
REGISTRY_PREFIX = "/registry/"
#: Keys per store read of the initial List, as listing.py pages.
LIST_PAGE_SIZE = 500


class Reflector:
    def __init__(
        self, store: Store, caches: list[KindCache], *, retry_s: float = 1.0, progress_after_s: float = 0.05
    ) -> None:
        self._store = store
        self._caches = {cache.kind.plural: cache for cache in caches}
        self._retry_s = retry_s
        self._progress_after_s = progress_after_s
        self._requesting: asyncio.Task[None] | None = None
        #: Set while the cache holds the store's state as of ``revision`` (a List and an unbroken watch):
        #: ``ready``, and what a watch that arrives before the first List waits on.
        self._in_sync = asyncio.Event()
        #: Whether ``run`` runs: a cache nobody runs will never be in sync, and nobody waits for it.
        self._running = False
        #: Every store event up to and including this revision is in the cache.
        self.revision = 0
        self._applied = 0
        self._publishing = False
        self._waiters: list[tuple[int, int, asyncio.Future[bool]]] = []
        self._order = itertools.count()
        #: Store watches opened so far (one per List; tests count them).
        self.watches_opened = 0

    @property
    def applied_revision(self) -> int:
        """The revision of the last event taken into the cache (at least ``revision``)."""
        return self._applied

    @property
    def ready(self) -> bool:
        """Whether the cache holds the store's state as of ``revision`` (a List and an unbroken watch)."""
        return self._in_sync.is_set()

    async def run(self) -> None:
        """List and watch for ever; after a failure, close the watchers and start again."""
        self._running = True
        try:
            await self._run()
        finally:
            self._running = False

    async def _run(self) -> None:
        while True:
            try:
                await self._list_and_watch()
                log.warning("the watch cache's store watch ended; listing again")
            except asyncio.CancelledError:
                self._lose()
                raise
            except Exception as exc:  # any failure of the store watch: start over from a List
                log.warning("the watch cache's store watch broke (%s: %s); listing again",
                            type(exc).__name__, exc)
            self._lose()
            await asyncio.sleep(self._retry_s)

    async def _list_and_watch(self) -> None:
        revision = await self._store.current_revision()
        for kind_cache in self._caches.values():
            kind_cache.reset(await self._list(kind_cache.kind.key_prefix(), revision), revision)
        events = self._store.watch_progress(REGISTRY_PREFIX, revision + 1)
        self.watches_opened += 1
        self._applied = revision
        self._in_sync.set()
        self._publish()
        log.info("the watch cache is in sync at revision %d", revision)
        try:
            async for event in events:
                if isinstance(event, ProgressMark):
                    # No event of the registry up to it remains: the cache is the store as of it.
                    self._applied = max(self._applied, event.revision)
                else:
                    plural = event.key[len(REGISTRY_PREFIX):].partition("/")[0]
                    cache = self._caches.get(plural)
                    if cache is not None:
                        cache.apply(event)
                    self._applied = event.revision
                if not self._publishing:
                    # A revision's events (a transaction's) arrive together: publish once they are all in.
                    self._publishing = True
                    asyncio.get_running_loop().call_soon(self._publish)
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()

    async def _list(self, prefix: str, revision: int) -> list[KeyValue]:
        items: list[KeyValue] = []
        start: str | None = None
        while True:
            page = await self._store.list(prefix, LIST_PAGE_SIZE, start, revision)
            items += page.items
            if page.continue_key is None:
                return items
            start = page.continue_key

    def _publish(self) -> None:
        self._publishing = False
        if not self.ready:
            return
        self.revision = self._applied
        waiters = self._waiters
        while waiters and waiters[0][0] <= self.revision:
            _, _, future = heapq.heappop(waiters)
            if not future.done():
                future.set_result(True)

    def _lose(self) -> None:
        self._in_sync.clear()
        for cache in self._caches.values():
            cache.close_watchers()
        for _, _, future in self._waiters:
            if not future.done():
                future.set_result(False)
        self._waiters.clear()

    async def _request_progress(self) -> None:
        """While reads wait, ask the store for a progress mark every ``progress_after_s``: the events they
        wait for usually come sooner, and then nothing is asked."""
        try:
            while True:
                await asyncio.sleep(self._progress_after_s)
                if not any(not future.done() for _, _, future in self._waiters):
                    return
                try:
                    await self._store.request_progress()
                except Exception as exc:  # the read falls back to the store after its timeout
                    log.info("the watch cache could not ask the store for progress (%s: %s)",
                             type(exc).__name__, exc)
        finally:
            self._requesting = None

    async def wait_ready(self, timeout_s: float) -> bool:
        """Whether the cache is in sync within ``timeout_s`` (its List done, its watch unbroken); False at
        once for a cache that is not run."""
        if self.ready or not self._running:
            return self.ready
        try:
            async with asyncio.timeout(timeout_s):
                await self._in_sync.wait()
        except TimeoutError:
            return False
        return self.ready

    async def wait_for(self, revision: int, timeout_s: float) -> bool:
        """Whether the cache has seen ``revision`` within ``timeout_s`` (False at once when not ready)."""
        if not self.ready:
            return False
        if self.revision >= revision:
            return True
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (revision, next(self._order), future))
        if self._requesting is None:
            self._requesting = asyncio.get_running_loop().create_task(
                self._request_progress(), name="watch-cache-progress-requests"
            )
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout_s)
        except TimeoutError:
            return False
        finally:
            if not future.done():
                future.cancel()
