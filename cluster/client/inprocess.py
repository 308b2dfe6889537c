"""A channel to an API server in this very process: what a ``grpc.aio`` channel does for the client's
calls, minus HTTP/2.

A ``Client`` made with ``channel_factory=`` one of these calls the server's method handlers (from
``cluster.apiserver.inprocess.InProcessServer``, reached through the ``lookup`` it is given, so the
client stays a client of the wire) as a gRPC server would: the request is serialized and decoded by the
handler's own deserializer, the handler runs in a task of its own with a context that carries the call's
metadata, ``context.abort`` and uncaught errors end the call with the status gRPC would give
(``AioRpcError``, trailing metadata included), the response goes through the handler's serializer and
the stub's deserializer, and a call past its timeout ends with DEADLINE_EXCEEDED. A server stream is
read one response at a time, in the reader's task, as ``grpc.aio``'s ``read()`` reads it.

Only what the client uses is here: unary-unary and unary-stream calls, ``read`` and ``cancel`` of a
stream, and ``close``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any

import grpc

#: What a handler's peer reads as (gRPC would give an address).
PEER = "in-process"

Serializer = Callable[[Any], bytes]
Deserializer = Callable[[bytes], Any]
Metadata = Sequence[tuple[str, str | bytes]]


class _Aborted(Exception):
    def __init__(self, code: grpc.StatusCode, details: str, trailing_metadata: Metadata) -> None:
        super().__init__(details)
        self.code = code
        self.details = details
        self.trailing_metadata = tuple(trailing_metadata)


class InProcessContext:
    """What the API service reads of a ``grpc.aio.ServicerContext``."""

    def __init__(self, metadata: Metadata) -> None:
        self._metadata = tuple(metadata)

    def invocation_metadata(self) -> tuple[tuple[str, str | bytes], ...]:
        return self._metadata

    def auth_context(self) -> dict[str, list[bytes]]:
        return {}  # no transport security, so no peer certificate

    def peer(self) -> str:
        return PEER

    async def abort(self, code: grpc.StatusCode, details: str = "", trailing_metadata: Metadata = ()) -> None:
        raise _Aborted(code, details, trailing_metadata)


def _rpc_error(code: grpc.StatusCode, details: str, trailing_metadata: Metadata = ()) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(*trailing_metadata), details)


def _failure(exc: BaseException) -> grpc.aio.AioRpcError:
    """The status gRPC ends a call with when its handler raised ``exc``."""
    if isinstance(exc, _Aborted):
        return _rpc_error(exc.code, exc.details, exc.trailing_metadata)
    return _rpc_error(grpc.StatusCode.UNKNOWN, f"Unexpected {type(exc)}: {exc}")


class InProcessChannel:
    """Calls the handlers ``lookup`` finds by full method name (``/package.Service/Method``)."""

    def __init__(self, lookup: Callable[[str], grpc.RpcMethodHandler | None]) -> None:
        self._lookup = lookup
        self._tasks: set[asyncio.Task[Any]] = set()
        self._streams: set[_StreamCall] = set()
        self._closed = False

    def unary_unary(self, method: str, request_serializer: Serializer, response_deserializer: Deserializer,
                    _registered_method: bool = False) -> Callable[..., Any]:
        # ``timeout`` as gRPC's multi-callables take it.
        async def call(request: Any, *, timeout: float | None = None,  # noqa: ASYNC109
                       metadata: Metadata = ()) -> Any:
            handler = self._handler(method)
            context = InProcessContext(metadata)
            task = asyncio.get_running_loop().create_task(
                handler.unary_unary(handler.request_deserializer(request_serializer(request)), context)
            )
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            # Awaiting the task itself (not asyncio.wait_for, which on Python 3.11 can swallow a
            # cancellation that arrives as the task ends): cancelling the caller cancels the handler,
            # and a call that closing the channel cancels raises CancelledError, as grpc.aio's does.
            try:
                async with asyncio.timeout(timeout):
                    response = await task
            except Exception as exc:
                if isinstance(exc, TimeoutError) and task.cancelled():
                    raise _rpc_error(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded") from None
                raise _failure(exc) from exc
            return response_deserializer(handler.response_serializer(response))

        return call

    def unary_stream(self, method: str, request_serializer: Serializer, response_deserializer: Deserializer,
                     _registered_method: bool = False) -> Callable[..., _StreamCall]:
        def call(request: Any, *, timeout: float | None = None, metadata: Metadata = ()) -> _StreamCall:
            handler = self._handler(method)
            responses = handler.unary_stream(handler.request_deserializer(request_serializer(request)),
                                             InProcessContext(metadata))
            stream = _StreamCall(responses, handler.response_serializer, response_deserializer,
                                 self._streams.discard)
            self._streams.add(stream)
            return stream

        return call

    async def close(self) -> None:
        """End every call still running, as closing a gRPC channel cancels them."""
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await asyncio.gather(*(stream.aclose() for stream in list(self._streams)), return_exceptions=True)

    def _handler(self, method: str) -> Any:
        """The method's handler (a ``grpc.RpcMethodHandler``, whose typed fields are all optional: the
        registered service sets the ones of its kind of method)."""
        if self._closed:
            raise RuntimeError("the in-process channel is closed")
        handler = self._lookup(method)
        if handler is None:
            raise _rpc_error(grpc.StatusCode.UNIMPLEMENTED, "Method not found!")
        return handler


class _StreamCall:
    """A server stream being read: ``read`` returns the next response or ``grpc.aio.EOF``."""

    def __init__(self, responses: AsyncGenerator[Any, None], serializer: Serializer,
                 deserializer: Deserializer, forget: Callable[[_StreamCall], None]) -> None:
        self._responses = responses
        self._serializer = serializer
        self._deserializer = deserializer
        self._forget = forget
        self._done = False
        self._closing: asyncio.Task[None] | None = None
        #: The task inside ``read`` now, if any, and whether ``cancel`` interrupted it there.
        self._reader: asyncio.Task[Any] | None = None
        self._interrupted = False

    async def read(self) -> Any:
        if self._done:
            return grpc.aio.EOF
        reader = self._reader = asyncio.current_task()
        try:
            response = await anext(self._responses)
        except StopAsyncIteration:
            self._finish()
            return grpc.aio.EOF
        except asyncio.CancelledError:
            self._finish()
            raise
        except Exception as exc:
            self._finish()
            raise _failure(exc) from exc
        finally:
            self._reader = None
            if self._interrupted and reader is not None:
                # The CancelledError was the call's, not a cancellation of the reader's task.
                self._interrupted = False
                reader.uncancel()
        return self._deserializer(self._serializer(response))

    def cancel(self) -> bool:
        """Stop the server's side of the stream (it sees its generator closed, as on a cancelled call);
        a read waiting meanwhile raises CancelledError."""
        if self._done:
            return False
        self._finish()
        if self._reader is not None:
            # A read waits inside the generator, which cannot be closed while it runs: end that read
            # with CancelledError, as gRPC ends a pending read of a cancelled call; the generator
            # closes as the error leaves it.
            self._interrupted = True
            self._reader.cancel()
        else:
            self._closing = asyncio.get_running_loop().create_task(self._responses.aclose())
        return True

    async def aclose(self) -> None:
        self.cancel()
        if self._closing is not None:
            await self._closing

    def _finish(self) -> None:
        self._done = True
        self._forget(self)
