"""Request gates: checks a request passes after authentication and authorization, before its handler.

A gate is entered around the whole of a unary call and around the whole stream of a Watch, so it can
count what is in flight (concurrent calls, open watches) per identity. It refuses by raising an
``errors.ApiError`` (e.g. a TooManyRequests naming the limit) when entered.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from cluster.apiserver.auth.identity import RequestInfo, UserInfo


class RequestGate(Protocol):
    def admit(
        self, user: UserInfo, request: RequestInfo, width: int = 1
    ) -> contextlib.AbstractAsyncContextManager[None]:
        """``width``: how many requests' worth the call is (a Batch: its items), for gates that weigh
        calls (flow control's seats)."""
        ...


def gated(
    gates: Sequence[RequestGate], user: UserInfo, request: RequestInfo, width: int = 1
) -> contextlib.AbstractAsyncContextManager[None]:
    """Inside every gate, for both wires. A lone gate (the request deadline of a server without
    authentication) is entered as it is: no exit stack and no generator around it on every call."""
    if len(gates) == 1:
        return gates[0].admit(user, request, width)
    return _all_gates(gates, user, request, width)


@contextlib.asynccontextmanager
async def _all_gates(
    gates: Sequence[RequestGate], user: UserInfo, request: RequestInfo, width: int
) -> AsyncIterator[None]:
    """Inside every gate, entered in order (a gate that refuses leaves the ones entered before)."""
    async with contextlib.AsyncExitStack() as stack:
        for gate in gates:
            await stack.enter_async_context(gate.admit(user, request, width))
        yield
