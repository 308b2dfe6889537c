"""Real etcd processes on loopback: a cluster of 1..N members for tests, benchmarks and `podsched up`.

Each member listens on two free 127.0.0.1 ports (client and peer), keeps its data in
``data_root/<name>`` and writes its log to ``data_root/<name>.log``; ``data_root/cluster.json`` records
names and ports so that a stopped cluster can be started again on its data. The processes are plain
``subprocess.Popen`` children, so one cluster can be driven from different event loops (a test session's
fixture starts it, each test's own loop kills and restarts members).

Free ports are found by binding port 0 and closing the socket, which leaves a short window in which
another process may take the port; a start that fails with "address already in use" is retried with new
ports. On Linux (with util-linux's setpriv) every member gets SIGKILL when the process that started it
dies, so a crashed test run leaves no etcd behind.

With ``tls`` (an `EtcdTls`: `podsched certs` writes one) the members serve clients and peers over TLS
and require client certificates signed by the etcd CA (etcd's client-cert auth); the cluster's own
readiness probes present the client certificate of ``tls``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import grpc.aio
from etcd3aio._protobuf import StatusResponse
from etcd3aio.errors import EtcdError
from etcd3aio.maintenance import MaintenanceService

from cluster.launcher.ports import free_port

#: How long a cluster (or a restarted member) may take to elect a leader. etcd's default election
#: timeout is 1 s; a loaded 2-core machine running several clusters needs a generous margin.
READY_TIMEOUT_S = 30.0
#: How long a member gets to exit after SIGTERM before it is killed.
STOP_GRACE_S = 10.0
#: How long the last member of a multi-member cluster gets in ``stop()`` (see ``_terminate_all``).
LAST_MEMBER_GRACE_S = 1.0
#: Whole-cluster start attempts when a freshly picked port turned out to be taken.
START_ATTEMPTS = 3
#: The file in ``data_root`` that records member names, ports and the cluster token, so that a
#: cluster can be started again on its data (peer URLs are part of etcd's stored membership).
LAYOUT_FILE = "cluster.json"
#: Lines of a member's log quoted in a start failure.
LOG_TAIL_LINES = 30

_ADDRESS_IN_USE = "address already in use"

#: etcd's --max-txn-ops for the members started here: room for the largest BindGroup transaction.
MAX_TXN_OPS = 2048


@dataclass(frozen=True, slots=True)
class EtcdTls:
    """PEM files that make members serve TLS and require client certificates (client and peer)."""

    #: The CA that signs member, peer and client certificates; members trust only it.
    ca_file: Path
    server_cert_file: Path
    server_key_file: Path
    peer_cert_file: Path
    peer_key_file: Path
    #: A client certificate of that CA, for the cluster's own probes (the API server's, say).
    client_cert_file: Path
    client_key_file: Path

    def flags(self) -> list[str]:
        return [
            "--cert-file", str(self.server_cert_file), "--key-file", str(self.server_key_file),
            "--trusted-ca-file", str(self.ca_file), "--client-cert-auth",
            "--peer-cert-file", str(self.peer_cert_file), "--peer-key-file", str(self.peer_key_file),
            "--peer-trusted-ca-file", str(self.ca_file), "--peer-client-cert-auth",
        ]  # fmt: skip

    def channel_credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(
            self.ca_file.read_bytes(), self.client_key_file.read_bytes(), self.client_cert_file.read_bytes()
        )


class EtcdNotFound(RuntimeError):
    """No etcd binary could be found."""


class EtcdStartError(RuntimeError):
    """An etcd member did not come up; the message quotes the tail of its log."""


def find_etcd_binary() -> str:
    """The etcd executable: ``$ETCD_BIN`` if set, else ``etcd`` on PATH."""
    configured = os.environ.get("ETCD_BIN")
    if configured:
        if not (os.path.isfile(configured) and os.access(configured, os.X_OK)):
            raise EtcdNotFound(f"ETCD_BIN={configured} is not an executable file")
        return configured
    found = shutil.which("etcd")
    if found is None:
        raise EtcdNotFound(
            "etcd not found on PATH: install it (Debian/Ubuntu: `sudo apt-get install etcd-server`, "
            "or `make etcd`) or set ETCD_BIN to the etcd 3.4+ executable"
        )
    return found


def _die_with_parent_prefix() -> list[str]:
    """A command prefix that makes the member get SIGKILL when the process that started it dies
    (util-linux's setpriv, on Linux). Not a preexec_fn: Python code between fork and exec in a
    process running gRPC threads can crash the child."""
    setpriv = shutil.which("setpriv") if sys.platform == "linux" else None
    return [setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []


def _log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return "(no log written)"
    return "\n".join(text.splitlines()[-lines:]) or "(log is empty)"


@dataclass
class EtcdMember:
    name: str
    client_port: int
    peer_port: int
    data_dir: Path
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    #: "https" when the cluster runs with TLS.
    scheme: str = "http"

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.client_port}"

    @property
    def client_url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.client_port}"

    @property
    def peer_url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.peer_port}"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


class EtcdCluster:
    """``size`` etcd members forming one cluster on loopback (with ``tls``: TLS and client-cert auth).

    ``data_root`` holds each member's data directory and log; when it is None the cluster makes a
    temporary directory and removes it in ``stop()``. Use ``async with EtcdCluster(3) as cluster:`` or
    call ``start()`` and ``stop()``.
    """

    def __init__(
        self,
        size: int = 1,
        data_root: Path | str | None = None,
        *,
        name_prefix: str = "etcd",
        binary: str | None = None,
        tls: EtcdTls | None = None,
    ) -> None:
        if size < 1:
            raise ValueError(f"an etcd cluster needs at least one member, got size={size}")
        self.size = size
        self.name_prefix = name_prefix
        self.tls = tls
        self._binary = binary
        self._owns_data_root = data_root is None
        self.data_root = Path(data_root) if data_root is not None else None
        self.members: list[EtcdMember] = []
        self._cluster_token = ""

    @property
    def endpoints(self) -> list[str]:
        """Every member's client address, "127.0.0.1:PORT"."""
        return [member.endpoint for member in self.members]

    async def start(self) -> None:
        """Start every member and return once all of them answer and agree on a leader.

        A ``data_root`` that already holds this cluster (its ``cluster.json`` layout) is started again
        with its data, names and ports; otherwise a new cluster is created there.
        """
        if any(member.running for member in self.members):
            raise RuntimeError(f"etcd cluster {self.name_prefix} is already running: stop() it first")
        binary = self._binary or find_etcd_binary()
        if self.data_root is None:
            self.data_root = Path(tempfile.mkdtemp(prefix=f"{self.name_prefix}-"))
        self.data_root.mkdir(parents=True, exist_ok=True)
        if self._load_layout():
            await self._start_members(binary)
            return
        for attempt in range(1, START_ATTEMPTS + 1):
            self._plan_layout()
            try:
                await self._start_members(binary)
                return
            except EtcdStartError:
                port_taken = any(_ADDRESS_IN_USE in _log_tail(m.log_path) for m in self.members)
                if not port_taken or attempt == START_ATTEMPTS:
                    raise

    async def kill_member(self, index: int) -> None:
        """SIGKILL member ``index`` (a crash: no clean shutdown) and reap it."""
        member = self.members[index]
        if member.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            member.process.kill()
        await _wait_exit(member.process, within_s=STOP_GRACE_S)

    async def stop_member(self, index: int) -> None:
        """Stop member ``index`` cleanly (SIGTERM, then SIGKILL after a grace period)."""
        member = self.members[index]
        if member.process is not None:
            await _terminate(member.process)

    async def restart_member(self, index: int) -> None:
        """Start member ``index`` again on its old ports and data (stopping it first if it runs), and
        return once it answers with a leader."""
        await self.stop_member(index)
        self._spawn(self._binary or find_etcd_binary(), index)
        await self._wait_ready([index])

    async def leader(self) -> int | None:
        """The index of the member that is leader now, by the running members' own account (None
        while there is none)."""
        for index, member in enumerate(self.members):
            if member.running:
                status = await _status(member.endpoint, self.tls)
                if status is not None and status.leader != 0 and status.leader == status.header.member_id:
                    return index
        return None

    async def stop(self) -> None:
        """Terminate every member and wait for all of them; remove a temporary data root."""
        await self._terminate_all()
        if self._owns_data_root and self.data_root is not None:
            shutil.rmtree(self.data_root, ignore_errors=True)
            self.data_root = None

    async def __aenter__(self) -> EtcdCluster:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.stop()

    @property
    def _scheme(self) -> str:
        return "https" if self.tls is not None else "http"

    @property
    def _layout_path(self) -> Path:
        assert self.data_root is not None
        return self.data_root / LAYOUT_FILE

    def _load_layout(self) -> bool:
        """Adopt the layout saved in ``data_root``, if any; False when there is none."""
        try:
            layout = json.loads(self._layout_path.read_text())
        except FileNotFoundError:
            return False
        if len(layout["members"]) != self.size:
            raise EtcdStartError(
                f"{self._layout_path} describes a {len(layout['members'])}-member cluster, "
                f"not {self.size} members: use another data root or the same size"
            )
        assert self.data_root is not None
        self._cluster_token = layout["token"]
        self.members = [
            EtcdMember(
                name=m["name"],
                client_port=m["client_port"],
                peer_port=m["peer_port"],
                data_dir=self.data_root / m["name"],
                log_path=self.data_root / f"{m['name']}.log",
                scheme=self._scheme,
            )
            for m in layout["members"]
        ]
        return True

    def _plan_layout(self) -> None:
        """Pick names and free ports for a new cluster, wipe stale member data and save the layout."""
        assert self.data_root is not None
        self._cluster_token = f"{self.name_prefix}-{uuid.uuid4().hex[:12]}"
        self.members = []
        for index in range(self.size):
            name = f"{self.name_prefix}{index}"
            shutil.rmtree(self.data_root / name, ignore_errors=True)
            (self.data_root / f"{name}.log").unlink(missing_ok=True)
            self.members.append(
                EtcdMember(
                    name=name,
                    client_port=free_port(),
                    peer_port=free_port(),
                    data_dir=self.data_root / name,
                    log_path=self.data_root / f"{name}.log",
                    scheme=self._scheme,
                )
            )
        layout = {
            "token": self._cluster_token,
            "members": [
                {"name": m.name, "client_port": m.client_port, "peer_port": m.peer_port} for m in self.members
            ],
        }
        self._layout_path.write_text(json.dumps(layout, indent=2))

    async def _start_members(self, binary: str) -> None:
        try:
            for index in range(self.size):
                self._spawn(binary, index)
            await self._wait_ready(range(self.size))
        except BaseException:
            await self._terminate_all()
            raise

    def _spawn(self, binary: str, index: int) -> None:
        member = self.members[index]
        initial_cluster = ",".join(f"{m.name}={m.peer_url}" for m in self.members)
        command = [
            *_die_with_parent_prefix(),
            binary,
            "--name", member.name,
            "--data-dir", str(member.data_dir),
            "--listen-client-urls", member.client_url,
            "--advertise-client-urls", member.client_url,
            "--listen-peer-urls", member.peer_url,
            "--initial-advertise-peer-urls", member.peer_url,
            "--initial-cluster", initial_cluster,
            "--initial-cluster-token", self._cluster_token,
            # Ignored once the data dir exists, so a restarted member rejoins with its old identity.
            "--initial-cluster-state", "new",
            "--logger", "zap",
            "--log-outputs", "stderr",
            # A BindGroup of up to 1000 pods is one Txn of a comparison per pod, per node and for the
            # fence (etcd's default cap is 128 per list).
            "--max-txn-ops", str(MAX_TXN_OPS),
            # A watch that asked for progress notifications (the API server's watch cache) learns within
            # 100 ms that writes outside its prefix moved the revision on, on an etcd too old for it to
            # ask (etcd's default is 10 minutes); a watch with events in that time gets none.
            "--experimental-watch-progress-notify-interval", "100ms",
            *(self.tls.flags() if self.tls is not None else []),
        ]  # fmt: skip
        with member.log_path.open("a") as log:
            member.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                # A group of its own: a terminal's Ctrl-C reaches only the process that started it, which
                # stops etcd last (API servers and schedulers still need it while they stop).
                process_group=0,
            )

    async def _wait_ready(self, indexes: range | list[int]) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        pending = list(indexes)
        while pending:
            for index in list(pending):
                member = self.members[index]
                assert member.process is not None
                if member.process.poll() is not None:
                    raise EtcdStartError(
                        f"etcd member {member.name} exited with code {member.process.returncode} "
                        f"(log {member.log_path}):\n{_log_tail(member.log_path)}"
                    )
                if await _has_leader(member.endpoint, self.tls):
                    pending.remove(index)
            if not pending:
                return
            if time.monotonic() > deadline:
                tails = "\n".join(
                    f"--- {self.members[i].name} ({self.members[i].log_path}):\n"
                    f"{_log_tail(self.members[i].log_path)}"
                    for i in pending
                )
                raise EtcdStartError(
                    f"etcd members {[self.members[i].name for i in pending]} have no leader after "
                    f"{READY_TIMEOUT_S:.0f}s:\n{tails}"
                )
            await asyncio.sleep(0.1)

    async def _terminate_all(self) -> None:
        # One at a time, so that a stopping leader hands leadership to a live peer. The last member of
        # a multi-member cluster may still believe itself leader of peers that are gone and spend
        # seconds trying to hand over; it is killed after a short grace (etcd fsyncs its WAL before
        # acknowledging a write, so a kill loses nothing).
        running = [m.process for m in self.members if m.process is not None and m.process.poll() is None]
        for position, process in enumerate(running):
            last_of_several = self.size > 1 and position == len(running) - 1
            await _terminate(process, grace_s=LAST_MEMBER_GRACE_S if last_of_several else STOP_GRACE_S)


