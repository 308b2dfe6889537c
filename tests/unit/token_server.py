"""An API server on a MemoryStore that authenticates three bearer tokens (an admin, the scheduler, a
client) and is reached in process, with one node already created: for tests that call it as one of those
identities through the raw stub."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from cluster.api import apiserver_pb2_grpc
from cluster.apiserver.server import ApiServer, ApiServerOptions
from cluster.client import Client, ClientCredentials
from cluster.client.inprocess import InProcessChannel
from store.memory import MemoryStore
from tests import builders

ADMIN_TOKEN, SCHEDULER_TOKEN, CLIENT_TOKEN = "admin-token", "scheduler-token", "client-token"
TOKENS = (
    f"{ADMIN_TOKEN},ada,1,system:masters\n"
    f"{SCHEDULER_TOKEN},kube-scheduler,2,podsched:schedulers\n"
    f"{CLIENT_TOKEN},cleo,3,podsched:clients\n"
)
NAMESPACE, NODE = "default", "node-1"


class Served:
    """The server, an admin's client for the setup, and the raw stub callers use."""

    def __init__(self, server: ApiServer, admin: Client) -> None:
        self.server, self.admin = server, admin
        self.stub = apiserver_pb2_grpc.ApiServerStub(InProcessChannel(server.in_process.handler))


def as_token(token: str) -> tuple[tuple[str, str], ...]:
    """The call metadata of ``token``'s bearer."""
    return ClientCredentials(token=token).metadata()


@contextlib.asynccontextmanager
async def token_server(tmp_path: Path, served: type[Served] = Served, **options: Any) -> AsyncIterator[Any]:
    """A ``served`` of a server with ``options`` (ApiServerOptions fields) and NODE created."""
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(TOKENS)
    store = MemoryStore()
    server = ApiServer(store, ApiServerOptions(listen="127.0.0.1:0", token_auth_file=str(tokens), **options))
    await server.start()
    admin = Client(server.address, credentials=ClientCredentials(token=ADMIN_TOKEN),
                   channel_factory=lambda _: InProcessChannel(server.in_process.handler))
    try:
        async with admin:
            await admin.create(builders.node(NODE, allocatable=builders.ROOMY))
            yield served(server, admin)
    finally:
        await server.stop(1.0)
        await store.close()
