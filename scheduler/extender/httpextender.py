"""KEP-1819's webhook: an ``Extender`` that POSTs the extender/v1 JSON to ``<urlPrefix>/<verb>``.

kube-scheduler's HTTPExtender is the reference: a verb that is not configured is answered locally
without a call (every node passes the filter, every node scores 0 with weight 0), the filter's answer
is mapped back onto the nodes that were sent, the preemption answer's pod UIDs onto the pods of the
scheduler's snapshot. Every failure, whatever its layer (connection, TLS, timeout, status, JSON, wire
type, the answer's Error field), comes out as an ``ExtenderError`` naming the extender and the verb.

TLS follows client-go's rules as kube-scheduler applies them (makeTransport): the CA, client
certificate and key each come from their PEM data when given, else from their file; serverName
overrides the name checked (and sent as SNI); insecure skips verification; enableHTTPS without a CA
means insecure. The SSL context is built once, at construction, so a bad TLS setting stops the
scheduler at start instead of failing every call.
"""

from __future__ import annotations

import contextlib
import json
import os
import ssl
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import aiohttp

from cluster.api import objects_pb2
from scheduler.config import ExtenderConfig, ExtenderTLSConfig
from scheduler.extender import wire
from scheduler.extender.interface import ExtenderError, FilterOutcome, HostPriority, Victims
from scheduler.framework import NodeInfo, NodeInfoLister
from scheduler.metrics import SchedulerMetrics

#: The operations, as metrics and messages name them (the configured verbs are URL path segments).
FILTER = "filter"
PRIORITIZE = "prioritize"
PREEMPT = "preempt"
BIND = "bind"

_Answer = TypeVar("_Answer")


