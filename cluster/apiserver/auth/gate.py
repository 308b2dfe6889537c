"""Request gates: checks a request passes after authentication and authorization, before its handler.

A gate is entered around the whole of a unary call and around the whole stream of a Watch, so it can
count what is in flight (concurrent calls, open watches) per identity. It refuses by raising an
``errors.ApiError`` (e.g. a TooManyRequests naming the limit) when entered.
"""

from __future__ import annotations

import contextlib
from typing import Protocol

from cluster.apiserver.auth.identity import RequestInfo, UserInfo


class RequestGate(Protocol):
    def admit(self, user: UserInfo, request: RequestInfo) -> contextlib.AbstractAsyncContextManager[None]: ...
