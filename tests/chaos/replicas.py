"""Scheduler replicas that come back: N `podsched scheduler` processes under `podsched up`'s Supervisor
(cluster/launcher/supervisor.py, ``restart: always``), which runs on a thread of its own with its own
event loop while the test thread injects faults. A SIGSTOPped process has not exited, so it keeps its
slot until it is resumed and exits.

Each process the supervisor starts is a *life*: its slot, its identity (from its startup line), its
``Popen`` and its share of the slot's stderr. Lives are never forgotten, so the test can ask after the
fact how the replica it paused ended, and each one's log is written to ``log_dir/<slot>-<n>.log`` when
the replica set stops.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cluster.launcher.process import SchedulerProcess, cli_env
from cluster.launcher.supervisor import Child, RestartPolicy, Supervisor
from tests.integration.helpers import REPO

#: Restart at once and never back off for long: the test kills the leader every few seconds, often a
#: replica started moments before, and a replica kept down by a growing backoff would starve the run.
RESTART_POLICY = RestartPolicy(initial_s=0.1, max_s=1.0)
#: How long one replica may take to print its startup line (a Python process on a busy 2-core box).
START_TIMEOUT_S = 30.0
#: How long ``start()`` waits for every first process, and ``stop()`` for the supervisor.
ALL_TIMEOUT_S = 90.0
#: How often ``wait_replaced`` looks again.
POLL_S = 0.05


class _Replica(SchedulerProcess):
    """A SchedulerProcess that remembers where its latest run's lines begin in ``lines`` (which keeps
    every run's): the supervisor reaps the previous run, reading its last lines, before each start."""

    run_first_line = 0

    def start(self, timeout_s: float = START_TIMEOUT_S) -> None:
        self.run_first_line = len(self.lines)
        super().start(timeout_s)


@dataclass
class Life:
    """One scheduler process of one slot."""

    slot: int
    #: 0 for the slot's first process, 1 for its first restart, ...
    number: int
    identity: str
    popen: subprocess.Popen[str]
    #: The slot's SchedulerProcess, whose ``lines`` hold every run's stderr.
    scheduler: SchedulerProcess
    #: Where this life's lines begin in ``scheduler.lines``, and end (None while it is the latest).
    first_line: int
    end_line: int | None = None

    @property
    def exit_code(self) -> int | None:
        """The exit code once it has exited (negative: the signal that ended it), else None."""
        return self.popen.poll()

    def log(self) -> str:
        return "".join(self.scheduler.lines[self.first_line:self.end_line])


class ReplicaSet:
    def __init__(self, args: Sequence[str], count: int, log_dir: Path) -> None:
        self._log_dir = log_dir
        self._schedulers = [_Replica(args, env=cli_env(""), cwd=REPO) for _ in range(count)]
        self._lives: list[Life] = []
        self._lock = threading.Lock()
        self._reports: list[str] = []
        self._supervisor = Supervisor(policy=RESTART_POLICY, report=self._reports.append,
                                      on_started=self._started)
        self._loop = asyncio.new_event_loop()
        self._supervising: asyncio.Future[None] | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, name="chaos-replicas", daemon=True)

    def start(self) -> None:
        """Start every replica; return once each has printed its startup line."""
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start_all(), self._loop).result(ALL_TIMEOUT_S)

    def lives(self) -> list[Life]:
        """Every life so far, in the order they started."""
        with self._lock:
            return list(self._lives)

    def by_identity(self, identity: str) -> Life | None:
        """The life with ``identity`` (None for one not known, or not yet: a replica may take the
        lease a moment before its startup line is read)."""
        return next((life for life in self.lives() if life.identity == identity), None)

    def signal(self, life: Life, signum: signal.Signals) -> float:
        """Send ``signum`` to ``life``'s process; the local monotonic time just before it was sent."""
        sent = time.monotonic()
        life.popen.send_signal(signum)
        return sent

    def wait_replaced(self, life: Life, timeout_s: float) -> Life:
        """Wait until ``life`` has exited and its slot runs a new process; that new life."""
        deadline = time.monotonic() + timeout_s
        while True:
            newer = [o for o in self.lives() if o.slot == life.slot and o.number > life.number]
            if newer:
                return newer[0]
            if time.monotonic() > deadline:
                state = "still running" if life.exit_code is None else f"exited with {life.exit_code}"
                raise AssertionError(f"scheduler {life.identity} ({state}) was not replaced within "
                                     f"{timeout_s:g}s; the supervisor said: {self._reports[-5:]}")
            time.sleep(POLL_S)

    def stop(self) -> None:
        """Stop supervising and stop every replica (SIGTERM, SIGKILL after the supervisor's grace);
        write each life's log."""
        try:
            if self._thread.is_alive():
                asyncio.run_coroutine_threadsafe(self._stop_all(), self._loop).result(ALL_TIMEOUT_S)
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join(ALL_TIMEOUT_S)
        finally:
            self._log_dir.mkdir(parents=True, exist_ok=True)
            for life in self.lives():
                (self._log_dir / f"{life.slot}-{life.number}.log").write_text(life.log())

    async def _start_all(self) -> None:
        for slot, scheduler in enumerate(self._schedulers):
            self._supervisor.add(f"scheduler-{slot}", scheduler)
            await self._supervisor.start(f"scheduler-{slot}")
        self._supervising = asyncio.ensure_future(self._supervisor.supervise())

    async def _stop_all(self) -> None:
        if self._supervising is not None:
            self._supervising.cancel()
            await asyncio.gather(self._supervising, return_exceptions=True)
        await self._supervisor.stop()

    def _started(self, name: str, child: Child) -> None:
        """The supervisor started ``child`` (again): a new life for its slot."""
        assert isinstance(child, _Replica) and child.process is not None
        slot = self._schedulers.index(child)
        first_line = child.run_first_line
        with self._lock:
            earlier = [life for life in self._lives if life.slot == slot]
            if earlier:
                earlier[-1].end_line = first_line
            self._lives.append(Life(slot, len(earlier), child.identity, child.process, child, first_line))
