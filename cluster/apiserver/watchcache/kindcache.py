"""One kind's part of the cache: its current objects (decoded once, shared by every reader, never
changed in place), the ring of its recent events, the watchers of it, and the listeners the server's own
background work registers (the graceful-deletion finisher follows pods here rather than through a store
watch of its own, which would have the store send and the server decode every pod event twice)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from google.protobuf.message import Message

from cluster.api.kinds import Kind
from cluster.apiserver.selection import Selection
from cluster.apiserver.storage import Storage
from cluster.apiserver.watchcache.ring import CachedEvent, EventRing, added_frame
from cluster.apiserver.watchcache.watcher import CacheWatcher
from store.base import EventType, KeyValue, WatchEvent


class CacheListener(Protocol):
    """Told of every change to a kind's objects, in the store's order, as the cache takes it in."""

    def reset(self, objects: Mapping[str, Message]) -> None:
        """The cache listed the store again: ``objects`` (by key) are the kind's state now."""

    def changed(self, key: str, obj: Message | None) -> None:
        """The object at ``key`` is now ``obj`` (None: deleted), its resourceVersion the event's."""


class KindCache:
    def __init__(self, kind: Kind, *, ring_capacity: int, watcher_capacity: int) -> None:
        self.kind = kind
        self._ring_capacity = ring_capacity
        self._watcher_capacity = watcher_capacity
        self._objects: dict[str, Message] = {}
        self._ring = EventRing(ring_capacity, 0)
        self._watchers: set[CacheWatcher] = set()
        self._listeners: list[CacheListener] = []

    # -------------------------------------------------------------------------- fed by the reflector

    def reset(self, items: Iterable[KeyValue], revision: int) -> None:
        """Start over from a List at ``revision``: the ring is empty and complete after it."""
        self._objects = {kv.key: Storage.decode(self.kind, kv.value, kv.mod_revision) for kv in items}
        self._ring = EventRing(self._ring_capacity, revision)
        for listener in self._listeners:
            listener.reset(self._objects)

    def apply(self, event: WatchEvent) -> None:
        """Take one store event of this kind into the objects and the ring, and offer it to every watcher."""
        deleted = event.type is EventType.DELETE
        previous = self._objects.pop(event.key, None) if deleted else self._objects.get(event.key)
        if deleted and previous is not None:
            # Its last state is the one cached (etcd may not have it any more), at the deletion's revision.
            obj = self.kind.message()
            obj.CopyFrom(previous)
            obj.metadata.resource_version = str(event.revision)
        else:
            obj = Storage.decode(self.kind, event.value, event.revision)
        if not deleted:
            self._objects[event.key] = obj
        cached = CachedEvent(
            self.kind, event.key, event.revision, deleted, event.create_revision == event.revision, obj,
            previous,
        )
        self._ring.append(cached)
        for listener in self._listeners:
            listener.changed(event.key, None if deleted else obj)
        closed: list[CacheWatcher] = []
        for watcher in self._watchers:
            watcher.offer(cached)
            if watcher.closed:
                closed.append(watcher)
        self._watchers.difference_update(closed)

    def close_watchers(self) -> None:
        """End every watcher's stream (the store watch broke: what follows may have gaps)."""
        for watcher in self._watchers:
            watcher.close()
        self._watchers.clear()

    def listen(self, listener: CacheListener) -> None:
        """Tell ``listener`` of every reset and change from now on. The objects are the cache's own and
        shared: a listener must not change them."""
        self._listeners.append(listener)

    # ------------------------------------------------------------------------------------ readers

    @property
    def watcher_count(self) -> int:
        return len(self._watchers)

    def get(self, key: str) -> Message | None:
        return self._objects.get(key)

    def keys_under(self, prefix: str) -> list[str]:
        """The keys of the objects under ``prefix``, in order."""
        return sorted(key for key in self._objects if key.startswith(prefix))

    def selected(self, selection: Selection, prefix: str) -> list[Message]:
        """Every object under ``prefix`` that ``selection`` selects, in key order."""
        objects = self._objects
        everything = selection.everything
        return [
            obj for key in self.keys_under(prefix)
            for obj in (objects[key],) if everything or selection.matches(obj)
        ]

    def watch_snapshot(self, selection: Selection, prefix: str) -> CacheWatcher:
        """A watcher that first gets an ADDED event for every selected object, then every later change."""
        snapshot = self.selected(selection, prefix)
        kind = self.kind
        return self._register(selection, prefix, (added_frame(kind, obj) for obj in snapshot))

    def watch_after(self, selection: Selection, prefix: str, revision: int) -> CacheWatcher | None:
        """A watcher of every change after ``revision``; None when the ring no longer holds them all."""
        replay = self._ring.after(revision)
        if replay is None:
            return None
        frames = [
            frame for event in replay if event.key.startswith(prefix)
            if (frame := event.frame_for(selection)) is not None
        ]
        return self._register(selection, prefix, frames)

    def _register(self, selection: Selection, prefix: str, initial: Iterable[bytes]) -> CacheWatcher:
        watcher = CacheWatcher(selection, prefix, self._watcher_capacity, initial)
        self._watchers.add(watcher)
        return watcher

    def unregister(self, watcher: CacheWatcher) -> None:
        self._watchers.discard(watcher)
