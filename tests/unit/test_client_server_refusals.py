"""How the client treats the API server's two refusals that are not final answers about the object:
flow control's TooManyRequests (retried, writes too, as client-go retries a 429) and the server's request
Timeout (final: reported as the server's Timeout, not as an unreachable server, and no failover)."""

from __future__ import annotations

import grpc
import pytest

from cluster.api import errors
from cluster.client import Client
from tests.unit.test_client_fake_apiserver import FAST_RETRIES, FakeApiServer, pod, running_fake

TOO_MANY = "Too many requests, please try again later: priority level 'global-default' is full"
SERVER_TIMEOUT = "the server cut the call at its request timeout of 1m0s"


async def test_a_create_refused_by_flow_control_is_retried(fake: FakeApiServer, client: Client) -> None:
    fake.fail("Create", grpc.StatusCode.RESOURCE_EXHAUSTED, TOO_MANY, times=2,
              reason=errors.TooManyRequests.reason)
    created = await client.create(pod("web"))
    assert created.metadata.name == "web"
    assert len(fake.calls_of("Create")) == 3


async def test_refusals_past_the_budget_surface_as_too_many_requests(fake: FakeApiServer) -> None:
    fake.fail("Get", grpc.StatusCode.RESOURCE_EXHAUSTED, TOO_MANY, times=1_000_000,
              reason=errors.TooManyRequests.reason)
    async with Client(fake.address, timeout_s=0.5, retry_policy=FAST_RETRIES) as client:
        with pytest.raises(errors.TooManyRequests, match="Too many requests"):
            await client.get("pods", "web", "default")
    assert len(fake.calls_of("Get")) > 1


async def test_a_retry_cut_by_the_deadline_reports_the_servers_last_refusal(fake: FakeApiServer) -> None:
    # Each answer takes 0.2 s, so the third attempt starts with less time left than an answer takes:
    # the deadline ends it, and the caller hears the refusal the server kept giving, not "no answer".
    fake.hangs["Get"] = 0.2
    fake.fail("Get", grpc.StatusCode.RESOURCE_EXHAUSTED, TOO_MANY, times=1_000_000,
              reason=errors.TooManyRequests.reason)
    async with Client(fake.address, timeout_s=0.5, retry_policy=FAST_RETRIES) as client:
        with pytest.raises(errors.TooManyRequests, match="Too many requests"):
            await client.get("pods", "web", "default")
    assert len(fake.calls_of("Get")) == 3


async def test_resource_exhausted_without_the_reason_is_final(fake: FakeApiServer, client: Client) -> None:
    # gRPC itself says RESOURCE_EXHAUSTED of a message too large: another attempt cannot help.
    fake.fail("Create", grpc.StatusCode.RESOURCE_EXHAUSTED, "message larger than max", times=5)
    with pytest.raises(errors.ApiError):
        await client.create(pod("web"))
    assert len(fake.calls_of("Create")) == 1


async def test_the_server_timeout_is_an_answer_not_silence(fake: FakeApiServer, client: Client) -> None:
    fake.fail("Get", grpc.StatusCode.DEADLINE_EXCEEDED, SERVER_TIMEOUT, times=5, reason=errors.Timeout.reason)
    with pytest.raises(errors.Timeout, match="request timeout"):
        await client.get("pods", "web", "default")
    assert len(fake.calls_of("Get")) == 1


async def test_a_server_timeout_does_not_fail_over_to_the_next_server() -> None:
    async with running_fake() as first, running_fake() as second:
        first.fail("Get", grpc.StatusCode.DEADLINE_EXCEEDED, SERVER_TIMEOUT, reason=errors.Timeout.reason)
        await first.put(pod("web"))
        async with Client([first.address, second.address], retry_policy=FAST_RETRIES) as client:
            with pytest.raises(errors.Timeout):
                await client.get("pods", "web", "default")
            assert client.current_server == first.address
            assert (await client.get("pods", "web", "default")).metadata.name == "web"
        assert second.calls_of("Get") == []
