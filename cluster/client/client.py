"""The async client of the API server: one method per RPC, objects in and out (never envelopes), and
`cluster.api.errors` classes for every failure.

A client holds one lazily opened grpc.aio channel per API server address and sends each call to its
*current* server. When that server does not answer (UNAVAILABLE, or a read's attempt deadline passing) the
client moves on to the next address of the list and retries under `retry.RetryPolicy`, within the call's
own deadline; every other status is the server's answer and is raised at once. The caller chooses the
policy: a one-shot command gives `FAIL_FAST_POLICY`, and gets `ServerUnreachable` as soon as every server
has refused the connection. Watches are long-lived
streams without a deadline: keepalive pings notice a dead server, and a broken watch is raised to the
caller (the informer re-watches), never silently restarted.

`ClientCredentials` add a bearer token (metadata on every call) and TLS. A failed TLS handshake is a
setting to fix, not a server to wait for: it is raised at once as `TlsError`, saying why; so is a server
that completes the handshake and hangs up, as one does that refuses the client's certificate (handshake.py).
"""

from __future__ import annotations

import asyncio
import builtins
import functools
import logging
import os
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message

from cluster.api import apiserver_pb2, apiserver_pb2_grpc, errors, objects_pb2
from cluster.api.addresses import is_loopback_host
from cluster.api.fencing import BOUND_UNDER_FENCE_ANNOTATION, fence_stamp
from cluster.api.kinds import KINDS, Kind, kind_by_name, kind_of, unwrap, wrap
from cluster.api.limits import MAX_BATCH_BYTES, MAX_BATCH_ITEMS, MAX_REQUEST_BYTES, MAX_REQUEST_SIZE
from cluster.client.credentials import ClientCredentials, TlsError
from cluster.client.handshake import CLOSED_AFTER_HANDSHAKE, refused_client
from cluster.client.retry import (
    DEFAULT_POLICY,
    RetryPolicy,
    UnreachableRun,
    is_retryable,
    is_server_timeout,
    retrying,
)

log = logging.getLogger(__name__)

DEFAULT_SERVER = "127.0.0.1:7443"
SERVER_ENV = "PODSCHED_SERVER"
#: How long one call (all its retries and failovers included) may take. kubectl has no default request
#: timeout; 30 s outlasts an API server restart and still turns a dead cluster into an error.
DEFAULT_TIMEOUT_S = 30.0
#: Objects per page in `list_all`: kube-apiserver's and client-go's pager default.
DEFAULT_PAGE_SIZE = 500

_MIB = 1 << 20
#: Unpaged lists of a 10,000-pod cluster run to tens of MiB; paged reads stay far below.
MAX_RECEIVE_BYTES = 256 * _MIB
#: Keepalive: ping after 20 s without traffic and give up on the connection when the ping is not answered
#: within 10 s, so a watch on a dead or partitioned server fails within half a minute. The server must
#: accept pings this often (grpc.http2.min_ping_interval_without_data_ms <= 20 s) or it answers with
#: GOAWAY "too_many_pings".
KEEPALIVE_TIME_MS = 20_000
KEEPALIVE_TIMEOUT_MS = 10_000
#: Reconnect backoff of a channel whose server went away. gRPC's default cap is 120 s, which would keep a
#: restarted API server unreachable for minutes; 3 s matches the client's own retry pace.
RECONNECT_BACKOFF_MIN_MS = 200
RECONNECT_BACKOFF_MAX_MS = 3_000

CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    # The server's own receive limit: a larger request is refused here, as RequestTooLarge.
    ("grpc.max_send_message_length", MAX_REQUEST_BYTES),
    ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
    ("grpc.keepalive_time_ms", KEEPALIVE_TIME_MS),
    ("grpc.keepalive_timeout_ms", KEEPALIVE_TIMEOUT_MS),
    # Keep pinging a quiet watch stream: by default a client stops after two pings without data.
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.initial_reconnect_backoff_ms", RECONNECT_BACKOFF_MIN_MS),
    ("grpc.min_reconnect_backoff_ms", RECONNECT_BACKOFF_MIN_MS),
    ("grpc.max_reconnect_backoff_ms", RECONNECT_BACKOFF_MAX_MS),
)

