"""The scheduler's event recorder: Kubernetes Events about pods (``Scheduled``, ``FailedScheduling``),
written in the background so that scheduling never waits for them.

How it behaves, as client-go's event broadcaster and correlator do, within fixed bounds:

- ``record()`` is synchronous and never blocks: it files the event in a pending map and returns. A
  worker task (``run()``) writes pending events through the API client: whatever is pending when a
  worker is free, up to ``batch_size`` events, the new Events in one Batch call (each created, fenced
  and answered on its own), the count updates of repeats each on its own.
- Repeats are aggregated. An event identical to one written recently (same object, type, reason,
  message and component) updates that Event's ``count`` and ``lastTimestamp`` instead of creating
  another object; an identical event still waiting to be written only bumps the waiting one's count.
  A pod retried every few seconds for an hour therefore owns a handful of Event objects, not
  thousands. Annotations (the scheduling explanation) are not part of an event's identity: the latest
  attempt's replace the previous ones.
- It is bounded. At most ``max_pending`` distinct events wait; beyond that new ones are dropped and
  counted (``dropped``), as client-go drops events when its broadcaster's channel is full. A write
  that fails is logged and dropped (``failed``): events are best effort, the pod's status is the record.
  Annotations given as a function are made when the event is written, except beyond
  ``max_lazy_annotations`` waiting ones: then they are made when recorded. What such a function holds
  (an attempt's per-node scores, tens of KiB at thousands of nodes) is far more than the text it makes,
  and a backlog of thousands of events behind a busy API server would otherwise hold all of it.
- It is fenced by leadership terms. A leading scheduler calls ``begin_term(fence)`` when its term
  begins and ``end_term(fence)`` when it ends: each event recorded in a term is written under that
  term's fence (the API server refuses it once the lease has changed hands), and when the term ends
  whatever of it still waits is dropped (``discarded``), never written under a later term. Once a
  term has begun, an event recorded between terms is discarded too. A recorder that never sees a term
  (no leader election) writes without a fence.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from cluster.api import errors, objects_pb2, timeutil
from cluster.client import Client, Fence
from scheduler.clock import Clock, SystemClock

log = logging.getLogger(__name__)

#: An event's annotations, or a function that makes them (called when the event is written).
Annotations = Mapping[str, str] | Callable[[], Mapping[str, str]]

NORMAL = "Normal"
WARNING = "Warning"

#: Distinct events that may wait to be written. A burst of 10,000 unschedulable pods fits; past it the
#: API server is far behind and more events would only grow memory.
DEFAULT_MAX_PENDING = 10_000
#: Waiting events whose annotations may still be a function: enough for the writers' usual backlog, so
#: that an event written soon makes its annotations then (or never, when a repeat replaces them).
DEFAULT_MAX_LAZY_ANNOTATIONS = 64
#: Written events remembered for aggregation: client-go's correlator keeps an LRU cache of 4096.
DEFAULT_CORRELATION_CACHE_SIZE = 4096
#: How long after its last write an Event still absorbs identical repeats (client-go's aggregation
#: interval is 10 minutes); past it a repeat starts a new Event, so counts stay meaningful.
DEFAULT_CORRELATION_WINDOW_S = 600.0
#: Concurrent writers. Events of one identity are never written concurrently (their count would race).
#: Two: while one writer's batch is in flight the next events gather for the other's.
DEFAULT_WORKERS = 2
#: The most events one writer takes at once (its new Events go in one Batch call).
DEFAULT_BATCH_SIZE = 100
#: Kubernetes' limit on an Event's message (validation.NoteLengthLimit); longer ones are cut with " ...".
NOTE_LENGTH_LIMIT = 1024
#: Object names are DNS subdomains of at most 253 characters.
_NAME_LIMIT = 253


def truncate_message(message: str) -> str:
    """The message cut to NOTE_LENGTH_LIMIT, ending in " ..." when cut (kube-scheduler's truncateMessage)."""
    if len(message) <= NOTE_LENGTH_LIMIT:
        return message
    suffix = " ..."
    return message[: NOTE_LENGTH_LIMIT - len(suffix)] + suffix


@dataclass(frozen=True, slots=True)
class _Key:
    """What makes two events the same one (client-go's getEventKey, less fields podsched never sets)."""

    kind: str
    namespace: str
    name: str
    uid: str
    type: str
    reason: str
    action: str
    message: str
    component: str


@dataclass(slots=True)
class _Pending:
    key: _Key
    #: Occurrences not yet written.
    count: int
    #: The event's annotations, or what makes them when the event is written.
    annotations: Annotations
    api_version: str
    #: The fence of the term it was recorded in (None without leader election).
    fence: Fence | None


@dataclass(slots=True)
class _Written:
    event: objects_pb2.Event
    #: Clock time of the last write, for the correlation window.
    at: float


@dataclass(slots=True)
class _Stats:
    written: int = 0
    dropped: int = 0
    failed: int = 0
    discarded: int = 0
    names: itertools.count = field(default_factory=itertools.count)


class EventRecorder:
    """Records events about objects (pods, in the scheduler) and writes them in the background."""

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock | None = None,
        max_pending: int = DEFAULT_MAX_PENDING,
        max_lazy_annotations: int = DEFAULT_MAX_LAZY_ANNOTATIONS,
        correlation_cache_size: int = DEFAULT_CORRELATION_CACHE_SIZE,
        correlation_window_s: float = DEFAULT_CORRELATION_WINDOW_S,
        workers: int = DEFAULT_WORKERS,
        batch_size: int = DEFAULT_BATCH_SIZE,
        host: str = "",
        enabled: bool = True,
    ) -> None:
        """``enabled=False``: a recorder that drops every event unseen (a replay, whose Events nobody
        reads)."""
        if min(max_pending, correlation_cache_size, workers, batch_size) < 1:
            raise ValueError("max_pending, correlation_cache_size, workers and batch_size must be at least 1")
        if max_lazy_annotations < 0:
            raise ValueError(f"max_lazy_annotations must not be negative, got {max_lazy_annotations}")
        if not correlation_window_s > 0:
            raise ValueError(f"correlation_window_s must be positive, got {correlation_window_s}")
        self._client = client
        self._clock = clock or SystemClock()
        self._max_pending = max_pending
        self._max_lazy = max_lazy_annotations
        self._cache_size = correlation_cache_size
        self._window_s = correlation_window_s
        self._workers = workers
        self._batch_size = batch_size
        self._host = host
        self.enabled = enabled
        #: Events waiting to be written, oldest first.
        self._pending: collections.OrderedDict[_Key, _Pending] = collections.OrderedDict()
        #: Keys being written right now.
        self._in_flight: set[_Key] = set()
        #: Recently written events, least recently written first (an LRU).
        self._written: collections.OrderedDict[_Key, _Written] = collections.OrderedDict()
        #: Set when a pending event may be ready for a worker.
        self._work = asyncio.Event()
        self._stats = _Stats()
        #: The fence of the current leadership term; None between terms or without leader election.
        self._term: Fence | None = None
        #: Whether a term has ever begun: from then on, events are recorded only within terms.
        self._in_terms = False

    # ------------------------------------------------------------------------------------------ terms

    def begin_term(self, fence: Fence) -> None:
        """Record the events from now on under ``fence``, the fence of the term that begins."""
        self._term = fence
        self._in_terms = True

    def end_term(self, fence: Fence) -> None:
        """The term of ``fence`` is over: drop what it recorded and is still waiting to be written."""
        if self._term == fence:
            self._term = None
        stale = [key for key, pending in self._pending.items() if pending.fence == fence]
        for key in stale:
            del self._pending[key]
        self._stats.discarded += len(stale)
        if stale:
            log.info("dropped %d events recorded in the term of %s@%d, which is over",
                     len(stale), fence.holder_identity, fence.token)

    # ----------------------------------------------------------------------------------- recording

    def record(
        self,
        obj: objects_pb2.Pod | objects_pb2.PodGroup | objects_pb2.CompositePodGroup,
        type_: str,
        reason: str,
        action: str,
        message: str,
        *,
        component: str,
        annotations: Annotations | None = None,
    ) -> None:
        """File an event about ``obj``; returns at once. ``component`` is the reporting scheduler's name.
        ``annotations`` may be a function that makes them: it is called when the event is written."""
        if not self.enabled:
            return
        if self._in_terms and self._term is None:
            self._stats.discarded += 1  # between terms: no term to write it under
            return
        meta = obj.metadata
        key = _Key(
            kind=obj.kind or type(obj).__name__,
            namespace=meta.namespace,
            name=meta.name,
            uid=meta.uid,
            type=type_,
            reason=reason,
            action=action,
            message=truncate_message(message),
            component=component,
        )
        pending = self._pending.get(key)
        if pending is not None:
            pending.count += 1
            pending.annotations = self._kept(annotations or {}, others=len(self._pending) - 1)
            return
        if len(self._pending) >= self._max_pending:
            self._stats.dropped += 1
            if self._stats.dropped == 1 or self._stats.dropped % 1000 == 0:
                log.warning("event queue full (%d waiting): dropped %d events so far",
                            len(self._pending), self._stats.dropped)
            return
        self._pending[key] = _Pending(key, 1, self._kept(annotations or {}, others=len(self._pending)),
                                      obj.api_version or "v1", self._term)
        self._work.set()

    def _kept(self, annotations: Annotations, *, others: int) -> Annotations:
        """The annotations to keep waiting beside ``others`` waiting events: a function while those could
        all be functions within ``max_lazy_annotations``, else what it makes now (the same text the
        writer would make; the function is called once either way)."""
        if callable(annotations) and others >= self._max_lazy:
            return made_annotations(annotations)
        return annotations

    # ------------------------------------------------------------------------------------- status

    @property
    def dropped(self) -> int:
        """Events dropped because too many were waiting."""
        return self._stats.dropped

    @property
    def failed(self) -> int:
        """Events whose write failed (and were given up)."""
        return self._stats.failed

    @property
    def discarded(self) -> int:
        """Events dropped because the term they were recorded in ended before they were written."""
        return self._stats.discarded

    @property
    def written(self) -> int:
        """Successful writes (creates and count updates)."""
        return self._stats.written

    def pending(self) -> int:
        """Distinct events waiting to be written."""
        return len(self._pending)

    def idle(self) -> bool:
        """Nothing waiting and nothing being written."""
        return not self._pending and not self._in_flight

    # ---------------------------------------------------------------------------------------- writing

    async def run(self) -> None:
        """Write events until cancelled, ``workers`` at a time."""
        async with asyncio.TaskGroup() as group:
            for i in range(self._workers):
                group.create_task(self._worker(), name=f"event-writer-{i}")

    async def _worker(self) -> None:
        while True:
            items = self._take()
            if not items:
                self._work.clear()
                await self._work.wait()
                continue
            try:
                await self._write(items)
            finally:
                for item in items:
                    self._in_flight.discard(item.key)
                if any(item.key in self._pending for item in items):  # repeats arrived: they may go now
                    self._work.set()

    def _take(self) -> list[_Pending]:
        """The oldest pending events whose identities are not being written, ``batch_size`` at most."""
        # A key in flight is pending again only when a repeat of it arrived: these are few to skip.
        keys = list(itertools.islice((key for key in self._pending if key not in self._in_flight),
                                     self._batch_size))
        self._in_flight.update(keys)
        return [self._pending.pop(key) for key in keys]

    async def _write(self, items: list[_Pending]) -> None:
        """Count updates of recently written events each on its own, the new events in Batch calls (one
        per fence: a batch taken across two terms is rare)."""
        now = self._clock.now()
        updates: list[tuple[_Pending, _Written]] = []
        creates: dict[Fence | None, list[_Pending]] = {}
        for item in items:
            previous = self._written.get(item.key)
            if previous is not None and now - previous.at < self._window_s:
                updates.append((item, previous))
            else:
                creates.setdefault(item.fence, []).append(item)
        await asyncio.gather(
            *(self._write_update(item, previous.event, now) for item, previous in updates),
            *(self._write_creates(same_fence, fence, now) for fence, same_fence in creates.items()),
        )

    async def _write_update(self, item: _Pending, previous: objects_pb2.Event, now: float) -> None:
        try:
            event = await self._update(previous, item)
        except errors.ApiError as err:
            self._failed(item, err)
            return
        self._written_now(item, event, now)

    async def _write_creates(self, items: list[_Pending], fence: Fence | None, now: float) -> None:
        try:
            results = await self._client.create_many([self._event(item) for item in items], fence=fence)
        except errors.ApiError as err:
            for item in items:
                self._failed(item, err)
            return
        for item, result in zip(items, results, strict=True):
            if isinstance(result, errors.ApiError):
                self._failed(item, result)
            else:
                self._written_now(item, result, now)

    def _failed(self, item: _Pending, err: errors.ApiError) -> None:
        self._stats.failed += 1
        log.warning("could not write event %s %s about %s/%s: %s",
                    item.key.type, item.key.reason, item.key.namespace, item.key.name, err.message)

    def _written_now(self, item: _Pending, event: objects_pb2.Event, now: float) -> None:
        self._stats.written += 1
        self._written[item.key] = _Written(event, now)
        self._written.move_to_end(item.key)
        while len(self._written) > self._cache_size:
            self._written.popitem(last=False)

    def _event(self, item: _Pending) -> objects_pb2.Event:
        """The new Event for ``item``."""
        key = item.key
        stamp = timeutil.now()
        return objects_pb2.Event(
            api_version="v1",
            kind="Event",
            metadata=objects_pb2.ObjectMeta(
                name=self._event_name(key.name), namespace=key.namespace,
                annotations=made_annotations(item.annotations),
            ),
            involved_object=objects_pb2.ObjectReference(
                kind=key.kind, namespace=key.namespace, name=key.name, uid=key.uid,
                api_version=item.api_version,
            ),
            reason=key.reason,
            message=key.message,
            source=objects_pb2.EventSource(component=key.component, host=self._host),
            first_timestamp=stamp,
            last_timestamp=stamp,
            # events.k8s.io/v1 requires eventTime (kube-scheduler records there): the same instant.
            event_time=stamp,
            count=item.count,
            type=key.type,
            reporting_component=key.component,
            reporting_instance=f"{key.component}-{self._host}" if self._host else key.component,
            action=key.action,
        )

    async def _update(self, previous: objects_pb2.Event, item: _Pending) -> objects_pb2.Event:
        event = objects_pb2.Event()
        event.CopyFrom(previous)
        event.count += item.count
        event.last_timestamp.CopyFrom(timeutil.now())
        event.metadata.annotations.clear()
        event.metadata.annotations.update(made_annotations(item.annotations))
        try:
            return await self._client.update(event, fence=item.fence)
        except (errors.Conflict, errors.NotFound):
            # Someone else changed or deleted it (a TTL, a user): start a fresh Event.
            return await self._client.create(self._event(item), fence=item.fence)

    def _event_name(self, object_name: str) -> str:
        # client-go names an event "<object>.<unix nanos in hex>"; a counter keeps two events recorded in
        # the same nanosecond apart.
        suffix = f".{time.time_ns():x}{next(self._stats.names):x}"
        return object_name[: _NAME_LIMIT - len(suffix)] + suffix


def made_annotations(annotations: Annotations) -> dict[str, str]:
    """The annotations, made now if they were given as a function."""
    return dict(annotations() if callable(annotations) else annotations)
