"""`podsched scheduler` stopped by SIGTERM, as a supervisor or the README's `kill %1 %2` stops it: the
leader hands the lease over (no holder) and exits 0, a standby leaves the lease alone and exits 0, and a
scheduler whose API server has gone first exits 0 too, without waiting for a server that refuses every
connection. The timeouts are generous: the tests assert how the process ends, not how fast."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.api import objects_pb2
from cluster.api.kinds import LEASE_CANDIDATE
from cluster.client import Client, NotFound
from cluster.launcher.process import ApiServerProcess, SchedulerProcess, cli_env
from tests.integration.conftest import own_apiserver
from tests.integration.test_scheduler import REPO, eventually
from tests.integration.test_scheduler_ha import holder

#: Longer than a clean stop takes with room to spare, shorter than any retry against a server that is gone.
EXIT_TIMEOUT_S = 5.0


def replica(server: str) -> SchedulerProcess:
    """A scheduler with the default leader election timings (a renew deadline of 10s, as in the README)."""
    return SchedulerProcess(["--server", server, "--metrics-addr", "127.0.0.1:0"], env=cli_env(""), cwd=REPO)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ApiServerProcess]:
    with own_apiserver("sqlite", tmp_path) as started:
        yield started


async def _lease(client: Client) -> objects_pb2.Lease:
    lease = await client.get("leases", "kube-scheduler", "kube-system")
    assert isinstance(lease, objects_pb2.Lease)
    return lease


async def _leading(client: Client, process: SchedulerProcess) -> None:
    async def leads() -> bool | None:
        return await holder(client) == process.identity or None

    await eventually(leads, f"{process.identity} leading", within=15)


async def _candidate(client: Client, process: SchedulerProcess) -> objects_pb2.LeaseCandidate | None:
    try:
        found = await client.get(LEASE_CANDIDATE, process.identity, "kube-system")
    except NotFound:
        return None
    assert isinstance(found, objects_pb2.LeaseCandidate)
    return found


def _terminate(process: SchedulerProcess) -> int:
    assert process.process is not None
    process.process.send_signal(signal.SIGTERM)
    return process.process.wait(EXIT_TIMEOUT_S)


async def test_the_leader_releases_the_lease_and_exits_0(server: ApiServerProcess) -> None:
    leader = replica(server.address)
    try:
        leader.start()
        async with Client(server.address) as client:
            await _leading(client, leader)
            assert _terminate(leader) == 0, leader.log()
            lease = await _lease(client)
    finally:
        leader.stop()
    assert lease.spec.holder_identity == ""
    assert lease.spec.lease_duration_seconds == 1
    assert "podsched scheduler: released the lease kube-system/kube-scheduler" in leader.log()


async def test_a_standby_leaves_the_lease_to_the_leader_and_exits_0(server: ApiServerProcess) -> None:
    leader, standby = replica(server.address), replica(server.address)
    try:
        leader.start()
        async with Client(server.address) as client:
            await _leading(client, leader)
            standby.start()

            async def standing_by() -> objects_pb2.LeaseCandidate | None:
                return await _candidate(client, standby)

            await eventually(standing_by, "the standby's LeaseCandidate", within=15)
            assert _terminate(standby) == 0, standby.log()
            assert await holder(client) == leader.identity
            assert await _candidate(client, standby) is None
    finally:
        standby.stop()
        leader.stop()
    assert "released the lease" not in standby.log()
    assert "podsched scheduler stopped" in standby.log()


async def test_a_leader_whose_api_server_is_gone_exits_0(server: ApiServerProcess) -> None:
    # `kill %1 %2`: the API server may be gone before the scheduler tries to hand the lease over.
    leader = replica(server.address)
    try:
        leader.start()
        async with Client(server.address) as client:
            await _leading(client, leader)
        server.stop()
        assert _terminate(leader) == 0, leader.log()
    finally:
        leader.stop()
    assert "failed to release lease kube-system/kube-scheduler" in leader.log()
    assert "podsched scheduler stopped" in leader.log()
