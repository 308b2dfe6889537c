"""The in-process channel (``cluster.client.inprocess``) answers as gRPC does: the same API server, on a
MemoryStore, is called through both an ``InProcessChannel`` and a real gRPC channel on loopback, and every
kind of outcome must come out the same — results, ``errors.*`` type, message and reason, the codes of
the wire, watch events, and how a call ends on a deadline, on ``cancel`` or on closing the channel.

The deadline and close cases need a handler that waits as long as the test wants: a ``Waiter`` service
registered on a ``grpc.aio`` server and on an ``InProcessServer`` alike.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from cluster.api import apiserver_pb2, apiserver_pb2_grpc, errors, kinds, objects_pb2
from cluster.apiserver.inprocess import InProcessServer
from cluster.apiserver.server import ApiServer, ApiServerOptions
from cluster.client import Client, ClientCredentials
from cluster.client.inprocess import InProcessChannel
from store.memory import MemoryStore
from tests.unit.test_apiserver_metrics import value
from tests.unit.test_client_fake_apiserver import until

#: The server's wall clock, fixed so that two transports' objects carry the same timestamps.
NOW = 1_700_000_000.0
TIMEOUT_S = 10.0
ADMIN_TOKEN = "admin-token"
#: A user no binding grants anything.
NOBODY_TOKEN = "nobody-token"
TOKENS = f'{ADMIN_TOKEN},ada,1,"system:masters"\n{NOBODY_TOKEN},bob,2\n'


@contextlib.asynccontextmanager
async def serving(options: ApiServerOptions | None = None) -> AsyncIterator[ApiServer]:
    store = MemoryStore()
    server = ApiServer(store, options or ApiServerOptions(listen="127.0.0.1:0"), clock=lambda: NOW)
    await server.start()
    try:
        yield server
    finally:
        await server.stop(1.0)
        await store.close()


def in_process_client(server: ApiServer, credentials: ClientCredentials | None = None) -> Client:
    return Client(server.address, credentials=credentials, timeout_s=TIMEOUT_S,
                  channel_factory=lambda _: InProcessChannel(server.in_process.handler))


def grpc_client(server: ApiServer, credentials: ClientCredentials | None = None) -> Client:
    return Client(server.address, credentials=credentials, timeout_s=TIMEOUT_S)


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    async with serving() as started:
        yield started


@pytest.fixture
async def clients(server: ApiServer) -> AsyncIterator[tuple[Client, Client]]:
    """(in process, over gRPC), both to ``server``."""
    async with in_process_client(server) as fast, grpc_client(server) as reference:
        yield fast, reference


def node(name: str, **labels: str) -> objects_pb2.Node:
    return objects_pb2.Node(metadata=objects_pb2.ObjectMeta(name=name, labels=labels))


async def outcome(call: Awaitable[Any]) -> tuple[Any, ...]:
    """("ok", the result) or (the ApiError's type, message, reason)."""
    try:
        result = await call
    except errors.ApiError as exc:
        return type(exc), exc.message, exc.reason
    return "ok", result


def anonymous(obj: Any) -> Any:
    """``obj`` without what differs between two creations of it (uid, resourceVersion)."""
    copy = type(obj)()
    copy.CopyFrom(obj)
    copy.metadata.ClearField("uid")
    copy.metadata.ClearField("resource_version")
    return copy


async def crud(client: Client) -> list[tuple[Any, ...]]:
    """Create, read, update and delete one Node, then read it again; each call's outcome."""
    steps = [await outcome(client.create(node("crud", tier="a")))]
    got = await client.get(kinds.NODE, "crud")
    steps.append(("ok", got))
    got.metadata.labels["tier"] = "b"
    steps.append(await outcome(client.update(got)))
    steps.append(await outcome(client.delete(kinds.NODE, "crud")))
    steps.append(await outcome(client.get(kinds.NODE, "crud")))
    return [(step[0], anonymous(step[1])) if step[0] == "ok" else step for step in steps]


async def test_create_get_update_delete_answer_alike(clients: tuple[Client, Client]) -> None:
    fast, reference = clients
    through_channel = await crud(fast)
    through_grpc = await crud(reference)
    assert through_channel == through_grpc
    assert [step[0] for step in through_channel] == ["ok", "ok", "ok", "ok", errors.NotFound]
    assert through_channel[2][1].metadata.labels["tier"] == "b"


async def _stale(client: Client) -> objects_pb2.Node:
    """A Node as it was before its latest update."""
    created = await client.create(node("stale"))
    changed = objects_pb2.Node()
    changed.CopyFrom(created)
    changed.metadata.labels["changed"] = "yes"
    await client.update(changed)
    created.metadata.labels["late"] = "yes"
    return created


REFUSALS: dict[str, tuple[type[errors.ApiError], Callable[[Client, objects_pb2.Node], Awaitable[Any]]]] = {
    "not found": (errors.NotFound, lambda client, _: client.get(kinds.NODE, "missing")),
    "already exists": (errors.AlreadyExists, lambda client, _: client.create(node("taken"))),
    "stale resourceVersion on update": (errors.Conflict, lambda client, stale: client.update(stale)),
    "stale resourceVersion on delete": (
        errors.Conflict,
        lambda client, stale: client.delete(kinds.NODE, "stale",
                                            resource_version=stale.metadata.resource_version),
    ),
    "invalid name": (errors.Invalid, lambda client, _: client.create(node("Not_A_Name"))),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
async def test_a_refusal_is_the_same_error(clients: tuple[Client, Client], case: str) -> None:
    fast, reference = clients
    await fast.create(node("taken"))
    stale = await _stale(fast)
    expected, call = REFUSALS[case]
    through_channel = await outcome(call(fast, stale))
    through_grpc = await outcome(call(reference, stale))
    assert through_channel == through_grpc
    assert through_channel[0] is expected, through_channel


def _status(err: grpc.aio.AioRpcError) -> tuple[grpc.StatusCode, str | None, str]:
    return err.code(), err.details(), errors.reason_of(err.trailing_metadata())


@pytest.mark.parametrize("kind", ["Gizmo", ""])
async def test_an_unknown_kind_is_the_same_status(server: ApiServer, kind: str) -> None:
    # The client refuses a kind it does not know before sending, so the request goes through the stub.
    request = apiserver_pb2.GetRequest(kind=kind, name="x")
    statuses = []
    channels: list[Any] = [InProcessChannel(server.in_process.handler),
                           grpc.aio.insecure_channel(server.address)]
    for channel in channels:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await apiserver_pb2_grpc.ApiServerStub(channel).Get(request)
        statuses.append(_status(refused.value))
        await channel.close()
    assert statuses[0] == statuses[1]
    assert statuses[0][0] == grpc.StatusCode.INVALID_ARGUMENT and kind in (statuses[0][1] or "")


async def _watched(watch: AsyncIterator[Any], count: int) -> list[tuple[str, Any]]:
    return [(event.type, event.object) for event in [await anext(watch) for _ in range(count)]]


async def _watches_open(server: ApiServer, count: int) -> None:
    """Wait until the server has ``count`` Node watches running (gRPC ends a cancelled call's handler
    a little after the client cancels it)."""
    await until(lambda: (value(server.metrics, "apiserver_longrunning_requests", verb="WATCH",
                               resource="nodes") or 0) == count)


async def test_a_watch_delivers_the_same_events_in_order_and_ends_on_cancel(
    server: ApiServer, clients: tuple[Client, Client]
) -> None:
    fast, _ = clients
    since = (await fast.list(kinds.NODE)).resource_version
    watches = [client.watch(kinds.NODE, resource_version=since) for client in clients]
    readers = [asyncio.create_task(_watched(watch, 3)) for watch in watches]
    await _watches_open(server, 2)
    created = await fast.create(node("watched"))
    created.metadata.labels["changed"] = "yes"
    await fast.update(created)
    await fast.delete(kinds.NODE, "watched")
    async with asyncio.timeout(TIMEOUT_S):
        through_channel, through_grpc = await asyncio.gather(*readers)
    assert through_channel == through_grpc
    assert [kind for kind, _ in through_channel] == ["ADDED", "MODIFIED", "DELETED"]
    assert {obj.metadata.name for _, obj in through_channel} == {"watched"}
    for watch in watches:
        await watch.aclose()  # type: ignore[attr-defined]
    await _watches_open(server, 0)


async def test_closing_the_client_ends_a_watch_waiting_for_an_event(server: ApiServer) -> None:
    ends = []
    for client in (in_process_client(server), grpc_client(server)):
        since = (await client.list(kinds.NODE)).resource_version
        reader = asyncio.create_task(anext(client.watch(kinds.NODE, resource_version=since)))
        await _watches_open(server, 1)
        await client.close()
        async with asyncio.timeout(TIMEOUT_S):
            ends.append(type((await asyncio.gather(reader, return_exceptions=True))[0]))
        await _watches_open(server, 0)
    assert ends == [asyncio.CancelledError, asyncio.CancelledError]


async def test_a_call_after_close_raises_alike(server: ApiServer) -> None:
    raised = []
    for client in (in_process_client(server), grpc_client(server)):
        await client.get(kinds.NAMESPACE, "default")
        await client.close()
        with pytest.raises(RuntimeError) as closed:
            await client.get(kinds.NAMESPACE, "default")
        raised.append(str(closed.value))
    assert raised[0] == raised[1]


@pytest.mark.parametrize(
    ("token", "expected"),
    [("", errors.Unauthorized), ("not-a-token", errors.Unauthorized), (NOBODY_TOKEN, errors.PermissionDenied),
     (ADMIN_TOKEN, "ok")],
    ids=["no token", "unknown token", "no permission", "admin"],
)
async def test_authentication_and_authorization_answer_alike(
    tmp_path: Path, token: str, expected: Any
) -> None:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(TOKENS)
    credentials = ClientCredentials(token=token)
    async with serving(ApiServerOptions(listen="127.0.0.1:0", token_auth_file=str(tokens))) as server:
        async with (in_process_client(server, credentials) as fast,
                    grpc_client(server, credentials) as reference):
            through_channel = await outcome(fast.get(kinds.NAMESPACE, "default"))
            through_grpc = await outcome(reference.get(kinds.NAMESPACE, "default"))
    assert through_channel == through_grpc
    assert through_channel[0] is expected or through_channel[0] == expected, through_channel


WAITER = "test.Waiter"


def _same(data: bytes) -> bytes:
    return data


class Waiter:
    """A method that waits until it is cancelled, and says when it started and when it was cancelled."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def wait(self, request: bytes, context: Any) -> bytes:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return request

    def handlers(self) -> dict[str, grpc.RpcMethodHandler]:
        return {"Wait": grpc.unary_unary_rpc_method_handler(
            self.wait, request_deserializer=_same, response_serializer=_same)}


@contextlib.asynccontextmanager
async def waiting_channels() -> AsyncIterator[list[tuple[Any, Waiter]]]:
    """Makers of a channel to a ``Waiter`` in process and of one to another over gRPC, with the Waiter
    each reaches."""
    served, in_process = Waiter(), Waiter()
    server = grpc.aio.server()
    server.add_registered_method_handlers(WAITER, served.handlers())
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    handlers = InProcessServer()
    handlers.add_registered_method_handlers(WAITER, in_process.handlers())
    try:
        yield [(lambda: InProcessChannel(handlers.handler), in_process),
               (lambda: grpc.aio.insecure_channel(f"127.0.0.1:{port}"), served)]
    finally:
        await server.stop(None)


def _wait(channel: Any) -> Any:
    return channel.unary_unary(f"/{WAITER}/Wait", request_serializer=_same, response_deserializer=_same)


async def test_a_call_past_its_deadline_ends_alike() -> None:
    statuses = []
    async with waiting_channels() as pairs:
        for make, waiter in pairs:
            channel = make()
            with pytest.raises(grpc.aio.AioRpcError) as late:
                await _wait(channel)(b"x", timeout=0.05)
            statuses.append(_status(late.value))
            async with asyncio.timeout(TIMEOUT_S):
                await waiter.cancelled.wait()
            await channel.close()
    assert statuses[0] == statuses[1]
    assert statuses[0][0] == grpc.StatusCode.DEADLINE_EXCEEDED


async def test_closing_the_channel_ends_a_running_call_alike() -> None:
    ends = []
    async with waiting_channels() as pairs:
        for make, waiter in pairs:
            channel = make()
            call = _wait(channel)

            async def waiting(call: Any = call) -> bytes:
                return await call(b"x")  # type: ignore[no-any-return]

            running = asyncio.create_task(waiting())
            async with asyncio.timeout(TIMEOUT_S):
                await waiter.started.wait()
            await channel.close()
            async with asyncio.timeout(TIMEOUT_S):
                ends.append(type((await asyncio.gather(running, return_exceptions=True))[0]))
                await waiter.cancelled.wait()
    assert ends == [asyncio.CancelledError, asyncio.CancelledError]


async def test_an_unknown_method_is_the_same_status() -> None:
    statuses = []
    async with waiting_channels() as pairs:
        for make, _ in pairs:
            channel = make()
            with pytest.raises(grpc.aio.AioRpcError) as unknown:
                await channel.unary_unary(f"/{WAITER}/Nope", request_serializer=_same,
                                          response_deserializer=_same)(b"")
            statuses.append(_status(unknown.value))
            await channel.close()
    assert statuses[0] == statuses[1]
    assert statuses[0][0] == grpc.StatusCode.UNIMPLEMENTED
