"""The gRPC face of the API: unwraps requests, calls the verbs, wraps answers. What went wrong becomes
an API error in failures.py (for both wires), and here its gRPC status: its code and message, and its
reason in the trailing metadata.

Every call goes through one pipeline, in kube-apiserver's order: authenticate (UNAUTHENTICATED) →
describe the request, its kind resolved once for every step after (auth/requests.py) → authorize
(PERMISSION_DENIED naming verb and resource) → enter the request gates (auth/gate.py), held around the
whole unary call or the whole Watch stream → the handler.

Batch (``batch.py``) is authenticated once and enters the gates once, as wide as its items (flow control
takes a seat per item); then each item is described, authorized and handled as its own call would be,
all concurrently (the store's group commit merges their writes), each answered with its own result.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

import grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2

from cluster.api import apiserver_pb2, apiserver_pb2_grpc, errors, kinds, objects_pb2
from cluster.api.kinds import Kind
from cluster.api.version import PODSCHED_VERSION
from cluster.apiserver import binding
from cluster.apiserver.auth import requests
from cluster.apiserver.auth.access import Access
from cluster.apiserver.auth.gate import RequestGate, gated
from cluster.apiserver.auth.identity import RequestInfo, UserInfo
from cluster.apiserver.batch import BATCH_CALL, BATCH_RPCS, check_batch, empty_item, status_of
from cluster.apiserver.failures import error_of
from cluster.apiserver.fencing import LeaseFence
from cluster.apiserver.flowcontrol import watch_started
from cluster.apiserver.inprocess import InProcessServer
from cluster.apiserver.limits import DEFAULT_MAX_PAGE_SIZE, status_message
from cluster.apiserver.metrics import ApiServerMetrics
from cluster.apiserver.selection import Selection
from cluster.apiserver.strategy import DEFAULT_NAMESPACE
from cluster.apiserver.verbs import Verbs, check_path_name
from cluster.apiserver.watch import until_stopped
from cluster.apiserver.watchcache import read_scope

log = logging.getLogger(__name__)

Request = TypeVar("Request")
Response = TypeVar("Response")


async def _abort(context: grpc.aio.ServicerContext, error: errors.ApiError) -> None:
    """End the call with ``error``'s status, its reason in the trailing metadata."""
    await context.abort(
        error.code, status_message(error.message), trailing_metadata=((errors.REASON_KEY, error.reason),)
    )


#: The verb label of the request metrics per RPC: kube-apiserver's (the HTTP method, LIST and WATCH apart).
METRIC_VERBS = {
    "Create": "POST", "Get": "GET", "List": "LIST", "Update": "PUT", "UpdateStatus": "PUT",
    "Delete": "DELETE", "Bind": "POST", "BindGroup": "POST", "Batch": "POST", "Watch": "WATCH",
}


def _unary(
    describe: Callable[[Request], requests.Described],
) -> Callable[
    [Callable[[Any, Request, UserInfo, requests.Described], Awaitable[Response]]],
    Callable[[Any, Request, grpc.aio.ServicerContext], Awaitable[Response]],
]:
    """Serve the decorated handler through the pipeline; ``describe`` says what its request asks, its
    kind resolved once. The handler is given the request, the authenticated caller and that description,
    and takes the kind from it (never from the request's string)."""

    def decorate(
        handler: Callable[[Any, Request, UserInfo, requests.Described], Awaitable[Response]],
    ) -> Callable[[Any, Request, grpc.aio.ServicerContext], Awaitable[Response]]:
        rpc = handler.__name__

        @functools.wraps(handler)
        async def call(self: ApiService, request: Request, context: grpc.aio.ServicerContext) -> Response:
            start = time.perf_counter()
            info = None
            try:
                user = self._access.authenticate(context)
                described = describe(request)
                info = described.info
                self._access.authorize(user, info)
                with read_scope():
                    if not self._gates:
                        response = await handler(self, request, user, described)
                    else:
                        async with gated(self._gates, user, info):
                            response = await handler(self, request, user, described)
            except asyncio.CancelledError:
                self._observe(rpc, info, grpc.StatusCode.CANCELLED, start)
                raise
            except Exception as exc:  # every failure becomes a status: see error_of
                error = error_of(exc, rpc)
            else:
                self._observe(rpc, info, grpc.StatusCode.OK, start)
                return response
            self._observe(rpc, info, error.code, start)
            await _abort(context, error)
            raise AssertionError("context.abort returns only by raising")

        return call

    return decorate


