"""`podsched chaos kill-leader` as a process against a real `podsched apiserver`: it reads the Lease and
watches it change hands through the real API. The Docker engine is the stand-in of
tests/unit/fake_docker_engine.py (no Docker engine runs on CI): when it is told to kill the leader's
container, the test plays the standby and takes the Lease through the API, as a real replica would."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from cluster.api import objects_pb2
from cluster.cli.process import ApiServerProcess, cli_env
from cluster.client import Client, NotFound
from tests.integration.helpers import REPO, CliResult, run_cli_async
from tests.unit.fake_docker_engine import FakeContainer, FakeDockerEngine

NAMESPACE, NAME = "kube-system", "kube-scheduler"
IDS = ["3f2a9c1b7d4e" + "a" * 52, "9b8c7d6e5f40" + "b" * 52, "5e6f7a8b9c0d" + "c" * 52]
IDENTITIES = [f"{cid[:12]}_6c1d2e3f-0000-4000-8000-00000000000{i}" for i, cid in enumerate(IDS)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    process = ApiServerProcess(["--data-dir", str(tmp_path_factory.mktemp("chaos-cli"))])
    process.start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture
async def client(server: ApiServerProcess) -> AsyncIterator[Client]:
    async with Client(server.address, timeout_s=30.0) as api:
        yield api


@pytest.fixture
async def fresh_lease(client: Client) -> AsyncIterator[None]:
    """No Lease at the start of a test (the module's server is shared)."""
    await _delete_lease(client)
    yield
    await _delete_lease(client)


async def _delete_lease(client: Client) -> None:
    with contextlib.suppress(NotFound):
        await client.delete("leases", NAME, NAMESPACE)


def replicas() -> list[FakeContainer]:
    return [FakeContainer(container_id, f"podsched-scheduler-{i + 1}", container_id[:12])
            for i, container_id in enumerate(IDS)]


async def hold(client: Client, holder: str) -> objects_pb2.Lease:
    """Set the Lease's holder as an elector would: create it, or update it at the version read."""
    try:
        lease = await client.get("leases", NAME, NAMESPACE)
    except NotFound:
        lease = objects_pb2.Lease(api_version="coordination.k8s.io/v1", kind="Lease")
        lease.metadata.namespace, lease.metadata.name = NAMESPACE, NAME
        lease.spec.holder_identity, lease.spec.lease_duration_seconds = holder, 15
        return await client.create(lease)
    assert isinstance(lease, objects_pb2.Lease)
    lease.spec.holder_identity = holder
    return await client.update(lease)


def standby_takes_over(
    client: Client, *, on: str = "SIGKILL", release_first: bool = False
) -> Callable[[FakeContainer, str], Awaitable[None]]:
    """An on_kill hook: the next replica (in IDENTITIES order) takes the Lease when the leader gets ``on``."""

    async def hook(container: FakeContainer, sent: str) -> None:
        if sent != on:
            return
        container.running = True  # restart: always brings it back as a standby
        if release_first:
            await hold(client, "")
        following = IDENTITIES[(IDS.index(container.id) + 1) % len(IDS)]
        await hold(client, following)

    return hook


async def kill_leader(server: ApiServerProcess, socket_path: str, *args: str) -> CliResult:
    return await run_cli_async(server.address, "chaos", "kill-leader", "--docker-socket", socket_path, *args)


def rounds(stdout: str) -> list[str]:
    return [line.split(" chaos: ", 1)[1] for line in stdout.splitlines() if " chaos: round " in line]


async def test_kill_leader_rounds_against_a_real_api_server(
    server: ApiServerProcess, client: Client, fresh_lease: None, tmp_path: Path
) -> None:
    await hold(client, IDENTITIES[0])
    socket_path = str(tmp_path / "docker.sock")
    async with FakeDockerEngine(socket_path, replicas()) as engine:
        engine.on_kill = standby_takes_over(client)
        result = await kill_leader(server, socket_path, "--every", "200ms", "--count", "2")
    assert result.code == 0, result.stderr
    assert engine.kills() == [(IDS[0], "SIGKILL"), (IDS[1], "SIGKILL")]
    lines = rounds(result.stdout)
    assert len(lines) == 2, result.stdout
    assert lines[0].startswith(
        f"round 1: SIGKILL to 3f2a9c1b7d4e (podsched-scheduler-1), leader {IDENTITIES[0]}; "
        "the lease changed hands after "
    )
    assert lines[0].endswith(f"s (new holder {IDENTITIES[1]})")
    assert lines[1].startswith(
        f"round 2: SIGKILL to 9b8c7d6e5f40 (podsched-scheduler-2), leader {IDENTITIES[1]}; "
    )
    assert lines[1].endswith(f"(new holder {IDENTITIES[2]})")
    assert "done: 2 of 2 rounds signalled a leader and saw a new one; handover min " in result.stdout
    lease = await client.get("leases", NAME, NAMESPACE)
    assert isinstance(lease, objects_pb2.Lease) and lease.spec.holder_identity == IDENTITIES[2]


async def test_a_graceful_release_then_takeover_is_one_handover(
    server: ApiServerProcess, client: Client, fresh_lease: None, tmp_path: Path
) -> None:
    await hold(client, IDENTITIES[1])
    socket_path = str(tmp_path / "docker.sock")
    async with FakeDockerEngine(socket_path, replicas()) as engine:
        engine.on_kill = standby_takes_over(client, on="SIGTERM", release_first=True)
        result = await kill_leader(server, socket_path, "--every", "0.1s", "--count", "1", "--signal", "TERM")
    assert result.code == 0, result.stderr
    assert engine.kills() == [(IDS[1], "SIGTERM")]
    (line,) = rounds(result.stdout)
    assert line.endswith(f"(new holder {IDENTITIES[2]})")


async def test_stop_thaws_the_old_leader_after_the_handover(
    server: ApiServerProcess, client: Client, fresh_lease: None, tmp_path: Path
) -> None:
    await hold(client, IDENTITIES[0])
    socket_path = str(tmp_path / "docker.sock")
    async with FakeDockerEngine(socket_path, replicas()) as engine:
        engine.on_kill = standby_takes_over(client, on="SIGSTOP")
        result = await kill_leader(server, socket_path, "--every", "0.1s", "--count", "1", "--signal", "STOP")
    assert result.code == 0, result.stderr
    assert engine.kills() == [(IDS[0], "SIGSTOP"), (IDS[0], "SIGCONT")]
    (line,) = rounds(result.stdout)
    assert line.startswith("round 1: SIGSTOP to 3f2a9c1b7d4e")


async def test_rounds_without_a_lease_or_holder_are_skipped_and_fail_the_run(
    server: ApiServerProcess, client: Client, fresh_lease: None, tmp_path: Path
) -> None:
    socket_path = str(tmp_path / "docker.sock")
    async with FakeDockerEngine(socket_path, replicas()) as engine:
        no_lease = await kill_leader(server, socket_path, "--every", "100ms", "--count", "1")
        await hold(client, "")
        no_holder = await kill_leader(server, socket_path, "--every", "100ms", "--count", "1")
    assert engine.kills() == []
    assert no_lease.code == 1
    assert rounds(no_lease.stdout) == [
        "round 1: skipped: there is no lease kube-system/kube-scheduler yet: no scheduler has led"
    ]
    assert no_holder.code == 1
    assert rounds(no_holder.stdout) == [
        "round 1: skipped: the lease kube-system/kube-scheduler has no holder (released, or not taken yet)"
    ]
    assert "done: 0 of 1 rounds signalled a leader and saw a new one" in no_holder.stdout


async def test_sigterm_stops_the_command_and_thaws_a_stopped_leader(
    server: ApiServerProcess, client: Client, fresh_lease: None, tmp_path: Path
) -> None:
    await hold(client, IDENTITIES[0])
    socket_path = str(tmp_path / "docker.sock")
    stopped = asyncio.Event()

    async def nobody_takes_over(container: FakeContainer, sent: str) -> None:
        if sent == "SIGSTOP":
            stopped.set()

    async with FakeDockerEngine(socket_path, replicas()) as engine:
        engine.on_kill = nobody_takes_over
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "cluster.cli", "chaos", "kill-leader", "--every", "100ms",
            "--signal", "STOP", "--docker-socket", socket_path,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env=cli_env(server.address), cwd=REPO,
        )
        try:
            await asyncio.wait_for(stopped.wait(), 30)
            process.send_signal(signal.SIGTERM)
            stdout, stderr = await asyncio.wait_for(process.communicate(), 30)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    assert process.returncode == 0, stderr.decode()
    assert engine.kills() == [(IDS[0], "SIGSTOP"), (IDS[0], "SIGCONT")]
    assert "stopped: 0 of 0 rounds signalled a leader" in stdout.decode()
