"""Hostile input to a server with authentication on: random requests under random credentials
(a client's token, an admin's, unknown, empty, malformed, huge) end in a status a caller can act on —
UNAUTHENTICATED and PERMISSION_DENIED among them — and a rejected one changes nothing. Afterwards the
client's watch budget is whole: no refused or cancelled watch is still counted against it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cluster.api import apiserver_pb2
from tests.integration.conftest import own_apiserver
from tests.integration.fuzzing import (
    REQUEST_TYPES,
    UNARY_METHODS,
    Metadata,
    RawApi,
    bearer,
    call_checked,
    fuzz_settings,
    messages,
)

ADMIN_TOKEN = "admin-token"
CLIENT_TOKEN = "client-token"
MAX_WATCHES = 3


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawApi]:
    directory = tmp_path_factory.mktemp("fuzz-auth")
    tokens = directory / "tokens.csv"
    tokens.write_text(
        f'{ADMIN_TOKEN},admin,1,"system:masters"\n{CLIENT_TOKEN},carol,2,"podsched:clients"\n'
    )
    with own_apiserver("sqlite", directory, name_prefix="auth", extra_args=[
        "--controllers", "none", "--compaction-interval", "1h", "--token-auth-file", str(tokens),
        "--max-watches-per-user", str(MAX_WATCHES),
    ]) as server:
        raw = RawApi(server.address, 20.0, token=ADMIN_TOKEN)
        yield raw
        raw.close()
        assert server.running(), server.log()
        assert "Traceback" not in server.log(), server.log()


_CREDENTIALS: st.SearchStrategy[Metadata] = st.one_of(
    st.sampled_from([ADMIN_TOKEN, CLIENT_TOKEN, "", "nope", "a" * 10_000]).map(bearer),
    # Only what a header may carry: gRPC refuses anything else before sending.
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=100).map(bearer),
    st.just(()),
    st.sampled_from(["Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "bearer client-token", "Bearer  x"]).map(
        lambda value: (("authorization", value),)
    ),
)


def _requests(method: str) -> st.SearchStrategy[tuple[str, bytes]]:
    return messages(REQUEST_TYPES[method], depth=3).map(lambda request: (method, request.SerializeToString()))


@fuzz_settings(max_examples=150)
@given(call=st.sampled_from([*UNARY_METHODS, "Watch"]).flatmap(_requests), metadata=_CREDENTIALS)
def test_random_requests_under_random_credentials_end_in_a_clear_status(
    api: RawApi, call: tuple[str, bytes], metadata: Metadata
) -> None:
    method, body = call
    call_checked(api, method, body, metadata)


def test_the_clients_watch_budget_is_whole_afterwards(api: RawApi) -> None:
    async def watch_all() -> list[grpc.aio.AioRpcError | None]:
        async with grpc.aio.insecure_channel(api.address) as channel:
            watch = channel.unary_stream(
                "/podsched.v1.ApiServer/Watch",
                request_serializer=apiserver_pb2.WatchRequest.SerializeToString,
                response_deserializer=apiserver_pb2.WatchEvent.FromString,
            )
            request = apiserver_pb2.WatchRequest(kind="Pod", namespace="default")
            calls = [watch(request, metadata=bearer(CLIENT_TOKEN)) for _ in range(MAX_WATCHES + 1)]

            async def outcome(call: Any) -> grpc.aio.AioRpcError | None:
                try:
                    async with asyncio.timeout(1.0):
                        await call.read()
                    return None
                except TimeoutError:
                    return None  # open, nothing to send
                except grpc.aio.AioRpcError as error:
                    return error

            # Read side by side: each open watch waits out its second of silence.
            outcomes = list(await asyncio.gather(*(outcome(call) for call in calls)))
            for call in calls:
                call.cancel()
            return outcomes

    # The fuzz's last watches may still be closing on the server: give them a moment.
    for _ in range(10):
        outcomes = asyncio.run(watch_all())
        if outcomes.count(None) == MAX_WATCHES:
            break
        time.sleep(0.5)
    refused = [outcome for outcome in outcomes if outcome is not None]
    assert len(refused) == 1, outcomes
    assert refused[0].code() is grpc.StatusCode.RESOURCE_EXHAUSTED, refused[0]
