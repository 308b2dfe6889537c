"""`podsched apiserver`, `podsched scheduler` and `podsched ui` as child processes. The API server is
started on a free port, found by the line it prints when it serves, killed (SIGKILL, as a crash) or
stopped, and restarted on the same store and port; the scheduler is found by its startup line and stopped
with SIGTERM; so is the web view, by the line with its URL.

`podsched up` and `podsched demo` run them this way, and so do the integration tests: real processes, as a
user would start them.
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
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence

from cluster.healthserver import parse_address
from cluster.launcher.ports import free_port

# The line `podsched apiserver` prints on stderr once it accepts connections.
_SERVING = re.compile(r"podsched apiserver serving on (?P<host>[^\s:]+):(?P<port>\d+)")
# The line before it with --metrics-addr.
_ENDPOINTS = re.compile(r"podsched apiserver: metrics and health on (?P<url>http://\S+)")
# The line before it with --http-listen.
_HTTP_API = re.compile(r"podsched apiserver: Kubernetes HTTP API on (?P<url>https?://\S+)")
# Opening a store (SQLite recovery, an etcd connection) plus gRPC startup; generous for a loaded CI box.
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
# Lines of the server's stderr kept for error messages.
_LOG_LINES = 200
# A restart on the same port retries while the old socket is released.
_RESTART_ATTEMPTS = 5
_RESTART_PAUSE_S = 0.3


#: Every child gets a process group of its own. A terminal's Ctrl-C goes to its whole foreground group:
#: a parent that stops its children in order (scheduler replicas release their lease through an API
#: server that must still run) has to be the only one to hear it.
OWN_PROCESS_GROUP = 0


class ApiServerStartError(RuntimeError):
    pass


class SchedulerStartError(RuntimeError):
    pass


def _with_free_port(address: str) -> str:
    """``host:port``, a free port in place of port 0."""
    host, port = parse_address(address)
    if port:
        return address
    return f"[{host}]:{free_port(host)}" if ":" in host else f"{host}:{free_port(host)}"


def die_with_parent_prefix() -> list[str]:
    """A command prefix that has Linux SIGKILL the child when its parent dies, so no server outlives a
    killed demo or test run (util-linux's setpriv; nothing where it is missing). Not a preexec_fn:
    Python code between fork and exec in a process running gRPC threads can deadlock or crash the child.
    Linux's "parent" is the thread that started the child: start servers from a long-lived thread."""
    setpriv = shutil.which("setpriv") if sys.platform == "linux" else None
    return [setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []


def http_get(url: str) -> tuple[int, str]:
    """(HTTP status, body) of a GET of ``url`` (a process's metrics or health endpoint)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


class ApiServerProcess:
    """One `podsched apiserver` child process on a fixed store.

    ``store_args`` selects the store: ``["--data-dir", DIR]`` or ``["--etcd", "host:port,..."]``.
    ``port`` 0 picks a free one on the first start; a restart keeps the port. ``http_listen``
    (``host:port``) serves the Kubernetes HTTP API there too (its ``--http-listen``; port 0: a free one,
    chosen now and kept across restarts).
    """

    def __init__(
        self,
        store_args: Sequence[str],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        http_listen: str | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.store_args = list(store_args)
        self.extra_args = list(extra_args)
        self._host = host
        self._port = port
        #: Where it serves the Kubernetes HTTP API (its --http-listen), or None when it does not.
        self.http_address = None if http_listen is None else _with_free_port(http_listen)
        self._env = dict(env) if env is not None else None
        self._process: subprocess.Popen[str] | None = None
        self._log: collections.deque[str] = collections.deque(maxlen=_LOG_LINES)
        self._drain: threading.Thread | None = None
        #: The HTTP endpoints' URL once started with --metrics-addr, else None.
        self.metrics_url: str | None = None
        #: The Kubernetes HTTP API's URL, when started with --http-listen.
        self.http_url: str | None = None

    @property
    def address(self) -> str:
        if not self._port:
            raise RuntimeError("the API server has not started")
        return f"{self._host}:{self._port}"

    def command(self) -> list[str]:
        """Its `podsched apiserver` argv (after the interpreter), on the port it has now."""
        http = [] if self.http_address is None else ["--http-listen", self.http_address]
        return [
            "-m", "cluster.cli", "apiserver", "--listen", f"{self._host}:{self._port}", *http,
            *self.store_args, *self.extra_args,
        ]

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

    def get(self, path: str) -> tuple[int, str]:
        """(HTTP status, body) of ``path`` on its metrics server (started with --metrics-addr)."""
        if self.metrics_url is None:
            raise RuntimeError("the API server was not started with --metrics-addr")
        return http_get(self.metrics_url + path)

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
        command = [*die_with_parent_prefix(), sys.executable, *self.command()]
        self._log.clear()
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=self._env,
            process_group=OWN_PROCESS_GROUP,
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
                endpoints = _ENDPOINTS.search(line)
                if endpoints:
                    self.metrics_url = endpoints["url"]
                http_api = _HTTP_API.search(line)
                if http_api:
                    self.http_url = http_api["url"]
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


# The line `podsched scheduler` prints on stderr once its metrics server is up.
_SCHEDULER_STARTED = re.compile(
    r"podsched scheduler started \(profiles: (?P<profiles>[^;]*); server (?P<server>\S+); "
    r"metrics (?P<metrics>http://[^;\s)]+); identity (?P<identity>[^\s)]+)\)"
)
# A scheduler finishes its in-flight bindings before it exits on SIGTERM.
SCHEDULER_STOP_TIMEOUT_S = 15.0


class SchedulerProcess:
    """One `podsched scheduler` child process with ``args``, found by its startup line, stopped with
    SIGTERM. ``on_line`` is given every line the scheduler logs after that one (the demo prints them)."""

    def __init__(
        self,
        args: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        on_line: Callable[[str], None] | None = None,
    ) -> None:
        self.command = [sys.executable, "-m", "cluster.cli", "scheduler", *args]
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.process: subprocess.Popen[str] | None = None
        #: Everything it has written to stderr, line by line.
        self.lines: list[str] = []
        self.started_line = ""
        self.metrics_url = ""
        #: Its leader-election identity, from its startup line (the Lease's holderIdentity while it leads).
        self.identity = ""
        self._on_line = on_line
        self._started = threading.Event()
        self._reader: threading.Thread | None = None

    @property
    def pid(self) -> int:
        if self.process is None:
            raise RuntimeError("the scheduler has not started")
        return self.process.pid

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log(self) -> str:
        return "".join(self.lines[-_LOG_LINES:])

    def start(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Start it (again, after it exited: a supervisor's restart) and return once it has printed its
        startup line; SchedulerStartError with its output if it does not. ``lines`` keeps every run's."""
        if self.running():
            raise RuntimeError(f"the scheduler is already running (pid {self.pid})")
        self._started.clear()
        self.started_line = self.metrics_url = self.identity = ""
        self.process = subprocess.Popen(
            [*die_with_parent_prefix(), *self.command], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=self.env, cwd=self.cwd,
            process_group=OWN_PROCESS_GROUP,
        )
        self._reader = threading.Thread(target=self._read, args=(self.process,), daemon=True)
        self._reader.start()
        deadline = time.monotonic() + timeout_s
        while not self._started.wait(0.1):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise SchedulerStartError(f"podsched scheduler did not start; its output:\n{self.log()}")

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        for line in process.stderr:
            self.lines.append(line)
            if self._started.is_set():
                if self._on_line is not None:
                    self._on_line(line)
                continue
            match = _SCHEDULER_STARTED.search(line)
            if match:
                self.started_line = line.rstrip()
                self.metrics_url = match["metrics"]
                self.identity = match["identity"]
                self._started.set()

    def get(self, path: str) -> tuple[int, str]:
        """(HTTP status, body) of ``path`` on its metrics server: /metrics, /healthz, /readyz."""
        return http_get(self.metrics_url + path)

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Wait until /readyz answers ok: its informers have listed everything once."""
        deadline = time.monotonic() + timeout_s
        while self.get("/readyz")[0] != 200:
            if time.monotonic() > deadline:
                raise SchedulerStartError(f"the scheduler was not ready within {timeout_s:g}s:\n{self.log()}")
            time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL, as a crash: no lease released, nothing finished."""
        if self.running():
            assert self.process is not None
            self.process.send_signal(signal.SIGKILL)
        self.stop()

    def stop(self) -> int | None:
        """SIGTERM and wait (SIGKILL if it does not stop); the exit code, None if never started."""
        return terminate(self.process, self._reader, SCHEDULER_STOP_TIMEOUT_S)


# The line `podsched ui` prints on stdout once it serves.
_UI_SERVING = re.compile(r"podsched ui: serving (?P<url>http://\S+) \(watching (?P<server>[^)]*)\)")
# The web view lists every kind before it serves: a large cluster's first list takes a while.
UI_START_TIMEOUT_S = 60.0


class UiStartError(RuntimeError):
    pass


class UiProcess:
    """One `podsched ui` child process with ``args``, found by the line it prints once it serves (its
    ``url``), stopped with SIGTERM. Its stderr goes with its stdout into ``lines``."""

    def __init__(self, args: Sequence[str], *, env: Mapping[str, str] | None = None) -> None:
        self.command = [sys.executable, "-m", "cluster.cli", "ui", *args]
        self.env = dict(env) if env is not None else None
        self.process: subprocess.Popen[str] | None = None
        self.lines: collections.deque[str] = collections.deque(maxlen=_LOG_LINES)
        #: The page's URL ("http://127.0.0.1:PORT/"), once it serves.
        self.url = ""
        self._serving = threading.Event()
        self._reader: threading.Thread | None = None

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log(self) -> str:
        return "".join(self.lines)

    def start(self, timeout_s: float = UI_START_TIMEOUT_S) -> None:
        """Start it and return once it serves; UiStartError with its output if it does not."""
        if self.running():
            raise RuntimeError("the web view is already running")
        self._serving.clear()
        self.url = ""
        self.process = subprocess.Popen(
            [*die_with_parent_prefix(), *self.command], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, env=self.env, process_group=OWN_PROCESS_GROUP,
        )
        self._reader = threading.Thread(target=self._read, args=(self.process,), daemon=True)
        self._reader.start()
        deadline = time.monotonic() + timeout_s
        while not self._serving.wait(0.1):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise UiStartError(f"podsched ui did not start; its output:\n{self.log()}")

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        with contextlib.suppress(ValueError, OSError):
            for line in process.stdout:
                self.lines.append(line)
                match = _UI_SERVING.search(line)
                if match and not self._serving.is_set():
                    self.url = match["url"]
                    self._serving.set()

    def stop(self) -> int | None:
        """SIGTERM and wait (SIGKILL if it does not stop); the exit code, None if never started."""
        return terminate(self.process, self._reader, STOP_TIMEOUT_S)


def terminate(process: subprocess.Popen[str] | None, reader: threading.Thread | None,
              timeout_s: float) -> int | None:
    """SIGTERM ``process`` and wait (SIGKILL after ``timeout_s``), then let its output ``reader`` finish;
    the exit code, None if it never started."""
    if process is None:
        return None
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if reader is not None:
        reader.join(2)
    return process.returncode
