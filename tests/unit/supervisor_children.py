"""Tiny real child processes for the supervisor's tests: a Python one-liner that prints "ready", then
sleeps (or exits with a code, or ignores SIGTERM), started as the supervisor's children are."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from cluster.launcher.process import die_with_parent_prefix

START_TIMEOUT_S = 10.0

_SCRIPT = textwrap.dedent("""
    import signal, sys, time
    name, exit_code, ignore_term, log = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]

    def on_term(signum, frame):
        if log:
            with open(log, "a") as out:
                out.write(f"{name} {time.monotonic()}\\n")
        sys.exit(0)

    signal.signal(signal.SIGTERM, signal.SIG_IGN if ignore_term else on_term)
    print("ready", flush=True)
    if exit_code >= 0:
        sys.exit(exit_code)
    while True:
        time.sleep(1)
""")


class TinyChild:
    """One tiny process. ``exit_code`` >= 0 makes it exit with that code right after "ready";
    ``ignore_term`` makes it ignore SIGTERM; ``term_log`` is a file it appends "NAME TIME" to on SIGTERM.
    ``fail_starts`` makes the next that many ``start()`` calls fail without starting anything."""

    def __init__(
        self, name: str, *, exit_code: int = -1, ignore_term: bool = False, term_log: str = "",
        fail_starts: int = 0,
    ) -> None:
        self.name = name
        self.exit_code = exit_code
        self.ignore_term = ignore_term
        self.term_log = term_log
        self.fail_starts = fail_starts
        self.process: subprocess.Popen[str] | None = None
        self.pids: list[int] = []

    def start(self) -> None:
        if self.fail_starts:
            self.fail_starts -= 1
            raise RuntimeError(f"{self.name} refused to start\nsecond line of its output")
        process = subprocess.Popen(
            [*die_with_parent_prefix(), sys.executable, "-c", _SCRIPT, self.name, str(self.exit_code),
             "1" if self.ignore_term else "0", self.term_log],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
        )
        assert process.stdout is not None
        line = process.stdout.readline()
        if line.strip() != "ready":
            process.kill()
            process.wait()
            raise RuntimeError(f"{self.name} did not start: {line!r}")
        self.process = process
        self.pids.append(process.pid)

    def stop(self) -> int | None:
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(START_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        return self.process.returncode
