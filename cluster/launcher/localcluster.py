"""A whole podsched control plane on this machine, as separate OS processes: what `podsched up` runs and
what `podsched demo` tells its story with.

- the store: the embedded SQLite store in the data directory (the default), an etcd cluster given by
  its endpoints, or a local etcd cluster of N members started from the etcd binary;
- K API servers (one on the embedded store: SQLite is one process's file), each serving the Kubernetes
  HTTP API beside gRPC, and a kubeconfig for the first's in the data directory; N scheduler replicas
  electing a leader on the kube-system/kube-scheduler Lease, all under one `Supervisor`, which starts
  again any of them that exits (a replica that loses its lease exits 1 and comes back as a standby);
- optionally N Ready nodes of 8 cpu, 32Gi and 110 pods;
- a `LeadershipWatch` on the Lease, whose changes are reported as they are seen;
- optionally the web view, `podsched ui`, as one more supervised child (the ``readonly`` user with TLS);
- with ``tls``: `podsched certs` files (made if absent) and every connection over TLS: API servers serving
  mutual TLS and tokens, a local etcd with client-cert auth, replicas presenting the ``scheduler``
  user's certificate, the cluster's own client the ``admin``'s (an external ``etcd`` is used as given).

Every line it has to say goes to ``report`` (without a timestamp: the caller adds its own). Local etcd
members are not restarted when they exit: a 3-member cluster rides out the loss of one.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cluster.api import errors, objects_pb2, timeutil
from cluster.client import Client, ClientCredentials, LeaderChange, LeadershipWatch
from cluster.client.kubeconfig import kubeconfig, write_kubeconfig
from cluster.healthserver import parse_address
from cluster.launcher.certs import Bundle, CertsError, write_bundle
from cluster.launcher.etcd import EtcdCluster
from cluster.launcher.process import ApiServerProcess, SchedulerProcess, UiProcess
from cluster.launcher.supervisor import Child, RestartPolicy, Supervisor
from cluster.ui.hosts import DEFAULT_LISTEN as DEFAULT_UI_LISTEN
from cluster.ui.hosts import split_host
from scheduler.leaderelection import LeaderElectionTimings

#: What each node `--nodes` creates can hold (a common cloud machine; kubelet's default pod limit).
NODE_CPU = "8"
NODE_MEMORY = "32Gi"
NODE_PODS = "110"
#: The kubeconfig `podsched up` writes into its data directory.
KUBECONFIG_FILE = "kubeconfig"
#: The layers the supervisor stops in reverse: the web view and the replicas first, then the API servers
#: they talk to.
_API_LAYER = 0
_SCHEDULER_LAYER = 1
_UI_LAYER = 2


class UpConfigError(ValueError):
    """A setting that cannot work; ``flag`` names `podsched up`'s flag for it."""

    def __init__(self, flag: str, problem: str) -> None:
        super().__init__(f"{flag}: {problem}")
        self.flag = flag
        self.problem = problem