#: What every call accepting a kind takes: a Kind, a name as kubectl or a manifest spells it ("pods",
#: "Pod", "po"), or the object's message class.
KindLike = Kind | str | type[Message]

M = TypeVar("M", bound=Message)

_EVENT_TYPES = {
    apiserver_pb2.WatchEvent.ADDED: "ADDED",
    apiserver_pb2.WatchEvent.MODIFIED: "MODIFIED",
    apiserver_pb2.WatchEvent.DELETED: "DELETED",
}


@dataclass(frozen=True, slots=True)
class ObjectList:
    items: list[Message]
    #: The store revision the list was read at: watch from it to see every later change.
    resource_version: str
    #: Non-empty when more items remain: pass it to `Client.list` to read the next page.
    continue_token: str = ""


@dataclass(frozen=True, slots=True)
class Fence:
    """A fencing token (apiserver.proto's Fence): writes carrying it land only while the Lease
    ``lease_namespace/lease_name`` is held by ``holder_identity`` in the tenure that began at store
    revision ``token`` (the resourceVersion of the write that acquired it)."""

    lease_namespace: str
    lease_name: str
    holder_identity: str
    token: int

    def to_proto(self) -> apiserver_pb2.Fence:
        return apiserver_pb2.Fence(
            lease_namespace=self.lease_namespace, lease_name=self.lease_name,
            holder_identity=self.holder_identity, token=self.token,
        )


@dataclass(frozen=True, slots=True)
class WatchEvent:
    #: "ADDED", "MODIFIED" or "DELETED".
    type: str
    #: The object after the change (for DELETED: its last state, at the deletion's resourceVersion).
    object: Message


def resolve_kind(kind: KindLike) -> Kind:
    """The Kind a caller means; `errors.Invalid` for anything the API does not serve."""
    if isinstance(kind, Kind):
        return kind
    if isinstance(kind, str):
        return kind_by_name(kind)
    for known in KINDS:
        if known.message is kind:
            return known
    raise errors.Invalid(f"{getattr(kind, '__name__', kind)!r} is not a kind the API serves")


def parse_servers(servers: str | Sequence[str]) -> tuple[str, ...]:
    """The ``host:port`` addresses in a list or a comma-separated string, in order."""
    entries = [servers] if isinstance(servers, str) else list(servers)
    addresses = tuple(part.strip() for entry in entries for part in entry.split(",") if part.strip())
    if not addresses:
        raise ValueError("no API server address given: expected host:port[,host:port...]")
    for address in addresses:
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f'invalid API server address "{address}": expected host:port')
    return addresses


class RequestTooLarge(ValueError):
    """A request larger than any API server reads (cluster.api.limits): the client's own refusal, before
    anything is sent."""

    def __init__(self, method: str, request: Message) -> None:
        super().__init__(
            f"the {method} request{_subject(request)} is {request.ByteSize()} bytes, more than the "
            f"{MAX_REQUEST_BYTES} bytes ({MAX_REQUEST_SIZE}) an API server reads; nothing was sent"
        )


def object_request_bytes(obj: Message) -> int:
    """The size of the Create or Update request that carries ``obj`` (the two are laid out alike), to
    check against MAX_REQUEST_BYTES before sending."""
    return apiserver_pb2.UpdateRequest(object=wrap(obj), dry_run=True).ByteSize()


def _subject(request: Message) -> str:
    """The object a request carries, as ' for Pod default/web' ('' when it carries none)."""
    if "object" not in request.DESCRIPTOR.fields_by_name or not request.HasField("object"):
        return ""
    obj = unwrap(request.object)  # type: ignore[attr-defined]
    meta = obj.metadata  # type: ignore[attr-defined]
    name = f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name
    return f" for {kind_of(obj).name} {name}"


