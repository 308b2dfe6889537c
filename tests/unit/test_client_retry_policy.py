"""The caller's retry policy for servers that cannot be reached: a one-shot command's FAIL_FAST_POLICY
tries each server once and raises ServerUnreachable naming them; the default keeps trying until the
call's deadline; a server's own UNAVAILABLE is retried under either; and a policy changed while a call
retries (a component that is stopping) applies to that call's next attempt."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from cluster.api import errors
from cluster.client import FAIL_FAST_POLICY, Client, RetryPolicy, ServerUnreachable
from cluster.client.retry import unreachable_reason
from tests.unit.test_client_fake_apiserver import FAST_RETRIES, FakeApiServer, closed_port, pod, until

#: FAIL_FAST_POLICY's rule with backoffs that do not slow the tests down.
FAST_FAIL_FAST = RetryPolicy(initial_s=0.01, max_s=0.05, unreachable_attempts=1)


class CountingChannel:
    """A real insecure gRPC channel that counts the calls started through it, by target."""

    def __init__(self, target: str, counts: collections.Counter[str]) -> None:
        self._channel = grpc.aio.insecure_channel(target)
        self._target = target
        self._counts = counts

    def _counted(self, make: Callable[..., Any], method: str, **kwargs: Any) -> Callable[..., Any]:
        call = make(method, **kwargs)

        def start(*args: Any, **call_kwargs: Any) -> Any:
            self._counts[self._target] += 1
            return call(*args, **call_kwargs)

        return start

    def unary_unary(self, method: str, **kwargs: Any) -> Callable[..., Any]:
        return self._counted(self._channel.unary_unary, method, **kwargs)

    def unary_stream(self, method: str, **kwargs: Any) -> Callable[..., Any]:
        return self._counted(self._channel.unary_stream, method, **kwargs)

    async def close(self) -> None:
        await self._channel.close()


def counting_client(
    servers: list[str], policy: RetryPolicy, timeout_s: float = 30.0
) -> tuple[Client, collections.Counter[str]]:
    counts: collections.Counter[str] = collections.Counter()
    client = Client(servers, timeout_s=timeout_s, retry_policy=policy,
                    channel_factory=lambda target: CountingChannel(target, counts))
    return client, counts


async def _call(client: Client, verb: str) -> None:
    if verb == "get":
        await client.get("pods", "web", "default")
    elif verb == "create":
        await client.create(pod("web"))
    else:
        async for _ in client.watch("pods", "default"):
            pass


@pytest.mark.parametrize("verb", ["get", "create", "watch"])
async def test_fail_fast_tries_each_unreachable_server_once_and_names_them(verb: str) -> None:
    servers = [f"127.0.0.1:{closed_port()}", f"127.0.0.1:{closed_port()}"]
    client, counts = counting_client(servers, FAIL_FAST_POLICY)
    async with client:
        with pytest.raises(ServerUnreachable) as raised:
            await _call(client, verb)
    assert counts == {servers[0]: 1, servers[1]: 1}
    assert raised.value.message == (
        f"cannot reach the API server at {servers[0]}, {servers[1]}: connection refused")
    assert isinstance(raised.value, errors.Unavailable)


async def test_the_default_policy_keeps_trying_until_the_deadline() -> None:
    server = f"127.0.0.1:{closed_port()}"
    client, counts = counting_client([server], FAST_RETRIES, timeout_s=0.5)
    async with client:
        with pytest.raises(errors.Unavailable) as raised:
            await client.get("pods", "web", "default")
    assert not isinstance(raised.value, ServerUnreachable)
    assert counts[server] > 2


async def test_fail_fast_moves_on_to_a_server_that_answers(fake: FakeApiServer) -> None:
    await fake.put(pod("web"))
    down = f"127.0.0.1:{closed_port()}"
    client, counts = counting_client([down, fake.address], FAST_FAIL_FAST)
    async with client:
        assert (await client.get("pods", "web", "default")).metadata.name == "web"
    assert counts == {down: 1, fake.address: 1}


async def test_fail_fast_still_retries_a_server_that_answers_unavailable(fake: FakeApiServer) -> None:
    # The server was reached: its store may be back in a moment, as for any other client.
    await fake.put(pod("web"))
    fake.fail("Get", grpc.StatusCode.UNAVAILABLE, "store down", times=3)
    async with Client(fake.address, timeout_s=30.0, retry_policy=FAST_FAIL_FAST) as client:
        assert (await client.get("pods", "web", "default")).metadata.name == "web"
    assert len(fake.calls_of("Get")) == 4


async def test_a_policy_changed_while_a_call_retries_applies_to_its_next_attempt() -> None:
    server = f"127.0.0.1:{closed_port()}"
    client, counts = counting_client([server], FAST_RETRIES)
    async with client:
        call = asyncio.create_task(client.get("pods", "web", "default"))
        await until(lambda: counts[server] >= 3)
        assert not call.done()
        client.retry_policy = FAST_FAIL_FAST
        with pytest.raises(ServerUnreachable, match=f"cannot reach the API server at {server}"):
            await call


@pytest.mark.parametrize(
    ("attempts", "servers", "failures", "gives_up"),
    [(None, 1, 1_000, False), (1, 1, 1, True), (1, 3, 2, False), (1, 3, 3, True), (2, 2, 3, False),
     (2, 2, 4, True)],
)
def test_the_policy_gives_up_after_its_attempts_on_every_server(
    attempts: int | None, servers: int, failures: int, gives_up: bool
) -> None:
    policy = RetryPolicy(unreachable_attempts=attempts)
    assert policy.gives_up_unreachable(failures, servers) is gives_up


def test_a_policy_that_never_tries_is_refused() -> None:
    with pytest.raises(ValueError, match="unreachable_attempts >= 1 or None, got 0"):
        RetryPolicy(unreachable_attempts=0)


def _error(code: grpc.StatusCode, details: str) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details)


@pytest.mark.parametrize(
    ("code", "details", "reason"),
    [
        (grpc.StatusCode.UNAVAILABLE, "failed to connect to all addresses; last error: UNKNOWN: "
         "ipv4:127.0.0.1:1: Failed to connect to remote host: Connection refused", "connection refused"),
        (grpc.StatusCode.UNAVAILABLE, "errors resolving nowhere.invalid:7443: [field:hostname lookup error:"
         "address lookup failed for nowhere.invalid:7443: Domain name not found]", "domain name not found"),
        (grpc.StatusCode.UNAVAILABLE, "DNS resolution failed for nowhere.invalid:7443: C-ares status is not "
         "ARES_SUCCESS qtype=A name=nowhere.invalid is_balancer=0: Domain name not found",
         "domain name not found"),
        # Closed during the handshake: a restarting server, or one refusing this client's certificate.
        (grpc.StatusCode.UNAVAILABLE, "failed to connect to all addresses; last error: UNAVAILABLE: "
         "ipv4:127.0.0.1:7443: Socket closed", None),
        (grpc.StatusCode.UNAVAILABLE, "etcd unreachable", None),
        (grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded", None),
    ],
    ids=["refused", "unresolved", "unresolved-c-ares", "closed-in-handshake", "store-down", "deadline"],
)
def test_unreachable_reason_is_grpcs_last_word_when_nothing_was_reached(
    code: grpc.StatusCode, details: str, reason: str | None
) -> None:
    assert unreachable_reason(_error(code, details)) == reason


def test_a_server_list_with_different_reasons_names_each() -> None:
    error = ServerUnreachable({"127.0.0.1:1": "connection refused",
                               "nowhere.invalid:7443": "domain name not found"})
    assert error.message == ("cannot reach the API server at 127.0.0.1:1 (connection refused), "
                             "nowhere.invalid:7443 (domain name not found)")