async def _status(endpoint: str, tls: EtcdTls | None = None) -> StatusResponse | None:
    """The member's status, or None if it does not answer within a second."""
    channel = (
        grpc.aio.secure_channel(endpoint, tls.channel_credentials()) if tls is not None
        else grpc.aio.insecure_channel(endpoint)
    )
    try:
        return await MaintenanceService(channel, max_attempts=1).status(timeout=1.0)
    except (EtcdError, grpc.aio.AioRpcError, TimeoutError):
        return None
    finally:
        await channel.close()


async def _has_leader(endpoint: str, tls: EtcdTls | None = None) -> bool:
    """Whether the member at ``endpoint`` answers and knows a leader."""
    status = await _status(endpoint, tls)
    return status is not None and status.leader != 0 and not status.errors


async def _terminate(process: subprocess.Popen[bytes], *, grace_s: float = STOP_GRACE_S) -> None:
    """SIGTERM ``process``; SIGKILL it if it is still running ``grace_s`` later."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        if not await _wait_exit(process, within_s=grace_s):
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await _wait_exit(process, within_s=STOP_GRACE_S)


async def _wait_exit(process: subprocess.Popen[bytes], *, within_s: float) -> bool:
    """Poll until ``process`` has exited (and is reaped); False if it outlived ``within_s``."""
    deadline = time.monotonic() + within_s
    while process.poll() is None:
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True