class Client:
    """An async client of one or more API servers (replicas over the same store) that fails over
    between them. Cheap to create: channels open on first use; ``async with`` closes them."""

    def __init__(
        self,
        servers: str | Sequence[str] = DEFAULT_SERVER,
        *,
        credentials: ClientCredentials | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retry_policy: RetryPolicy = DEFAULT_POLICY,
        channel_factory: Callable[[str], Any] | None = None,
    ) -> None:
        """``channel_factory``: makes the channel to a server address instead of gRPC (with the
        credentials' TLS settings) — an ``InProcessChannel`` for a server in this process."""
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        self._servers = parse_servers(servers)
        self.credentials = credentials or ClientCredentials()
        self._metadata = self.credentials.metadata()
        if self.credentials.token and not self.credentials.tls:
            exposed = [server for server in self._servers if not is_loopback_host(server.rpartition(":")[0])]
            if exposed:
                log.warning("sending a bearer token without TLS to %s: anyone on the path can read it; "
                            "give a certificate authority to use TLS", ", ".join(exposed))
        self._timeout_s = timeout_s
        #: The policy of every call from now on, and of the retries still to come of those running (a
        #: component that is stopping may turn to `FAIL_FAST_POLICY`: it has no restart to wait out).
        self.retry_policy = retry_policy
        self._channel_factory = channel_factory
        self._channels: list[Any] = [None] * len(self._servers)
        self._stubs: list[apiserver_pb2_grpc.ApiServerStub | None] = [None] * len(self._servers)
        #: The index of the server calls go to; moves on when that server fails to answer.
        self._current = 0
        self._closed = False
        #: When set, every Bind, UpdateStatus and Delete without a fence of its own carries this one (a
        #: leading scheduler sets its fencing token here; see `Fence`).
        self.fence: Fence | None = None
        #: Told of every `errors.Fenced` answer before it is raised (a scheduler steps down on it).
        self.on_fenced: Callable[[errors.Fenced], None] | None = None

    @classmethod
    def from_env(
        cls,
        server: str | None = None,
        *,
        credentials: ClientCredentials | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retry_policy: RetryPolicy = DEFAULT_POLICY,
    ) -> Client:
        """A client of ``server`` (a --server flag's value), else of $PODSCHED_SERVER, else of the default;
        with ``credentials``, else those of the environment ($PODSCHED_TOKEN, $PODSCHED_CA_FILE, ...)."""
        return cls(
            server or os.environ.get(SERVER_ENV) or DEFAULT_SERVER,
            credentials=credentials or ClientCredentials.from_env_and_flags(),
            timeout_s=timeout_s,
            retry_policy=retry_policy,
        )

    @property
    def servers(self) -> tuple[str, ...]:
        return self._servers

    @property
    def current_server(self) -> str:
        """The server the next call goes to first."""
        return self._servers[self._current]

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close every channel for good: calls and watches still running end with CancelledError, and
        later calls raise RuntimeError."""
        self._closed = True
        channels = [channel for channel in self._channels if channel is not None]
        self._channels = [None] * len(self._servers)
        self._stubs = [None] * len(self._servers)
        for channel in channels:
            await channel.close()

    # ------------------------------------------------------------------------------------------- verbs

    async def create(self, obj: M, *, dry_run: bool = False, fence: Fence | None = None) -> M:
        """Create an object. An Event may be fenced by ``fence`` (the client's `fence` does not apply)."""
        request = apiserver_pb2.CreateRequest(object=wrap(obj), dry_run=dry_run)
        if fence is not None:
            request.fence.CopyFrom(fence.to_proto())
        return unwrap(await self._unary("Create", request, idempotent=False))  # type: ignore[return-value]

    async def get(self, kind: KindLike, name: str, namespace: str = "") -> Message:
        request = apiserver_pb2.GetRequest(kind=resolve_kind(kind).name, namespace=namespace, name=name)
        return unwrap(await self._unary("Get", request, idempotent=True))

    async def update(self, obj: M, *, dry_run: bool = False, fence: Fence | None = None) -> M:
        """Replace metadata and spec; ``obj.metadata.resourceVersion`` is the precondition (empty: none).
        An Event or a Lease may be fenced by ``fence`` (the client's `fence` does not apply)."""
        request = apiserver_pb2.UpdateRequest(object=wrap(obj), dry_run=dry_run)
        if fence is not None:
            request.fence.CopyFrom(fence.to_proto())
        return unwrap(await self._unary("Update", request, idempotent=False))  # type: ignore[return-value]

    async def update_status(self, obj: M, *, fence: Fence | None = None) -> M:
        """Replace status; ``obj.metadata.resourceVersion`` is the precondition (empty: none). Fenced by
        ``fence``, else by the client's `fence` when set."""
        request = apiserver_pb2.UpdateRequest(object=wrap(obj))
        self._attach_fence(request, fence)
        return unwrap(await self._unary("UpdateStatus", request, idempotent=False))  # type: ignore[return-value]

    async def delete(
        self,
        kind: KindLike,
        name: str,
        namespace: str = "",
        *,
        grace_period_seconds: int | None = None,
        resource_version: str = "",
        dry_run: bool = False,
        fence: Fence | None = None,
    ) -> Message:
        """Delete an object (a pod with a grace period is only marked); returns it as deleted or marked.
        Fenced by ``fence``, else by the client's `fence` when set."""
        request = apiserver_pb2.DeleteRequest(
            kind=resolve_kind(kind).name,
            namespace=namespace,
            name=name,
            resource_version=resource_version,
            dry_run=dry_run,
        )
        self._attach_fence(request, fence)
        if grace_period_seconds is not None:
            request.grace_period_seconds = grace_period_seconds
        return unwrap(await self._unary("Delete", request, idempotent=False))

    async def list(
        self,
        kind: KindLike,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_token: str = "",
    ) -> ObjectList:
        """One page of objects (all of them when ``limit`` is 0), read at one store revision."""
        request = apiserver_pb2.ListRequest(
            kind=resolve_kind(kind).name,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            limit=limit,
            continue_token=continue_token,
        )
        response: apiserver_pb2.ListResponse = await self._unary("List", request, idempotent=True)
        return ObjectList(
            items=[unwrap(item) for item in response.items],
            resource_version=response.resource_version,
            continue_token=response.continue_token,
        )

    async def list_all(
        self,
        kind: KindLike,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> ObjectList:
        """Every matching object, read page by page at the first page's revision. Should a continue token
        expire midway (history compacted), the list is read again in one piece, as client-go's pager does."""
        kind = resolve_kind(kind)
        query = functools.partial(self.list, kind, namespace, label_selector=label_selector,
                                  field_selector=field_selector)
        first = await query(limit=page_size)
        items = list(first.items)
        token = first.continue_token
        while token:
            try:
                page = await query(limit=page_size, continue_token=token)
            except errors.Expired:
                log.info("continue token of a %s list expired; listing again in one piece", kind.plural)
                return await query()
            items.extend(page.items)
            token = page.continue_token
        return ObjectList(items=items, resource_version=first.resource_version)

    async def watch(
        self,
        kind: KindLike,
        namespace: str = "",
        *,
        resource_version: str = "",
        label_selector: str = "",
        field_selector: str = "",
    ) -> AsyncGenerator[WatchEvent, None]:
        """Every change after ``resource_version`` (empty: ADDED for each current object first), in order.

        Opening the watch retries and fails over like a read until the first event arrives (re-opening
        before any event is invisible to the caller). After that, a broken stream raises `errors.Unavailable`
        and a compacted ``resource_version`` raises `errors.Expired`; the caller decides what to do next.
        Several objects may change at one resourceVersion (a group bind), so a caller that watches again
        after a break should start from the version before its last event's and drop what it already
        has of that version, as `Informer` does: watching from the last event's version loses the rest
        of that version when the stream broke between two of its events.
        """
        request = apiserver_pb2.WatchRequest(
            kind=resolve_kind(kind).name,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            resource_version=resource_version,
        )
        call, response = await self._open_watch(request)
        try:
            while response is not grpc.aio.EOF:
                yield _watch_event(response)
                response = await call.read()
            raise errors.Unavailable("the API server closed the watch")
        except grpc.aio.AioRpcError as err:
            raise _watch_error(err) from err
        finally:
            call.cancel()

    async def bind(
        self, namespace: str, name: str, node_name: str, *, fence: Fence | None = None
    ) -> objects_pb2.Pod:
        """Bind an unbound pod to a node (the pods/binding subresource); `errors.Conflict` if it is bound.
        Fenced by ``fence``, else by the client's `fence` when set."""
        request = apiserver_pb2.BindRequest(binding=_binding(namespace, name, node_name))
        self._attach_fence(request, fence)
        return await self._unary("Bind", request, idempotent=False)

    async def version(self) -> str:
        """The server's release (its Version call, public as kube-apiserver's /version)."""
        info = await self._unary("Version", apiserver_pb2.VersionRequest(), idempotent=True)
        return str(info.version)

    async def bind_group(
        self, bindings: Sequence[tuple[str, str, str]], *, fence: Fence | None = None
    ) -> builtins.list[objects_pb2.Pod]:
        """Bind several unbound pods, each (namespace, pod name, node name), all in one store transaction:
        every pod is bound, at one resourceVersion, or none is and this raises what `bind` would for the
        first pod that cannot be (`errors.Conflict` if one is bound or terminating, `errors.NotFound`,
        `errors.Fenced`, ...). Fenced by ``fence``, else by the client's `fence` when set. Returns the
        bound pods in the order given.

        Not idempotent: when an attempt failed UNAVAILABLE and a later one is refused with a Conflict,
        the first may have landed after all (the server committed, then the connection broke), so the
        pods are read back: if every one is bound to its node (under this fence's stamp, when fenced),
        that is the group bind this call made, and they are returned."""
        fence = fence or self.fence
        request = apiserver_pb2.BindGroupRequest(
            bindings=[_binding(namespace, name, node_name) for namespace, name, node_name in bindings]
        )
        self._attach_fence(request, fence)
        retried = False

        def note_retry() -> None:
            nonlocal retried
            retried = True

        try:
            response = await self._unary("BindGroup", request, idempotent=False, on_retry=note_retry)
        except errors.Conflict:
            landed = await self._group_landed(bindings, fence) if retried else None
            if landed is None:
                raise
            return landed
        return list(response.pods)

    async def create_many(
        self, objs: Sequence[M], *, fence: Fence | None = None
    ) -> builtins.list[M | errors.ApiError]:
        """Create each object as `create` would, in as few Batch calls as the batch limits allow: the
        created object, or the error its own create would raise, per object, in the order given (one
        object's failure fails no other). ``fence`` applies to each, as to `create`. Objects are written
        concurrently: create what depends on another object in a later call.

        Not idempotent, as `create`: a call is retried only when it never reached a server that could
        serve it (UNAVAILABLE before any item ran) or flow control refused it as a whole; a call that
        fails otherwise raises its error for every object."""
        items = []
        for obj in objs:
            request = apiserver_pb2.CreateRequest(object=wrap(obj))
            if fence is not None:
                request.fence.CopyFrom(fence.to_proto())
            items.append(apiserver_pb2.BatchItem(create=request))
        results = await self._batch(items)
        return [result if isinstance(result, errors.ApiError) else unwrap(result)  # type: ignore[misc]
                for result in results]

    async def bind_many(
        self, bindings: Sequence[tuple[str, str, str]], *, fence: Fence | None = None
    ) -> builtins.list[objects_pb2.Pod | errors.ApiError]:
        """Bind each (namespace, pod name, node name) as `bind` would, in as few Batch calls as the batch
        limits allow: the bound pod, or the error its own bind would raise, per binding, in the order
        given; each lands or fails on its own (unlike `bind_group`). Fenced by ``fence``, else by the
        client's `fence` when set, each binding alike. Not idempotent, as `bind` (see `create_many`)."""
        items = []
        for namespace, name, node_name in bindings:
            request = apiserver_pb2.BindRequest(binding=_binding(namespace, name, node_name))
            self._attach_fence(request, fence)
            items.append(apiserver_pb2.BatchItem(bind=request))
        results = await self._batch(items)
        return [result if isinstance(result, errors.ApiError) else result.pod for result in results]

    async def _batch(
        self, items: Sequence[apiserver_pb2.BatchItem]
    ) -> builtins.list[apiserver_pb2.Object | errors.ApiError]:
        """Send ``items`` in Batch calls of at most MAX_BATCH_ITEMS items and MAX_BATCH_BYTES, one after
        the other; each item's object, or its error as `_api_error` makes it."""
        results: builtins.list[apiserver_pb2.Object | errors.ApiError] = []
        for chunk in _batch_chunks(items):
            response = await self._unary("Batch", apiserver_pb2.BatchRequest(items=chunk), idempotent=False)
            for result in response.results:
                if result.HasField("error"):
                    results.append(self._item_error(result.error))
                else:
                    results.append(result.object)
        return results

    def _item_error(self, status: apiserver_pb2.Status) -> errors.ApiError:
        """The error a Batch item's status stands for, as its own call would have raised it."""
        error = errors.from_status(_STATUS_CODES.get(status.code, grpc.StatusCode.UNKNOWN), status.message,
                                   status.reason)
        if isinstance(error, errors.Fenced) and self.on_fenced is not None:
            self.on_fenced(error)
        return error

    async def _group_landed(
        self, bindings: Sequence[tuple[str, str, str]], fence: Fence | None
    ) -> builtins.list[objects_pb2.Pod] | None:
        """The pods of ``bindings`` if every one is bound to its node (stamped with ``fence``'s tenure,
        when fenced); else None."""
        try:
            read = await asyncio.gather(*(self.get("pods", name, ns) for ns, name, _ in bindings))
        except errors.NotFound:
            return None
        pods: builtins.list[objects_pb2.Pod] = [*read]  # type: ignore[list-item]
        stamp = None if fence is None else fence_stamp(fence.holder_identity, fence.token)
        for pod, (_, _, node_name) in zip(pods, bindings, strict=True):
            stamped = pod.metadata.annotations.get(BOUND_UNDER_FENCE_ANNOTATION)
            if pod.spec.node_name != node_name or (stamp is not None and stamped != stamp):
                return None
        return pods

    def _attach_fence(
        self,
        request: apiserver_pb2.UpdateRequest | apiserver_pb2.DeleteRequest | apiserver_pb2.BindRequest
        | apiserver_pb2.BindGroupRequest,
        fence: Fence | None,
    ) -> None:
        fence = fence or self.fence
        if fence is not None:
            request.fence.CopyFrom(fence.to_proto())

    # ------------------------------------------------------------------------------------------ plumbing

    def _stub(self, index: int) -> apiserver_pb2_grpc.ApiServerStub:
        if self._closed:
            raise RuntimeError("the API client is closed")
        stub = self._stubs[index]
        if stub is None:
            target = self._servers[index]
            if self._channel_factory is not None:
                channel = self._channel_factory(target)
            else:
                channel = self.credentials.channel(target, options=CHANNEL_OPTIONS)
            self._channels[index] = channel
            stub = self._stubs[index] = apiserver_pb2_grpc.ApiServerStub(channel)
        return stub

    def _fail_over(self, index: int, err: grpc.aio.AioRpcError) -> None:
        """Send the next calls to the server after ``index`` (unless a concurrent call already moved on)."""
        if self._current != index:
            return
        self._current = (index + 1) % len(self._servers)
        if len(self._servers) > 1:
            log.warning(
                "API server %s did not answer (%s: %s); trying %s",
                self._servers[index], err.code().name, err.details(), self._servers[self._current],
            )

    async def _unary(
        self, method: str, request: Message, *, idempotent: bool, on_retry: Callable[[], None] | None = None
    ) -> Any:
        """Call ``method`` with the retry policy; ``on_retry`` is called once when a first attempt
        failed and the call goes on to retry."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._timeout_s
        # A read gives each server a share of the deadline, so that a hung server (one that accepts
        # connections but never answers) costs one share before the call moves on; a write gets it all,
        # since it cannot be retried after its deadline.
        share = self._timeout_s / min(len(self._servers), 3) if idempotent else self._timeout_s

        # The last refusal a server answered with: when the call's deadline cuts a retry short, that
        # answer (say, flow control's TooManyRequests) is what the caller should hear, not "no answer".
        answered: grpc.aio.AioRpcError | None = None
        unreachable = UnreachableRun()

        async def attempt() -> Any:
            nonlocal answered
            index = self._current
            timeout = max(0.0, min(share, deadline - loop.time()))
            try:
                return await getattr(self._stub(index), method)(
                    request, timeout=timeout, metadata=self._metadata
                )
            except grpc.aio.AioRpcError as err:
                if err.code() != grpc.StatusCode.DEADLINE_EXCEEDED or is_server_timeout(err):
                    answered = err
                if _sent_too_large(err):
                    raise RequestTooLarge(method, request) from err
                await self._raise_tls_failure(index, err)
                if err.code() == grpc.StatusCode.UNAVAILABLE or (
                    err.code() == grpc.StatusCode.DEADLINE_EXCEEDED and not is_server_timeout(err)
                ):
                    self._fail_over(index, err)
                unreachable.note(self._servers[index], err, self.retry_policy, len(self._servers))
                raise

        try:
            try:
                return await attempt()
            except grpc.aio.AioRpcError as err:
                if not is_retryable(err, idempotent=idempotent):
                    raise
                failure: grpc.aio.AioRpcError | None = err
            if on_retry is not None:
                on_retry()
            # Nearly every call succeeds at once; only a failed one builds the (costly) tenacity loop.
            # Its first attempt replays the failure, so the waits are those of a loop that made the
            # first attempt itself, and its budget is what the first attempt left of the call's.

            async def again() -> Any:
                nonlocal failure
                if failure is not None:
                    replayed, failure = failure, None
                    raise replayed
                return await attempt()

            budget_s = deadline - loop.time()
            return await retrying(self.retry_policy, budget_s=budget_s, idempotent=idempotent)(again)
        except grpc.aio.AioRpcError as err:
            if answered is not None and answered is not err and loop.time() >= deadline:
                raise self._api_error(answered) from err
            raise self._api_error(err) from err

    async def _open_watch(self, request: apiserver_pb2.WatchRequest) -> tuple[Any, Any]:
        """Start a Watch call and wait for its first event (or its end), retrying on the next server
        while the budget lasts. The first event may take forever on a quiet watch; the budget bounds only
        the starting of new attempts."""
        unreachable = UnreachableRun()

        async def attempt() -> tuple[Any, Any]:
            index = self._current
            call = self._stub(index).Watch(request, metadata=self._metadata)
            try:
                return call, await call.read()
            except grpc.aio.AioRpcError as err:
                await self._raise_tls_failure(index, err)
                if err.code() == grpc.StatusCode.UNAVAILABLE:
                    self._fail_over(index, err)
                unreachable.note(self._servers[index], err, self.retry_policy, len(self._servers))
                raise
            except BaseException:
                call.cancel()
                raise

        try:
            return await retrying(self.retry_policy, budget_s=self._timeout_s, idempotent=False)(attempt)
        except grpc.aio.AioRpcError as err:
            raise _watch_error(err) from err

    async def _raise_tls_failure(self, index: int, err: grpc.aio.AioRpcError) -> None:
        """Raise `TlsError` saying why when ``err`` is a failed TLS handshake with server ``index``, or a
        TLS connection that the server closed because it refused this client (found out by a probe)."""
        server = self._servers[index]
        why = _tls_failure(err, self.credentials)
        if why is not None:
            raise TlsError(f"TLS handshake with the API server at {server} failed: {why}") from err
        refused = await refused_client(server, err, self.credentials)
        if refused is not None:
            raise TlsError(f"the API server at {server} {CLOSED_AFTER_HANDSHAKE}: {refused}") from err

    def _api_error(self, err: grpc.aio.AioRpcError) -> errors.ApiError:
        if err.code() == grpc.StatusCode.DEADLINE_EXCEEDED and not is_server_timeout(err):
            servers = ", ".join(self._servers)
            return errors.Unavailable(f"no answer from the API server ({servers}) in {self._timeout_s:g}s")
        error = errors.from_status(err.code(), err.details(), errors.reason_of(err.trailing_metadata()))
        if isinstance(error, errors.Unavailable) and "Socket closed" in error.message:
            error = errors.Unavailable(error.message + _closed_hint(self.credentials))
        if isinstance(error, errors.Fenced) and self.on_fenced is not None:
            self.on_fenced(error)
        return error


def _binding(namespace: str, name: str, node_name: str) -> objects_pb2.Binding:
    return objects_pb2.Binding(
        api_version="v1",
        kind="Binding",
        metadata=objects_pb2.ObjectMeta(name=name, namespace=namespace),
        target=objects_pb2.ObjectReference(kind="Node", name=node_name),
    )


#: The status codes by number, as a Batch item's status carries them.
_STATUS_CODES = {code.value[0]: code for code in grpc.StatusCode}


def _batch_chunks(
    items: Sequence[apiserver_pb2.BatchItem],
) -> builtins.list[builtins.list[apiserver_pb2.BatchItem]]:
    """``items`` cut into runs that each fit one Batch call: at most MAX_BATCH_ITEMS items and
    MAX_BATCH_BYTES (an item larger than that alone goes in a call of its own, and the request size check
    answers for it)."""
    chunks: builtins.list[builtins.list[apiserver_pb2.BatchItem]] = []
    chunk: builtins.list[apiserver_pb2.BatchItem] = []
    size = 0
    for item in items:
        item_size = item.ByteSize() + 8  # the field's tag and length
        if chunk and (len(chunk) >= MAX_BATCH_ITEMS or size + item_size > MAX_BATCH_BYTES):
            chunks.append(chunk)
            chunk, size = [], 0
        chunk.append(item)
        size += item_size
    if chunk:
        chunks.append(chunk)
    return chunks


def _sent_too_large(err: grpc.aio.AioRpcError) -> bool:
    """Whether gRPC refused to send the request for its size (the channel's max_send_message_length)."""
    return err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "Sent message larger than max" in (
        err.details() or ""
    )


#: What gRPC's handshake errors say (in the status details), and what that means for the user.
_TLS_FAILURES = (
    ("CERTIFICATE_VERIFY_FAILED", "its certificate is not signed by a trusted certificate authority"),
    ("WRONG_VERSION_NUMBER", "the server does not speak TLS (is it serving without a certificate?)"),
    ("Hostname Verification",
     "its certificate is not valid for the address dialled (check the certificate's names, or give the "
     "name to check with --tls-server-name)"),
    ("CERTIFICATE_REQUIRED",
     "the server requires a client certificate: give --client-certificate and --client-key"),
    ("andshake failed", "the server refused the TLS handshake"),
)


def _tls_failure(err: grpc.aio.AioRpcError, credentials: ClientCredentials) -> str | None:
    """Why the handshake failed, in words, or None when ``err`` is no TLS handshake failure."""
    details = err.details() or ""
    if err.code() != grpc.StatusCode.UNAVAILABLE:
        return None
    for marker, meaning in _TLS_FAILURES:
        if marker in details:
            if marker == "CERTIFICATE_VERIFY_FAILED" and credentials.ca_file:
                meaning = f"its certificate is not signed by the CA in {credentials.ca_file}"
            grpc_said = details.partition("last error: ")[2] or details
            return f"{meaning} (gRPC: {grpc_said[:300]})"
    return None


def _closed_hint(credentials: ClientCredentials) -> str:
    """What a connection closed during its handshake may mean: a server that speaks TLS to a plaintext
    client, or one that requires a client certificate (TLS 1.3 reports neither to the client)."""
    if not credentials.tls:
        return " (if the server serves TLS, give --certificate-authority or $PODSCHED_CA_FILE)"
    if not credentials.client_cert_file:
        return " (if the server requires client certificates, give --client-certificate and --client-key)"
    return ""


def _watch_event(response: apiserver_pb2.WatchEvent) -> WatchEvent:
    event_type = _EVENT_TYPES.get(response.type)
    if event_type is None or response.object.WhichOneof("object") is None:
        raise errors.InternalError(f"malformed watch event from the API server: {response}"[:500])
    return WatchEvent(type=event_type, object=unwrap(response.object))


def _watch_error(err: grpc.aio.AioRpcError) -> errors.ApiError:
    # The server cancelling a stream (as it does when it shuts down) is a disconnect like any other.
    if err.code() == grpc.StatusCode.CANCELLED:
        return errors.Unavailable(f"the API server ended the watch: {err.details()}")
    return errors.from_status(err.code(), err.details(), errors.reason_of(err.trailing_metadata()))


__all__ = [
    "CHANNEL_OPTIONS",
    "DEFAULT_PAGE_SIZE",
    "DEFAULT_SERVER",
    "DEFAULT_TIMEOUT_S",
    "SERVER_ENV",
    "Client",
    "Fence",
    "KindLike",
    "ObjectList",
    "RequestTooLarge",
    "WatchEvent",
    "object_request_bytes",
    "parse_servers",
    "resolve_kind",
]