class ApiService(apiserver_pb2_grpc.ApiServerServicer):
    def __init__(
        self,
        verbs: Verbs,
        stopping: asyncio.Event,
        *,
        access: Access | None = None,
        gates: Sequence[RequestGate] = (),
        max_page_size: int = DEFAULT_MAX_PAGE_SIZE,
        metrics: ApiServerMetrics | None = None,
    ) -> None:
        self._verbs = verbs
        self._registry = verbs.registry
        #: Set when the server stops: every open watch then ends its stream.
        self._stopping = stopping
        #: Who may call, and what they may do; without it every caller is an admin.
        self._access = access or Access.unsecured()
        self._gates = tuple(gates)
        #: The largest List ``limit`` a caller may ask for (limits.py).
        self._max_page_size = max_page_size
        self._metrics = metrics or ApiServerMetrics()
        #: Watch calls whose handler has not returned yet, and an event set while there are none.
        self._open_watches = 0
        self._no_open_watches = asyncio.Event()
        self._no_open_watches.set()

    async def watches_ended(self) -> None:
        """Return once no Watch handler runs. A stopping server waits for this before gRPC stops: every
        watch then ends its stream, or its caller has gone and its handler is being cancelled, and gRPC
        would otherwise cancel a handler still on its way out (and log each as an unhandled error)."""
        await self._no_open_watches.wait()

    def _observe(self, rpc: str, info: RequestInfo | None, code: grpc.StatusCode, start: float) -> None:
        """Count a call that ended with ``code``; one refused before it was described (``info`` None:
        unauthenticated, malformed) has no resource."""
        resource, subresource = (info.resource, info.subresource) if info is not None else ("", "")
        self._metrics.observe_request(METRIC_VERBS[rpc], resource, subresource, code.name,
                                      time.perf_counter() - start)

    @_unary(requests.create)
    async def Create(
        self, request: apiserver_pb2.CreateRequest, user: UserInfo, described: requests.Described
    ) -> apiserver_pb2.Object:
        return await self._create(request, user)

    async def _create(self, request: apiserver_pb2.CreateRequest, user: UserInfo) -> apiserver_pb2.Object:
        created = await self._verbs.create(
            kinds.unwrap(request.object), dry_run=request.dry_run, fence=self._fence(request, user)
        )
        return kinds.wrap(created)

    @_unary(requests.get)
    async def Get(
        self, request: apiserver_pb2.GetRequest, user: UserInfo, described: requests.Described
    ) -> apiserver_pb2.Object:
        return kinds.wrap(await self._verbs.get(described.kind, described.info.namespace, request.name))

    @_unary(requests.update)
    async def Update(
        self, request: apiserver_pb2.UpdateRequest, user: UserInfo, described: requests.Described
    ) -> apiserver_pb2.Object:
        updated = await self._verbs.update(
            kinds.unwrap(request.object), dry_run=request.dry_run, fence=self._fence(request, user)
        )
        return kinds.wrap(updated)

    @_unary(requests.update_status)
    async def UpdateStatus(
        self, request: apiserver_pb2.UpdateRequest, user: UserInfo, described: requests.Described
    ) -> apiserver_pb2.Object:
        fence = self._fence(request, user)
        updated = await self._verbs.update_status(
            kinds.unwrap(request.object), dry_run=request.dry_run, fence=fence,
            nomination_check=self._verbs.leadership.nomination_check(user, fence),
        )
        return kinds.wrap(updated)

    @_unary(requests.delete)
    async def Delete(
        self, request: apiserver_pb2.DeleteRequest, user: UserInfo, described: requests.Described
    ) -> apiserver_pb2.Object:
        grace = request.grace_period_seconds if request.HasField("grace_period_seconds") else None
        fence = self._fence(request, user)
        kind, namespace = described.kind, described.info.namespace
        self._verbs.leadership.check_delete(user, kind, namespace, request.name, fence)
        deleted = await self._verbs.delete(
            kind, namespace, request.name,
            grace_period_seconds=grace, resource_version=request.resource_version, dry_run=request.dry_run,
            fence=fence,
        )
        return kinds.wrap(deleted)

    @_unary(requests.list_)
    async def List(
        self, request: apiserver_pb2.ListRequest, user: UserInfo, described: requests.Described
    ) -> apiserver_pb2.ListResponse:
        selection, namespace = self._selection(request, described.kind)
        page = await self._verbs.cache.list(
            selection, namespace, limit=request.limit, continue_token=request.continue_token,
            max_page_size=self._max_page_size,
        )
        return apiserver_pb2.ListResponse(
            items=[kinds.wrap(obj) for obj in page.items],
            resource_version=str(page.revision),
            continue_token=page.continue_token,
        )

    @_unary(requests.bind)
    async def Bind(
        self, request: apiserver_pb2.BindRequest, user: UserInfo, described: requests.Described
    ) -> objects_pb2.Pod:
        return await self._bind(request, user)

    async def _bind(self, request: apiserver_pb2.BindRequest, user: UserInfo) -> objects_pb2.Pod:
        fence = self._fence(request, user)
        meta = request.binding.metadata
        self._verbs.leadership.check_bind(user, meta.namespace or DEFAULT_NAMESPACE, meta.name, fence)
        return await binding.bind(
            self._registry, request.binding, self._verbs.now(), fence=fence, peek=self._verbs.cache.peek)

    @_unary(requests.bind_group)
    async def BindGroup(
        self, request: apiserver_pb2.BindGroupRequest, user: UserInfo, described: requests.Described
    ) -> apiserver_pb2.BindGroupResponse:
        fence = self._fence(request, user)
        # The pipeline authorized the first binding; the group needs the same permission for each.
        for info in requests.group_bindings(request)[1:]:
            self._access.authorize(user, info)
        if request.bindings:
            meta = request.bindings[0].metadata
            self._verbs.leadership.check_bind(user, meta.namespace or DEFAULT_NAMESPACE, meta.name, fence)
        pods = await binding.bind_group(self._registry, request.bindings, self._verbs.now(), fence=fence)
        return apiserver_pb2.BindGroupResponse(pods=pods)

    async def Batch(
        self, request: apiserver_pb2.BatchRequest, context: grpc.aio.ServicerContext
    ) -> apiserver_pb2.BatchResponse:
        """Each item as its own call, all at once; the call itself fails only when it is refused as a
        whole (authentication, too many items, flow control, the request deadline)."""
        start = time.perf_counter()
        try:
            user = self._access.authenticate(context)
            check_batch(request)
            with read_scope():
                if not self._gates:
                    results = await self._batch_items(request, user)
                else:
                    async with gated(self._gates, user, BATCH_CALL, len(request.items)):
                        results = await self._batch_items(request, user)
        except asyncio.CancelledError:
            self._observe("Batch", BATCH_CALL, grpc.StatusCode.CANCELLED, start)
            raise
        except Exception as exc:  # every failure becomes a status: see error_of
            error = error_of(exc, "Batch")
        else:
            self._observe("Batch", BATCH_CALL, grpc.StatusCode.OK, start)
            return apiserver_pb2.BatchResponse(results=results)
        self._observe("Batch", BATCH_CALL, error.code, start)
        await _abort(context, error)
        raise AssertionError("context.abort returns only by raising")

    async def _batch_items(
        self, request: apiserver_pb2.BatchRequest, user: UserInfo
    ) -> list[apiserver_pb2.BatchResult]:
        if len(request.items) == 1:
            # Alone, it runs in this task: gather would give it a task of its own and a turn of the loop.
            return [await self._batch_item(0, request.items[0], user)]
        return await asyncio.gather(
            *(self._batch_item(index, item, user) for index, item in enumerate(request.items)))

    async def _batch_item(
        self, index: int, item: apiserver_pb2.BatchItem, user: UserInfo
    ) -> apiserver_pb2.BatchResult:
        """One item, checked, written and counted in the metrics as its own call; its failure becomes
        its result, never the batch's."""
        start = time.perf_counter()
        write = item.WhichOneof("write")
        rpc = BATCH_RPCS.get(write or "", "Batch")
        info = None
        try:
            if write == "create":
                info = requests.create(item.create).info
                self._access.authorize(user, info)
                result = apiserver_pb2.BatchResult(object=await self._create(item.create, user))
            elif write == "bind":
                info = requests.bind(item.bind).info
                self._access.authorize(user, info)
                pod = await self._bind(item.bind, user)
                result = apiserver_pb2.BatchResult(object=apiserver_pb2.Object(pod=pod))
            else:
                raise empty_item(index)
        except Exception as exc:  # every failure becomes the item's status: see error_of
            error = error_of(exc, rpc)
            self._observe(rpc, info, error.code, start)
            return apiserver_pb2.BatchResult(error=status_of(error))
        self._observe(rpc, info, grpc.StatusCode.OK, start)
        return result

    async def Version(
        self, request: apiserver_pb2.VersionRequest, context: grpc.aio.ServicerContext
    ) -> apiserver_pb2.VersionInfo:
        """The release, to anyone: kube-apiserver's /version is public (system:public-info-viewer), and
        `podsched version` asks it before it knows whether its credentials are any good."""
        return apiserver_pb2.VersionInfo(version=PODSCHED_VERSION)

    async def Watch(
        self, request: apiserver_pb2.WatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[bytes | apiserver_pb2.WatchEvent]:
        """The events of the watch: from the watch cache, bytes serialized once for every watcher (see
        ``add_api_service``), or WatchEvent messages from a store watch."""
        start = time.perf_counter()
        info = None
        self._open_watches += 1
        self._no_open_watches.clear()
        try:
            user = self._access.authenticate(context)
            described = requests.watch(request)
            info = described.info
            self._access.authorize(user, info)
            # The gates hold for the whole stream: a gate may count a caller's open watches.
            async with gated(self._gates, user, info):
                selection, namespace = self._selection(request, described.kind)
                # A watch with nothing to send yet (resumed from a recent revision, of an empty kind) is
                # set up once it waits for news: its seat goes back then, as kube's watch initialization.
                events = self._verbs.cache.watch(selection, namespace, request.resource_version,
                                                 caught_up=watch_started)
                self._metrics.watch_opened(info.resource)
                try:
                    async for event in until_stopped(events, self._stopping):
                        watch_started()  # its setup is done: flow control takes its seat back
                        size = len(event) if isinstance(event, bytes) else event.ByteSize()
                        self._metrics.watch_event_sent(info.resource, size)
                        yield event
                finally:
                    self._metrics.watch_closed(info.resource)
        except (asyncio.CancelledError, GeneratorExit):  # the caller went away
            self._observe("Watch", info, grpc.StatusCode.CANCELLED, start)
            raise
        except Exception as exc:  # every failure becomes a status: see error_of
            error = error_of(exc, "Watch")
        else:
            self._observe("Watch", info, grpc.StatusCode.OK, start)
            return
        finally:
            self._open_watches -= 1
            if not self._open_watches:
                self._no_open_watches.set()
        self._observe("Watch", info, error.code, start)
        await _abort(context, error)

    def _fence(
        self,
        request: apiserver_pb2.CreateRequest | apiserver_pb2.UpdateRequest | apiserver_pb2.DeleteRequest
        | apiserver_pb2.BindRequest | apiserver_pb2.BindGroupRequest,
        user: UserInfo,
    ) -> LeaseFence | None:
        """The request's fence, checked as a fence and for the Lease it names; None without one."""
        if not request.HasField("fence"):
            return None
        fence = self._verbs.fencing.of(request.fence)
        self._verbs.leadership.check_fence(user, fence)
        return fence

    @staticmethod
    def _selection(
        request: apiserver_pb2.ListRequest | apiserver_pb2.WatchRequest, kind: Kind
    ) -> tuple[Selection, str]:
        namespace = request.namespace if kind.namespaced else ""
        if namespace:
            check_path_name("namespace", namespace)
        return Selection.parse(kind, request.label_selector, request.field_selector), namespace


def _serialize_watch_event(event: bytes | apiserver_pb2.WatchEvent) -> bytes:
    return event if isinstance(event, bytes) else event.SerializeToString()


class _WatchBytesRegistration:
    """A stand-in for the server while the generated code registers the service: it registers the same
    handlers, except that Watch's response serializer passes bytes through (the cache sends each event's
    bytes, serialized once, to every watcher) and serializes a WatchEvent message (a store watch)."""

    def __init__(self, server: grpc.aio.Server | InProcessServer) -> None:
        self._server = server

    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        """Ignored: ``add_registered_method_handlers`` receives the same handlers, and adds both."""

    def add_registered_method_handlers(
        self, service: str, handlers: dict[str, grpc.RpcMethodHandler]
    ) -> None:
        handlers = dict(handlers)
        handlers["Watch"] = handlers["Watch"]._replace(  # type: ignore[attr-defined]
            response_serializer=_serialize_watch_event
        )
        self._server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
        self._server.add_registered_method_handlers(service, handlers)


def add_api_service(service: ApiService, server: grpc.aio.Server | InProcessServer) -> None:
    """Serve ``service`` on ``server`` as the generated ``add_ApiServerServicer_to_server`` does, with
    Watch responses that may be pre-serialized bytes."""
    apiserver_pb2_grpc.add_ApiServerServicer_to_server(service, _WatchBytesRegistration(server))


class GuardedReflection(reflection.aio.ReflectionServicer):
    """Server reflection (grpcurl) for authenticated callers only, when authentication is on: the API's
    shape is no secret, but an open door to anyone is not what a secured server should show."""

    def __init__(self, service_names: Sequence[str], *, access: Access) -> None:
        super().__init__(service_names)
        self._access = access

    # The stubs of grpcio-reflection declare this method a coroutine returning an iterable; it is an
    # async generator, as here.
    async def ServerReflectionInfo(  # type: ignore[override]
        self,
        request_iterator: AsyncIterable[reflection_pb2.ServerReflectionRequest],
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[reflection_pb2.ServerReflectionResponse]:
        try:
            self._access.authenticate(context)
        except errors.Unauthorized as exc:
            await _abort(context, exc)
        async for response in super().ServerReflectionInfo(  # type: ignore[attr-defined]
                request_iterator, context):
            yield response
