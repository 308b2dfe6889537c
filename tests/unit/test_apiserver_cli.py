"""`podsched apiserver`: flags, the line it prints once serving, clean stop on SIGTERM/SIGINT, and the
clear one-line error (exit 1) when it cannot open its store. Runs the command module in a real process
(through a tiny launcher, so it does not depend on the rest of the CLI)."""

from __future__ import annotations

import argparse
import asyncio
import re
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import grpc
import pytest

from cluster.api import apiserver_pb2, apiserver_pb2_grpc
from cluster.api.fencing import SCHEDULER_LEASE, LeaseRef
from cluster.cli import apiserver as apiserver_cli

LAUNCHER = """
import argparse, sys
from cluster.cli import apiserver
parser = argparse.ArgumentParser(prog="podsched")
apiserver.register(parser.add_subparsers())
args = parser.parse_args(sys.argv[1:])
sys.exit(args.func(args))
"""
SERVING = re.compile(r"^podsched apiserver serving on 127\.0\.0\.1:(\d+) \(store: (.+)\)$")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("5m", 300.0), ("30s", 30.0), ("300ms", 0.3), ("1h30m", 5400.0), ("1.5s", 1.5), ("2us", 2e-6)],
    ids=["minutes", "seconds", "millis", "compound", "fraction", "micros"],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert apiserver_cli.parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "5", "5 m", "m5", "5d", "-5s", "5m3"], ids=[
    "empty", "no-unit", "space", "unit-first", "days", "negative", "trailing-number"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=r"invalid duration .*use a number with a unit"):
        apiserver_cli.parse_duration(text)


def test_default_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert apiserver_cli.default_data_dir() == str(tmp_path / "podsched")
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert apiserver_cli.default_data_dir() == str(tmp_path / "home" / ".local" / "share" / "podsched")


# ---------------------------------------------------------------------------------- real processes


class Process:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.stderr: list[str] = []

    async def line_matching(self, pattern: re.Pattern[str], wait_s: float = 20.0) -> re.Match[str]:
        assert self.proc.stderr is not None
        async with asyncio.timeout(wait_s):
            while True:
                raw = await self.proc.stderr.readline()
                if not raw:
                    raise AssertionError(f"exited without printing {pattern.pattern}: {self.stderr}")
                line = raw.decode().rstrip("\n")
                self.stderr.append(line)
                match = pattern.match(line)
                if match:
                    return match

    async def finish(self, wait_s: float = 20.0) -> tuple[int, str]:
        assert self.proc.stderr is not None
        async with asyncio.timeout(wait_s):
            rest = await self.proc.stderr.read()
            code = await self.proc.wait()
        return code, "\n".join(self.stderr) + rest.decode()


Spawn = Callable[..., Awaitable[Process]]


@pytest.fixture
async def spawn() -> AsyncIterator[Spawn]:
    started: list[Process] = []

    async def start(*args: str) -> Process:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", LAUNCHER, "apiserver", *args,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )
        started.append(Process(proc))
        return started[-1]

    yield start
    for process in started:
        if process.proc.returncode is None:
            process.proc.kill()
            await process.proc.wait()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
async def test_serves_then_stops_cleanly_on_a_signal(spawn: Spawn, tmp_path: Path, signum: int) -> None:
    data_dir = tmp_path / "data"
    process = await spawn(
        "--listen", "127.0.0.1:0", "--data-dir", str(data_dir), "--compaction-interval", "30s"
    )
    serving = await process.line_matching(SERVING)
    port, store = int(serving.group(1)), serving.group(2)
    assert store == f"sqlite {data_dir}"
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = apiserver_pb2_grpc.ApiServerStub(channel)
        listed = await stub.List(apiserver_pb2.ListRequest(kind="PriorityClass"))
        assert len(listed.items) == 2
    process.proc.send_signal(signum)
    code, output = await process.finish()
    assert code == 0, output


async def test_a_locked_data_dir_is_a_clear_error(spawn: Spawn, tmp_path: Path) -> None:
    first = await spawn("--listen", "127.0.0.1:0", "--data-dir", str(tmp_path))
    await first.line_matching(SERVING)
    second = await spawn("--listen", "127.0.0.1:0", "--data-dir", str(tmp_path))
    code, output = await second.finish()
    assert code == 1
    assert f"podsched apiserver: cannot open the store (sqlite {tmp_path}): data directory" in output
    assert "already in use" in output
    first.proc.send_signal(signal.SIGTERM)
    assert (await first.finish())[0] == 0


async def test_an_unreachable_etcd_is_a_clear_error(spawn: Spawn) -> None:
    process = await spawn("--listen", "127.0.0.1:0", "--etcd", "127.0.0.1:1")
    code, output = await process.finish(wait_s=60.0)
    assert code == 1
    assert "podsched apiserver: cannot open the store (etcd 127.0.0.1:1):" in output


async def test_a_busy_address_is_a_clear_error(spawn: Spawn, tmp_path: Path) -> None:
    first = await spawn("--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "a"))
    port = int((await first.line_matching(SERVING)).group(1))
    second = await spawn("--listen", f"127.0.0.1:{port}", "--data-dir", str(tmp_path / "b"))
    code, output = await second.finish()
    assert code == 1
    assert f"podsched apiserver: cannot listen on 127.0.0.1:{port}" in output
    first.proc.send_signal(signal.SIGTERM)
    assert (await first.finish())[0] == 0


async def test_a_bad_flag_is_a_usage_error(spawn: Spawn) -> None:
    process = await spawn("--compaction-interval", "soon")
    code, output = await process.finish()
    assert code == 2
    assert "invalid duration 'soon'" in output


def _parsed(*flags: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="podsched")
    apiserver_cli.register(parser.add_subparsers())
    return parser.parse_args(["apiserver", *flags])


def test_the_fenced_leases_are_the_schedulers_unless_named_once_each() -> None:
    enforcing = "--enforce-leader-fencing"
    assert apiserver_cli._options(_parsed(enforcing)).fenced_leases == (SCHEDULER_LEASE,)
    named = _parsed(enforcing, "--fenced-lease", "sched/a", "--fenced-lease", "kube-system/kube-scheduler")
    assert apiserver_cli._options(named).fenced_leases == (LeaseRef("sched", "a"), SCHEDULER_LEASE)
    with pytest.raises(ValueError, match=r"^--fenced-lease applies with --enforce-leader-fencing only$"):
        apiserver_cli._options(_parsed("--fenced-lease", "sched/a"))


@pytest.mark.parametrize(
    ("value", "why"),
    [("kube-scheduler", "expected NAMESPACE/NAME, like kube-system/kube-scheduler"),
     ("a/b/c", "expected NAMESPACE/NAME"), ("Kube/x", "namespace a lowercase RFC 1123 label must consist"),
     ("kube-system/Rogue", "name a lowercase RFC 1123 subdomain must consist")],
    ids=["no-namespace", "three-parts", "bad-namespace", "bad-name"],
)
def test_a_bad_fenced_lease_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], value: str, why: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        _parsed("--enforce-leader-fencing", "--fenced-lease", value)
    assert exited.value.code == 2
    assert f"argument --fenced-lease: invalid lease {value!r}: {why}" in capsys.readouterr().err
