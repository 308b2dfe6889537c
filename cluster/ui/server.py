"""The web view's HTTP server (docs/ui.md): informers on the API server feed the ViewModel, and aiohttp
serves the page, the model as JSON, a Server-Sent Events stream of it, and one pod's details.

It only lists, watches and reads: the ``readonly`` role is enough. Each browser on the stream has its own
queue of messages; the model's changes are sent to all as one delta at most every ``flush_interval_s``,
and a browser that falls more than ``max_pending_bytes`` behind is dropped (it reconnects and starts from
a fresh snapshot) instead of growing the server's memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import deque
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from cluster.api import errors, kinds, objects_pb2
from cluster.client import Client, Informer, LeaderChange, LeadershipWatch
from cluster.ui.details import pod_details
from cluster.ui.hosts import HostCheck
from cluster.ui.model import ViewModel

log = logging.getLogger(__name__)

#: The page's files, shipped in the package (pyproject's package-data).
STATIC_DIR = Path(__file__).parent / "static"
#: What /static/ serves: the page's own script and style, nothing else.
STATIC_FILES = ("app.js", "app.css")
#: The contract's pace: one delta at most this often, a keepalive comment after this long without one.
FLUSH_INTERVAL_S = 0.5
KEEPALIVE_S = 15.0
#: How often the API server's reachability is checked (one small read).
PROBE_INTERVAL_S = 2.0
#: How far behind a browser may fall before it is dropped: a few whole snapshots of a large cluster.
MAX_PENDING_BYTES = 64 << 20

#: The status of a refused Host: the request reached a server that is not the one it names.
MISDIRECTED = 421

#: The index of events by the object they are about: "Kind/namespace/name".
INVOLVED_INDEX = "involved"


def _involved(event: objects_pb2.Event) -> list[str]:
    ref = event.involved_object
    return [f"{ref.kind}/{ref.namespace}/{ref.name}"]


def sse(event: str, data: Any) -> bytes:
    """One Server-Sent Event (compact JSON has no newline, so the data is one line)."""
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


KEEPALIVE = b": keepalive\n\n"


class Subscriber:
    """One browser's stream: the messages not yet written to it."""

    def __init__(self, max_pending_bytes: int) -> None:
        self._messages: deque[bytes] = deque()
        self._pending_bytes = 0
        self._max_pending_bytes = max_pending_bytes
        self._ready = asyncio.Event()
        #: Set when it fell too far behind, or the server is closing: the stream ends.
        self.closed = False

    def send(self, message: bytes) -> None:
        if self.closed:
            return
        if self._messages and self._pending_bytes + len(message) > self._max_pending_bytes:
            log.warning("dropping a web view client %d bytes behind", self._pending_bytes)
            self.close()
            return
        self._messages.append(message)
        self._pending_bytes += len(message)
        self._ready.set()

    def close(self) -> None:
        self.closed = True
        self._messages.clear()
        self._pending_bytes = 0
        self._ready.set()

    async def next(self, timeout_s: float) -> bytes:
        """What to write next: the messages waiting, or the keepalive after ``timeout_s`` without any
        (b"" once closed)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), timeout_s)
        self._ready.clear()
        if self.closed:
            return b""
        if not self._messages:
            return KEEPALIVE
        out = b"".join(self._messages)
        self._messages.clear()
        self._pending_bytes = 0
        return out


class Hub:
    """The model's changes, fanned out to every subscriber."""

    def __init__(self, model: ViewModel, *, max_pending_bytes: int = MAX_PENDING_BYTES) -> None:
        self.model = model
        self._max_pending_bytes = max_pending_bytes
        self.subscribers: set[Subscriber] = set()

    def subscribe(self) -> Subscriber:
        """A new stream, starting with the snapshot. What changed before it is sent to the others first,
        so the new one's deltas hold only what happens after its snapshot."""
        self.flush()
        subscriber = Subscriber(self._max_pending_bytes)
        subscriber.send(sse("snapshot", self.model.state()))
        self.subscribers.add(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        self.subscribers.discard(subscriber)

    def flush(self) -> None:
        """Send what changed since the last flush, if anything did, to every subscriber."""
        delta = self.model.take_delta()
        if delta is None or not self.subscribers:
            return
        message = sse("delta", delta)
        for subscriber in list(self.subscribers):
            subscriber.send(message)
            if subscriber.closed:
                self.subscribers.discard(subscriber)

    def close(self) -> None:
        for subscriber in self.subscribers:
            subscriber.close()
        self.subscribers.clear()


class UiServer:
    """The informers, the model they feed and the web application that serves it."""

    def __init__(
        self,
        client: Client,
        server: str,
        *,
        host_check: HostCheck,
        flush_interval_s: float = FLUSH_INTERVAL_S,
        keepalive_s: float = KEEPALIVE_S,
        max_pending_bytes: int = MAX_PENDING_BYTES,
        probe_interval_s: float = PROBE_INTERVAL_S,
    ) -> None:
        self.model = ViewModel(server)
        self._client = client
        self._host_check = host_check
        self._probe_interval_s = probe_interval_s
        self.hub = Hub(self.model, max_pending_bytes=max_pending_bytes)
        self._flush_interval_s = flush_interval_s
        self._keepalive_s = keepalive_s
        model = self.model
        self.nodes: Informer[objects_pb2.Node] = Informer(client, kinds.NODE)
        self.nodes.add_handler(model.on_node, lambda _old, new: model.on_node(new), model.on_node_deleted)
        self.pods: Informer[objects_pb2.Pod] = Informer(client, kinds.POD)
        self.pods.add_handler(model.on_pod, lambda _old, new: model.on_pod(new), model.on_pod_deleted)
        self.pdbs: Informer[objects_pb2.PodDisruptionBudget] = Informer(client, kinds.POD_DISRUPTION_BUDGET)
        self.pdbs.add_handler(model.on_pdb, lambda _old, new: model.on_pdb(new), model.on_pdb_deleted)
        self.pod_groups: Informer[objects_pb2.PodGroup] = Informer(client, kinds.POD_GROUP)
        self.pod_groups.add_handler(
            model.on_pod_group, lambda _old, new: model.on_pod_group(new), model.on_pod_group_deleted
        )
        self.events: Informer[objects_pb2.Event] = Informer(
            client, kinds.EVENT, indexers={INVOLVED_INDEX: _involved}
        )
        self.events.add_handler(model.on_event, lambda _old, new: model.on_event(new, new=False))
        self.leadership = LeadershipWatch(client, on_change=self._leader_changed, on_lease=model.on_lease)
        self.lease_candidates: Informer[objects_pb2.LeaseCandidate] = Informer(
            client, kinds.LEASE_CANDIDATE, namespace=self.leadership.namespace
        )
        self.lease_candidates.add_handler(
            model.on_lease_candidate, lambda _old, new: model.on_lease_candidate(new),
            model.on_lease_candidate_deleted,
        )
        self.resource_slices: Informer[objects_pb2.ResourceSlice] = Informer(client, kinds.RESOURCE_SLICE)
        self.resource_slices.add_handler(
            model.on_resource_slice, lambda _old, new: model.on_resource_slice(new),
            model.on_resource_slice_deleted,
        )
        self.resource_claims: Informer[objects_pb2.ResourceClaim] = Informer(client, kinds.RESOURCE_CLAIM)
        self.resource_claims.add_handler(
            model.on_resource_claim, lambda _old, new: model.on_resource_claim(new),
            model.on_resource_claim_deleted,
        )
        #: Set when a delta should go out now rather than at the next tick.
        self._urgent = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    # -------------------------------------------------------------------------------------- running

    async def start(self) -> None:
        """Start every watch and return once each has listed (raising what ended one that could not:
        a kind the credential may not read, say); then start sending deltas."""
        informers: list[Informer[Any]] = [
            self.nodes, self.pods, self.pdbs, self.pod_groups, self.events, self.lease_candidates,
            self.resource_slices, self.resource_claims,
        ]
        self._tasks = [asyncio.create_task(informer.run()) for informer in informers]
        self._tasks.append(asyncio.create_task(self.leadership.run()))
        try:
            await asyncio.gather(
                *(informer.wait_synced() for informer in informers), self.leadership.wait_synced()
            )
        except BaseException:
            await self.stop()
            raise
        self._tasks.append(asyncio.create_task(self._flush_forever()))
        self._tasks.append(asyncio.create_task(self._probe_forever()))

    async def stop(self) -> None:
        self.hub.close()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []

    def _leader_changed(self, change: LeaderChange) -> None:
        """A new holder is what a failover's watchers wait for: it goes out at once, not at the next tick
        (changes of holder are rare, so this adds no load)."""
        self.model.on_leader_change(change)
        self._urgent.set()

    async def _probe_forever(self) -> None:
        """Ask the API server(s) for the scheduler's Lease now and then: informers wait quietly for a
        server that is gone, and a page that only says "live" would hide it. Any answer, a refusal or a
        NotFound included, means a server is there; only no answer means none is."""
        watch = self.leadership
        while True:
            reachable, error = True, ""
            try:
                await self._client.get(kinds.LEASE, watch.name, watch.namespace)
            except (errors.Unavailable, errors.Timeout) as err:
                reachable, error = False, err.message
            except errors.ApiError:
                pass
            if self.model.on_api_server(reachable, error, datetime.now(UTC)):
                self._urgent.set()
            await asyncio.sleep(self._probe_interval_s)

    async def _flush_forever(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._urgent.wait(), self._flush_interval_s)
            self._urgent.clear()
            # A replica that stops renewing writes nothing: the clock finds it late, then stale.
            self.model.mark_late_renewals()
            self.model.mark_stale_candidates()
            self.hub.flush()

    # ------------------------------------------------------------------------------------------ web

    def app(self) -> web.Application:
        app = web.Application(middlewares=[host_check_middleware(self._host_check)])
        app.router.add_get("/", self._index)
        app.router.add_get("/static/{name}", self._static)
        app.router.add_get("/api/state", self._state)
        app.router.add_get("/api/stream", self._stream)
        app.router.add_get("/api/pods/{namespace}/{name}", self._pod)
        app.router.add_get("/healthz", self._healthz)
        return app

    async def _index(self, request: web.Request) -> web.StreamResponse:
        return web.FileResponse(STATIC_DIR / "index.html")

    async def _static(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name not in STATIC_FILES or not (STATIC_DIR / name).is_file():
            raise web.HTTPNotFound(text=f"no static file {name!r}")
        return web.FileResponse(STATIC_DIR / name)

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _state(self, request: web.Request) -> web.Response:
        return _json_response(self.model.state())

    async def _pod(self, request: web.Request) -> web.Response:
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        key = f"{namespace}/{name}"
        pod = self.pods.get(key)
        view = self.model.pod(key)
        if pod is None or view is None:
            return _json_response({"error": f'pod "{name}" not found in namespace "{namespace}"'}, status=404)
        group = view["podGroup"]
        group_events: Iterable[objects_pb2.Event] = ()
        if group:
            group_namespace, _, group_name = group.partition("/")
            group_events = self.events.by_index(INVOLVED_INDEX, f"PodGroup/{group_namespace}/{group_name}")
        pod_events = self.events.by_index(INVOLVED_INDEX, f"Pod/{namespace}/{name}")
        return _json_response(pod_details(pod, view, pod_events, group_events))

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            # Proxies (nginx) buffer responses unless told not to; a stream must not wait in one.
            "X-Accel-Buffering": "no",
        })
        await response.prepare(request)
        subscriber = self.hub.subscribe()
        try:
            while True:
                message = await subscriber.next(self._keepalive_s)
                if not message:
                    break
                await response.write(message)
        except ConnectionResetError:
            pass  # the browser went away
        finally:
            self.hub.unsubscribe(subscriber)
        return response


def host_check_middleware(check: HostCheck) -> Middleware:
    """An aiohttp middleware refusing, on every route, a request whose Host ``check`` does not answer."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        sockname = request.transport.get_extra_info("sockname") if request.transport is not None else None
        local = (str(sockname[0]), int(sockname[1])) if sockname else None
        reason = check.refusal(request.headers.get("Host"), local)
        if reason is not None:
            return web.Response(status=MISDIRECTED, text=reason + "\n")
        return await handler(request)

    return middleware


def _json_response(data: Any, status: int = 200) -> web.Response:
    return web.Response(
        text=json.dumps(data, separators=(",", ":")), status=status, content_type="application/json"
    )

