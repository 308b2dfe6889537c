"""`podsched apiserver` as a child process: started on a free port, found by the line it prints when it
serves, killed (SIGKILL, as a crash) or stopped, and restarted on the same store and port.

`podsched demo` runs the API server this way, and so do the integration tests: a real process, as a user
would start it.
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence

# The line `podsched apiserver` prints on stderr once it accepts connections.
_SERVING = re.compile(r"podsched apiserver serving on (?P<host>[^\s:]+):(?P<port>\d+)")
# Opening a store (SQLite recovery, an etcd connection) plus gRPC startup; generous for a loaded CI box.
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
# Lines of the server's stderr kept for error messages.
_LOG_LINES = 200
# A restart on the same port retries while the old socket is released.
_RESTART_ATTEMPTS = 5
_RESTART_PAUSE_S = 0.3


class ApiServerStartError(RuntimeError):
    pass


def die_with_parent_prefix() -> list[str]:
    """A command prefix that has Linux SIGKILL the child when its parent dies, so no server outlives a
    killed demo or test run (util-linux's setpriv; nothing where it is missing). Not a preexec_fn:
    Python code between fork and exec in a process running gRPC threads can deadlock or crash the child.
    Linux's "parent" is the thread that started the child: start servers from a long-lived thread."""
    setpriv = shutil.which("setpriv") if sys.platform == "linux" else None
    return [setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []


class ApiServerProcess:
    """One `podsched apiserver` child process on a fixed store.

    ``store_args`` selects the store: ``["--data-dir", DIR]`` or ``["--etcd", "host:port,..."]``.
    """

    def __init__(
        self,
        store_args: Sequence[str],
        *,
        host: str = "127.0.0.1",
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.store_args = list(store_args)
        self.extra_args = list(extra_args)
        self._host = host
        self._port = 0
        self._env = dict(env) if env is not None else None
        self._process: subprocess.Popen[str] | None = None
        self._log: collections.deque[str] = collections.deque(maxlen=_LOG_LINES)
        self._drain: threading.Thread | None = None

    @property
    def address(self) -> str:
        if not self._port:
            raise RuntimeError("the API server has not started")
        return f"{self._host}:{self._port}"

    @property
    def process(self) -> subprocess.Popen[str]:
        if self._process is None:
            raise RuntimeError("the API server has not started")
        return self._process

    @property
    def pid(self) -> int:
        return self.process.pid

    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def log(self) -> str:
        """The last lines the server wrote to stderr."""
        return "".join(self._log)

    def start(self) -> None:
        """Start the server and return once it serves (on a free port the first time, the same port on
        a restart); raise ApiServerStartError with its output if it does not."""
        if self.running():
            raise RuntimeError(f"the API server is already running (pid {self.process.pid})")
        attempts = _RESTART_ATTEMPTS if self._port else 1
        for attempt in range(attempts):
            try:
                self._start_once()
                return
            except ApiServerStartError:
                if attempt == attempts - 1:
                    raise
                time.sleep(_RESTART_PAUSE_S)

    def _start_once(self) -> None:
        command = [
            *die_with_parent_prefix(), sys.executable, "-m", "cluster.cli", "apiserver",
            "--listen", f"{self._host}:{self._port}", *self.store_args, *self.extra_args,
        ]
        self._log.clear()
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=self._env,
        )
        self._process = process
        port = self._await_serving(process)
        self._port = port
        # Keep reading stderr so a chatty server never blocks on a full pipe.
        self._drain = threading.Thread(target=self._read_log, args=(process,), daemon=True)
        self._drain.start()

    def _await_serving(self, process: subprocess.Popen[str]) -> int:
        assert process.stderr is not None
        found: list[int] = []

        def read() -> None:
            assert process.stderr is not None
            for line in process.stderr:
                self._log.append(line)
                match = _SERVING.search(line)
                if match:
                    found.append(int(match["port"]))
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(START_TIMEOUT_S)
        if found:
            return found[0]
        if not reader.is_alive():
            # stderr closed without the line: the server is on its way out; let it finish.
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(STOP_TIMEOUT_S)
        if process.poll() is None:
            process.kill()
            process.wait()
            why = f"did not report serving within {START_TIMEOUT_S:g}s"
        else:
            reader.join(1.0)
            why = f"exited with code {process.returncode}"
        raise ApiServerStartError(
            f"podsched apiserver {' '.join(self.store_args)} {why}; its output:\n{self.log()}"
        )

    def _read_log(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        with contextlib.suppress(ValueError, OSError):
            for line in process.stderr:
                self._log.append(line)

    def kill(self) -> None:
        """SIGKILL, as a crash: no shutdown code runs."""
        if self.running():
            self.process.send_signal(signal.SIGKILL)
        self._reap()

    def stop(self) -> int | None:
        """SIGTERM and wait (SIGKILL after STOP_TIMEOUT_S); the exit code, None if never started."""
        if self._process is None:
            return None
        if self.running():
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._process.kill()
        self._reap()
        return self._process.returncode

    def restart(self) -> None:
        """Stop the server if it still runs, then start it again on the same store and port."""
        self.stop()
        self.start()

    def _reap(self) -> None:
        if self._process is None:
            return
        self._process.wait()
        if self._drain is not None:
            self._drain.join(2.0)
        if self._process.stderr is not None:
            with contextlib.suppress(OSError):
                self._process.stderr.close()

    def __enter__(self) -> ApiServerProcess:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def cli_env(address: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for `podsched` commands aimed at ``address``."""
    env = dict(os.environ if base is None else base)
    env["PODSCHED_SERVER"] = address
    return env
