"""One request size limit for both ends (cluster.api.limits): the client sends a request up to it and
refuses a larger one as its own error, naming the request and the limit, without sending anything."""

from __future__ import annotations

import pytest

from cluster.api import objects_pb2
from cluster.api.limits import MAX_REQUEST_BYTES
from cluster.apiserver import server
from cluster.client import Client, RequestTooLarge, object_request_bytes
from cluster.client.client import CHANNEL_OPTIONS
from tests.unit.test_client_fake_apiserver import FakeApiServer, pod


def padded(name: str, request_bytes: int) -> objects_pb2.Pod:
    """A pod whose Create request is exactly ``request_bytes`` long."""
    result = pod(name)
    blob = 0
    # Pad by what is missing; the length prefixes grow by a few bytes with the first padding, so again.
    for _ in range(3):
        result.metadata.annotations["blob"] = "x" * blob
        blob += request_bytes - object_request_bytes(result)
    assert object_request_bytes(result) == request_bytes
    return result


def test_the_client_sends_what_the_server_reads() -> None:
    assert dict(CHANNEL_OPTIONS)["grpc.max_send_message_length"] == MAX_REQUEST_BYTES
    assert server.MAX_REQUEST_BYTES is MAX_REQUEST_BYTES


async def test_a_request_past_the_limit_is_the_clients_own_error_and_never_sent(
    client: Client, fake: FakeApiServer
) -> None:
    big = padded("big", MAX_REQUEST_BYTES + 1)
    with pytest.raises(RequestTooLarge) as raised:
        await client.create(big, dry_run=True)
    assert str(raised.value) == (
        f"the Create request for Pod default/big is {MAX_REQUEST_BYTES + 1} bytes, more than the "
        f"{MAX_REQUEST_BYTES} bytes (16 MiB) an API server reads; nothing was sent"
    )
    assert fake.calls_of("Create") == []
