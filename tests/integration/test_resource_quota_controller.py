"""The resourcequota controller inside a real `podsched apiserver` process, on each store: usage that a
crash left too high (written here as an admin's UpdateStatus, as a server that died between a quota's
charge and its pod's write would leave it) is recounted from the pods within the (shortened) sync period,
and the pod it wrongly kept out is then admitted; usage too low is raised the same way."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.api import errors, objects_pb2
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess
from tests.builders import IMAGE, pod
from tests.integration.conftest import own_apiserver
from tests.integration.test_scheduler import eventually

SYNC_PERIOD = "1s"
REPAIR_WITHIN_S = 30.0


@pytest.fixture
def quota_apiserver(backend: str, tmp_path: Path) -> Iterator[ApiServerProcess]:
    """An API server with the default controllers and a short quota sync period, on a store of its own."""
    with own_apiserver(backend, tmp_path, name_prefix="quotactl",
                       extra_args=["--resource-quota-sync-period", SYNC_PERIOD]) as server:
        yield server


def quota(name: str, namespace: str, pods: int) -> objects_pb2.ResourceQuota:
    made = objects_pb2.ResourceQuota(metadata=objects_pb2.ObjectMeta(name=name, namespace=namespace))
    made.spec.hard["pods"] = str(pods)
    return made


async def write_used(client: Client, namespace: str, name: str, used: int) -> None:
    stored = await client.get("ResourceQuota", name, namespace)
    assert isinstance(stored, objects_pb2.ResourceQuota)
    stored.status.used["pods"] = str(used)
    await client.update_status(stored)


async def used_becomes(client: Client, namespace: str, name: str, expected: str) -> bool | None:
    stored = await client.get("ResourceQuota", name, namespace)
    return True if stored.status.used["pods"] == expected else None  # type: ignore[attr-defined]


async def test_usage_left_too_high_is_recounted_and_admits_again(
    quota_apiserver: ApiServerProcess, namespace: str
) -> None:
    async with Client(quota_apiserver.address, timeout_s=30.0) as client:
        await client.create(quota("pods", namespace, 3))
        for name in ("a", "b"):
            await client.create(pod(name, namespace, image=IMAGE))
        await write_used(client, namespace, "pods", 3)  # one create's charge without its pod
        with pytest.raises(errors.Forbidden, match="exceeded quota: pods, requested: pods=1, used: pods=3"):
            await client.create(pod("c", namespace, image=IMAGE))

        await eventually(lambda: used_becomes(client, namespace, "pods", "2"), "used recounted to 2",
                         within=REPAIR_WITHIN_S)
        await client.create(pod("c", namespace, image=IMAGE))
        assert (await client.get("ResourceQuota", "pods", namespace)).status.used["pods"] == "3"  # type: ignore[attr-defined]
        assert "resource quota controller synced" in quota_apiserver.log()


async def test_usage_left_too_low_is_recounted(quota_apiserver: ApiServerProcess, namespace: str) -> None:
    async with Client(quota_apiserver.address, timeout_s=30.0) as client:
        await client.create(quota("pods", namespace, 3))
        for name in ("a", "b"):
            await client.create(pod(name, namespace, image=IMAGE))
        await write_used(client, namespace, "pods", 0)
        await eventually(lambda: used_becomes(client, namespace, "pods", "2"), "used recounted to 2",
                         within=REPAIR_WITHIN_S)
