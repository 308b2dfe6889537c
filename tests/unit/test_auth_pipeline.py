"""The request pipeline of ApiService: authentication, then authorization, then the gates, then the
handler; a gate is held around the whole unary call and around the whole Watch stream, and a gate's
refusal is the call's status with nothing done."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from cluster.api import apiserver_pb2, apiserver_pb2_grpc, errors, kinds
from cluster.apiserver.auth.access import Access
from cluster.apiserver.auth.authenticator import UNSECURED
from cluster.apiserver.auth.identity import RequestInfo, UserInfo
from cluster.apiserver.auth.security import SecurityConfig
from cluster.apiserver.service import ApiService
from cluster.apiserver.storage import Storage
from cluster.apiserver.verbs import Verbs
from cluster.client.credentials import ClientCredentials
from store.sqlite import SqliteStore
from tests.builders import pod

TOKENS = {
    "admin-token": UserInfo("ada", groups=("system:masters",)),
    "reader-token": UserInfo("rae", groups=("podsched:readonly",)),
}


class Busy(errors.ApiError):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED
    reason = "TooManyRequests"


class RecordingGate:
    """Records whom and what it admits and how many calls are inside it; refuses namespace "busy"."""

    def __init__(self) -> None:
        self.admitted: list[tuple[str, RequestInfo]] = []
        self.inside = 0
        #: Set whenever an admitted call leaves.
        self.left = asyncio.Event()

    @contextlib.asynccontextmanager
    async def admit(self, user: UserInfo, request: RequestInfo, width: int = 1) -> AsyncIterator[None]:
        if request.namespace == "busy":
            raise Busy(f'too many requests from User "{user.name}"')
        self.admitted.append((user.name, request))
        self.inside += 1
        try:
            yield
        finally:
            self.inside -= 1
            self.left.set()


class Served:
    def __init__(self, stub: apiserver_pb2_grpc.ApiServerStub, gate: RecordingGate) -> None:
        self.stub, self.gate = stub, gate


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    store = await SqliteStore.open(tmp_path)
    registry = Storage(store)
    gate = RecordingGate()
    access = Access.of(SecurityConfig(tokens=dict(TOKENS)), loopback_token="loopback")
    server = grpc.aio.server()
    apiserver_pb2_grpc.add_ApiServerServicer_to_server(
        ApiService(Verbs(registry), asyncio.Event(), access=access, gates=(gate,)), server
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield Served(apiserver_pb2_grpc.ApiServerStub(channel), gate)
    finally:
        await channel.close()
        await server.stop(None)
        await store.close()


def _as(token: str) -> tuple[tuple[str, str], ...]:
    return ClientCredentials(token=token).metadata()


def _create(namespace: str) -> apiserver_pb2.CreateRequest:
    return apiserver_pb2.CreateRequest(object=kinds.wrap(pod("web", namespace, image="nginx:1.25")))


async def test_a_unary_call_passes_the_gate_with_its_user_and_request(served: Served) -> None:
    await served.stub.Create(_create("team"), metadata=_as("admin-token"))
    assert served.gate.admitted == [("ada", RequestInfo("create", "pods", namespace="team"))]
    assert served.gate.inside == 0, "the gate is left once the call is answered"


async def test_unauthenticated_and_forbidden_calls_never_reach_the_gate(served: Served) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as unauthenticated:
        await served.stub.Create(_create("team"))
    assert unauthenticated.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.aio.AioRpcError) as forbidden:
        await served.stub.Create(_create("team"), metadata=_as("reader-token"))
    assert forbidden.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert served.gate.admitted == []


async def test_a_gate_that_refuses_ends_the_call_with_its_error_and_nothing_done(served: Served) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await served.stub.Create(_create("busy"), metadata=_as("admin-token"))
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert refused.value.details() == 'too many requests from User "ada"'
    listed = await served.stub.List(apiserver_pb2.ListRequest(kind="pods"), metadata=_as("admin-token"))
    assert list(listed.items) == []


async def test_a_watch_holds_its_gate_for_its_whole_stream(served: Served) -> None:
    await served.stub.Create(_create("team"), metadata=_as("admin-token"))
    served.gate.left.clear()
    request = apiserver_pb2.WatchRequest(kind="pods", namespace="team")
    stream = served.stub.Watch(request, metadata=_as("reader-token"))
    first = await stream.read()
    assert first.type == apiserver_pb2.WatchEvent.ADDED
    assert ("rae", RequestInfo("watch", "pods", namespace="team")) in served.gate.admitted
    assert served.gate.inside == 1, "the watch is still inside its gate while it streams"
    assert not served.gate.left.is_set()
    stream.cancel()
    await asyncio.wait_for(served.gate.left.wait(), 5)
    assert served.gate.inside == 0


async def test_the_loopback_token_is_the_servers_own_admin_identity(served: Served) -> None:
    await served.stub.Create(_create("team"), metadata=_as("loopback"))
    assert [user for user, _ in served.gate.admitted] == ["system:apiserver"]


def test_without_authentication_every_caller_is_admitted_as_an_admin() -> None:
    access = Access.of(SecurityConfig(), loopback_token="loopback")
    assert not access.enabled
    access.authorize(UNSECURED, RequestInfo("delete", "nodes", name="n1"))
