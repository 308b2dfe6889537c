"""`podsched chaos kill-leader`: the Docker Engine API client against a stand-in engine on a unix socket
(tests/unit/fake_docker_engine.py), the holder -> container mapping, a whole round against an in-memory
Lease, and the command line's refusals (exit 2) and start errors (exit 1)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cluster.api import errors, objects_pb2
from cluster.chaos import (
    ContainerNotFound,
    ContainerNotRunning,
    DockerEngine,
    DockerError,
    DockerUnavailable,
    LeaderKiller,
    LeaseRef,
    Skipped,
    holder_hostname,
    signal_name,
)
from cluster.cli import chaos as chaos_cli
from cluster.cli.main import main
from cluster.client import WatchEvent
from tests.unit.fake_docker_engine import FakeContainer, FakeDockerEngine

LEASE = LeaseRef("kube-system", "kube-scheduler")
LEADER_ID = "3f2a9c1b7d4e" + "a" * 52
STANDBY_ID = "9b8c7d6e5f40" + "b" * 52
LEADER = "3f2a9c1b7d4e_6c1d2e3f-0000-4000-8000-000000000001"
STANDBY = "9b8c7d6e5f40_6c1d2e3f-0000-4000-8000-000000000002"


class FakeLeaseApi:
    """The Lease as the API serves it, in memory: get, and a watch from a resourceVersion that delivers
    every later write in order (as the real server does)."""

    def __init__(self) -> None:
        self.history: list[objects_pb2.Lease] = []
        self.watches: list[tuple[str, str, str]] = []
        #: Watches still to break (errors.Unavailable) before delivering anything, as a dying server's.
        self.broken_watches = 0
        self._changed = asyncio.Condition()

    async def write(self, holder: str) -> None:
        lease = objects_pb2.Lease(api_version="coordination.k8s.io/v1", kind="Lease")
        lease.metadata.namespace, lease.metadata.name = LEASE.namespace, LEASE.name
        lease.metadata.resource_version = str(len(self.history) + 100)
        lease.spec.holder_identity = holder
        lease.spec.lease_duration_seconds = 15
        async with self._changed:
            self.history.append(lease)
            self._changed.notify_all()

    async def get(self, kind: str, name: str, namespace: str = "") -> objects_pb2.Lease:
        assert (kind, namespace, name) == ("leases", LEASE.namespace, LEASE.name)
        if not self.history:
            raise errors.NotFound(f'leases.coordination.k8s.io "{name}" not found')
        return self.history[-1]

    async def watch(
        self, kind: str, namespace: str = "", *, resource_version: str = "", field_selector: str = ""
    ) -> AsyncIterator[WatchEvent]:
        self.watches.append((kind, namespace, field_selector))
        if self.broken_watches:
            self.broken_watches -= 1
            raise errors.Unavailable("the API server closed the watch")
        delivered = int(resource_version)
        while True:
            async with self._changed:
                while self._newest() <= delivered:
                    await self._changed.wait()
                fresh = [lease for lease in self.history if int(lease.metadata.resource_version) > delivered]
            for lease in fresh:
                delivered = int(lease.metadata.resource_version)
                yield WatchEvent("MODIFIED", lease)

    def _newest(self) -> int:
        return int(self.history[-1].metadata.resource_version) if self.history else 0


@pytest.fixture
def socket_path(tmp_path: Path) -> str:
    return str(tmp_path / "docker.sock")


def containers() -> list[FakeContainer]:
    return [
        FakeContainer(LEADER_ID, "podsched-scheduler-1", LEADER_ID[:12]),
        FakeContainer(STANDBY_ID, "podsched-scheduler-2", STANDBY_ID[:12]),
        FakeContainer("c" * 64, "podsched-apiserver-1-1", "c" * 12),
    ]


def killer(api: FakeLeaseApi, socket_path: str, signal: str = "KILL", timeout_s: float = 5.0) -> LeaderKiller:
    docker = DockerEngine(socket_path)
    return LeaderKiller(api, docker, lease=LEASE, signal=signal, handover_timeout_s=timeout_s)


# ------------------------------------------------------------------------------ Docker Engine API client


async def test_ping_and_inspect(socket_path: str) -> None:
    async with FakeDockerEngine(socket_path, containers()):
        docker = DockerEngine(socket_path)
        await docker.ping()
        found = await docker.inspect("podsched-scheduler-2")
    assert (found.id, found.name, found.hostname, found.short_id) == (
        STANDBY_ID, "podsched-scheduler-2", STANDBY_ID[:12], STANDBY_ID[:12]
    )


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_kill_sends_the_signal_to_the_container(socket_path: str, chunked: bool) -> None:
    async with FakeDockerEngine(socket_path, containers(), chunked=chunked) as engine:
        await DockerEngine(socket_path).kill(LEADER_ID, "SIGKILL")
    assert engine.requests == [("POST", f"/containers/{LEADER_ID}/kill?signal=SIGKILL")]
    assert engine.containers[0].signals == ["SIGKILL"]


async def test_kill_of_an_unknown_container_is_a_clear_not_found(socket_path: str) -> None:
    async with FakeDockerEngine(socket_path, containers()):
        with pytest.raises(ContainerNotFound) as caught:
            await DockerEngine(socket_path).kill("deadbeef0000", "SIGKILL")
    assert str(caught.value) == "container deadbeef0000 is gone: No such container: deadbeef0000"


async def test_kill_of_a_stopped_container_is_not_running(socket_path: str) -> None:
    stopped = containers()
    stopped[0].running = False
    async with FakeDockerEngine(socket_path, stopped):
        with pytest.raises(ContainerNotRunning, match=r"container 3f2a9c1b7d4e is not running: Container 3f"):
            await DockerEngine(socket_path).kill(LEADER_ID, "SIGTERM")


async def test_a_missing_socket_says_to_mount_it(socket_path: str) -> None:
    with pytest.raises(DockerUnavailable) as caught:
        await DockerEngine(socket_path).ping()
    assert str(caught.value).startswith(f"no Docker socket at {socket_path}: mount the engine's socket")
    assert "--docker-socket" in str(caught.value)


async def test_a_socket_nobody_listens_on(socket_path: str) -> None:
    with socket.socket(socket.AF_UNIX) as dead:
        dead.bind(socket_path)  # bound, never listening: connecting is refused
        with pytest.raises(DockerUnavailable, match=rf"nothing listens on {socket_path}: is the Docker"):
            await DockerEngine(socket_path).ping()


async def test_something_that_is_not_http(socket_path: str) -> None:
    async def babble(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"SSH-2.0-OpenSSH\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_unix_server(babble, socket_path)
    async with server:
        with pytest.raises(DockerError, match=r"GET /_ping: not an HTTP answer from the Docker socket: 'SSH"):
            await DockerEngine(socket_path).ping()


# -------------------------------------------------------------------------------- holder -> container


@pytest.mark.parametrize(
    ("identity", "hostname"),
    [
        (LEADER, "3f2a9c1b7d4e"),
        ("scheduler-2_6c1d2e3f-0000-4000-8000-000000000002", "scheduler-2"),
        ("my_host_6c1d2e3f-0000-4000-8000-000000000002", "my_host"),
        ("bare-host", "bare-host"),
        ("_6c1d2e3f", "_6c1d2e3f"),
    ],
    ids=["container-id", "compose-hostname", "underscored-host", "no-uuid", "empty-host"],
)
def test_holder_hostname(identity: str, hostname: str) -> None:
    assert holder_hostname(identity) == hostname


async def test_an_id_prefix_hostname_finds_its_container(socket_path: str) -> None:
    async with FakeDockerEngine(socket_path, containers()) as engine:
        found = await DockerEngine(socket_path).find_by_hostname(LEADER_ID[:12])
    assert found.id == LEADER_ID
    assert engine.requests == [("GET", f"/containers/{LEADER_ID[:12]}/json")]  # no listing needed


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_a_compose_hostname_is_found_among_running_containers(socket_path: str, chunked: bool) -> None:
    named = [*containers(), FakeContainer("d" * 64, "podsched-scheduler-3", "scheduler-3")]
    async with FakeDockerEngine(socket_path, named, chunked=chunked):
        found = await DockerEngine(socket_path).find_by_hostname("scheduler-3")
    assert (found.id, found.name) == ("d" * 64, "podsched-scheduler-3")


async def test_no_container_with_the_hostname(socket_path: str) -> None:
    async with FakeDockerEngine(socket_path, containers()):
        with pytest.raises(ContainerNotFound, match=r"^no running container has hostname 'elsewhere'$"):
            await DockerEngine(socket_path).find_by_hostname("elsewhere")


async def test_two_containers_with_one_hostname_is_an_error(socket_path: str) -> None:
    twins = [FakeContainer("e" * 64, "a-1", "twin"), FakeContainer("f" * 64, "b-1", "twin")]
    async with FakeDockerEngine(socket_path, twins):
        with pytest.raises(DockerError, match=r"several running containers have hostname 'twin': a-1 \(eeee"):
            await DockerEngine(socket_path).find_by_hostname("twin")


# ------------------------------------------------------------------------------------------ one round


async def test_a_round_kills_the_leader_and_times_the_handover(socket_path: str) -> None:
    api = FakeLeaseApi()
    await api.write(LEADER)
    await api.write(LEADER)  # a renewal: the same tenure

    async with FakeDockerEngine(socket_path, containers()) as engine:
        async def standby_takes_over(container: FakeContainer, signal: str) -> None:
            await api.write(STANDBY)

        engine.on_kill = standby_takes_over
        result = await killer(api, socket_path).kill_once()

    assert engine.kills() == [(LEADER_ID, "SIGKILL")]
    assert (result.container.id, result.holder, result.signal, result.new_holder) == (
        LEADER_ID, LEADER, "SIGKILL", STANDBY
    )
    assert result.handover_s is not None and 0 <= result.handover_s < 5
    assert result.resume_error is None
    assert api.watches == [("leases", "kube-system", "metadata.name=kube-scheduler")]
    line = chaos_cli.describe(result)
    assert line.startswith(f"SIGKILL to 3f2a9c1b7d4e (podsched-scheduler-1), leader {LEADER}; ")
    assert line.endswith(f"s (new holder {STANDBY})")


async def test_a_release_is_not_a_handover(socket_path: str) -> None:
    """SIGTERM: the leader releases the Lease (holder ""), then a standby takes it."""
    api = FakeLeaseApi()
    await api.write(LEADER)
    async with FakeDockerEngine(socket_path, containers()) as engine:
        async def release_then_take(container: FakeContainer, signal: str) -> None:
            await api.write("")
            await api.write(STANDBY)

        engine.on_kill = release_then_take
        result = await killer(api, socket_path, "TERM").kill_once()
    assert engine.kills() == [(LEADER_ID, "SIGTERM")]
    assert result.new_holder == STANDBY


async def test_a_broken_watch_is_read_again(socket_path: str) -> None:
    api = FakeLeaseApi()
    await api.write(LEADER)
    api.broken_watches = 1
    async with FakeDockerEngine(socket_path, containers()) as engine:
        async def standby_takes_over(container: FakeContainer, signal: str) -> None:
            await api.write(STANDBY)

        engine.on_kill = standby_takes_over
        result = await killer(api, socket_path).kill_once()
    assert result.new_holder == STANDBY
    assert len(api.watches) == 1  # the re-read already showed the new holder


async def test_stop_thaws_the_leader_once_the_lease_moved_on(socket_path: str) -> None:
    api = FakeLeaseApi()
    await api.write(LEADER)
    async with FakeDockerEngine(socket_path, containers()) as engine:
        async def standby_takes_over(container: FakeContainer, signal: str) -> None:
            if signal == "SIGSTOP":
                await api.write(STANDBY)

        engine.on_kill = standby_takes_over
        result = await killer(api, socket_path, "stop").kill_once()
    assert engine.kills() == [(LEADER_ID, "SIGSTOP"), (LEADER_ID, "SIGCONT")]
    assert (result.signal, result.new_holder, result.resume_error) == ("SIGSTOP", STANDBY, None)


async def test_no_handover_within_the_timeout_still_thaws(socket_path: str) -> None:
    api = FakeLeaseApi()
    await api.write(LEADER)
    async with FakeDockerEngine(socket_path, containers()) as engine:
        result = await killer(api, socket_path, "STOP", timeout_s=0.05).kill_once()
    assert (result.new_holder, result.handover_s) == (None, None)
    assert engine.kills() == [(LEADER_ID, "SIGSTOP"), (LEADER_ID, "SIGCONT")]
    assert "no new holder took the lease within the handover timeout" in chaos_cli.describe(result)


async def test_a_cancelled_stop_round_still_thaws(socket_path: str) -> None:
    api = FakeLeaseApi()
    await api.write(LEADER)
    stopped = asyncio.Event()
    async with FakeDockerEngine(socket_path, containers()) as engine:
        async def note_stop(container: FakeContainer, signal: str) -> None:
            stopped.set()

        engine.on_kill = note_stop
        round_task = asyncio.create_task(killer(api, socket_path, "STOP").kill_once())
        await stopped.wait()
        round_task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await round_task
    assert engine.kills() == [(LEADER_ID, "SIGSTOP"), (LEADER_ID, "SIGCONT")]


async def test_no_lease_skips_the_round(socket_path: str) -> None:
    async with FakeDockerEngine(socket_path, containers()) as engine:
        with pytest.raises(Skipped, match=r"^there is no lease kube-system/kube-scheduler yet: no scheduler"):
            await killer(FakeLeaseApi(), socket_path).kill_once()
    assert engine.requests == []


async def test_an_empty_holder_skips_the_round(socket_path: str) -> None:
    api = FakeLeaseApi()
    await api.write("")
    async with FakeDockerEngine(socket_path, containers()) as engine:
        with pytest.raises(Skipped, match=r"^the lease kube-system/kube-scheduler has no holder \(released"):
            await killer(api, socket_path).kill_once()
    assert engine.requests == []


async def test_a_leader_outside_docker_skips_the_round(socket_path: str) -> None:
    api = FakeLeaseApi()
    await api.write("laptop_6c1d2e3f-0000-4000-8000-000000000009")
    async with FakeDockerEngine(socket_path, containers()) as engine:
        with pytest.raises(Skipped) as caught:
            await killer(api, socket_path).kill_once()
    assert str(caught.value) == (
        "no running container has hostname 'laptop' (the leader is "
        "laptop_6c1d2e3f-0000-4000-8000-000000000009): does it run in a container of this Docker engine?"
    )
    assert engine.kills() == []


async def test_rounds_count_and_summarize(socket_path: str, capsys: pytest.CaptureFixture[str]) -> None:
    api = FakeLeaseApi()
    async with FakeDockerEngine(socket_path, containers()) as engine:
        identities = iter([STANDBY, LEADER])

        async def next_takes_over(container: FakeContainer, signal: str) -> None:
            container.running = True  # restart: always
            await api.write(next(identities))

        engine.on_kill = next_takes_over
        rounds = chaos_cli.Rounds(killer(api, socket_path), every_s=0.01, count=1)
        await rounds.run()  # no lease yet: skipped
        await api.write(LEADER)
        rounds = chaos_cli.Rounds(killer(api, socket_path), every_s=0.01, count=2)
        await rounds.run()
    out = capsys.readouterr().out.splitlines()
    assert "chaos: round 1: skipped: there is no lease kube-system/kube-scheduler yet" in out[0]
    assert "chaos: round 1: SIGKILL to 3f2a9c1b7d4e" in out[1]
    assert "chaos: round 2: SIGKILL to 9b8c7d6e5f40" in out[2]
    assert (rounds.done, rounds.succeeded, len(rounds.handovers)) == (2, 2, 2)
    assert rounds.summary().startswith("2 of 2 rounds signalled a leader and saw a new one; handover min ")


# ------------------------------------------------------------------------------------- the command line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "the following arguments are required: --every"),
        (["--every", "0s"], "argument --every: invalid duration '0s': must be positive"),
        (["--every", "30"], "argument --every: invalid duration '30': use a number with a unit"),
        (["--every", "1s", "--signal", "HUP"],
         "argument --signal: invalid signal 'HUP': choose one of KILL, TERM, STOP"),
        (["--every", "1s", "--lease", "kube-scheduler"],
         "argument --lease: invalid lease 'kube-scheduler': expected NAMESPACE/NAME"),
        (["--every", "1s", "--lease", "a/b/c"], "argument --lease: invalid lease 'a/b/c'"),
        (["--every", "1s", "--lease", "/x"], "argument --lease: invalid lease '/x'"),
        (["--every", "1s", "--count", "0"], "argument --count: invalid count '0': at least 1 round"),
        (["--every", "1s", "--count", "many"], "argument --count: invalid count 'many': expected a number"),
        (["--every", "1s", "--handover-timeout=0ms"], "argument --handover-timeout: invalid duration"),
        (["--every", "1s", "--docker-socket", ""], "argument --docker-socket: the Docker socket path is"),
    ],
    ids=["no-every", "zero-every", "unitless-every", "bad-signal", "lease-without-namespace",
         "lease-too-deep", "lease-empty-namespace", "zero-count", "word-count", "zero-timeout",
         "empty-socket"],
)
def test_bad_flags_exit_2(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chaos", "kill-leader", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: podsched chaos kill-leader")
    assert message in err


def test_chaos_needs_an_action(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chaos"]) == 2
    assert "the following arguments are required: ACTION" in capsys.readouterr().err


@pytest.mark.parametrize(("text", "name"), [("KILL", "SIGKILL"), ("term", "SIGTERM"), ("SIGSTOP", "SIGSTOP")])
def test_signal_names(text: str, name: str) -> None:
    assert signal_name(text) == name


def test_a_missing_socket_exits_1_at_start(socket_path: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["chaos", "kill-leader", "--every", "1s", "--docker-socket", socket_path,
                 "--server", "127.0.0.1:1"])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.err.strip() == (
        f"error: no Docker socket at {socket_path}: mount the engine's socket into this container "
        "(-v /var/run/docker.sock:/var/run/docker.sock) or pass --docker-socket"
    )
    assert captured.out == ""
