"""A real API server on etcd commits concurrent creates and Binds together (store.groupcommit): fewer store
write requests than writes, and every client answered as before. (On the SQLite log a write is done long
before the next request has been decoded and admitted, so little overlaps there; the contract suite shows
the batching on both stores.)"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from cluster.api import errors
from cluster.client.client import Client
from cluster.launcher.process import ApiServerProcess
from tests import builders
from tests.integration.conftest import own_apiserver

PODS = 32


pytestmark = pytest.mark.etcd


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ApiServerProcess]:
    extra_args = ["--controllers", "none", "--metrics-addr", "127.0.0.1:0"]
    with own_apiserver("etcd", tmp_path, extra_args=extra_args) as process:
        yield process


def store_write_requests(server: ApiServerProcess) -> float:
    status, text = server.get("/metrics")
    assert status == 200
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "apiserver_storage_write_requests_total"
    )


async def test_concurrent_creates_and_binds_take_fewer_store_writes_with_unchanged_answers(
    server: ApiServerProcess,
) -> None:
    names = [f"grouped-{index:02d}" for index in range(PODS)]
    async with Client(server.address, timeout_s=60.0) as api:
        await api.create(builders.node("node-a", allocatable=builders.ROOMY))
        before = store_write_requests(server)

        created = await asyncio.gather(*(api.create(builders.pod(name, image="pause")) for name in names))
        bound = await asyncio.gather(*(api.bind("default", name, "node-a") for name in names))

        writes = store_write_requests(server) - before
        assert writes <= PODS, f"{writes:.0f} store write requests for {PODS} creates and {PODS} binds"
        assert [pod.metadata.name for pod in created] == names
        assert all(pod.spec.node_name == "node-a" for pod in bound)
        for pod in bound:
            stored = await api.get("pods", pod.metadata.name, "default")
            assert stored.metadata.resource_version == pod.metadata.resource_version
        with pytest.raises(errors.Conflict):  # as a lone Bind of a bound pod is answered
            await api.bind("default", names[0], "node-a")
