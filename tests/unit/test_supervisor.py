"""The supervisor with real tiny child processes: restart after an exit (with its code, and a backoff
that grows while a child keeps exiting), stop in layers with SIGTERM then SIGKILL, and no orphans when
the supervising process itself is killed."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from cluster.launcher.supervisor import Child, RestartPolicy, Supervisor, describe_exit, process_alive
from tests.unit.supervisor_children import TinyChild

REPO = Path(__file__).resolve().parents[2]
FAST = RestartPolicy(initial_s=0.05, max_s=0.2, reset_after_s=5.0)


class Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, line: str) -> None:
        self.lines.append(line)

    def matching(self, text: str) -> list[str]:
        return [line for line in self.lines if text in line]


async def until(predicate: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def supervising(supervisor: Supervisor) -> AsyncIterator[Supervisor]:
    task = asyncio.create_task(supervisor.supervise())
    try:
        yield supervisor
    finally:
        await supervisor.stop()
        await task


@pytest.mark.parametrize(
    ("code", "text"),
    [(0, "code 0"), (1, "code 1"), (-9, "signal SIGKILL"), (-15, "signal SIGTERM"), (-200, "signal 200")],
)
def test_describe_exit(code: int, text: str) -> None:
    assert describe_exit(code) == text


def test_restart_policy() -> None:
    policy = RestartPolicy(initial_s=0.5, max_s=4.0)
    assert [policy.delay_s(n) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert policy.delay_s(10_000) == 4.0
    with pytest.raises(ValueError, match="0 < initial_s <= max_s"):
        RestartPolicy(initial_s=2.0, max_s=1.0)
    with pytest.raises(ValueError, match="0 < initial_s <= max_s"):
        RestartPolicy(initial_s=0.0)
    with pytest.raises(ValueError, match="reset_after_s must be positive"):
        RestartPolicy(reset_after_s=0)


async def test_names_and_bad_calls() -> None:
    async with Supervisor() as supervisor:
        supervisor.add("a", TinyChild("a"))
        with pytest.raises(ValueError, match="already supervised"):
            supervisor.add("a", TinyChild("a"))
        with pytest.raises(KeyError, match=r"no child named 'b' \(children: a\)"):
            supervisor.child("b")
        assert supervisor.names == ["a"]
    with pytest.raises(RuntimeError, match="stopping"):
        supervisor.add("late", TinyChild("late"))
    with pytest.raises(ValueError, match="must be positive"):
        Supervisor(grace_s=0)


async def test_a_killed_child_is_started_again() -> None:
    report = Lines()
    started: list[tuple[str, int]] = []
    exited: list[tuple[str, int]] = []
    child = TinyChild("api")

    def on_started(name: str, started_child: Child) -> None:
        assert started_child.process is not None
        started.append((name, started_child.process.pid))

    def on_exit(name: str, exited_child: Child, code: int) -> None:
        # Told before the restart, while the child still holds the process that exited.
        assert exited_child.process is not None
        exited.append((name, code))

    supervisor = Supervisor(policy=FAST, report=report, on_started=on_started, on_exit=on_exit)
    supervisor.add("api", child)
    await supervisor.start("api")
    async with supervising(supervisor):
        first = child.pids[0]
        os.kill(first, signal.SIGKILL)
        await until(lambda: supervisor.restarts("api") == 1)
        assert len(child.pids) == 2 and child.pids[1] != first
        assert child.process is not None and child.process.poll() is None
        assert report.lines == [f"api (pid {first}) exited with signal SIGKILL; restarting in 0.05s"]
        assert started == [("api", first), ("api", child.pids[1])]
        assert exited == [("api", -signal.SIGKILL)]
    assert not any(process_alive(pid) for pid in child.pids)


async def test_a_child_that_keeps_exiting_backs_off_and_says_its_code() -> None:
    report = Lines()
    child = TinyChild("flaky", exit_code=3)
    supervisor = Supervisor(policy=FAST, report=report)
    supervisor.add("flaky", child)
    await supervisor.start("flaky")
    async with supervising(supervisor):
        await until(lambda: supervisor.restarts("flaky") >= 4)
    delays = [line.rsplit(" ", 1)[1] for line in report.matching("exited with code 3; restarting in")]
    assert delays[:4] == ["0.05s", "0.1s", "0.2s", "0.2s"]
    for line, pid in zip(report.matching("exited with code 3"), child.pids, strict=False):
        assert line.startswith(f"flaky (pid {pid}) exited with code 3")


async def test_a_failed_restart_is_retried_and_reported() -> None:
    report = Lines()
    child = TinyChild("sched")
    supervisor = Supervisor(policy=FAST, report=report)
    supervisor.add("sched", child)
    await supervisor.start("sched")
    async with supervising(supervisor):
        child.fail_starts = 2
        assert child.process is not None
        child.process.kill()
        await until(lambda: supervisor.restarts("sched") == 1)
    assert [line.split("; ")[1] for line in report.lines[:3]] == [
        "restarting in 0.05s", "restarting in 0.1s", "restarting in 0.2s",
    ]
    assert "did not start (sched refused to start)" in report.lines[1]
    assert "did not start (sched refused to start)" in report.lines[2]
    assert len(child.pids) == 2


async def test_stop_goes_layer_by_layer_with_sigterm(tmp_path: Path) -> None:
    log = tmp_path / "terms"
    children = {name: TinyChild(name, term_log=str(log)) for name in ("etcd", "api", "s1", "s2")}
    supervisor = Supervisor(policy=FAST)
    for name, layer in (("etcd", 0), ("api", 1), ("s1", 2), ("s2", 2)):
        supervisor.add(name, children[name], layer=layer)
        await supervisor.start(name)
    async with supervising(supervisor):
        pass
    order = [line.split()[0] for line in log.read_text().splitlines()]
    assert sorted(order[:2]) == ["s1", "s2"] and order[2:] == ["api", "etcd"]
    assert all(child.process is not None and child.process.returncode == 0 for child in children.values())


async def test_a_child_ignoring_sigterm_is_killed_after_the_grace() -> None:
    report = Lines()
    child = TinyChild("stubborn", ignore_term=True)
    supervisor = Supervisor(policy=FAST, report=report, grace_s=0.3)
    supervisor.add("stubborn", child)
    await supervisor.start("stubborn")
    started = time.monotonic()
    await supervisor.stop()
    assert 0.3 <= time.monotonic() - started < 5.0
    assert child.process is not None and child.process.returncode == -signal.SIGKILL
    assert report.lines == [
        f"stubborn (pid {child.pids[0]}) did not stop within 0.3s of SIGTERM; killing it"
    ]


async def test_start_all_starts_together_and_raises_the_first_error() -> None:
    good, bad = TinyChild("good"), TinyChild("bad", fail_starts=1)
    async with Supervisor() as supervisor:
        supervisor.add("good", good)
        supervisor.add("bad", bad)
        with pytest.raises(RuntimeError, match="bad refused to start"):
            await supervisor.start_all(["good", "bad"])
        # The other one started all the same, and is stopped with the rest.
        assert good.process is not None and good.process.poll() is None
    assert good.process.returncode is not None


async def test_stop_waits_for_a_start_under_way_then_stops_it() -> None:
    child = TinyChild("late")
    supervisor = Supervisor()
    supervisor.add("late", child)
    starting = asyncio.create_task(supervisor.start("late"))
    await asyncio.sleep(0.01)  # the start thread is now running the child's start()
    starting.cancel()
    await supervisor.stop()
    with contextlib.suppress(asyncio.CancelledError):
        await starting
    assert child.pids, "the start was under way and finished"
    assert child.process is not None and child.process.returncode is not None
    assert not any(process_alive(pid) for pid in child.pids)


async def test_stop_calls_off_a_restart_waiting_in_its_backoff() -> None:
    report = Lines()
    child = TinyChild("slow")
    supervisor = Supervisor(policy=RestartPolicy(initial_s=30.0, max_s=30.0), report=report)
    supervisor.add("slow", child)
    await supervisor.start("slow")
    task = asyncio.create_task(supervisor.supervise())
    assert child.process is not None
    child.process.kill()
    await until(lambda: bool(report.lines))
    started = time.monotonic()
    await supervisor.stop()
    await task
    assert time.monotonic() - started < 5.0
    assert child.pids == child.pids[:1] and supervisor.restarts("slow") == 0


_ORPHAN_SCRIPT = textwrap.dedent("""
    import asyncio, sys, time
    from cluster.launcher.supervisor import Supervisor
    from tests.unit.supervisor_children import TinyChild

    async def main():
        supervisor = Supervisor()
        children = [TinyChild(f"c{i}") for i in range(3)]
        for child in children:
            supervisor.add(child.name, child)
            await supervisor.start(child.name)
        print(" ".join(str(child.process.pid) for child in children), flush=True)
        await supervisor.supervise()

    asyncio.run(main())
""")


def test_no_child_outlives_a_killed_supervisor() -> None:
    supervisor = subprocess.Popen(
        [sys.executable, "-c", _ORPHAN_SCRIPT], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
        cwd=REPO,
    )
    try:
        assert supervisor.stdout is not None
        pids = [int(pid) for pid in supervisor.stdout.readline().split()]
        assert len(pids) == 3 and all(process_alive(pid) for pid in pids)
        # The supervisor's process dies without any chance to clean up...
        supervisor.kill()
        supervisor.wait()
        # ...and Linux kills its children for it (setpriv --pdeathsig, tied to the start thread).
        deadline = time.monotonic() + 10
        while any(process_alive(pid) for pid in pids):
            assert time.monotonic() < deadline, f"orphans left: {[pid for pid in pids if process_alive(pid)]}"
            time.sleep(0.05)
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait()
