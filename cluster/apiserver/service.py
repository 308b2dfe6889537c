"""The gRPC face of the API: unwraps requests, calls the verbs, wraps answers, and owns the one mapping
from what went wrong to a gRPC status.

* ``errors.ApiError`` → its own code and message (Kubernetes' wording, built where it is raised), and its
  reason in the trailing metadata;
* the store is unreachable → UNAVAILABLE (clients retry, and fail over to another server);
* a compacted or future revision that escaped a more specific handler → OUT_OF_RANGE / INVALID_ARGUMENT;
* anything else is a bug: INTERNAL, and the traceback goes to the log, not to the client.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc

from cluster.api import apiserver_pb2, apiserver_pb2_grpc, errors, kinds, objects_pb2
from cluster.apiserver import binding, messages
from cluster.apiserver.fencing import LeaseFence
from cluster.apiserver.listing import list_objects
from cluster.apiserver.selection import Selection
from cluster.apiserver.verbs import Verbs, check_path_name, resolve_kind
from cluster.apiserver.watch import until_stopped, watch_events
from store.base import FutureRevision, StoreUnavailable, TooOldRevision

log = logging.getLogger(__name__)

Request = TypeVar("Request")
Response = TypeVar("Response")


def _error_of(exc: Exception, rpc: str) -> errors.ApiError:
    if isinstance(exc, errors.ApiError):
        if isinstance(exc, errors.InternalError):
            log.error("%s failed: %s", rpc, exc.message)
        return exc
    if isinstance(exc, StoreUnavailable):
        log.warning("%s: the store is unavailable: %s", rpc, exc)
        return errors.Unavailable(f"the store is unavailable: {exc}")
    if isinstance(exc, TooOldRevision):
        return messages.too_old_resource_version(exc.requested, exc.compacted)
    if isinstance(exc, FutureRevision):
        return messages.too_large_resource_version(exc.requested, exc.current)
    log.exception("%s failed", rpc)
    return errors.InternalError(f"internal error in {rpc}: {type(exc).__name__}: {exc}")


async def _abort(context: grpc.aio.ServicerContext, exc: Exception, rpc: str) -> None:
    """End the call with the status ``exc`` maps to, its reason in the trailing metadata."""
    error = _error_of(exc, rpc)
    await context.abort(error.code, error.message, trailing_metadata=((errors.REASON_KEY, error.reason),))


def _unary(
    handler: Callable[[Any, Request], Awaitable[Response]],
) -> Callable[[Any, Request, grpc.aio.ServicerContext], Awaitable[Response]]:
    @functools.wraps(handler)
    async def call(self: Any, request: Request, context: grpc.aio.ServicerContext) -> Response:
        try:
            return await handler(self, request)
        except Exception as exc:  # every failure becomes a status: see _error_of
            failure = exc
        await _abort(context, failure, handler.__name__)
        raise AssertionError("context.abort returns only by raising")

    return call


class ApiService(apiserver_pb2_grpc.ApiServerServicer):
    def __init__(self, verbs: Verbs, stopping: asyncio.Event) -> None:
        self._verbs = verbs
        self._registry = verbs.registry
        #: Set when the server stops: every open watch then ends its stream.
        self._stopping = stopping

    @_unary
    async def Create(self, request: apiserver_pb2.CreateRequest) -> apiserver_pb2.Object:
        created = await self._verbs.create(kinds.unwrap(request.object), dry_run=request.dry_run)
        return kinds.wrap(created)

    @_unary
    async def Get(self, request: apiserver_pb2.GetRequest) -> apiserver_pb2.Object:
        return kinds.wrap(await self._verbs.get(request.kind, request.namespace, request.name))

    @_unary
    async def Update(self, request: apiserver_pb2.UpdateRequest) -> apiserver_pb2.Object:
        if request.HasField("fence"):
            # Ignoring it would let the caller believe the write was fenced.
            raise errors.Invalid(
                "Update does not take a fence: only UpdateStatus, Delete and Bind are fenced"
            )
        updated = await self._verbs.update(kinds.unwrap(request.object), dry_run=request.dry_run)
        return kinds.wrap(updated)

    @_unary
    async def UpdateStatus(self, request: apiserver_pb2.UpdateRequest) -> apiserver_pb2.Object:
        updated = await self._verbs.update_status(
            kinds.unwrap(request.object), dry_run=request.dry_run, fence=self._fence(request)
        )
        return kinds.wrap(updated)

    @_unary
    async def Delete(self, request: apiserver_pb2.DeleteRequest) -> apiserver_pb2.Object:
        grace = request.grace_period_seconds if request.HasField("grace_period_seconds") else None
        deleted = await self._verbs.delete(
            request.kind, request.namespace, request.name,
            grace_period_seconds=grace, resource_version=request.resource_version, dry_run=request.dry_run,
            fence=self._fence(request),
        )
        return kinds.wrap(deleted)

    @_unary
    async def List(self, request: apiserver_pb2.ListRequest) -> apiserver_pb2.ListResponse:
        selection, namespace = self._selection(request)
        page = await list_objects(
            self._registry, selection, namespace, limit=request.limit, continue_token=request.continue_token
        )
        return apiserver_pb2.ListResponse(
            items=[kinds.wrap(obj) for obj in page.items],
            resource_version=str(page.revision),
            continue_token=page.continue_token,
        )

    @_unary
    async def Bind(self, request: apiserver_pb2.BindRequest) -> objects_pb2.Pod:
        fence = self._fence(request)
        return await binding.bind(self._registry, request.binding, self._verbs.now(), fence=fence)

    async def Watch(
        self, request: apiserver_pb2.WatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[apiserver_pb2.WatchEvent]:
        try:
            selection, namespace = self._selection(request)
            events = watch_events(self._registry, selection, namespace, request.resource_version)
            async for event in until_stopped(events, self._stopping):
                yield event
            return
        except Exception as exc:  # every failure becomes a status: see _error_of
            failure = exc
        await _abort(context, failure, "Watch")

    def _fence(
        self, request: apiserver_pb2.UpdateRequest | apiserver_pb2.DeleteRequest | apiserver_pb2.BindRequest
    ) -> LeaseFence | None:
        return self._verbs.fencing.of(request.fence) if request.HasField("fence") else None

    @staticmethod
    def _selection(
        request: apiserver_pb2.ListRequest | apiserver_pb2.WatchRequest,
    ) -> tuple[Selection, str]:
        kind = resolve_kind(request.kind)
        namespace = request.namespace if kind.namespaced else ""
        if namespace:
            check_path_name("namespace", namespace)
        return Selection.parse(kind, request.label_selector, request.field_selector), namespace
