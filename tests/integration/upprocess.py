"""`podsched up` as a real process for the tests that drive it: its stdout read line by line in the
background, waited on by pattern, and its processes found from what it printed."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading

from tests.integration.helpers import REPO

# The replicas' timings: short, so that a failover takes seconds.
TIMINGS = ["--leader-elect-lease-duration", "2s", "--leader-elect-renew-deadline", "1.5s",
           "--leader-elect-retry-period", "0.5s"]
# A killed leader's lease must run out before a standby takes over: lease + retry x jitter + 1s.
KILL_BOUND_S = 2.0 + 0.5 * 1.2 + 1.0
STEP_TIMEOUT_S = 60.0
LEADER = r"leader is now (\S+) \((scheduler-\d), fencing token (\d+), after (\d+\.\d\d)s without"


class Up:
    """`podsched up ARGS` running, its stdout read line by line in the background."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cluster.cli", "up", *args], stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
            # A session of its own, as a shell gives a command: Ctrl-C can then go to its whole group.
            start_new_session=True,
        )
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    @property
    def out(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, pattern: str, *, after: int = 0, timeout_s: float = STEP_TIMEOUT_S) -> re.Match[str]:
        """The first line (from line ``after`` on) matching ``pattern``; fail after ``timeout_s``."""
        regex = re.compile(pattern)

        def found() -> re.Match[str] | None:
            return next((m for line in self.lines[after:] if (m := regex.search(line))), None)

        with self._changed:
            self._changed.wait_for(lambda: found() is not None or self.process.poll() is not None, timeout_s)
        match = found()
        if match is None:
            ended = self.process.poll() is not None and self.process.stderr is not None
            stderr = self.process.stderr.read() if ended and self.process.stderr else ""
            raise AssertionError(f"no line matching {pattern!r}; up printed:\n{self.out}\n{stderr}")
        return match

    def pids(self) -> set[int]:
        """Every process up reported starting (API servers, replicas, etcd members)."""
        found = {int(pid) for pid in re.findall(r"(?:started|restarted): pid (\d+)", self.out)}
        return found | {int(pid) for pid in re.findall(r"up-etcd\d \(pid (\d+)\)", self.out)}

    def stop(self, signum: int = signal.SIGINT, *, group: bool = False) -> tuple[int, str]:
        """Send ``signum`` to up, or (``group``) to its whole process group, as a terminal's Ctrl-C does;
        up's exit code and stderr."""
        if group:
            os.killpg(self.process.pid, signum)
        else:
            self.process.send_signal(signum)
        try:
            self.process.wait(timeout=STEP_TIMEOUT_S)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        self._reader.join(5)
        assert self.process.stderr is not None
        return self.process.returncode, self.process.stderr.read()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
