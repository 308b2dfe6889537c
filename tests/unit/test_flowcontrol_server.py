"""Flow control inside a real ApiServer (real gRPC, SQLite in a temp dir) with the concurrency limit at its
smallest: without authentication nothing is ever refused; with a token file a burst from one client is
refused with TooManyRequests while the scheduler's lease call and an admin's call are answered, and a
streaming watch does not keep its seat."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from cluster.api import apiserver_pb2, apiserver_pb2_grpc, errors
from cluster.apiserver.flowcontrol import FlowControlConfig
from cluster.apiserver.server import ApiServer, ApiServerOptions
from cluster.client.credentials import ClientCredentials
from store.sqlite import SqliteStore
from tests.builders import IMAGE, pod

TOKENS = """\
admin-token,admin,u1,"system:masters"
scheduler-token,scheduler,u2,"podsched:schedulers"
flooder-token,flooder,u3,"podsched:clients"
alice-token,alice,u4,"podsched:clients"
"""
#: One seat per level, and a full queue refuses at once.
TIGHTEST = FlowControlConfig(max_requests_inflight=1, max_mutating_requests_inflight=0, queue_length_limit=0)
BURST = 100


def as_user(token: str) -> tuple[tuple[str, str], ...]:
    return ClientCredentials(token=token).metadata()


def create_request(name: str, namespace: str = "burst") -> apiserver_pb2.CreateRequest:
    return apiserver_pb2.CreateRequest(object=apiserver_pb2.Object(pod=pod(name, namespace, image=IMAGE)))


async def serving(tmp_path: Path, **options: object) -> AsyncIterator[apiserver_pb2_grpc.ApiServerStub]:
    store = await SqliteStore.open(tmp_path / "data")
    options = ApiServerOptions(listen="127.0.0.1:0", flow_control=TIGHTEST, **options)  # type: ignore[arg-type]
    server = ApiServer(store, options)
    await server.start()
    channel = grpc.aio.insecure_channel(server.address)
    try:
        yield apiserver_pb2_grpc.ApiServerStub(channel)
    finally:
        await channel.close()
        await server.stop()
        await store.close()


@pytest.fixture
async def unsecured(tmp_path: Path) -> AsyncIterator[apiserver_pb2_grpc.ApiServerStub]:
    async for stub in serving(tmp_path):
        yield stub


@pytest.fixture
async def secured(tmp_path: Path) -> AsyncIterator[apiserver_pb2_grpc.ApiServerStub]:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(TOKENS)
    async for stub in serving(tmp_path, token_auth_file=str(tokens)):
        yield stub


async def burst(stub: apiserver_pb2_grpc.ApiServerStub, token: str | None) -> collections.Counter[str]:
    """BURST concurrent creates; how many ended with each status code."""
    metadata = as_user(token) if token else ()

    async def create(i: int) -> str:
        try:
            await stub.Create(create_request(f"p-{token or 'nobody'}-{i}"), metadata=metadata)
            return "OK"
        except grpc.aio.AioRpcError as error:
            return error.code().name

    return collections.Counter(await asyncio.gather(*(create(i) for i in range(BURST))))


async def test_without_authentication_nothing_is_limited(unsecured: apiserver_pb2_grpc.ApiServerStub) -> None:
    assert await burst(unsecured, None) == {"OK": BURST}


async def test_a_burst_is_refused_while_lease_and_admin_calls_are_answered(
    secured: apiserver_pb2_grpc.ApiServerStub,
) -> None:
    lease = apiserver_pb2.GetRequest(kind="Lease", namespace="kube-system", name="kube-scheduler")

    async def lease_answer() -> str:
        try:
            await secured.Get(lease, metadata=as_user("scheduler-token"))
        except grpc.aio.AioRpcError as error:
            return error.code().name
        return "OK"

    flooded, admin, lease_status = await asyncio.gather(
        burst(secured, "flooder-token"), burst(secured, "admin-token"), lease_answer()
    )
    assert flooded["RESOURCE_EXHAUSTED"] > 0 and flooded["OK"] > 0, flooded
    assert admin == {"OK": BURST}
    assert lease_status == "NOT_FOUND"  # answered: no scheduler ever created the lease

    with pytest.raises(grpc.aio.AioRpcError) as refused:  # one more burst, to read a refusal as a client does
        await asyncio.gather(*(
            secured.Create(create_request(f"again-{i}"), metadata=as_user("flooder-token")) for i in range(20)
        ))
    error = refused.value
    refusal = errors.from_status(error.code(), error.details(), errors.reason_of(error.trailing_metadata()))
    assert isinstance(refusal, errors.TooManyRequests)
    assert refusal.message.startswith("Too many requests, please try again later: priority level "
                                      "'global-default' is at its concurrency limit of 1 and user 'flooder'")


async def test_a_streaming_watch_does_not_keep_its_seat(secured: apiserver_pb2_grpc.ApiServerStub) -> None:
    await secured.Create(create_request("existing", "watched"), metadata=as_user("alice-token"))
    watch = secured.Watch(apiserver_pb2.WatchRequest(kind="Pod", namespace="watched"),
                          metadata=as_user("flooder-token"))
    try:
        first = await watch.read()
        assert first.object.pod.metadata.name == "existing"
        # The level's only seat is free again although the watch still streams.
        await asyncio.wait_for(
            secured.Create(create_request("while-watching", "watched"), metadata=as_user("alice-token")), 10
        )
        second = await asyncio.wait_for(watch.read(), 10)
        assert second.object.pod.metadata.name == "while-watching"
    finally:
        watch.cancel()
