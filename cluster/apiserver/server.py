"""The API server process in one object: the gRPC server and the work it owns.

``ApiServer(store, options)``; ``port = await server.start()``; ``await server.wait_closed()``;
``await server.stop(grace_s)``. The caller opens and closes the store.

Besides the ``ApiServer`` service it serves the standard gRPC health service (SERVING once the store
has answered and the system priority classes exist; NOT_SERVING while stopping) and server
reflection, so grpcurl and load balancers work without our protos. Security: with
``tls_cert_file`` and ``tls_private_key_file`` it serves TLS (with ``client_ca_file``, mutual TLS);
callers prove who they are with a bearer token from ``token_auth_file`` or a client certificate, and
the roles of ``authorization_policy_file`` (or the built-in group bindings) say what they may do
(cluster/apiserver/auth). The files are loaded and checked when the options are built: a bad one is a
ValueError naming the flag, the file and the line or entry. Without a token file or client CA nobody
is authenticated, so the server serves loopback only and every caller is an admin. The health
service needs no identity (load balancers), though with a client CA every connection, its own too,
needs a certificate from that CA (tls.py); reflection needs an identity when authentication is on.
``loopback_token`` is an admin token only this process knows, for its own clients (controllers).

With ``http_listen`` it also serves the Kubernetes HTTP API there (cluster/apiserver/http): the same
verbs, cache, access control, gates and metrics; HTTPS with the same certificate when it has one, and
plain HTTP only where gRPC serves plaintext (loopback, or ``allow_plaintext_tokens``).

With ``metrics_listen`` it also serves plain HTTP there, as kube-apiserver serves on its port:
``/metrics`` (metrics.py: requests, open watches, flow control, under kube-apiserver's names),
``/livez`` and ``/healthz`` (the server's background work runs) and ``/readyz`` (it serves and is not
stopping).

The background tasks run in one TaskGroup for the server's lifetime: the graceful-deletion finisher
(graceful.py), the store compactor, which keeps a week of lease renewals from growing the store without
bound, the HTTP endpoints when asked for, and with ``enforce_leader_fencing`` the watch that times the
Leases by this server's clock (leadership.py). One failing is fatal: the server stops and ``wait_closed``
raises the error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc

from cluster.api import apiserver_pb2
from cluster.api.addresses import is_loopback_host
from cluster.api.fencing import SCHEDULER_LEASE, LeaseRef
from cluster.api.limits import MAX_REQUEST_BYTES
from cluster.apiserver.auth.access import Access
from cluster.apiserver.auth.gate import RequestGate
from cluster.apiserver.auth.identity import RequestInfo, UserInfo
from cluster.apiserver.auth.security import SecurityConfig, load_security
from cluster.apiserver.bootstrap import (
    ensure_system_namespaces,
    ensure_system_priority_classes,
    ensure_system_quota,
)
from cluster.apiserver.flowcontrol import Classification, FlowControl, FlowControlConfig
from cluster.apiserver.graceful import DeletionFinisher
from cluster.apiserver.inprocess import InProcessServer
from cluster.apiserver.leadership import Leadership
from cluster.apiserver.limits import ApiLimits, RequestDeadline, WatchLimit
from cluster.apiserver.malformed import RefuseMalformedRequests
from cluster.apiserver.metrics import ApiServerMetrics
from cluster.apiserver.service import ApiService, GuardedReflection, add_api_service
from cluster.apiserver.storage import MAX_OBJECT_BYTES, Storage
from cluster.apiserver.verbs import Verbs
from cluster.apiserver.watchcache import Cacher
from cluster.healthserver import HealthServer, parse_address
from store.base import Store
from store.compactor import Compactor
from store.groupcommit import GroupCommitStore
from store.observed import ObservedStore

if TYPE_CHECKING:
    from cluster.apiserver.http.server import HttpServer

log = logging.getLogger(__name__)

SERVICE_NAME = apiserver_pb2.DESCRIPTOR.services_by_name["ApiServer"].full_name
#: The flag that sets ``ApiServerOptions.allow_plaintext_tokens``, named in the refusal and the warning.
ALLOW_PLAINTEXT_TOKENS_FLAG = "--insecure-allow-plaintext-tokens"


@dataclass(frozen=True, slots=True)
class ApiServerOptions:
    #: host:port to serve on; port 0 picks a free port (``start`` returns it).
    listen: str = "127.0.0.1:7443"
    #: Seconds between compactions; 300 is kube-apiserver's --etcd-compaction-interval default.
    compaction_interval_s: float = 300.0
    #: Revisions a compaction always keeps; 1000 as kine keeps, so a watcher a little behind can resume.
    min_retained_revisions: int = 1000
    #: The largest object (serialized) the server stores; etcd's default request limit is 1.5 MiB.
    max_object_bytes: int = MAX_OBJECT_BYTES
    #: PEM certificate (chain) and private key to serve TLS with (kube-apiserver's flags); both or neither.
    tls_cert_file: str | None = None
    tls_private_key_file: str | None = None
    #: PEM CA bundle: clients must present a certificate it signed (CN = user, O = groups).
    client_ca_file: str | None = None
    #: Kubernetes' static token file: token,user,uid,"group1,group2".
    token_auth_file: str | None = None
    #: YAML roles and bindings (cluster/apiserver/auth/policy.py); the built-in bindings without one.
    authorization_policy_file: str | None = None
    #: Take bearer tokens over plaintext on a non-loopback address (refused without it: anyone on the
    #: network path could read and reuse them).
    allow_plaintext_tokens: bool = False
    #: The files above, loaded and checked (at construction, so that a bad file stops the start).
    security: SecurityConfig = field(init=False, repr=False, compare=False)
    #: The concurrency limit and queues of flow control (cluster/apiserver/flowcontrol).
    flow_control: FlowControlConfig = field(default_factory=FlowControlConfig)
    #: Request timeout, watches per user, List page size (cluster/apiserver/limits.py).
    limits: ApiLimits = field(default_factory=ApiLimits)
    #: host:port of the HTTP endpoints (/metrics, /livez, /healthz, /readyz); None serves none.
    metrics_listen: str | None = None
    #: host:port of the Kubernetes HTTP API; None serves only gRPC.
    http_listen: str | None = None
    #: Server-enforced leadership (leadership.py): unfenced leader writes refused, Leases arbitrated.
    enforce_leader_fencing: bool = False
    #: Under enforcement, the Leases whose fences the server takes: the schedulers' (--fenced-lease).
    fenced_leases: tuple[LeaseRef, ...] = (SCHEDULER_LEASE,)

    def __post_init__(self) -> None:
        if not self.listen or ":" not in self.listen:
            raise ValueError(f"listen address must be host:port, got {self.listen!r}")
        if self.metrics_listen is not None:
            parse_address(self.metrics_listen)
        if self.http_listen is not None:
            parse_address(self.http_listen)
        if self.compaction_interval_s <= 0:
            raise ValueError(f"compaction interval must be positive, got {self.compaction_interval_s}s")
        if self.min_retained_revisions < 0:
            raise ValueError(
                f"min retained revisions must not be negative, got {self.min_retained_revisions}"
            )
        if self.max_object_bytes <= 0:
            raise ValueError(f"max object size must be positive, got {self.max_object_bytes}")
        security = load_security(
            tls_cert_file=self.tls_cert_file,
            tls_private_key_file=self.tls_private_key_file,
            client_ca_file=self.client_ca_file,
            token_auth_file=self.token_auth_file,
            authorization_policy_file=self.authorization_policy_file,
        )
        object.__setattr__(self, "security", security)
        if self.plaintext_tokens_off_loopback and not self.allow_plaintext_tokens:
            exposed = self.listen if not _is_loopback_address(self.listen) else self.http_listen
            raise ValueError(
                f"--token-auth-file without TLS would take bearer tokens in clear text on {exposed}, "
                "where anyone on the network path can read and reuse them: serve TLS (--tls-cert-file and "
                "--tls-private-key-file), listen on loopback (--listen 127.0.0.1:PORT), or accept the risk "
                f"with {ALLOW_PLAINTEXT_TOKENS_FLAG}"
            )

    @property
    def plaintext_tokens_off_loopback(self) -> bool:
        """Whether bearer tokens would cross a network in clear text: a token file, no TLS, and a
        listen address (gRPC's or HTTP's) other than loopback."""
        if self.security.tokens is None or self.security.tls is not None:
            return False
        return any(not _is_loopback_address(address)
                   for address in (self.listen, self.http_listen) if address is not None)


def _is_loopback_address(address: str) -> bool:
    return is_loopback_host(address.rpartition(":")[0])


def _loopback_only(listen: str) -> str:
    """``listen`` moved to the loopback address of its family, same port, when it is not loopback already."""
    host, _, port = listen.rpartition(":")
    if is_loopback_host(host):
        return listen
    return f"[::1]:{port}" if ":" in host.strip("[]") else f"127.0.0.1:{port}"


class ApiServer:
    def __init__(
        self, store: Store, options: ApiServerOptions | None = None, *,
        clock: Callable[[], float] = time.time, rng: random.Random | None = None,
    ) -> None:
        """``rng``: the source of generated names' suffixes (a seeded one makes them repeatable, as a
        simulation's result must be); a fresh one by default."""
        self.options = options or ApiServerOptions()
        self.metrics = ApiServerMetrics()
        store = ObservedStore(store, self.metrics)
        self._store = store
        # Concurrent writes share store requests; the metrics above count the requests actually sent.
        self._registry = Storage(GroupCommitStore(store), max_object_bytes=self.options.max_object_bytes)
        #: An admin bearer token only this process knows, for its own clients (the controllers), as
        #: kube-apiserver's loopback client token; accepted whenever authentication is on.
        self.loopback_token = secrets.token_urlsafe(32)
        self._access = Access.of(self.options.security, self.loopback_token)
        self._leadership = Leadership(
            enforced=self.options.enforce_leader_fencing, may=self._access.authorizer.allows,
            fenced_leases=self.options.fenced_leases,
        )
        self._cache = Cacher(self._registry)
        self._verbs = Verbs(self._registry, clock=clock, leadership=self._leadership, cache=self._cache,
                            rng=rng)
        self._finisher = DeletionFinisher(self._registry, self._cache, clock=clock)
        self._compactor = Compactor(
            store,
            interval_s=self.options.compaction_interval_s,
            min_retained_revisions=self.options.min_retained_revisions,
        )
        self._stopping = asyncio.Event()
        #: The same API for callers in this process (``cluster.client.inprocess``), once started.
        self.in_process = InProcessServer()
        self._health = health.aio.HealthServicer()
        self._listen = self.options.listen
        self._http_listen = self.options.http_listen
        if not self._access.enabled:
            self._listen = _loopback_only(self.options.listen)
            if self._http_listen is not None:
                self._http_listen = _loopback_only(self._http_listen)
        self._http: HttpServer | None = None
        self._endpoints: HealthServer | None = None
        self._server: grpc.aio.Server | None = None
        self._service: ApiService | None = None
        self._background: asyncio.Task[None] | None = None
        self._stopper: asyncio.Task[None] | None = None
        self.port = 0

    async def start(self) -> int:
        """Check the store answers, create the system objects, and serve; returns the port."""
        if self._server is not None:
            raise RuntimeError("the API server is already started")
        await self._store.current_revision()
        await ensure_system_namespaces(self._verbs)
        await ensure_system_priority_classes(self._verbs)
        await ensure_system_quota(self._verbs)

        server = grpc.aio.server(interceptors=[RefuseMalformedRequests()], options=[
            # No SO_REUSEPORT (gRPC's default on Linux): a second server on a busy address must fail,
            # not silently share the port with the first.
            ("grpc.so_reuseport", 0),
            # Requests well past the object size limit still arrive, so that the answer is our Invalid
            # naming the size and the limit rather than gRPC's RESOURCE_EXHAUSTED.
            ("grpc.max_receive_message_length", MAX_REQUEST_BYTES),
            # Clients keep idle watches alive with a ping every 20 s; gRPC's default policy answers a
            # ping without data more often than every 5 minutes with GOAWAY "too_many_pings".
            ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
            ("grpc.keepalive_permit_without_calls", 1),
        ])
        # The deadline first, so that it also bounds the wait in flow control's queue. Without
        # authentication every caller is an admin, whom the watch limit and flow control exempt.
        limits = self.options.limits
        gates: tuple[RequestGate, ...] = (RequestDeadline(limits.request_timeout_s),)
        classify: Callable[[UserInfo, RequestInfo], Classification] | None = None
        if self._access.enabled:
            flow_control = FlowControl(
                self.options.flow_control, allows=self._access.authorizer.allows, observer=self.metrics
            )
            self.metrics.register_levels(flow_control.level_state)
            gates += (WatchLimit(limits.max_watches_per_user), flow_control)
            classify = flow_control.classify
        service = self._service = ApiService(
            self._verbs, self._stopping, access=self._access, gates=gates, max_page_size=limits.max_page_size,
            metrics=self.metrics,
        )
        add_api_service(service, server)
        add_api_service(service, self.in_process)
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        health_service = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
        reflected = (SERVICE_NAME, health_service, reflection.SERVICE_NAME)
        reflection_pb2_grpc.add_ServerReflectionServicer_to_server(
            GuardedReflection(reflected, access=self._access), server
        )
        tls = self.options.security.tls
        try:
            if tls is None:
                port = server.add_insecure_port(self._listen)
            else:
                port = server.add_secure_port(self._listen, tls.credentials())
        except RuntimeError as exc:
            await server.stop(None)
            raise OSError(f"cannot listen on {self._listen}: {exc}") from exc
        if port == 0:
            await server.stop(None)
            raise OSError(f"cannot listen on {self._listen}: the address is in use or not local")
        self.port = port
        if self._http_listen is not None:
            self._http = await self._start_http(gates, limits.max_page_size, server, classify)
        if self.options.metrics_listen is not None:
            endpoints = HealthServer(self.options.metrics_listen, metrics=self.metrics.exposition, checks={
                "/livez": self._livez, "/healthz": self._livez, "/readyz": self._readyz,
            })
            try:
                await endpoints.start()
            except OSError as exc:
                await server.stop(None)
                if self._http is not None:
                    await self._http.stop()
                raise OSError(f"cannot serve metrics on {self.options.metrics_listen}: {exc}") from exc
            self._endpoints = endpoints
        if self._listen != self.options.listen:
            log.warning(
                "no authentication is configured (--token-auth-file, --client-ca-file), so every caller is "
                "an admin: serving on %s, loopback only, not on %s", self.address, self.options.listen,
            )
        if self.options.plaintext_tokens_off_loopback:
            log.warning(
                "bearer tokens are taken in clear text on %s (%s): anyone who can see the traffic can read "
                "and reuse them; serve TLS with --tls-cert-file and --tls-private-key-file",
                self.address, ALLOW_PLAINTEXT_TOKENS_FLAG,
            )
        await server.start()
        self._server = server
        self._background = asyncio.create_task(self._run_background(), name="apiserver-background")
        self._background.add_done_callback(self._background_ended)
        for name in ("", SERVICE_NAME):
            await self._health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log.info("serving on %s", self.address)
        return self.port

    async def _start_http(
        self, gates: tuple[RequestGate, ...], max_page_size: int, grpc_server: grpc.aio.Server,
        classify: Callable[[UserInfo, RequestInfo], Classification] | None,
    ) -> HttpServer:
        # Imported only when asked for: aiohttp costs every in-process server (simulate, replay) ~0.2 s.
        from cluster.apiserver.http.app import HttpApi
        from cluster.apiserver.http.server import HttpServer, server_ssl_context

        assert self._http_listen is not None, "called only with an HTTP address"
        api = HttpApi(self._verbs, self._stopping, access=self._access, gates=gates,
                      max_page_size=max_page_size, metrics=self.metrics,
                      checks={"/livez": self._livez, "/healthz": self._livez, "/readyz": self._readyz},
                      classify=classify)
        options = self.options
        tls = None
        if options.tls_cert_file is not None and options.tls_private_key_file is not None:
            tls = server_ssl_context(
                options.tls_cert_file, options.tls_private_key_file, options.client_ca_file)
        http = HttpServer(api, self._http_listen, tls)
        try:
            await http.start()
        except OSError:
            await grpc_server.stop(None)
            raise
        return http

    @property
    def http_url(self) -> str | None:
        """Where the HTTP API is served (with the port picked), None without it."""
        if self._http is None or self._http_listen is None:
            return None
        host, _, _ = self._http_listen.rpartition(":")
        return f"{self._http.scheme}://{host}:{self._http.port}"

    @property
    def address(self) -> str:
        host, _, _ = self._listen.rpartition(":")
        return f"{host}:{self.port}"

    @property
    def metrics_url(self) -> str | None:
        """Where the HTTP endpoints are served (with the port picked), None without them."""
        return None if self._endpoints is None else self._endpoints.url

    def _livez(self) -> str | None:
        if self._background is not None and self._background.done():
            return "the background tasks have stopped"
        return None

    def _readyz(self) -> str | None:
        if self._stopping.is_set():
            return "the server is shutting down"
        return self._livez()

    async def _run_background(self) -> None:
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(self._finisher.run(), name="deletion-finisher")
            tasks.create_task(self._compactor.run(), name="compactor")
            tasks.create_task(self._cache.run(), name="watch-cache")
            if self._leadership.enforced:
                tasks.create_task(self._leadership.clock.run(self._registry), name="lease-clock")
            if self._endpoints is not None:
                tasks.create_task(self._endpoints.run(), name="http-endpoints")

    def _background_ended(self, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            log.error("a background task of the API server failed; stopping", exc_info=error)
        else:
            log.warning("the background tasks of the API server ended on their own; stopping")
        if not self._stopping.is_set():
            self._stopper = asyncio.create_task(self.stop(), name="apiserver-stop")

    async def wait_closed(self) -> None:
        """Return when the server has stopped; raise what stopped it if its background work failed."""
        if self._server is None:
            return
        await self._server.wait_for_termination()
        if self._background is not None and self._background.done() and not self._background.cancelled():
            error = self._background.exception()
            if error is not None:
                raise error

    async def stop(self, grace_s: float = 5.0) -> None:
        """End every watch, let unary calls finish for up to ``grace_s``, then stop the background
        tasks. Idempotent."""
        if self._server is None or self._stopping.is_set():
            return
        self._stopping.set()
        await self._health.enter_graceful_shutdown()
        if self._service is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._service.watches_ended(), grace_s)
        if self._http is not None:
            await self._http.stop()
        await self._server.stop(grace_s)
        if self._background is not None and not self._background.done():
            self._background.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._background
        log.info("stopped")
