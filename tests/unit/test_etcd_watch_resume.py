"""EtcdStore's watch on a scripted channel: where it resumes after a broken stream, and what it skips.

The real-etcd counterparts are in tests/contract/test_etcd_cluster.py; here the stream's responses are
chosen exactly, including headers far ahead of the last event (what etcd sends a catching-up watcher).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import grpc
import grpc.aio
import pytest
from etcd3aio._protobuf import RangeResponse, WatchRequest, WatchResponse, kv_pb2, rpc_pb2

from store.base import EventType, StoreUnavailable, TooOldRevision, WatchEvent
from store.etcd import EtcdStore, EtcdTimeouts

Script = list[WatchResponse | grpc.aio.AioRpcError]


def _unavailable(details: str = "Socket closed") -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(
        grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), details
    )


def _created(header: int) -> WatchResponse:
    return WatchResponse(header=rpc_pb2.ResponseHeader(revision=header), created=True)


def _puts(header: int, *revisions: int) -> WatchResponse:
    events = [
        kv_pb2.Event(
            type=kv_pb2.Event.PUT,
            kv=kv_pb2.KeyValue(key=f"/pods/r{r}".encode(), value=b"v", create_revision=r, mod_revision=r),
        )
        for r in revisions
    ]
    return WatchResponse(header=rpc_pb2.ResponseHeader(revision=header), events=events)


class FakeWatchCall:
    """One watch stream: records what the store writes, answers from a script, then waits forever."""

    def __init__(self, script: Script) -> None:
        self.script = list(script)
        self.requests: list[WatchRequest] = []
        self.cancelled = False
        self._callbacks: list[Callable[[Any], None]] = []
        self._quiet: asyncio.Future[None] | None = None

    async def write(self, request: WatchRequest) -> None:
        self.requests.append(request)

    async def read(self) -> WatchResponse:
        if not self.script:
            # A quiet, healthy stream; cancel() ends the read as gRPC does, with CancelledError.
            self._quiet = asyncio.get_running_loop().create_future()
            await self._quiet
        item = self.script.pop(0)
        if isinstance(item, grpc.aio.AioRpcError):
            raise item
        return item

    def cancel(self) -> bool:
        self.cancelled = True
        if self._quiet is not None:
            self._quiet.cancel()
        for callback in self._callbacks:
            callback(self)
        return True

    def add_done_callback(self, callback: Callable[[Any], None]) -> None:
        self._callbacks.append(callback)


class FakeChannel:
    """Serves the KV stub's unary calls with an empty range at ``revision`` and hands out one
    scripted FakeWatchCall per Watch call, in order."""

    def __init__(self, streams: list[Script], revision: int = 1000) -> None:
        self.streams = list(streams)
        self.calls: list[FakeWatchCall] = []
        self.revision = revision

    def unary_unary(self, method: str, *args: object, **kwargs: object) -> Callable[..., Any]:
        async def call(request: object, **_: object) -> RangeResponse:
            return RangeResponse(header=rpc_pb2.ResponseHeader(revision=self.revision))

        return call

    def stream_stream(self, method: str, *args: object, **kwargs: object) -> Callable[..., FakeWatchCall]:
        def open_stream(**_: object) -> FakeWatchCall:
            call = FakeWatchCall(self.streams.pop(0) if self.streams else [_unavailable("no more streams")])
            self.calls.append(call)
            return call

        return open_stream

    async def close(self) -> None:
        pass


def _store(channel: FakeChannel, **timeouts: float) -> EtcdStore:
    return EtcdStore(channel, timeouts=EtcdTimeouts(**timeouts))  # type: ignore[arg-type]


def _start_revisions(channel: FakeChannel) -> list[int]:
    return [call.requests[0].create_request.start_revision for call in channel.calls]


async def _take(events: Any, count: int) -> list[int]:
    async with asyncio.timeout(5):
        return [(await anext(events)).revision for _ in range(count)]


async def test_a_broken_stream_resumes_after_the_last_event_not_the_header() -> None:
    channel = FakeChannel(
        [
            [_created(9), _puts(5000, 10, 11, 12), _unavailable()],
            [_created(5000), _puts(5000, 13)],
        ]
    )
    store = _store(channel)
    events = store.watch("/pods/", from_revision=10)

    assert await _take(events, 4) == [10, 11, 12, 13]
    assert _start_revisions(channel) == [10, 13]
    assert channel.calls[0].cancelled
    await events.aclose()  # type: ignore[attr-defined]


async def test_events_before_the_resume_point_are_not_yielded_twice() -> None:
    channel = FakeChannel(
        [
            [_created(9), _puts(20, 10, 11), _unavailable()],
            [_created(20), _puts(20, 11, 12)],  # a replay must not repeat 11
        ]
    )
    events = _store(channel).watch("/pods/", from_revision=10)

    assert await _take(events, 3) == [10, 11, 12]
    await events.aclose()  # type: ignore[attr-defined]


async def test_events_of_one_revision_in_one_response_are_all_yielded() -> None:
    same_revision = _puts(30, 15, 15)  # a transaction writing two keys under the prefix
    same_revision.events[1].kv.key = b"/pods/other"
    channel = FakeChannel([[_created(14), same_revision, _puts(30, 16)]])
    events = _store(channel).watch("/pods/", from_revision=15)

    got = [await anext(events) for _ in range(3)]

    assert [(e.key, e.revision) for e in got] == [("/pods/r15", 15), ("/pods/other", 15), ("/pods/r16", 16)]
    await events.aclose()  # type: ignore[attr-defined]


async def test_a_watch_from_now_starts_after_the_newest_revision_seen() -> None:
    channel = FakeChannel([[_created(41), _puts(42, 42)]], revision=41)
    store = _store(channel)
    await store.current_revision()  # the store has now seen revision 41

    events = store.watch("/pods/")

    assert await _take(events, 1) == [42]
    assert _start_revisions(channel) == [42]
    await events.aclose()  # type: ignore[attr-defined]


async def test_the_watch_is_registered_when_watch_is_called() -> None:
    channel = FakeChannel([[_created(5)]])
    store = _store(channel)

    events = store.watch("/pods/", from_revision=3)
    await store.get("/pods/a")  # requests after watch() wait for the registration

    assert _start_revisions(channel) == [3]
    await events.aclose()  # type: ignore[attr-defined]
    assert channel.calls[0].cancelled


async def test_a_compaction_cancel_raises_too_old_with_the_first_kept_revision() -> None:
    canceled = WatchResponse(header=rpc_pb2.ResponseHeader(revision=0), canceled=True, compact_revision=50)
    events = _store(FakeChannel([[_created(60), canceled]])).watch("/pods/", from_revision=7)

    with pytest.raises(TooOldRevision) as raised:
        await anext(events)

    assert (raised.value.requested, raised.value.compacted) == (7, 51)


async def test_a_stream_that_cannot_reconnect_raises_unavailable() -> None:
    channel = FakeChannel([[_created(9), _unavailable()]])  # every later stream fails too
    events = _store(channel, watch_reconnect_budget_s=0.3).watch("/pods/", from_revision=10)

    with pytest.raises(StoreUnavailable, match="unavailable"):
        await _take(events, 1)
    assert len(channel.calls) > 2, "it gave up without retrying"


async def test_a_cancel_for_another_reason_is_an_error_naming_it() -> None:
    canceled = WatchResponse(canceled=True, cancel_reason="permission denied")
    events = _store(FakeChannel([[_created(9), canceled]])).watch("/pods/", from_revision=10)

    with pytest.raises(Exception, match="permission denied"):
        await anext(events)


async def test_close_ends_a_waiting_watch() -> None:
    store = _store(FakeChannel([[_created(9)]]))
    events = store.watch("/pods/", from_revision=10)
    waiting = asyncio.create_task(anext(events))
    await asyncio.sleep(0.05)

    await store.close()

    with pytest.raises(StopAsyncIteration):
        async with asyncio.timeout(5):
            await waiting


async def test_delete_events_carry_the_deleted_value() -> None:
    deletion = WatchResponse(
        header=rpc_pb2.ResponseHeader(revision=9),
        events=[
            kv_pb2.Event(
                type=kv_pb2.Event.DELETE,
                kv=kv_pb2.KeyValue(key=b"/pods/a", mod_revision=9),
                prev_kv=kv_pb2.KeyValue(key=b"/pods/a", value=b"last", create_revision=3, mod_revision=8),
            )
        ],
    )
    events = _store(FakeChannel([[_created(8), deletion]])).watch("/pods/", from_revision=9)

    event = await anext(events)

    assert event == WatchEvent(EventType.DELETE, "/pods/a", b"last", 9, 3, b"last")
    await events.aclose()  # type: ignore[attr-defined]