class HTTPExtender:
    """One ``extenders[]`` entry of the scheduler configuration, called over HTTP(S)."""

    def __init__(self, config: ExtenderConfig, *, metrics: SchedulerMetrics | None = None) -> None:
        self._config = config
        self._metrics = metrics
        self._base_url = config.url_prefix.rstrip("/")
        self._managed_resources = frozenset(resource.name for resource in config.managed_resources)
        self._ssl = _ssl_context(config)
        tls = config.tls_config
        self._server_hostname = tls.server_name if tls is not None and tls.server_name else None
        #: Created on first use, inside the running event loop that makes the calls.
        self._session: aiohttp.ClientSession | None = None

    # ---------------------------------------------------------------------------------- properties

    @property
    def name(self) -> str:
        return self._config.url_prefix

    @property
    def ignorable(self) -> bool:
        return self._config.ignorable

    @property
    def is_filter(self) -> bool:
        return bool(self._config.filter_verb)

    @property
    def is_prioritizer(self) -> bool:
        return bool(self._config.prioritize_verb)

    @property
    def is_binder(self) -> bool:
        return bool(self._config.bind_verb)

    @property
    def supports_preemption(self) -> bool:
        return bool(self._config.preempt_verb)

    def is_interested(self, pod: objects_pb2.Pod) -> bool:
        if not self._managed_resources:
            return True
        return any(
            name in self._managed_resources
            for container in (*pod.spec.containers, *pod.spec.init_containers)
            for name in (*container.resources.requests, *container.resources.limits)
        )

    # ----------------------------------------------------------------------------------- the verbs

    async def filter(self, pod: objects_pb2.Pod, nodes: Sequence[NodeInfo]) -> FilterOutcome:
        if not self.is_filter:
            return FilterOutcome(list(nodes), {}, {})
        args = wire.extender_args(pod, _nodes(nodes), node_cache_capable=self._config.node_cache_capable)
        with self._observed(FILTER):
            result = await self._send(FILTER, self._config.filter_verb, args, wire.parse_filter_result)
            if result.error:
                raise ExtenderError(f"extender {self.name}: filter returned an error: {result.error}")
            return FilterOutcome(
                self._feasible(result, nodes), result.failed_nodes, result.failed_and_unresolvable_nodes
            )

    async def prioritize(
        self, pod: objects_pb2.Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[HostPriority], int]:
        if not self.is_prioritizer:
            return [HostPriority(info.name, 0) for info in nodes], 0
        args = wire.extender_args(pod, _nodes(nodes), node_cache_capable=self._config.node_cache_capable)
        with self._observed(PRIORITIZE):
            priorities = await self._send(
                PRIORITIZE, self._config.prioritize_verb, args, wire.parse_host_priority_list
            )
        return priorities, self._config.weight

    async def process_preemption(
        self, pod: objects_pb2.Pod, victims: Mapping[str, Victims], nodes: NodeInfoLister
    ) -> dict[str, Victims]:
        if not self.supports_preemption:
            raise ExtenderError(
                f"extender {self.name}: preemption asked of an extender without a preemptVerb")
        args = wire.preemption_args(pod, victims, node_cache_capable=self._config.node_cache_capable)
        with self._observed(PREEMPT):
            answer = await self._send(PREEMPT, self._config.preempt_verb, args, wire.parse_preemption_result)
            return {node: self._victims(node, meta, nodes) for node, meta in answer.items()}

    async def bind(self, pod: objects_pb2.Pod, node_name: str) -> None:
        if not self.is_binder:
            raise ExtenderError(f"extender {self.name}: binding asked of an extender without a bindVerb")
        args = wire.binding_args(pod, node_name)
        with self._observed(BIND):
            error = await self._send(BIND, self._config.bind_verb, args, wire.parse_binding_result)
            if error:
                raise ExtenderError(f"extender {self.name}: bind returned an error: {error}")

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    # ----------------------------------------------------------------------------- answers to nodes

    def _feasible(self, result: wire.FilterResult, sent: Sequence[NodeInfo]) -> list[NodeInfo]:
        """kube-scheduler's rule: a cache-capable extender's NodeNames when it sent them, else the names
        of its Nodes, else no node at all; each must be one of the nodes sent (in the extender's order)."""
        if self._config.node_cache_capable and result.node_names is not None:
            names = result.node_names
        elif result.nodes is not None:
            names = result.nodes
        else:
            return []
        by_name = {info.name: info for info in sent}
        feasible = []
        for name in names:
            info = by_name.get(name)
            if info is None:
                raise ExtenderError(f'extender {self.name} claims a filtered node "{name}" which is not '
                                    "found in the input node list")
            feasible.append(info)
        return feasible

    def _victims(self, node: str, meta: wire.MetaVictims, nodes: NodeInfoLister) -> Victims:
        """The pods of ``node`` (in the scheduler's snapshot) that the answer names by UID."""
        try:
            info = nodes.get(node)
        except KeyError:
            raise ExtenderError(f'extender {self.name} claims to preempt pods on node "{node}", which is '
                                "not in the scheduler's snapshot") from None
        by_uid = {pod_info.pod.metadata.uid: pod_info for pod_info in info.pods.values()}
        pods = []
        for uid in meta.pod_uids:
            pod_info = by_uid.get(uid)
            if pod_info is None:
                raise ExtenderError(f"extender {self.name} claims to preempt pod (UID: {uid}) on node "
                                    f"{node}, but the pod is not found on that node")
            pods.append(pod_info)
        return Victims(tuple(pods), meta.num_pdb_violations)

    # ------------------------------------------------------------------------------------- the call

    @contextlib.contextmanager
    def _observed(self, operation: str) -> Iterator[None]:
        """Record the call's latency, and an error when it raises ExtenderError (a cancelled call is
        neither: it has no result)."""
        start = time.perf_counter()
        try:
            yield
        except ExtenderError:
            self._record(operation, time.perf_counter() - start, failed=True)
            raise
        self._record(operation, time.perf_counter() - start, failed=False)

    def _record(self, operation: str, duration_s: float, *, failed: bool) -> None:
        if self._metrics is not None:
            self._metrics.extender_call(self.name, operation, duration_s, failed)

    async def _send(
        self, operation: str, verb: str, args: dict[str, Any], parse: Callable[[Any], _Answer]
    ) -> _Answer:
        """POST ``args`` to ``<urlPrefix>/<verb>`` and decode the answer with ``parse``; the whole call,
        connection and body included, must end within httpTimeout."""
        url = f"{self._base_url}/{verb}"
        timeout = self._config.http_timeout_seconds
        try:
            async with self._client().post(
                url,
                data=json.dumps(args).encode(),
                headers={"Content-Type": "application/json"},
                server_hostname=self._server_hostname,
            ) as response:
                status = response.status
                body = await response.read()
        except TimeoutError:
            raise ExtenderError(f"extender {self.name}: {operation} timed out after {timeout:g}s") from None
        except (aiohttp.ClientError, OSError) as exc:  # ssl errors are OSErrors
            raise ExtenderError(f"extender {self.name}: {operation} failed: POST {url}: {exc}") from exc
        if status != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {status}")
        try:
            data = json.loads(body)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError both are
            raise ExtenderError(
                f"extender {self.name}: {operation} answered with a body that is not JSON: {exc}"
            ) from None
        try:
            return parse(data)
        except wire.WireError as exc:
            raise ExtenderError(f"extender {self.name}: {operation} answered with a malformed body: {exc}") \
                from None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(ssl=self._ssl if self._ssl is not None else True),
                timeout=aiohttp.ClientTimeout(total=self._config.http_timeout_seconds),
            )
        return self._session