@dataclass(frozen=True)
class UpConfig:
    #: Scheduler replicas (at least 1).
    replicas: int = 3
    #: API servers (more than one needs etcd).
    apiservers: int = 1
    #: Endpoints of an etcd cluster to use; empty for the embedded store or a local etcd.
    etcd: tuple[str, ...] = ()
    #: Members of a local etcd cluster to start (0: none).
    etcd_local: int = 0
    #: Nodes to create, node-1..node-N.
    nodes: int = 0
    #: Where the embedded store or the local etcd keep their data; None: a temporary directory,
    #: removed when the cluster stops.
    data_dir: Path | None = None
    #: The first API server's address (port 0: a free one); the others take free ports on that host.
    host: str = "127.0.0.1"
    port: int = 7443
    #: Where the first API server serves the Kubernetes HTTP API (its --http-listen, host:port); "": on
    #: ``host``, the port beside ``port`` (port + 1; a free one when ``port`` is 0). The others serve it
    #: on free ports of the same host.
    http_listen: str = ""
    #: The replicas' leader-election timings.
    timings: LeaderElectionTimings = field(default_factory=LeaderElectionTimings)
    #: More flags for every `podsched scheduler` replica.
    scheduler_args: tuple[str, ...] = ()
    #: How soon an exited child is started again.
    restart_policy: RestartPolicy = field(default_factory=RestartPolicy)
    #: Run everything with TLS and authentication.
    tls: bool = False
    #: Where the certificates are (made when absent); None: ``pki`` in the data directory.
    certs_dir: Path | None = None
    #: Run the web view (`podsched ui`) too, serving on ``ui_listen`` (port 0: a free one) and answering
    #: the names ``ui_allowed_hosts`` too (its --allowed-host).
    ui: bool = False
    ui_listen: str = DEFAULT_UI_LISTEN
    ui_allowed_hosts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.replicas < 1:
            raise UpConfigError("--replicas", f"must be at least 1, got {self.replicas}")
        if self.apiservers < 1:
            raise UpConfigError("--apiservers", f"must be at least 1, got {self.apiservers}")
        if self.etcd and self.etcd_local:
            raise UpConfigError("--etcd-local", "cannot be combined with --etcd: use one store")
        if self.etcd_local < 0:
            raise UpConfigError("--etcd-local", f"must be at least 1 member, got {self.etcd_local}")
        if self.apiservers > 1 and not self.on_etcd:
            raise UpConfigError(
                "--apiservers",
                f"{self.apiservers} API servers need a shared etcd store (the embedded store belongs to one "
                "process): add --etcd ENDPOINTS or --etcd-local 3",
            )
        if self.nodes < 0:
            raise UpConfigError("--nodes", f"must be 0 or more, got {self.nodes}")
        if not 0 <= self.port < 65536:
            raise UpConfigError("--listen", f"port {self.port} is out of range")
        if self.http_listen:
            try:
                parse_address(self.http_listen)
            except ValueError as exc:
                raise UpConfigError("--http-listen", str(exc)) from None
            if self.http_listen == f"{self.host}:{self.port}" and self.port:
                raise UpConfigError("--http-listen", f"{self.http_listen} is --listen's address too")
        elif self.port == 65535:
            raise UpConfigError("--listen", "port 65535 leaves no port beside it for the HTTP API: "
                                "give --http-listen")
        if self.certs_dir is not None and not self.tls:
            raise UpConfigError("--certs-dir", "applies with --tls only")
        try:
            parse_address(self.ui_listen)
        except ValueError as exc:
            raise UpConfigError("--ui-listen", str(exc)) from None
        for name in self.ui_allowed_hosts:
            if split_host(name) is None:
                raise UpConfigError("--ui-allowed-host", f"expected NAME or NAME:PORT, got {name!r}")

    def apiserver_http_listen(self, index: int) -> str:
        """The --http-listen of the ``index``-th API server (from 1); port 0: a free one."""
        if index == 1 and self.http_listen:
            return self.http_listen
        host = parse_address(self.http_listen)[0] if self.http_listen else self.host.strip("[]")
        port = self.port + 1 if index == 1 and self.port else 0
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    @property
    def on_etcd(self) -> bool:
        return bool(self.etcd) or self.etcd_local > 0

    def scheduler_flags(self, servers: str) -> list[str]:
        t = self.timings
        return [
            "--server", servers, "--metrics-addr", f"{self.host}:0", "--leader-elect=true",
            "--leader-elect-lease-duration", f"{t.lease_duration_s:g}s",
            "--leader-elect-renew-deadline", f"{t.renew_deadline_s:g}s",
            "--leader-elect-retry-period", f"{t.retry_period_s:g}s",
            *self.scheduler_args,
        ]  # fmt: skip


class UpFailed(RuntimeError):
    """Part of the cluster did not start; the message says which and quotes its output."""


