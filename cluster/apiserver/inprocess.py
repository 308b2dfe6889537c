"""The API server's methods, for a caller in the same process and event loop.

``InProcessServer`` stands where a ``grpc.aio.Server`` stands when the service registers its methods: it
keeps the very method handlers gRPC serves (the same ``ApiService``, its authentication, authorization,
gates and metrics), so that an in-process channel (``cluster.client.inprocess``) can call them without
HTTP/2, sockets or gRPC's poller in between. ``podsched simulate`` and ``podsched replay`` run a whole
control plane in one process on a virtual clock and call the API tens of thousands of times in lock step;
the transport is most of what such a call costs.

What it leaves out of a gRPC server: the interceptor that turns an undecodable request body into
INVALID_ARGUMENT (an in-process caller serializes real messages), message size limits, and transport
security (an in-process caller is this process).
"""

from __future__ import annotations

from collections.abc import Sequence

import grpc


class InProcessServer:
    """The method handlers registered on it, by full method name (``/package.Service/Method``)."""

    def __init__(self) -> None:
        self._handlers: dict[str, grpc.RpcMethodHandler] = {}

    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        """Ignored: the service registers the same handlers with ``add_registered_method_handlers``."""

    def add_registered_method_handlers(
        self, service: str, handlers: dict[str, grpc.RpcMethodHandler]
    ) -> None:
        for method, handler in handlers.items():
            self._handlers[f"/{service}/{method}"] = handler

    def handler(self, method: str) -> grpc.RpcMethodHandler | None:
        return self._handlers.get(method)