def _nodes(infos: Sequence[NodeInfo]) -> list[objects_pb2.Node]:
    nodes = []
    for info in infos:
        # Feasible nodes and candidates come from the snapshot's nodes, which all have their object.
        assert info.node is not None, f"node info {info.name!r} has no node"
        nodes.append(info.node)
    return nodes


# ---------------------------------------------------------------------------------------------- TLS


def _ssl_context(config: ExtenderConfig) -> ssl.SSLContext | None:
    """The client's TLS settings; None when neither the URL nor the configuration asks for TLS."""
    tls = config.tls_config or ExtenderTLSConfig()
    if not (config.url_prefix.lower().startswith("https://") or config.enable_https
            or config.tls_config is not None):
        return None
    where = f"extender {config.url_prefix}: tlsConfig"
    has_ca = bool(tls.ca_data or tls.ca_file)
    if tls.insecure and has_ca:
        raise ValueError(f"{where}: a CA (caFile or caData) with insecure is not allowed")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if tls.insecure or (config.enable_https and not has_ca):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif tls.ca_data:
        try:
            context.load_verify_locations(cadata=tls.ca_data.decode("ascii"))
        except (ssl.SSLError, ValueError) as exc:
            raise ValueError(f"{where}.caData: not a PEM certificate: {exc}") from None
    elif tls.ca_file:
        try:
            context.load_verify_locations(cafile=tls.ca_file)
        except (ssl.SSLError, OSError) as exc:
            raise ValueError(f"{where}.caFile {tls.ca_file}: cannot load a CA: {exc}") from None
    else:
        context.load_default_certs()
    _load_client_certificate(context, tls, where)
    return context


def _load_client_certificate(context: ssl.SSLContext, tls: ExtenderTLSConfig, where: str) -> None:
    has_cert = bool(tls.cert_data or tls.cert_file)
    has_key = bool(tls.key_data or tls.key_file)
    if has_cert != has_key:
        missing = "key (keyFile or keyData)" if has_cert else "certificate (certFile or certData)"
        raise ValueError(f"{where}: a client certificate needs both a certificate and a key; no {missing}")
    if not has_cert:
        return
    described = (f"{'certData' if tls.cert_data else 'certFile ' + tls.cert_file} and "
                 f"{'keyData' if tls.key_data else 'keyFile ' + tls.key_file}")
    # ssl loads a certificate chain only from files: PEM data goes to a private temporary directory
    # (0700) for the time of the load.
    with tempfile.TemporaryDirectory(prefix="podsched-extender-tls-") as directory:
        cert_path = _file_with(directory, "cert.pem", tls.cert_data) if tls.cert_data else tls.cert_file
        key_path = _file_with(directory, "key.pem", tls.key_data) if tls.key_data else tls.key_file
        try:
            context.load_cert_chain(cert_path, key_path)
        except (ssl.SSLError, OSError) as exc:
            raise ValueError(f"{where}: cannot load the client certificate from {described}: {exc}") \
                from None


def _file_with(directory: str, name: str, data: bytes) -> str:
    path = os.path.join(directory, name)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as stream:
        stream.write(data)
    return path
