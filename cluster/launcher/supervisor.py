"""A supervisor of named child processes, as docker's `restart: always` or a systemd unit with
Restart=always: `podsched up` runs its API server(s) and scheduler replicas under one.

- A child is anything with ``start()`` (start, and return once it serves), ``stop()`` (SIGTERM, wait,
  reap) and a ``process`` (its `subprocess.Popen`): `ApiServerProcess` and `SchedulerProcess` are.
- ``supervise()`` notices a child that exited (by polling: a scheduler replica exits 1 when it loses its
  lease, and that is routine) and starts it again after a backoff that doubles while it keeps exiting
  soon after starting and resets once it has run for a while, saying so in one line with its exit code.
- ``stop()`` stops every child, later layers first (schedulers before the API server they talk to) and
  the children of one layer together: SIGTERM, then SIGKILL after a grace period.

Every start runs on a few threads that the supervisor keeps for its whole life: each child is started
with util-linux's ``setpriv --pdeathsig KILL``, which Linux ties to the *thread* that started it, so a
child gets SIGKILL when the supervisor's process dies, however it dies, and never while it is alive
(a pool thread never ends before the pool is shut down). Starts block (waiting for a child's startup
line), so they stay off the event loop too, and several children can start at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

#: How long a stopping child gets between SIGTERM and SIGKILL: a scheduler finishes its in-flight binds
#: and releases its lease, an API server drains its calls; both take well under a second.
STOP_GRACE_S = 10.0
#: How often exits are looked for: the delay this adds to a restart is small beside the backoff.
POLL_INTERVAL_S = 0.05
#: How many children may be starting at the same time.
START_THREADS = 4


class Child(Protocol):
    """What the supervisor needs of a child process."""

    @property
    def process(self) -> subprocess.Popen[str] | None: ...

    def start(self) -> None:
        """Start the process and return once it serves; raise (with its output) when it cannot."""

    def stop(self) -> int | None:
        """Stop it if it runs, reap it and release what watched it; its exit code."""


@dataclass(frozen=True)
class RestartPolicy:
    """How long to wait before starting an exited child again."""

    #: The first wait, in seconds (default 0.5 s: a replica that lost its lease is back at once).
    initial_s: float = 0.5
    #: The longest wait (default 10 s): a child that cannot start is retried at this pace for ever.
    max_s: float = 10.0
    #: A child that ran at least this long before exiting starts again from ``initial_s`` (default 10 s).
    reset_after_s: float = 10.0

    def __post_init__(self) -> None:
        if not 0 < self.initial_s <= self.max_s:
            raise ValueError(
                f"restart policy needs 0 < initial_s <= max_s, got {self.initial_s}, {self.max_s}"
            )
        if self.reset_after_s <= 0:
            raise ValueError(f"reset_after_s must be positive, got {self.reset_after_s}")

    def delay_s(self, quick_exits: int) -> float:
        """The wait before the next start after ``quick_exits`` exits in a row that came too soon."""
        return min(self.max_s, self.initial_s * 2 ** min(quick_exits, 32))


def describe_exit(code: int) -> str:
    """"code 1", or "signal SIGKILL" for a process a signal ended (Popen's negative codes)."""
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"signal {signal.Signals(-code).name}"
        return f"signal {-code}"
    return f"code {code}"


def process_alive(pid: int) -> bool:
    """Whether ``pid`` names a live process: not gone, and not a zombie that nobody has reaped yet."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def stamped(text: str) -> str:
    """``text`` after the local wall-clock time with milliseconds, as podsched's live lines are."""
    return f"{datetime.now().strftime('%H:%M:%S.%f')[:-3]} {text}"


def _print_stamped(text: str) -> None:
    print(stamped(text), file=sys.stderr, flush=True)


@dataclass
class _Entry:
    name: str
    child: Child
    layer: int
    #: Monotonic time of the last successful start.
    started_at: float = 0.0
    #: Exits in a row, each soon after its start (the backoff's exponent).
    quick_exits: int = 0
    restarts: int = 0
    #: The task starting it again, while there is one.
    restarting: asyncio.Task[None] | None = None
    #: Whether that task is past its backoff and starting the process (then it is waited for, not
    #: cancelled: a start cannot be called back once the process exists).
    spawning: bool = False


class Supervisor:
    """Named children, started with ``start(name)``, kept running by ``supervise()``, stopped by
    ``stop()`` (or by leaving ``async with``).

    ``report`` is given one line per event (an exit and its restart, a failed start, a stop that needed
    SIGKILL); ``on_started(name, child)`` is called on the event loop after every successful start,
    first or not, and ``on_exit(name, child, code)`` when an exit is noticed, before the restart.
    """

    def __init__(
        self,
        *,
        policy: RestartPolicy | None = None,
        grace_s: float = STOP_GRACE_S,
        report: Callable[[str], None] = _print_stamped,
        on_started: Callable[[str, Child], None] | None = None,
        on_exit: Callable[[str, Child, int], None] | None = None,
        poll_interval_s: float = POLL_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
        start_threads: int = START_THREADS,
    ) -> None:
        if grace_s <= 0 or poll_interval_s <= 0:
            raise ValueError(
                f"grace_s and poll_interval_s must be positive, got {grace_s}, {poll_interval_s}"
            )
        self.policy = policy or RestartPolicy()
        self.grace_s = grace_s
        self._report = report
        self._on_started = on_started
        self._on_exit = on_exit
        self._poll_s = poll_interval_s
        self._clock = clock
        self._entries: dict[str, _Entry] = {}
        #: Starts handed to the start threads and not finished (their callers may have been cancelled).
        self._starting: set[concurrent.futures.Future[None]] = set()
        self._stopping = False
        self._spawner = concurrent.futures.ThreadPoolExecutor(
            max_workers=start_threads, thread_name_prefix="supervisor-start"
        )

    # ------------------------------------------------------------------------------------ children

    def add(self, name: str, child: Child, *, layer: int = 0) -> None:
        """Take ``child`` under supervision (not started yet). ``stop()`` stops higher layers first."""
        if name in self._entries:
            raise ValueError(f"a child named {name!r} is already supervised")
        if self._stopping:
            raise RuntimeError("the supervisor is stopping")
        self._entries[name] = _Entry(name, child, layer)

    @property
    def names(self) -> list[str]:
        return list(self._entries)

    def child(self, name: str) -> Child:
        return self._entry(name).child

    def restarts(self, name: str) -> int:
        """How many times ``name`` was started again after it exited."""
        return self._entry(name).restarts

    def _entry(self, name: str) -> _Entry:
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(self._entries) or "none"
            raise KeyError(f"no child named {name!r} (children: {known})") from None

    # ------------------------------------------------------------------------------------ lifecycle

    async def start(self, name: str) -> None:
        """Start child ``name`` and return once it serves; what its ``start()`` raised if it cannot."""
        entry = self._entry(name)
        await self._spawn(entry)

    async def start_all(self, names: list[str]) -> None:
        """Start the children ``names`` together; the first error once all have finished starting."""
        results = await asyncio.gather(*(self.start(name) for name in names), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    async def supervise(self) -> None:
        """Restart children as they exit, until ``stop()`` (or cancellation)."""
        try:
            while not self._stopping:
                for entry in self._entries.values():
                    process = entry.child.process
                    if entry.restarting is None and process is not None and process.poll() is not None:
                        if self._on_exit is not None:
                            self._on_exit(entry.name, entry.child, process.returncode)
                        entry.restarting = asyncio.create_task(
                            self._restart(entry, process.returncode), name=f"restart-{entry.name}"
                        )
                await asyncio.sleep(self._poll_s)
        finally:
            await self._settle_restarts()

    async def stop(self) -> None:
        """Stop every child (higher layers first, one layer's children together) and the start thread."""
        self._stopping = True
        await self._settle_restarts()
        # A start cannot be called back once its process exists: let those under way finish, so that
        # what they started is stopped below (queued ones are dropped).
        for started in list(self._starting):
            started.cancel()
        await asyncio.gather(*(asyncio.wrap_future(f) for f in list(self._starting) if not f.cancelled()),
                             return_exceptions=True)
        for layer in sorted({entry.layer for entry in self._entries.values()}, reverse=True):
            entries = [entry for entry in self._entries.values() if entry.layer == layer]
            await asyncio.gather(*(self._stop_one(entry) for entry in entries))
        self._spawner.shutdown(wait=True)

    async def __aenter__(self) -> Supervisor:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # ------------------------------------------------------------------------------------ internals

    async def _spawn(self, entry: _Entry, *, again: bool = False) -> None:
        loop = asyncio.get_running_loop()

        def start() -> None:
            entry.child.stop()  # reap what is left of an earlier run (no-op on a first start)
            entry.child.start()

        started = self._spawner.submit(start)
        self._starting.add(started)
        try:
            await asyncio.wrap_future(started, loop=loop)
        finally:
            self._starting.discard(started)
        entry.started_at = self._clock()
        if again:
            entry.restarts += 1
        if self._on_started is not None:
            self._on_started(entry.name, entry.child)

    async def _restart(self, entry: _Entry, code: int | None) -> None:
        """Start ``entry`` again after its exit with ``code``, retrying failed starts with the backoff."""
        pid = entry.child.process.pid if entry.child.process is not None else "?"
        ran_s = self._clock() - entry.started_at
        entry.quick_exits = entry.quick_exits + 1 if ran_s < self.policy.reset_after_s else 0
        why = f"exited with {describe_exit(code)}" if code is not None else "exited"
        try:
            while True:
                # The first restart after a long run waits the initial delay: quick_exits is 0 then.
                delay = self.policy.delay_s(max(0, entry.quick_exits - 1))
                self._report(f"{entry.name} (pid {pid}) {why}; restarting in {delay:g}s")
                await asyncio.sleep(delay)
                entry.spawning = True
                try:
                    await self._spawn(entry, again=True)
                except Exception as exc:
                    entry.quick_exits += 1
                    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    why = f"did not start ({first_line})"
                    pid = entry.child.process.pid if entry.child.process is not None else "?"
                    continue
                finally:
                    entry.spawning = False
                return
        finally:
            entry.restarting = None

    async def _settle_restarts(self) -> None:
        """Call off restarts still in their backoff; let one already starting its process finish (so
        that ``stop()`` then stops it)."""
        tasks = [entry.restarting for entry in self._entries.values() if entry.restarting is not None]
        for entry in self._entries.values():
            if entry.restarting is not None and not entry.spawning:
                entry.restarting.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _stop_one(self, entry: _Entry) -> None:
        process = entry.child.process
        if process is None:
            return
        loop = asyncio.get_running_loop()
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            try:
                await loop.run_in_executor(None, process.wait, self.grace_s)
            except subprocess.TimeoutExpired:
                self._report(f"{entry.name} (pid {process.pid}) did not stop within {self.grace_s:g}s "
                             "of SIGTERM; killing it")
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
        # Reap it and let the child release its pipes and threads (quick: the process is gone or going).
        await loop.run_in_executor(None, entry.child.stop)
