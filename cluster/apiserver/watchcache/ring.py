"""Store events as the cache keeps them (decoded once, serialized once per way a watcher sees them),
and the bounded ring of the recent ones that a watch resuming from a resourceVersion is replayed from."""

from __future__ import annotations

import bisect
from collections import deque
from dataclasses import dataclass, field

from google.protobuf.message import Message

from cluster.api import apiserver_pb2
from cluster.api.kinds import Kind
from cluster.apiserver.selection import Selection
from cluster.apiserver.watch import ADDED, seen_as
from cluster.apiserver.watchcache.framing import watch_event_bytes


@dataclass(slots=True, eq=False)
class CachedEvent:
    kind: Kind
    key: str
    revision: int
    deleted: bool
    created: bool
    #: The object as written, at this revision (a deletion: its last state, at the deletion's revision).
    obj: Message
    #: The object before this event, as the cache held it (None: the event created it).
    previous: Message | None
    #: Wire bytes per (event type, carries the previous state), built for the first watcher that needs them.
    _frames: dict[tuple[int, bool], bytes] = field(default_factory=dict)

    def frame_for(self, selection: Selection) -> bytes | None:
        """The bytes a watcher of ``selection`` is sent for this event; None when it sees nothing."""
        seen = seen_as(selection, self.deleted, self.created, self.obj, self.previous)
        return None if seen is None else self.frame(*seen)

    def frame(self, type_: apiserver_pb2.WatchEvent.Type, as_previous: bool) -> bytes:
        frame = self._frames.get((type_, as_previous))
        if frame is None:
            frame = self._frames[(type_, as_previous)] = watch_event_bytes(
                type_, self.kind, self._serialized(as_previous)
            )
        return frame

    def _serialized(self, as_previous: bool) -> bytes:
        if not as_previous or self.previous is None:
            return self.obj.SerializeToString()
        # The state it had before it stopped matching, stamped with this event's revision (as every event).
        previous = self.kind.message()
        previous.CopyFrom(self.previous)
        previous.metadata.resource_version = str(self.revision)
        return previous.SerializeToString()


def added_frame(kind: Kind, obj: Message) -> bytes:
    """The ADDED event of an object of a snapshot (a watch from "" or "0")."""
    return watch_event_bytes(ADDED, kind, obj.SerializeToString())


class EventRing:
    """The last ``capacity`` events of a kind, oldest first. ``complete_after`` is the revision after
    which it holds every event: a watch from any revision at or above it can be replayed from here."""

    def __init__(self, capacity: int, complete_after: int) -> None:
        if capacity < 1:
            raise ValueError(f"watch cache capacity must be at least 1, got {capacity}")
        self._events: deque[CachedEvent] = deque()
        self._capacity = capacity
        self.complete_after = complete_after

    def __len__(self) -> int:
        return len(self._events)

    def append(self, event: CachedEvent) -> None:
        if len(self._events) == self._capacity:
            # Events of the dropped one's revision may remain, so only later revisions stay complete.
            self.complete_after = self._events.popleft().revision
        self._events.append(event)

    def after(self, revision: int) -> list[CachedEvent] | None:
        """Every event after ``revision``, oldest first; None when some of them are gone from the ring."""
        if revision < self.complete_after:
            return None
        start = bisect.bisect_right(self._events, revision, key=lambda event: event.revision)
        return [self._events[index] for index in range(start, len(self._events))]
