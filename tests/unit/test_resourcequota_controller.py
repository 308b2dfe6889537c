"""The ResourceQuotaController against a real in-process API server on a temporary SQLite store, through
the real client, with no periodic resync in reach: usage left wrong (written here with UpdateStatus, as a
crash would leave it) is recounted as soon as it is written; a pod the quota counts that finishes or goes
is given back exactly once, although the server releases it too; a change of the quota's spec recounts it;
a pod outside the quota's scope is never counted."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cluster.api import errors, objects_pb2
from cluster.api.kinds import RESOURCE_QUOTA
from cluster.client import Client
from cluster.controllers import ResourceQuotaController
from tests.builders import container, pod, resource_quota
from tests.unit.test_apiserver_server import Harness

NS = "team"
SETTLE_TIMEOUT_S = 10.0
#: Far beyond any test: only events make the controller recount.
NO_RESYNC_S = 3600.0
#: How often, and how far apart, `stays` reads the usage again.
STAYS_CHECKS = 5
STAYS_INTERVAL_S = 0.05


def make_pod(name: str, priority_class: str = "") -> objects_pb2.Pod:
    app = container(name="app", image="nginx:1.25")
    return pod(name, NS, spec={"containers": [app]}, priority_class=priority_class)


async def used(client: Client) -> str:
    quota = await client.get(RESOURCE_QUOTA, "q", NS)
    return quota.status.used["pods"]  # type: ignore[attr-defined]


async def write_used(client: Client, value: int) -> None:
    """Leave ``value`` as the quota's usage, as a crash would; the controller may write in between."""
    while True:
        quota = await client.get(RESOURCE_QUOTA, "q", NS)
        quota.status.used["pods"] = str(value)  # type: ignore[attr-defined]
        try:
            await client.update_status(quota)
            return
        except errors.Conflict:
            continue


async def stays(client: Client, expected: str) -> None:
    """``used`` is ``expected`` now and after the controller had time to act on any late event."""
    await becomes(client, expected)
    for _ in range(STAYS_CHECKS):
        await asyncio.sleep(STAYS_INTERVAL_S)
        assert await used(client) == expected


async def becomes(client: Client, expected: str) -> None:
    last = None
    try:
        async with asyncio.timeout(SETTLE_TIMEOUT_S):
            while True:
                last = await used(client)
                if last == expected:
                    return
                await asyncio.sleep(0.01)
    except TimeoutError:
        raise AssertionError(f"used is {last}, not {expected}") from None


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    async with Harness(tmp_path) as api:
        assert api.server is not None
        async with Client(api.server.address) as client:
            for name, value in (("low", 10), ("high", 20)):
                await client.create(objects_pb2.PriorityClass(metadata=objects_pb2.ObjectMeta(name=name),
                                                              value=value))
            controller = ResourceQuotaController(client, sync_period_s=NO_RESYNC_S, settle_s=0.0)
            running = asyncio.create_task(controller.run(), name="test-resourcequota-controller")
            try:
                await asyncio.wait_for(controller.wait_synced(), SETTLE_TIMEOUT_S)
                yield client
            finally:
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running


async def test_usage_written_too_high_is_lowered(client: Client) -> None:
    await client.create(resource_quota(namespace=NS, hard={"pods": "5"}))
    for name in ("a", "b"):
        await client.create(make_pod(name))
    await write_used(client, 4)
    await stays(client, "2")


async def test_usage_written_too_low_is_raised(client: Client) -> None:
    await client.create(resource_quota(namespace=NS, hard={"pods": "5"}))
    for name in ("a", "b"):
        await client.create(make_pod(name))
    await write_used(client, 0)
    await stays(client, "2")


@pytest.mark.parametrize("attempt", range(5))
async def test_a_pod_that_finishes_is_given_back_once(client: Client, attempt: int) -> None:
    # The server releases the finished pod's usage and the controller recounts it: whichever lands last,
    # the pod is taken off once.
    await client.create(resource_quota(namespace=NS, hard={"pods": "5"}))
    done = await client.create(make_pod("done"))
    await client.create(make_pod("busy"))
    assert isinstance(done, objects_pb2.Pod)
    done.status.phase = "Failed"
    await client.update_status(done)
    await stays(client, "1")


async def test_a_pod_that_goes_is_given_back_once(client: Client) -> None:
    await client.create(resource_quota(namespace=NS, hard={"pods": "5"}))
    for name in ("a", "b"):
        await client.create(make_pod(name))
    await client.delete("Pod", "a", NS)
    await stays(client, "1")


async def test_a_spec_change_recounts_and_a_pod_out_of_scope_is_not_counted(client: Client) -> None:
    await client.create(resource_quota(namespace=NS, hard={"pods": "5"}, priority_classes=["high"]))
    await client.create(make_pod("h", "high"))
    await client.create(make_pod("l", "low"))
    await stays(client, "1")
    quota = await client.get(RESOURCE_QUOTA, "q", NS)
    quota.spec.hard["pods"] = "6"  # type: ignore[attr-defined]
    await client.update(quota)
    await stays(client, "1")
    stored = await client.get(RESOURCE_QUOTA, "q", NS)
    assert dict(stored.status.hard) == {"pods": "6"}  # type: ignore[attr-defined]
