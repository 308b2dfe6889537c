"""Requests whose body is not the message the method takes: refused with INVALID_ARGUMENT.

gRPC decodes a request before any handler runs, and when decoding fails (random bytes, a truncated
message, a string field that is not UTF-8) grpc.aio ends the call with UNKNOWN and logs a traceback,
as if the server had a bug. This interceptor decodes leniently instead: a body that does not decode
reaches the method as ``Malformed``, and the call ends with INVALID_ARGUMENT naming the method and
what is wrong, before authentication (which needs no body) has anything to say about it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from cluster.api import errors


@dataclass(frozen=True, slots=True)
class Malformed:
    """A request body that did not decode, and why."""

    problem: str


class RefuseMalformedRequests(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    def __init__(self) -> None:
        #: method -> (its handler, the lenient one made of it): made once per method, not per call.
        self._lenient: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None or handler.request_deserializer is None or handler.request_streaming:
            return handler
        made = self._lenient.get(details.method)
        if made is None or made[0] is not handler:
            made = (handler, _lenient(handler, details.method))
            self._lenient[details.method] = made
        return made[1]


def _lenient(handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
    """``handler`` with a deserializer that hands an undecodable body on as Malformed, and a behaviour
    that refuses it."""
    decode = handler.request_deserializer

    def lenient(data: bytes) -> Any:
        try:
            return decode(data)
        except DecodeError as exc:
            return Malformed(str(exc))

    if handler.unary_unary is not None:
        unary = handler.unary_unary

        async def unary_behavior(request: Any, context: grpc.aio.ServicerContext) -> Any:
            if isinstance(request, Malformed):
                await _refuse(context, method, request)
            return await unary(request, context)

        return handler._replace(request_deserializer=lenient, unary_unary=unary_behavior)

    stream = handler.unary_stream

    async def stream_behavior(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        if isinstance(request, Malformed):
            await _refuse(context, method, request)
        async for response in stream(request, context):
            yield response

    return handler._replace(request_deserializer=lenient, unary_stream=stream_behavior)


async def _refuse(context: grpc.aio.ServicerContext, method: str, request: Malformed) -> None:
    await context.abort(
        grpc.StatusCode.INVALID_ARGUMENT,
        f"the request body is not a valid request of {method}: {request.problem}",
        trailing_metadata=((errors.REASON_KEY, errors.Invalid.reason),),
    )
