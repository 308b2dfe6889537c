"""Watch: the changes to the selected objects of a kind, as Kubernetes' watch events.

Store events become API events the way kube-apiserver's etcd watcher converts them:

* a PUT that created the key (create_revision == revision) is ADDED, if the object is selected;
* any other PUT compares the object before and after against the selectors: selected before and
  after is MODIFIED, only after is ADDED (it started matching), only before is DELETED carrying the
  previous state (it stopped matching), neither is nothing;
* a DELETE is DELETED carrying the last state, if that state was selected.

Every object carries the event's revision as its resourceVersion, so a client that remembers the last
one it saw can resume from it. resourceVersion "" (or "0") first sends an ADDED for every selected
object at one revision, then the changes after that revision ("get state and start at most recent").
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TypeVar

from google.protobuf.message import Message

from cluster.api import apiserver_pb2, errors, kinds
from cluster.api.kinds import Kind, metadata_of
from cluster.apiserver import messages
from cluster.apiserver.listing import list_objects
from cluster.apiserver.selection import Selection
from cluster.apiserver.storage import Storage
from store.base import EventType, FutureRevision, TooOldRevision, WatchEvent

T = TypeVar("T")

ADDED = apiserver_pb2.WatchEvent.ADDED
MODIFIED = apiserver_pb2.WatchEvent.MODIFIED
DELETED = apiserver_pb2.WatchEvent.DELETED


def api_event(type_: apiserver_pb2.WatchEvent.Type, obj: Message) -> apiserver_pb2.WatchEvent:
    event = apiserver_pb2.WatchEvent(type=type_)
    getattr(event.object, kinds.kind_of(obj).envelope_field).CopyFrom(obj)
    return event


def convert_event(selection: Selection, event: WatchEvent) -> apiserver_pb2.WatchEvent | None:
    """The API event a store event is for a watcher of ``selection``; None when it sees nothing."""
    kind = selection.kind
    current = _decode(kind, event.key, event.value, event.revision)
    created = event.create_revision == event.revision
    previous: apiserver_pb2.WatchEvent | None = None
    transition = event.type is EventType.PUT and not created and not selection.everything
    if transition and event.prev_value is not None:
        previous = _decode(kind, event.key, event.prev_value, event.revision)
    seen = seen_as(
        selection, event.type is EventType.DELETE, created, _object_of(current, kind),
        None if previous is None else _object_of(previous, kind),
    )
    if seen is None:
        return None
    type_, as_previous = seen
    return _typed(previous if as_previous and previous is not None else current, type_)


def seen_as(
    selection: Selection, deleted: bool, created: bool, current: Message, previous: Message | None
) -> tuple[apiserver_pb2.WatchEvent.Type, bool] | None:
    """How a watcher of ``selection`` sees one store event: the API event type, and whether it carries the
    previous state (True) rather than the current one; None when it sees nothing. ``current`` is the
    object as written (for a deletion, its last state); ``previous`` the object before the write, None
    when unknown (etcd omits it once compacted: then it counts as not selected before)."""
    current_selected = selection.matches(current)
    if deleted:
        return (DELETED, False) if current_selected else None
    if created:
        return (ADDED, False) if current_selected else None
    if selection.everything:
        return MODIFIED, False
    previous_selected = previous is not None and selection.matches(previous)
    if current_selected:
        return (MODIFIED if previous_selected else ADDED), False
    if previous_selected:
        return DELETED, True
    return None


def _decode(kind: Kind, key: str, value: bytes, revision: int) -> apiserver_pb2.WatchEvent:
    """An API event (its type not yet set) holding the stored object: decoded in place, not copied in."""
    event = apiserver_pb2.WatchEvent()
    meta = metadata_of(Storage.decode_into(_object_of(event, kind), kind, value, revision))
    if not meta.name:
        # A deletion whose previous value etcd no longer had: the key still says what was deleted.
        parts = key.rsplit("/", 2)
        meta.name = parts[-1]
        if kind.namespaced:
            meta.namespace = parts[-2]
    return event


def _object_of(event: apiserver_pb2.WatchEvent, kind: Kind) -> Message:
    obj: Message = getattr(event.object, kind.envelope_field)
    return obj


def _typed(event: apiserver_pb2.WatchEvent, type_: apiserver_pb2.WatchEvent.Type) -> apiserver_pb2.WatchEvent:
    event.type = type_
    return event


def parse_resource_version(text: str) -> int:
    """A resourceVersion from a request: "" and "0" mean "now" (0); anything else a revision."""
    if text in ("", "0"):
        return 0
    if not text.isdigit():
        raise errors.Invalid(f'invalid resource version "{text}": must be a non-negative integer')
    return int(text)


async def watch_events(
    registry: Storage, selection: Selection, namespace: str = "", resource_version: str = ""
) -> AsyncIterator[apiserver_pb2.WatchEvent]:
    """The events of a Watch request, forever (the caller stops iterating to end it)."""
    after = parse_resource_version(resource_version)
    if after == 0:
        snapshot = await list_objects(registry, selection, namespace)
        for obj in snapshot.items:
            yield api_event(ADDED, obj)
        after = snapshot.revision
    prefix = selection.kind.key_prefix(namespace)
    try:
        async for event in registry.store.watch(prefix, after + 1):
            converted = convert_event(selection, event)
            if converted is not None:
                yield converted
    except TooOldRevision as exc:
        raise messages.too_old_resource_version(after, exc.compacted) from exc
    except FutureRevision as exc:
        raise messages.too_large_resource_version(after, exc.current) from exc


async def until_stopped(events: AsyncIterator[T], stop: asyncio.Event) -> AsyncIterator[T]:
    """``events`` until they end or ``stop`` is set: then the stream ends cleanly (a watch client sees
    the end of the stream and watches again, elsewhere or after a restart, from its last version).

    A stop interrupts the wait for the next item by cancelling the consuming task, as asyncio.timeout
    does, and only while it waits on ``events`` (never while the consumer sends an item on): racing
    every item against the stop instead costs a task and a wait per event."""
    task = asyncio.current_task()
    if task is None:
        raise RuntimeError("until_stopped must be iterated inside a task")
    waiting_for_item = False
    interrupted = False

    def interrupt(_: object) -> None:
        nonlocal interrupted
        if waiting_for_item:
            interrupted = True
            task.cancel()

    stopped = asyncio.ensure_future(stop.wait())
    stopped.add_done_callback(interrupt)
    try:
        while not stop.is_set():
            waiting_for_item = True
            try:
                item = await anext(events)
            except StopAsyncIteration:
                return
            except asyncio.CancelledError:
                # Ours alone (no one else cancelled the task too): the stop, so end cleanly.
                if interrupted and task.uncancel() == 0:
                    return
                raise
            finally:
                waiting_for_item = False
            yield item
    finally:
        stopped.remove_done_callback(interrupt)
        stopped.cancel()
        # Close the source now rather than when it is garbage-collected: it holds a store watch.
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()
