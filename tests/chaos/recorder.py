"""The chaos tests' witness: every store event, as etcd itself reports it.

A ``Recorder`` watches the whole key space the API servers use (``/registry/``) from revision 1, so it
is started before any component and misses nothing, whatever the components say about themselves. It
runs on a thread of its own with its own event loop (the test's loop is busy driving faults), decodes
each event with the API server's own decoding, and stamps it with ``time.monotonic()`` on arrival:
the same clock the test reads when it injects a fault, so failover times are differences of one clock.

Its etcd client speaks to every member, so a killed member only moves the watch to another one; the
store's watch resumes after the last event it delivered, without gaps or repeats. If the watch fails for
good (history compacted away, etcd gone for longer than the reconnect budget) the recording is
incomplete, and every later read of it raises ``RecordingFailed``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from cluster.api import objects_pb2
from cluster.api.kinds import KINDS, Kind
from cluster.apiserver.storage import Storage
from store.base import WatchEvent
from store.etcd import EtcdStore
from tests.chaos.history import (
    BOUND_UNDER_FENCE,
    FENCING_TOKEN,
    WRITTEN_UNDER_FENCE,
    Recorded,
    claim_allocations,
    gang_min_count,
    pod_group_of,
)

#: Where the API server keeps every object (``Kind.key``).
API_PREFIX = "/registry/"
#: How long connecting to etcd may take before the recorder gives up.
CONNECT_TIMEOUT_S = 30.0
#: How often ``wait_for`` looks at the recording again.
POLL_S = 0.1
#: How long ``stop()`` waits for the recording thread.
STOP_TIMEOUT_S = 10.0

_KIND_BY_PLURAL: dict[str, Kind] = {kind.plural: kind for kind in KINDS}


class RecordingFailed(RuntimeError):
    """The recorder lost (or never had) its watch: the history it holds is not the whole story."""


def decode(event: WatchEvent, arrived: float) -> Recorded:
    """A store event as the checker reads it: the kind comes from the key (``/registry/<plural>/...``)."""
    plural = event.key[len(API_PREFIX):].split("/", 1)[0]
    kind = _KIND_BY_PLURAL.get(plural)
    if kind is None:
        raise RecordingFailed(f"event at revision {event.revision} on key {event.key!r}: no kind is "
                              f"stored under {API_PREFIX}{plural}/")
    # A DELETE carries the value the key had; its resourceVersion is the revision of that last write,
    # which etcd does not send, so the deletion's own revision stands in.
    obj = Storage.decode(kind, event.value, event.revision)
    return Recorded(event.revision, event.type, event.key, obj, arrived)


def describe(event: Recorded, since: float) -> str:
    """One line for a post-mortem: revision, arrival (seconds after ``since``), type, key, and what the
    checks read: a pod's node, fence and group, a PodGroup's minCount, a ResourceClaim's devices and
    reservations, a lease's holder and token annotation, an event's fence."""
    obj = event.obj
    detail = ""
    if isinstance(obj, objects_pb2.Pod):
        fence = obj.metadata.annotations.get(BOUND_UNDER_FENCE, "")
        detail = f"node={obj.spec.node_name or '-'} phase={obj.status.phase or '-'} fence={fence or '-'}"
        if group := pod_group_of(obj):
            detail += f" group={group}"
    elif isinstance(obj, objects_pb2.PodGroup):
        detail = f"{obj.api_version} minCount={gang_min_count(obj) or '-'}"
    elif isinstance(obj, objects_pb2.Lease):
        token = obj.metadata.annotations.get(FENCING_TOKEN, "")
        detail = f"holder={obj.spec.holder_identity or '-'} token-annotation={token or '-'}"
    elif isinstance(obj, objects_pb2.ResourceClaim):
        devices = ",".join("/".join(device) for device, _share in claim_allocations(obj))
        detail = f"devices={devices or '-'} reserved={len(obj.status.reserved_for)}"
    elif isinstance(obj, objects_pb2.Event):
        fence = obj.metadata.annotations.get(WRITTEN_UNDER_FENCE, "")
        detail = f"reason={obj.reason or '-'} count={obj.count} fence={fence or '-'}"
    return f"{event.revision} +{event.arrived - since:.3f}s {event.type.name} {event.key} {detail}".rstrip()


class Recorder:
    """``start()`` it before anything writes to ``endpoints``; ``events()`` is the history so far."""

    def __init__(self, endpoints: Sequence[str]) -> None:
        self._endpoints = list(endpoints)
        self._events: list[Recorded] = []
        self._lock = threading.Lock()
        self._error: BaseException | None = None
        self._connected = threading.Event()
        self._stopping = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._thread = threading.Thread(target=self._main, name="chaos-recorder", daemon=True)

    def start(self) -> None:
        """Connect and start watching; return once connected (the watch starts at revision 1, so
        nothing written before it is registered is missed)."""
        self._thread.start()
        if not self._connected.wait(CONNECT_TIMEOUT_S):
            raise RecordingFailed(f"the recorder could not connect to etcd {self._endpoints} within "
                                  f"{CONNECT_TIMEOUT_S:g}s")
        self._raise_if_failed()

    def events(self) -> list[Recorded]:
        """A copy of every event recorded so far, in revision order, ending with a whole revision."""
        self._raise_if_failed()
        with self._lock:
            return list(self._events)

    def write(self, path: Path) -> None:
        """Write the history so far to ``path``, one ``describe`` line per event (times from the
        first event)."""
        events = self.events()
        since = events[0].arrived if events else 0.0
        path.write_text("".join(describe(event, since) + "\n" for event in events))

    def wait_until(self, found: Callable[[list[Recorded]], object], timeout_s: float) -> object:
        """Poll the recording until ``found(events)`` returns something truthy, and return it; what it
        last returned once ``timeout_s`` has passed."""
        deadline = time.monotonic() + timeout_s
        while True:
            result = found(self.events())
            if result or time.monotonic() > deadline:
                return result
            time.sleep(POLL_S)

    def wait_for(self, found: Callable[[list[Recorded]], object], what: str, timeout_s: float) -> object:
        """``wait_until``, failing with a message naming ``what`` on a timeout."""
        result = self.wait_until(found, timeout_s)
        if not result:
            raise AssertionError(f"timed out after {timeout_s:g}s waiting for {what}")
        return result

    def stop(self) -> None:
        """End the watch and the thread; RecordingFailed if the watch had failed."""
        self._stopping = True
        if self._loop is not None and self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(STOP_TIMEOUT_S)
        if self._thread.is_alive():
            raise RecordingFailed(f"the recorder did not stop within {STOP_TIMEOUT_S:g}s")
        self._raise_if_failed()

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise RecordingFailed(f"the recorder's watch failed: {self._error!r}") from self._error

    def _main(self) -> None:
        try:
            asyncio.run(self._record())
        except asyncio.CancelledError:
            if not self._stopping:
                self._error = RecordingFailed("the recorder was cancelled")
        except BaseException as exc:  # kept for the test thread, which reads the recording
            self._error = exc
        finally:
            self._connected.set()  # never leave start() waiting on a recorder that died

    async def _record(self) -> None:
        self._loop = loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        store = await EtcdStore.connect(self._endpoints)
        try:
            # Registered before the first iteration; from revision 1, so nothing ever written is missed.
            watch = store.watch(API_PREFIX, from_revision=1)
            self._connected.set()
            # The events of one revision (a transaction's writes: a gang bound together) come in one
            # watch response, which the store yields without suspending in between; publishing from
            # a callback that runs only once this task suspends publishes whole revisions, so no
            # reader ever sees a revision half-applied.
            arrived: list[Recorded] = []

            def publish() -> None:
                with self._lock:
                    self._events.extend(arrived)
                arrived.clear()

            try:
                async for event in watch:
                    if not arrived:
                        loop.call_soon(publish)
                    arrived.append(decode(event, time.monotonic()))
            except asyncio.CancelledError:
                if self._stopping:
                    return
                raise
            raise RecordingFailed("the store ended the recorder's watch")
        finally:
            await store.close()