class LocalCluster:
    """``async with LocalCluster(config, report=print) as cluster:`` starts it all and stops it all."""

    def __init__(self, config: UpConfig, *, report: Callable[[str], None]) -> None:
        self.config = config
        self._report = report
        self.supervisor = Supervisor(
            policy=config.restart_policy, report=report, on_started=self._started, on_exit=self._exited
        )
        self.apiservers: dict[str, ApiServerProcess] = {}
        self.replicas: dict[str, SchedulerProcess] = {}
        #: The web view, with ``ui``.
        self.ui: UiProcess | None = None
        self.etcd: EtcdCluster | None = None
        self.leadership: LeadershipWatch | None = None
        self.client: Client | None = None
        #: The certificates and tokens, with ``tls``.
        self.bundle: Bundle | None = None
        #: The kubeconfig written into the data directory once the API servers serve.
        self.kubeconfig: Path | None = None
        #: identity -> replica name, for every replica process started so far.
        self._replica_of: dict[str, str] = {}
        self._data_dir: Path | None = None
        self._temporary_data = False
        self._tasks: list[asyncio.Task[None]] = []
        #: Set, and replaced by a fresh one, at every change of leader.
        self._changed = asyncio.Event()

    # ---------------------------------------------------------------------------------------- reading

    @property
    def data_dir(self) -> Path:
        if self._data_dir is None:
            raise RuntimeError("the cluster has not started")
        return self._data_dir

    @property
    def credentials(self) -> ClientCredentials:
        """How a client of this cluster connects: as the admin user over TLS, or plaintext."""
        if self.bundle is None:
            return ClientCredentials()
        return self.bundle.user_credentials("admin")

    def client_env(self) -> dict[str, str]:
        """The PODSCHED_* variables that point the CLI at this cluster (as the admin user, with TLS)."""
        return {"PODSCHED_SERVER": self.servers, **(self.bundle.user_env("admin") if self.bundle else {})}

    @property
    def servers(self) -> str:
        """Every API server's address, comma-separated: the PODSCHED_SERVER to use."""
        return ",".join(server.address for server in self.apiservers.values())

    def replica_of(self, identity: str) -> str | None:
        """The replica whose process ran (or runs) as ``identity``."""
        # A replica's identity is known from its startup line, which may be read after the lease watch
        # has seen it lead: look at the running processes too, whose identities start with their name
        # and pid.
        if not identity:
            return None
        running = (
            name for name, replica in self.replicas.items()
            if replica.identity == identity
            or (replica.running() and identity.startswith(f"{name}_pid{replica.pid}_"))
        )
        return self._replica_of.get(identity) or next(running, None)

    @property
    def leader(self) -> str:
        """The lease's holder now, as last seen ("" when nobody holds it)."""
        return self.leadership.holder if self.leadership is not None else ""

    async def wait_leader(self, *, other_than: str = "", timeout_s: float) -> LeaderChange:
        """The change that made the current holder the leader, once someone other than ``other_than``
        holds the lease; TimeoutError after ``timeout_s``."""
        async with asyncio.timeout(timeout_s):
            while True:
                watch = self.leadership
                if watch is not None and watch.holder and watch.holder != other_than:
                    return watch.changes[-1]
                await self._changed.wait()

    # -------------------------------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> LocalCluster:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def start(self) -> None:
        """Start the store, the API servers, the nodes, the replicas and the lease watch; UpFailed (with
        everything started so far stopped again) when a part does not come up."""
        try:
            await self._start()
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Stop everything that was started: the watch, the replicas, the API servers, the etcd members;
        remove a temporary data directory."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        if self.client is not None:
            await self.client.close()
            self.client = None
        await self.supervisor.stop()
        if self.etcd is not None:
            await self.etcd.stop()
            self.etcd = None
        if self._temporary_data and self._data_dir is not None:
            shutil.rmtree(self._data_dir, ignore_errors=True)

    async def _start(self) -> None:
        config = self.config
        if config.data_dir is None:
            self._data_dir = Path(tempfile.mkdtemp(prefix="podsched-up-"))
            self._temporary_data = True
        else:
            self._data_dir = config.data_dir
            self._data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        if config.tls:
            self.bundle = self._certificates(config.certs_dir or self.data_dir / "pki")
        store_args = await self._store_args()
        for index in range(1, config.apiservers + 1):
            name = f"apiserver-{index}"
            self.apiservers[name] = self.apiserver_process(index, store_args)
            self.supervisor.add(name, self.apiservers[name], layer=_API_LAYER)
        await self._start_children(list(self.apiservers))
        self.client = Client(self.servers, credentials=self.credentials)
        self.kubeconfig = self._write_kubeconfig()
        if config.nodes:
            await self._create_nodes()

        self.leadership = LeadershipWatch(self.client, on_change=self._leader_changed)
        self._tasks.append(asyncio.create_task(self.leadership.run(), name="lease-watch"))
        await self.leadership.wait_synced()

        flags = config.scheduler_flags(self.servers)
        if self.bundle is not None:
            flags += self.bundle.user_flags("scheduler")
        for index in range(1, config.replicas + 1):
            name = f"scheduler-{index}"
            # Named in its identity, with its pid: the Lease, the web view and this log tell replicas apart.
            self.replicas[name] = SchedulerProcess([*flags, "--replica-name", name])
            self.supervisor.add(name, self.replicas[name], layer=_SCHEDULER_LAYER)
        if config.ui:
            ui_flags = ["--server", self.servers, "--listen", config.ui_listen]
            for name in config.ui_allowed_hosts:
                ui_flags += ["--allowed-host", name]
            if self.bundle is not None:
                ui_flags += self.bundle.user_flags("readonly")
            self.ui = UiProcess(ui_flags)
            self.supervisor.add("ui", self.ui, layer=_UI_LAYER)
        # The web view starts beside the replicas: it needs only the API servers.
        await self._start_children([*self.replicas, *(["ui"] if self.ui is not None else [])])
        self._tasks.append(asyncio.create_task(self.supervisor.supervise(), name="supervise"))

    def apiserver_process(self, index: int, store_args: list[str]) -> ApiServerProcess:
        """The ``index``-th API server (from 1), not started: on the first's address or a free port, with
        the Kubernetes HTTP API beside gRPC, TLS and authentication with ``tls``."""
        config = self.config
        security = self.bundle.apiserver_flags() if self.bundle is not None else []
        return ApiServerProcess(
            store_args, host=config.host, port=config.port if index == 1 else 0,
            http_listen=config.apiserver_http_listen(index),
            # The schedulers here are podsched's own, which fence every leader's write.
            extra_args=[*security, "--metrics-addr", f"{config.host}:0", "--enforce-leader-fencing"],
        )

    def admin_kubeconfig(self) -> dict[str, Any]:
        """The kubeconfig of the first API server's HTTP API, as the cluster's own client connects: the
        admin user's certificate with TLS, else plaintext."""
        first = self.apiservers["apiserver-1"]
        if first.http_address is None:
            raise RuntimeError("the API servers have not been made")
        return kubeconfig(first.http_address, self.credentials)

    def _write_kubeconfig(self) -> Path:
        path = self.data_dir / KUBECONFIG_FILE
        try:
            write_kubeconfig(path, self.admin_kubeconfig())
        except OSError as exc:
            raise UpFailed(f"cannot write the kubeconfig {path}: {exc}") from exc
        self._report(f"kubeconfig: {path} (for kubectl, on the HTTP API of apiserver-1)")
        return path

    def _certificates(self, directory: Path) -> Bundle:
        """The bundle in ``directory``, written there first when it holds no CA."""
        bundle = Bundle(directory.resolve())
        if bundle.exists():
            self._report(f"certificates: using {bundle.dir}")
            return bundle
        try:
            bundle, _ = write_bundle(directory)
        except CertsError as exc:
            raise UpFailed(f"cannot make the certificates: {exc}") from exc
        self._report(f"certificates: made a CA, server and user certificates and tokens in {bundle.dir}")
        return bundle

    async def _store_args(self) -> list[str]:
        config = self.config
        if config.etcd:
            self._report(f"store: etcd at {','.join(config.etcd)}")
            return ["--etcd", ",".join(config.etcd)]
        if config.etcd_local:
            self.etcd = EtcdCluster(
                config.etcd_local, self.data_dir / "etcd", name_prefix="up-etcd",
                tls=self.bundle.etcd_tls() if self.bundle is not None else None,
            )
            try:
                await self.etcd.start()
            except Exception as exc:
                raise UpFailed(f"the local etcd cluster did not start: {exc}") from exc
            members = ", ".join(f"{m.name} (pid {m.process.pid if m.process else '?'}) on {m.endpoint}"
                                for m in self.etcd.members)
            secured = " (TLS, client-cert auth)" if self.bundle is not None else ""
            self._report(f"store: local etcd cluster of {config.etcd_local}{secured}: {members}")
            etcd_tls = self.bundle.etcd_client_flags() if self.bundle is not None else []
            return ["--etcd", ",".join(self.etcd.endpoints), *etcd_tls]
        self._report(f"store: embedded SQLite in {self.data_dir}")
        return ["--data-dir", str(self.data_dir)]

    async def _start_children(self, names: list[str]) -> None:
        try:
            await self.supervisor.start_all(names)
        except Exception as exc:
            raise UpFailed(str(exc)) from exc

    async def _create_nodes(self) -> None:
        assert self.client is not None
        created = 0
        for index in range(1, self.config.nodes + 1):
            node = objects_pb2.Node(api_version="v1", kind="Node")
            node.metadata.name = f"node-{index}"
            node.metadata.labels["kubernetes.io/hostname"] = node.metadata.name
            for resources in (node.status.capacity, node.status.allocatable):
                resources.update({"cpu": NODE_CPU, "memory": NODE_MEMORY, "pods": NODE_PODS})
            # Ready, as a kubelet registers a healthy node; nothing runs on these nodes to say otherwise.
            now = timeutil.now()
            node.status.conditions.add(
                type="Ready", status="True", reason="KubeletReady", message="kubelet is posting ready status",
                last_heartbeat_time=now, last_transition_time=now,
            )
            with contextlib.suppress(errors.AlreadyExists):  # a data directory used before keeps its nodes
                await self.client.create(node)
                created += 1
        kept = self.config.nodes - created
        self._report(
            f"nodes: node-1..node-{self.config.nodes} ({NODE_CPU} cpu, {NODE_MEMORY}, {NODE_PODS} pods each)"
            + (f"; {kept} already existed" if kept else "")
        )

    # -------------------------------------------------------------------------------------- callbacks

    def _started(self, name: str, child: Child) -> None:
        again = "restarted" if self.supervisor.restarts(name) else "started"
        if isinstance(child, SchedulerProcess):
            self._replica_of[child.identity] = name
            self._report(f"{name} {again}: pid {child.pid}, identity {child.identity or '(none)'}")
        elif isinstance(child, ApiServerProcess):
            self._report(f"{name} {again}: pid {child.pid}, serving on {child.address} "
                         f"(metrics {child.metrics_url}/metrics), HTTP API on {child.http_address}")
        elif isinstance(child, UiProcess):
            self._report(f"{name} {again}: pid {child.process.pid if child.process else '?'}")
            self._report(f"ui: {child.url}")

    def _exited(self, name: str, child: Child, code: int) -> None:
        if isinstance(child, SchedulerProcess) and self.leadership is not None:
            self.leadership.holder_gone(child.identity)

    def _leader_changed(self, change: LeaderChange) -> None:
        if change.holder:
            replica = self.replica_of(change.holder) or "not one of this cluster's replicas"
            after = (f", after {change.leaderless_s:.2f}s without a leader"
                     if change.leaderless_s is not None else "")
            self._report(f"leader is now {change.holder} ({replica}, fencing token {change.token}{after})")
        else:
            replica = self.replica_of(change.previous) or change.previous
            self._report(f"{replica} released the lease: no leader")
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
