"""Watch over HTTP as kube-apiserver streams it: one chunked response of newline-separated JSON watch
events (``{"type":"ADDED","object":{...}}``), from the same watch cache the gRPC Watch reads.

* ``resourceVersion``: "" or "0" starts with the current objects (ADDED), a version replays what came
  after it; a compacted one is a 200 whose first event is an ERROR carrying a 410 Expired Status (how
  client-go's reflector and the Python client learn to relist).
* ``sendInitialEvents=true`` (watch-list, with ``resourceVersionMatch=NotOlderThan`` and bookmarks): the
  current objects as ADDED, then a BOOKMARK annotated ``k8s.io/initial-events-end: "true"`` at the
  revision they were read at, then the changes after it.
* ``allowWatchBookmarks``: a BOOKMARK (an object with only kind, apiVersion and resourceVersion) every
  ``BOOKMARK_INTERVAL_S`` at the last version sent, so a quiet watch can resume without a relist.
* ``timeoutSeconds`` ends the stream cleanly; so does the server's stop.

A reader too slow for the events is dropped by the cache as gRPC watchers are (the stream ends and the
client watches again from its last version): the events wait in a bounded queue between the cache and
the socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from aiohttp import web

from cluster.api import apiserver_pb2, errors, kinds
from cluster.apiserver.failures import error_of
from cluster.apiserver.flowcontrol import watch_started
from cluster.apiserver.http import codec
from cluster.apiserver.http.call import JSON, Call
from cluster.apiserver.http.collections import collection_namespace, selection_of
from cluster.apiserver.http.status import status_of
from cluster.apiserver.watch import until_stopped

BOOKMARK_INTERVAL_S = 60.0
#: Without ``timeoutSeconds`` a watch ends after this long (kube-apiserver's --min-request-timeout).
DEFAULT_TIMEOUT_S = 1800.0
#: Events held between the cache and a slow socket before the reader is left behind.
QUEUE_SIZE = 1024
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
_TYPES = {
    apiserver_pb2.WatchEvent.ADDED: "ADDED",
    apiserver_pb2.WatchEvent.MODIFIED: "MODIFIED",
    apiserver_pb2.WatchEvent.DELETED: "DELETED",
}

#: What a watch event's object becomes on the wire: the object's JSON, or its Table row.
ObjectShape = Callable[[Any], dict[str, Any]]
#: What the pump hands over: a cache frame or a store watch's event, the error that ended the events,
#: or None at their end.
_Item = apiserver_pb2.WatchEvent | bytes | errors.ApiError | None


def _parse(frame: bytes) -> apiserver_pb2.WatchEvent:
    return apiserver_pb2.WatchEvent.FromString(frame)


def _line(event_type: str, obj: dict[str, Any]) -> bytes:
    return codec.dumps({"type": event_type, "object": obj}) + b"\n"


def _bookmark(call: Call, resource_version: int, *, initial_end: bool) -> bytes:
    resource = call.target.resource
    metadata: dict[str, Any] = {"resourceVersion": str(resource_version)}
    if initial_end:
        metadata["annotations"] = {INITIAL_EVENTS_END: "true"}
    return _line("BOOKMARK", {"kind": resource.kind.name, "apiVersion": resource.group_version,
                              "metadata": metadata})


async def watch(call: Call, stopping: asyncio.Event, shape: ObjectShape) -> web.StreamResponse:
    query = call.query
    selection = selection_of(call)
    namespace = collection_namespace(call)
    bookmarks = call.flag("allowWatchBookmarks")
    send_initial = query.get("sendInitialEvents", "").lower() == "true"
    if send_initial and query.get("resourceVersionMatch") != "NotOlderThan":
        raise errors.Invalid(
            "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to "
            "NotOlderThan")
    timeout = call.integer("timeoutSeconds")
    deadline = time.monotonic() + (timeout if timeout is not None and timeout > 0 else DEFAULT_TIMEOUT_S)
    resource_version = query.get("resourceVersion", "")
    response = web.StreamResponse(
        headers={"Content-Type": JSON, "Cache-Control": "no-cache, private", **call.headers})
    response.enable_chunked_encoding()
    cache = call.verbs.cache
    initial: list[bytes] = []
    last = 0
    if send_initial:
        page = await cache.list(selection, namespace)
        initial = [_line("ADDED", shape(obj)) for obj in page.items]
        initial.append(_bookmark(call, page.revision, initial_end=True))
        resource_version, last = str(page.revision), page.revision
    queue: asyncio.Queue[_Item] = asyncio.Queue(QUEUE_SIZE)
    pump = asyncio.create_task(_pump(cache.watch(selection, namespace, resource_version), stopping, queue))
    try:
        await response.prepare(call.request)
        watch_started()  # its setup is done: flow control takes its seat back
        for line in initial:
            await response.write(line)
        next_bookmark = time.monotonic() + BOOKMARK_INTERVAL_S
        while True:
            now = time.monotonic()
            if now >= deadline:
                break
            wait = min(deadline, next_bookmark) - now if bookmarks and last else deadline - now
            try:
                item = await asyncio.wait_for(queue.get(), wait)
            except TimeoutError:
                if bookmarks and last and time.monotonic() >= next_bookmark:
                    await response.write(_bookmark(call, last, initial_end=False))
                    next_bookmark = time.monotonic() + BOOKMARK_INTERVAL_S
                continue
            if item is None:
                break
            if isinstance(item, errors.ApiError):
                await response.write(_line("ERROR", status_of(item)))
                break
            event = item if isinstance(item, apiserver_pb2.WatchEvent) else _parse(item)
            obj = kinds.unwrap(event.object)
            last = int(kinds.metadata_of(obj).resource_version or last)
            await response.write(_line(_TYPES[event.type], shape(obj)))
    finally:
        pump.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pump
    with contextlib.suppress(ConnectionError):
        await response.write_eof()
    return response


async def _pump(
    events: AsyncIterator[apiserver_pb2.WatchEvent | bytes],
    stopping: asyncio.Event,
    queue: asyncio.Queue[_Item],
) -> None:
    """Move the cache's events into ``queue``, then None at their end or the error that ended them."""
    try:
        async for event in until_stopped(events, stopping):
            await queue.put(event)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # every failure becomes a Status: see error_of
        await queue.put(error_of(exc, "Watch"))
        return
    await queue.put(None)
