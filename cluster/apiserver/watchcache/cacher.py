"""What the API reads from the watch cache, and when it goes to the store instead.

* Watch: from "" or "0", a snapshot of the cache then its changes; from a resourceVersion the ring still
  holds every later event of, a replay from the ring then the changes; anything else (older than the
  ring, or compacted in the store; an uncached kind; a cache that is not in sync) the store watch of
  watch.py, which answers "too old resource version" when the store has compacted the revision. A watch
  that arrives before the cache's first List is done (clients started with the server) waits up to
  ``fresh_timeout_s`` for it, as kube-apiserver's cacher makes it wait: a store watch would stay on the
  store for as long as it lasts, every event decoded and serialized for that watcher alone.
* List and Get of the latest state (the API has no other): consistent reads from cache, as KEP-2340
  serves them: the store's current revision is read (cheap), the cache waits until it has seen it (an
  event of it, or a progress mark the reflector asks the store for when none comes), and answers; after
  ``fresh_timeout_s``, or while it is not in sync, the store answers. A List's later pages
  (continue tokens) are read from the store at the first page's revision, as before.
* Admission reads (PriorityClasses, ResourceQuotas) are consistent reads too.

Objects handed out are the cache's own and shared: callers copy before they change anything.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from google.protobuf.message import Message

from cluster.api import apiserver_pb2
from cluster.api.kinds import EVENT, KINDS, Kind
from cluster.apiserver import continuation
from cluster.apiserver.limits import DEFAULT_MAX_PAGE_SIZE, check_page_size
from cluster.apiserver.listing import ObjectPage, list_objects
from cluster.apiserver.selection import Selection
from cluster.apiserver.storage import Storage
from cluster.apiserver.watch import parse_resource_version, watch_events
from cluster.apiserver.watchcache.kindcache import CacheListener, KindCache
from cluster.apiserver.watchcache.reflector import Reflector
from cluster.apiserver.watchcache.revisionprobe import RevisionProbe
from cluster.apiserver.watchcache.watcher import CacheWatcher

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _ReadScope:
    #: The store revision the request's first consistent read learned (0: none yet).
    revision: int = 0


_READ_SCOPE: ContextVar[_ReadScope | None] = ContextVar("watch_cache_read_scope", default=None)


@contextlib.contextmanager
def read_scope() -> Iterator[None]:
    """One request's reads. Its first consistent read asks the store for its revision; later ones in the
    same request wait for that revision again instead of asking anew: it was read after the request
    began, so it covers every write acknowledged before the request (a pod create reads PriorityClasses
    and ResourceQuotas, one store round trip for both)."""
    token = _READ_SCOPE.set(_ReadScope())
    try:
        yield
    finally:
        _READ_SCOPE.reset(token)


@dataclass(frozen=True, slots=True)
class CacheSettings:
    #: Recent events kept per kind. Fixed rather than adaptive: 8192 events cover minutes of ordinary
    #: traffic and several seconds of a benchmark's burst of pod creates and binds, so a client that
    #: re-watches after a disconnect or a slow-watcher close resumes from memory; it costs at most 8192
    #: objects per kind (shared with the current state while unchanged).
    ring_capacity: int = 8192
    #: Events one watcher may have queued before it is closed as too slow (it re-watches from the ring).
    watcher_capacity: int = 2048
    #: How long a consistent read waits for the cache to reach the store's revision before it asks the
    #: store; kube-apiserver waits up to 3 s, but a read here never needs the cache to answer.
    fresh_timeout_s: float = 1.0
    #: How long a consistent read waits for events before the cache asks the store for a progress mark,
    #: and between such requests while reads wait (kube-apiserver asks every 100 ms).
    progress_after_s: float = 0.05
    #: Seconds between attempts to list and watch again after the store watch broke.
    retry_s: float = 1.0
    #: Kinds served from the store only: Events, as kube-apiserver does by default (many writes, few
    #: readers, and nobody's admission reads them).
    uncached: frozenset[Kind] = frozenset({EVENT})


class Cacher:
    def __init__(self, registry: Storage, settings: CacheSettings | None = None) -> None:
        self._registry = registry
        self.settings = settings = settings or CacheSettings()
        self._caches = {
            kind: KindCache(
                kind, ring_capacity=settings.ring_capacity, watcher_capacity=settings.watcher_capacity
            )
            for kind in KINDS if kind not in settings.uncached
        }
        self.reflector = Reflector(
            registry.store, list(self._caches.values()), retry_s=settings.retry_s,
            progress_after_s=settings.progress_after_s,
        )
        self._probe = RevisionProbe(registry.store)
        #: The last store revision a consistent read waited for in vain.
        self._unreached = 0
        #: Consistent reads that waited ``fresh_timeout_s`` in vain and went to the store.
        self.unreached_waits = 0

    async def run(self) -> None:
        """Keep the cache in sync with the store until cancelled."""
        await self.reflector.run()

    def listen(self, kind: Kind, listener: CacheListener) -> None:
        """Tell ``listener`` of every List and change of ``kind`` the cache takes in (kindcache.py)."""
        cache = self._caches.get(kind)
        if cache is None:
            raise ValueError(f"the watch cache does not cache {kind.plural}")
        cache.listen(listener)

    def watchers(self, kind: Kind) -> int:
        """Watchers served from the cache of ``kind`` now."""
        cache = self._caches.get(kind)
        return 0 if cache is None else cache.watcher_count

    async def fresh(self, kind: Kind) -> KindCache | None:
        """``kind``'s cache once it has seen the store's current revision; None when the store must answer."""
        cache = self._caches.get(kind)
        if cache is None or not self.reflector.ready:
            return None
        scope = _READ_SCOPE.get()
        if scope is not None and scope.revision:
            revision = scope.revision
        else:
            revision = await self._probe.current()
            if scope is not None:
                scope.revision = revision
        if revision == self._unreached and self.reflector.revision < revision:
            return None
        if await self.reflector.wait_for(revision, self.settings.fresh_timeout_s):
            return cache
        # Not seen yet, or never to be seen (a store whose watch sent no progress mark in time). Later
        # reads at that same revision go to the store at once rather than each waiting again.
        self._unreached = revision
        self.unreached_waits += 1
        log.info("the watch cache has not reached revision %d in %.1fs; reading from the store",
                 revision, self.settings.fresh_timeout_s)
        return None

    # ---------------------------------------------------------------------------------------- reads

    def peek(self, kind: Kind, namespace: str, name: str) -> Message | None:
        """The cache's copy of an object as of now, without asking the store how far it is: it may be
        behind (None also for an uncached kind or a cache not in sync). For a write's first attempt,
        whose compare-and-swap finds out whether the copy was current, as kube-apiserver's updates
        start from the cached object."""
        cache = self._caches.get(kind)
        if cache is None or not self.reflector.ready:
            return None
        return cache.get(kind.key(namespace, name))

    async def get(self, kind: Kind, namespace: str, name: str) -> Message | None:
        cache = await self.fresh(kind)
        if cache is None:
            return await self._registry.get(kind, namespace, name)
        return cache.get(kind.key(namespace, name))

    async def list(
        self,
        selection: Selection,
        namespace: str = "",
        *,
        limit: int = 0,
        continue_token: str = "",
        max_page_size: int = DEFAULT_MAX_PAGE_SIZE,
    ) -> ObjectPage:
        """list_objects' page (same limits, order and continue tokens), from the cache when it can."""
        cache = None if continue_token else await self.fresh(selection.kind)
        if cache is None:
            return await list_objects(
                self._registry, selection, namespace, limit=limit, continue_token=continue_token,
                max_page_size=max_page_size,
            )
        check_page_size(limit, max_page_size)
        revision = self.reflector.applied_revision
        prefix = selection.kind.key_prefix(namespace)
        items: list[Message] = []
        keys = cache.keys_under(prefix)
        for index, key in enumerate(keys):
            obj = cache.get(key)
            if obj is None or not selection.matches(obj):
                continue
            items.append(obj)
            if limit and len(items) == limit:
                # As from the store: a token whenever keys remain, selected or not ("\x00": the next key).
                more = index + 1 < len(keys)
                token = continuation.encode(revision, key + "\x00", prefix) if more else ""
                return ObjectPage(items, revision, token)
        return ObjectPage(items, revision, "")

    # ---------------------------------------------------------------------------------------- watch

    async def watch(
        self, selection: Selection, namespace: str = "", resource_version: str = "", *,
        caught_up: Callable[[], None] | None = None,
    ) -> AsyncIterator[bytes | apiserver_pb2.WatchEvent]:
        """The events of a Watch request, forever: serialized frames from the cache, or WatchEvent
        messages from the store watch when the cache cannot serve it. ``caught_up`` is called once a
        cache watcher has sent what it had and waits for news (a store watch never calls it)."""
        after = parse_resource_version(resource_version)
        kind = selection.kind
        cache = self._caches.get(kind)
        watcher = None if cache is None else await self._cache_watcher(cache, selection, namespace, after,
                                                                      resource_version)
        if cache is None or watcher is None:
            async for event in watch_events(self._registry, selection, namespace, resource_version):
                yield event
            return
        try:
            async for frame in watcher.frames(caught_up):
                yield frame
        finally:
            cache.unregister(watcher)

    async def _cache_watcher(
        self, cache: KindCache, selection: Selection, namespace: str, after: int, resource_version: str
    ) -> CacheWatcher | None:
        reflector = self.reflector
        if not await reflector.wait_ready(self.settings.fresh_timeout_s):
            return None
        prefix = selection.kind.key_prefix(namespace)
        if after == 0:
            # "0": any state will do; "": the latest, so a consistent read of it.
            if resource_version != "0" and await self.fresh(selection.kind) is None:
                return None
            return cache.watch_snapshot(selection, prefix) if reflector.ready else None
        if after + 1 < await self._registry.store.compacted_revision():
            # The store watch answers with "too old resource version", as before: the ring's copy of
            # compacted history is not served, so every server answers a compacted revision alike.
            return None
        if after > reflector.revision:
            # Newer than the cache: wait for it if the store has it; else the store answers (too large).
            if after > await self._probe.current():
                return None
            if not await reflector.wait_for(after, self.settings.fresh_timeout_s):
                return None
        return cache.watch_after(selection, prefix, after) if reflector.ready else None
