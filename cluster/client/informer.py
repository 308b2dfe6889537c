"""An informer: a local, indexed copy of one kind's objects, kept current by list + watch, with handlers
told of every change (client-go's reflector, indexer and event handlers in one asyncio object).

How it stays exact:
- ``run()`` lists every object at one store revision (page by page), makes the local store equal to that
  list, and then watches from the list's resourceVersion: the watch delivers every later change, in order,
  exactly once, and each event is applied to the store before the handlers hear of it.
- A broken watch (the server went away, or a failover) is re-opened after a jittered, capped backoff from
  the revision *before* the last event applied, and the events of that last revision it already applied
  are dropped (by object key: a key changes at most once per revision). Several objects may share one
  revision (a BindGroup writes a whole gang at one), and a stream cut between two of its events must
  not lose the rest; watching from the last event's own resourceVersion ("after it") would. So no event
  is repeated or missed.
- When that resourceVersion has been compacted away (`errors.Expired`, Kubernetes' 410 Gone) the informer
  lists again and reconciles: objects that vanished get on_delete, changed ones on_update, new ones on_add.

Concurrency model: everything happens in the task running ``run()``. Handlers are synchronous and are
called in event order from that task, so they must be quick (hand work to a queue); a handler that
raises is logged and the informer goes on. Readers on the same event loop (``get``, ``items``,
``by_index``) see the store between two events, never in the middle of one. Objects handed out are the
store's own: treat them as read-only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Generic, cast

from cluster.api import errors
from cluster.api.kinds import Kind, M, metadata_of
from cluster.api.objects_pb2 import ObjectMeta
from cluster.client.client import DEFAULT_PAGE_SIZE, Client, ObjectList, WatchEvent, resolve_kind
from cluster.client.retry import REWATCH_POLICY, RetryPolicy

log = logging.getLogger(__name__)

OnAdd = Callable[[M], None]
OnUpdate = Callable[[M, M], None]
OnDelete = Callable[[M], None]
#: An index function: the index values an object is filed under (e.g. a pod's node name).
IndexFunc = Callable[[M], Iterable[str]]

#: Errors that no amount of re-listing fixes (a bad selector, a kind the server does not serve): they end
#: ``run()`` instead of being retried forever.
_PERMANENT_ERRORS = (errors.Invalid, errors.Forbidden, errors.NotFound)


class Informer(Generic[M]):
    """The objects of one kind (optionally one namespace, matching selectors), kept in sync with the
    API server while ``run()`` runs."""

    def __init__(
        self,
        client: Client,
        kind: Kind[M] | str,
        *,
        namespace: str = "",
        label_selector: str = "",
        field_selector: str = "",
        indexers: Mapping[str, IndexFunc[M]] | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
        rewatch_policy: RetryPolicy = REWATCH_POLICY,
    ) -> None:
        self._client = client
        self._kind = resolve_kind(kind)
        self._namespace = namespace
        self._label_selector = label_selector
        self._field_selector = field_selector
        self._page_size = page_size
        self._rewatch_policy = rewatch_policy
        self._indexers: dict[str, IndexFunc[M]] = dict(indexers or {})
        #: index name -> index value -> keys of the objects filed under it.
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}
        self._objects: dict[str, M] = {}
        #: The handlers registered, by the change they are for: an event calls only those for it.
        self._on_add: list[OnAdd[M]] = []
        self._on_update: list[OnUpdate[M]] = []
        self._on_delete: list[OnDelete[M]] = []
        self._resource_version = ""
        #: Counts applied watch events, so that the re-watch backoff restarts once a watch has worked.
        self._events_applied = 0
        #: Events at or below this revision are already in the store (a `resync` listed past them).
        self._listed_through = 0
        #: The revision of the last watch event applied, and the keys applied at it: a re-watch starts
        #: at that revision again and skips these (see the module docstring).
        self._event_revision = 0
        self._event_revision_keys: set[str] = set()
        self._synced = asyncio.Event()
        #: Why ``run()`` ended before the first list was delivered (``wait_synced`` raises it).
        self._failure: BaseException | None = None

    def __repr__(self) -> str:
        scope = f" in {self._namespace}" if self._namespace else ""
        return f"<Informer {self._kind.plural}{scope} rv={self._resource_version or '-'}>"

    # ---------------------------------------------------------------------------------------- reading

    @property
    def resource_version(self) -> str:
        """The resourceVersion of the last list or event applied ("" before the first list)."""
        return self._resource_version

    @property
    def has_synced(self) -> bool:
        """Whether the first list has been delivered (to the store and to the handlers)."""
        return self._synced.is_set() and self._failure is None

    async def wait_synced(self) -> None:
        """Return once the first list has been delivered; raise what ended ``run()`` if it failed first."""
        await self._synced.wait()
        if self._failure is not None:
            raise self._failure

    def key(self, obj: M) -> str:
        """The store key of an object: "namespace/name", or "name" for a cluster-scoped kind."""
        return self._key_of(metadata_of(obj))

    def _key_of(self, meta: ObjectMeta) -> str:
        return f"{meta.namespace}/{meta.name}" if self._kind.namespaced else meta.name

    def get(self, key: str) -> M | None:
        return self._objects.get(key)

    def items(self) -> list[tuple[str, M]]:
        """A snapshot of the store's (key, object) pairs."""
        return list(self._objects.items())

    def __len__(self) -> int:
        return len(self._objects)

    def by_index(self, index_name: str, value: str) -> list[M]:
        """The objects the index ``index_name`` files under ``value``."""
        index = self._indices.get(index_name)
        if index is None:
            known = ", ".join(sorted(self._indices)) or "none"
            raise KeyError(f'the {self._kind.plural} informer has no index "{index_name}" (indexes: {known})')
        return [self._objects[key] for key in index.get(value, ())]

    # ---------------------------------------------------------------------------------------- handlers

    def add_handler(
        self,
        on_add: OnAdd[M] | None = None,
        on_update: OnUpdate[M] | None = None,
        on_delete: OnDelete[M] | None = None,
    ) -> None:
        """Register a set of handlers. Added after the first list, it first hears on_add for every object
        already in the store, so that it sees the same history as a handler registered before ``run()``."""
        if on_add is not None:
            self._on_add.append(on_add)
        if on_update is not None:
            self._on_update.append(on_update)
        if on_delete is not None:
            self._on_delete.append(on_delete)
        if self.has_synced and on_add is not None:
            for obj in list(self._objects.values()):
                self._call(on_add, obj)

    def _notify_add(self, obj: M) -> None:
        for on_add in self._on_add:
            self._call(on_add, obj)

    def _notify_update(self, old: M, new: M) -> None:
        for on_update in self._on_update:
            self._call(on_update, old, new)

    def _notify_delete(self, obj: M) -> None:
        for on_delete in self._on_delete:
            self._call(on_delete, obj)

    def _call(self, handler: Callable[..., None], *objs: M) -> None:
        try:
            handler(*objs)
        except Exception:
            log.exception("%r: handler %s failed on %s", self, getattr(handler, "__qualname__", handler),
                          self.key(objs[-1]))

    # ------------------------------------------------------------------------------------------- store

    def _put(self, key: str, obj: M) -> M | None:
        """Store ``obj`` under ``key``, move its index entries, and return what it replaced."""
        old = self._objects.get(key)
        self._objects[key] = obj
        for name, index_func in self._indexers.items():
            index = self._indices[name]
            old_values = set(index_func(old)) if old is not None else set()
            new_values = set(index_func(obj))
            for value in old_values - new_values:
                discard_indexed(index, value, key)
            for value in new_values - old_values:
                index.setdefault(value, set()).add(key)
        return old

    def _remove(self, key: str) -> M | None:
        old = self._objects.pop(key, None)
        if old is not None:
            for name, index_func in self._indexers.items():
                for value in set(index_func(old)):
                    discard_indexed(self._indices[name], value, key)
        return old

    def _apply(self, event: WatchEvent) -> None:
        obj = cast(M, event.object)  # the server sends objects of the kind watched
        meta = metadata_of(obj)
        resource_version = meta.resource_version
        revision = int(resource_version)
        if revision <= self._listed_through or revision < self._event_revision:
            return
        key = self._key_of(meta)
        if revision == self._event_revision:
            if key in self._event_revision_keys:
                return  # replayed by a re-watch from the revision before
        else:
            self._event_revision, self._event_revision_keys = revision, set()
        self._event_revision_keys.add(key)
        if event.type == "DELETED":
            if self._remove(key) is not None:
                self._notify_delete(obj)
        else:
            old = self._put(key, obj)
            if old is None:
                self._notify_add(obj)
            elif metadata_of(old).resource_version != resource_version:
                self._notify_update(old, obj)
        self._resource_version = resource_version
        self._events_applied += 1

    def _replace(self, listed: ObjectList) -> None:
        """Make the store equal to a fresh list, telling the handlers what changed since the last one."""
        seen: set[str] = set()
        for obj in cast(list[M], listed.items):  # the server lists objects of the kind asked for
            key = self.key(obj)
            seen.add(key)
            old = self._put(key, obj)
            if old is None:
                self._notify_add(obj)
            elif metadata_of(old).resource_version != metadata_of(obj).resource_version:
                self._notify_update(old, obj)
        for key in [key for key in self._objects if key not in seen]:
            gone = self._remove(key)
            if gone is not None:
                self._notify_delete(gone)

    # --------------------------------------------------------------------------------------------- run

    async def run(self) -> None:
        """List, then watch, forever (until cancelled). Ends with an error only for a request the server
        will never accept (a bad selector, an unknown kind)."""
        try:
            await self._run()
        except BaseException as err:
            if not self._synced.is_set() and not isinstance(err, asyncio.CancelledError):
                self._failure = err
                self._synced.set()
            raise

    async def _run(self) -> None:
        must_list = True
        failures = 0
        while True:
            events_before = self._events_applied
            try:
                if must_list:
                    await self._list()
                    must_list = False
                    failures = 0
                await self._watch()
            except errors.Expired as err:
                # The history after our resourceVersion is gone: only a fresh list can tell what changed.
                log.info("%r: %s; listing again", self, err.message)
                must_list = True
            except _PERMANENT_ERRORS:
                raise
            except errors.ApiError as err:
                if self._events_applied > events_before:
                    failures = 0
                delay = self._rewatch_policy.delay_s(failures)
                failures += 1
                what = "list" if must_list else f"watch from {self._resource_version}"
                log.warning("%r: %s failed (%s: %s); retrying in %.2fs",
                            self, what, type(err).__name__, err.message, delay)
                await asyncio.sleep(delay)

    async def _list_all(self) -> ObjectList:
        return await self._client.list_all(
            self._kind,
            self._namespace,
            label_selector=self._label_selector,
            field_selector=self._field_selector,
            page_size=self._page_size,
        )

    async def _list(self) -> None:
        listed = await self._list_all()
        self._replace(listed)
        self._resource_version = listed.resource_version
        self._event_revision, self._event_revision_keys = 0, set()
        if not self._synced.is_set():
            log.debug("%r: synced %d objects", self, len(self._objects))
            self._synced.set()

    async def resync(self) -> None:
        """Catch up with the store as it is now: once this returns, every change made before the call
        began is in the store and the handlers have heard of it. A new leader calls it before its first
        cycle, so that it never decides on a picture older than the lease it just acquired.

        The running watch is left alone: a list at the current revision is reconciled into the store
        (handlers hear only the differences) unless the watch has already gone past that revision, and
        the watch's events up to it, when they arrive, are skipped as already applied."""
        await self.wait_synced()
        listed = await self._list_all()
        revision = int(listed.resource_version)
        if int(self._resource_version or 0) >= revision:
            return  # the watch delivered everything up to the list's revision while it was read
        self._replace(listed)
        self._resource_version = listed.resource_version
        self._listed_through = revision

    def _resume_version(self) -> str:
        """Where a (re-)watch starts: after the revision before the last event applied, when that event
        is still the newest thing applied (its revision may have more events to come); else after the
        last list. (Never "0", which asks for a fresh list, not for revision 1's events.)"""
        if self._event_revision > 1 and str(self._event_revision) == self._resource_version:
            return str(self._event_revision - 1)
        return self._resource_version

    async def _watch(self) -> None:
        events = self._client.watch(
            self._kind,
            self._namespace,
            resource_version=self._resume_version(),
            label_selector=self._label_selector,
            field_selector=self._field_selector,
        )
        async with contextlib.aclosing(events):
            async for event in events:
                self._apply(event)


def discard_indexed(index: dict[str, set[str]], value: str, key: str) -> None:
    """Take ``key`` out of ``index[value]``, and the value out of the index once it has no key left."""
    keys = index.get(value)
    if keys is not None:
        keys.discard(key)
        if not keys:
            del index[value]
