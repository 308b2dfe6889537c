"""`podsched chaos kill-leader` as a process against a real `podsched apiserver`: it reads the Lease and
watches it change hands through the real API. The Docker engine is the stand-in of
tests/unit/fake_docker_engine.py (no Docker engine runs on CI). In the first tests the test plays the
standby when the engine is told to kill the leader's container, taking the Lease through the API; in the
last ones the "containers" are three real scheduler replicas, each with a hostname of its own (a UTS
namespace), electing a leader for real, and a kill the engine accepts signals the real process."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from cluster.api import objects_pb2
from cluster.client import Client, NotFound
from cluster.launcher.process import ApiServerProcess, SchedulerProcess, cli_env
from cluster.launcher.supervisor import Supervisor
from tests.integration.conftest import own_apiserver
from tests.integration.helpers import REPO, CliResult, run_cli_async
from tests.unit.fake_docker_engine import FakeContainer, FakeDockerEngine

NAMESPACE, NAME = "kube-system", "kube-scheduler"
IDS = ["3f2a9c1b7d4e" + "a" * 52, "9b8c7d6e5f40" + "b" * 52, "5e6f7a8b9c0d" + "c" * 52]
IDENTITIES = [f"{cid[:12]}_6c1d2e3f-0000-4000-8000-00000000000{i}" for i, cid in enumerate(IDS)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    with own_apiserver("sqlite", tmp_path_factory.mktemp("chaos-cli")) as process:
        yield process


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



# ------------------------------------------------------------------ against real scheduler replicas

#: Short leader-election timings, so that a failover takes seconds (lease 3 s, renew 2 s, retry 0.5 s).
LEASE_S, RENEW_S, RETRY_S = 3.0, 2.0, 0.5
#: The failover bound after a SIGKILL: lease + 1.2 retry periods + 1 s.
KILL_FAILOVER_BOUND_S = LEASE_S + 1.2 * RETRY_S + 1.0
_HANDOVER = re.compile(r"^round \d+: SIG(?P<signal>\w+) to \S+ \((?P<name>[^)]+)\), leader (?P<old>\S+); "
                       r"the lease changed hands after (?P<seconds>[\d.]+)s \(new holder (?P<new>\S+)\)$")


def uts_prefix() -> list[str]:
    """A command prefix that runs its command in a UTS namespace of its own, so that each replica has a
    hostname of its own as in a container (root: `unshare --uts`; otherwise through a user namespace).
    Without one every replica would share this host's name, and no hostname could name one of them."""
    for prefix in (["unshare", "--uts"], ["unshare", "--user", "--map-root-user", "--uts"]):
        try:
            probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0:
            return prefix
    pytest.skip("this kernel lets no process have a hostname of its own (unshare --uts is refused)")


class Replicas:
    """Three real `podsched scheduler` replicas, each under its own hostname (sched-1..3) as in a
    container, kept running by the Supervisor as `restart: always` would; ``containers`` is how the
    stand-in engine sees them, and a kill it accepts signals the real process."""

    def __init__(self, server: ApiServerProcess) -> None:
        prefix = uts_prefix()
        self.processes: dict[str, SchedulerProcess] = {}
        self.containers: list[FakeContainer] = []
        for n in (1, 2, 3):
            hostname = f"sched-{n}"
            process = SchedulerProcess([
                "--server", server.address, "--leader-elect=true",
                f"--leader-elect-lease-duration={LEASE_S:g}s", f"--leader-elect-renew-deadline={RENEW_S:g}s",
                f"--leader-elect-retry-period={RETRY_S:g}s", "--metrics-addr", "127.0.0.1:0",
            ], cwd=REPO)
            # The shell names the namespace's host, then becomes the scheduler (the same pid).
            process.command = [*prefix, "sh", "-c", 'hostname "$0" && exec "$@"', hostname, *process.command]
            self.processes[hostname] = process
            self.containers.append(FakeContainer(f"{n:012x}" + "0" * 52, f"compose-scheduler-{n}", hostname))
        self.supervisor = Supervisor(on_started=self._started, report=lambda line: None)

    def _started(self, hostname: str, child: object) -> None:
        next(c for c in self.containers if c.hostname == hostname).running = True

    async def signal_process(self, container: FakeContainer, sent: str) -> None:
        os.kill(self.processes[container.hostname].pid, getattr(signal, sent))

    def identities(self) -> set[str]:
        """Every identity any replica has had (each start draws a new uuid)."""
        return {line.split("; identity ", 1)[1].rstrip(")\n") for process in self.processes.values()
                for line in process.lines if "; identity " in line}

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Replicas]:
        async with self.supervisor:
            for hostname, process in self.processes.items():
                self.supervisor.add(hostname, process)
            await self.supervisor.start_all(list(self.processes))
            supervising = asyncio.create_task(self.supervisor.supervise())
            try:
                yield self
            finally:
                supervising.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await supervising


@pytest.mark.timing
async def test_kill_leader_against_real_replicas_fails_over_within_the_bound(
    server: ApiServerProcess, fresh_lease: None, tmp_path: Path
) -> None:
    socket_path = str(tmp_path / "docker.sock")
    async with (
        Replicas(server).running() as replicas,
        FakeDockerEngine(socket_path, replicas.containers) as engine,
    ):
        engine.on_kill = replicas.signal_process
        result = await kill_leader(server, socket_path, "--every", "1s", "--count", "2")
        identities = replicas.identities()
    assert result.code == 0, result.stdout + result.stderr
    handovers = [_HANDOVER.match(line) for line in rounds(result.stdout)]
    assert len(handovers) == 2 and all(handovers), result.stdout
    killed = [container_id for container_id, _ in engine.kills()]
    for match, container_id in zip(handovers, killed, strict=True):
        assert match is not None
        container = next(c for c in replicas.containers if c.id == container_id)
        # The container signalled is the one whose hostname begins the leader's identity.
        assert match["old"].startswith(f"{container.hostname}_") and match["name"] == container.name
        assert {match["old"], match["new"]} <= identities and match["new"] != match["old"]
        assert float(match["seconds"]) <= KILL_FAILOVER_BOUND_S, result.stdout
    assert {signal_sent for _, signal_sent in engine.kills()} == {"SIGKILL"}


@pytest.mark.timing
async def test_a_stopped_leader_is_thawed_and_steps_down(
    server: ApiServerProcess, fresh_lease: None, tmp_path: Path
) -> None:
    socket_path = str(tmp_path / "docker.sock")
    async with (
        Replicas(server).running() as replicas,
        FakeDockerEngine(socket_path, replicas.containers) as engine,
    ):
        engine.on_kill = replicas.signal_process
        result = await kill_leader(server, socket_path, "--every", "1s", "--count", "1", "--signal", "STOP")
        assert result.code == 0, result.stdout + result.stderr
        ((container_id, _), (thawed_id, sent)) = engine.kills()
        assert (thawed_id, sent) == (container_id, "SIGCONT")
        frozen = next(c for c in replicas.containers if c.id == container_id)
        process = replicas.processes[frozen.hostname]
        # Thawed, the deposed leader finds its lease gone and exits 1 (a supervisor restarts it).
        deadline = asyncio.get_running_loop().time() + 10
        while not any("leader election lost" in line for line in process.lines):
            assert asyncio.get_running_loop().time() < deadline, process.log()
            await asyncio.sleep(0.1)
    (line,) = rounds(result.stdout)
    match = _HANDOVER.match(line)
    assert match is not None and match["signal"] == "STOP", line
