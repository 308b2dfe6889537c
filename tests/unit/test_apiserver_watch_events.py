"""Store events → API watch events, with and without selectors (kube-apiserver's conversion rules),
and the stream helper that ends watches cleanly when the server stops."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from cluster.api import apiserver_pb2, errors, objects_pb2
from cluster.api.kinds import NODE, POD
from cluster.apiserver.selection import Selection
from cluster.apiserver.watch import convert_event, parse_resource_version, until_stopped
from store.base import EventType, WatchEvent
from tests.builders import pod

ADDED, MODIFIED, DELETED = (
    apiserver_pb2.WatchEvent.ADDED, apiserver_pb2.WatchEvent.MODIFIED, apiserver_pb2.WatchEvent.DELETED
)
KEY = "/registry/pods/default/web"


def pod_bytes(*, app: str = "web", node: str = "") -> bytes:
    return pod("web", labels={"app": app}, node_name=node).SerializeToString()


def put(value: bytes, revision: int, *, prev: bytes | None, created: int | None = None) -> WatchEvent:
    create_revision = revision if created is None else created
    return WatchEvent(EventType.PUT, KEY, value, revision, create_revision, prev)


def delete(last: bytes, revision: int) -> WatchEvent:
    return WatchEvent(EventType.DELETE, KEY, last, revision, 3, last)


WEB, DB = pod_bytes(app="web"), pod_bytes(app="db")
BOUND = pod_bytes(app="web", node="n1")


@pytest.mark.parametrize(
    ("label_selector", "field_selector", "event", "expected_type", "expected_object"),
    [
        ("", "", put(WEB, 5, prev=None), ADDED, WEB),
        ("", "", put(BOUND, 6, prev=WEB, created=5), MODIFIED, BOUND),
        ("", "", delete(BOUND, 7), DELETED, BOUND),
        # Compacted previous value on an update: still MODIFIED (creation is told by create_revision).
        ("", "", put(BOUND, 6, prev=None, created=5), MODIFIED, BOUND),
        ("app=web", "", put(WEB, 5, prev=None), ADDED, WEB),
        ("app=web", "", put(DB, 5, prev=None), None, None),
        ("app=web", "", put(WEB, 6, prev=DB, created=5), ADDED, WEB),
        ("app=web", "", put(DB, 6, prev=WEB, created=5), DELETED, WEB),
        ("app=web", "", put(BOUND, 6, prev=WEB, created=5), MODIFIED, BOUND),
        ("app=web", "", put(DB, 6, prev=DB, created=5), None, None),
        ("app=web", "", delete(WEB, 7), DELETED, WEB),
        ("app=web", "", delete(DB, 7), None, None),
        ("app=web", "", put(WEB, 6, prev=None, created=5), ADDED, WEB),
        ("", "spec.nodeName=", put(BOUND, 6, prev=WEB, created=5), DELETED, WEB),
        ("", "spec.nodeName=n1", put(BOUND, 6, prev=WEB, created=5), ADDED, BOUND),
        ("", "spec.nodeName!=n1", put(WEB, 5, prev=None), ADDED, WEB),
    ],
    ids=[
        "create", "update", "delete", "update-without-prev", "create-selected", "create-not-selected",
        "starts-matching", "stops-matching", "stays-matching", "never-matches", "delete-selected",
        "delete-not-selected", "update-without-prev-selected", "field-stops-matching",
        "field-starts-matching", "field-not-equals",
    ],
)
def test_convert_event(
    label_selector: str,
    field_selector: str,
    event: WatchEvent,
    expected_type: int | None,
    expected_object: bytes | None,
) -> None:
    converted = convert_event(Selection.parse(POD, label_selector, field_selector), event)
    if expected_type is None:
        assert converted is None
        return
    assert converted is not None
    assert converted.type == expected_type
    got = converted.object.pod
    assert got.metadata.resource_version == str(event.revision)
    got.metadata.resource_version = ""
    assert got == objects_pb2.Pod.FromString(expected_object or b"")


def test_a_deletion_without_the_last_value_is_named_from_the_key() -> None:
    event = WatchEvent(EventType.DELETE, "/registry/pods/team-a/web", b"", 9, 3, None)
    converted = convert_event(Selection.parse(POD), event)
    assert converted is not None and converted.type == DELETED
    assert (converted.object.pod.metadata.namespace, converted.object.pod.metadata.name) == ("team-a", "web")
    node_event = WatchEvent(EventType.DELETE, "/registry/nodes/n1", b"", 9, 3, None)
    converted = convert_event(Selection.parse(NODE), node_event)
    assert converted is not None and converted.object.node.metadata.name == "n1"


@pytest.mark.parametrize(
    ("text", "expected"), [("", 0), ("0", 0), ("17", 17)], ids=["empty", "zero", "number"]
)
def test_parse_resource_version(text: str, expected: int) -> None:
    assert parse_resource_version(text) == expected


@pytest.mark.parametrize("text", ["-1", "abc", "1.5", " 3"], ids=["negative", "word", "fraction", "space"])
def test_parse_resource_version_rejects(text: str) -> None:
    with pytest.raises(errors.Invalid, match=f'invalid resource version "{text}"'):
        parse_resource_version(text)


# ------------------------------------------------------------------------------------ until_stopped


async def test_until_stopped_passes_items_and_ends_with_the_source() -> None:
    async def source() -> AsyncIterator[int]:
        for i in range(3):
            yield i

    assert [item async for item in until_stopped(source(), asyncio.Event())] == [0, 1, 2]


async def test_until_stopped_ends_a_waiting_stream_and_closes_its_source() -> None:
    closed = asyncio.Event()

    async def forever() -> AsyncIterator[int]:
        try:
            yield 1
            await asyncio.Event().wait()
            yield 2
        finally:
            closed.set()

    stop = asyncio.Event()
    received = []

    async def consume() -> None:
        async for item in until_stopped(forever(), stop):
            received.append(item)

    consumer = asyncio.create_task(consume())
    await asyncio.sleep(0.05)
    stop.set()
    await asyncio.wait_for(consumer, 1.0)
    assert received == [1]
    assert closed.is_set()


async def test_until_stopped_never_interrupts_the_consumer_and_leaves_its_task_uncancelled() -> None:
    """A stop that comes while the consumer handles an item (gRPC sending it on) lets that finish, ends
    the stream before the next item, and leaves no cancellation pending on the task."""
    stop = asyncio.Event()
    handled = []

    async def items() -> AsyncIterator[int]:
        for i in range(3):
            yield i

    async def consume() -> int:
        async for item in until_stopped(items(), stop):
            stop.set()
            await asyncio.sleep(0.01)  # would raise CancelledError if the stop cancelled us here
            handled.append(item)
        return asyncio.current_task().cancelling()  # type: ignore[union-attr]

    assert await asyncio.wait_for(asyncio.create_task(consume()), 1.0) == 0
    assert handled == [0]


async def test_until_stopped_after_a_stop_leaves_the_task_uncancelled() -> None:
    stop = asyncio.Event()

    async def forever() -> AsyncIterator[int]:
        yield 1
        await asyncio.Event().wait()

    async def consume() -> tuple[list[int], int]:
        received = [item async for item in until_stopped(forever(), stop)]
        # Still able to wait: the interruption was taken back.
        await asyncio.sleep(0)
        return received, asyncio.current_task().cancelling()  # type: ignore[union-attr]

    consumer = asyncio.create_task(consume())
    await asyncio.sleep(0.02)
    stop.set()
    assert await asyncio.wait_for(consumer, 1.0) == ([1], 0)


async def test_until_stopped_closes_the_source_when_the_consumer_goes_away() -> None:
    closed = asyncio.Event()

    async def forever() -> AsyncIterator[int]:
        try:
            while True:
                yield 1
                await asyncio.sleep(3600)
        finally:
            closed.set()

    async def consume() -> None:
        async for _ in until_stopped(forever(), asyncio.Event()):
            pass

    consumer = asyncio.create_task(consume())
    await asyncio.sleep(0.05)
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer
    assert closed.is_set()


async def test_until_stopped_propagates_source_errors() -> None:
    async def failing() -> AsyncIterator[int]:
        yield 1
        raise errors.Expired("too old resource version: 1 (5)")

    with pytest.raises(errors.Expired, match=r"too old"):
        async for _ in until_stopped(failing(), asyncio.Event()):
            pass
