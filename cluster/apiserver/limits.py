"""The API server's limits on what one request or one caller may cost, each refused with an error that
names the limit and the value.

* ``ApiLimits``: the configurable limits (``podsched apiserver`` flags), checked when built.
* ``RequestDeadline``: a request gate that cuts a unary call at ``request_timeout_s`` with
  DEADLINE_EXCEEDED, as kube-apiserver's --request-timeout (60 s) does. Watches are long-running and
  exempt, as in Kubernetes. A shorter deadline of the client's own needs nothing here: gRPC cancels
  the handler when the client's deadline passes.
* ``WatchLimit``: a request gate counting each user's open watches; one more than
  ``max_watches_per_user`` is RESOURCE_EXHAUSTED. Members of system:masters are exempt, as API
  Priority and Fairness exempts them: the server's own controllers, and every caller of a server
  without authentication (loopback only), are admins.
* ``check_page_size``: a List ``limit`` above ``max_page_size`` is Invalid. Kubernetes takes any limit,
  but a page is built in memory and sent as one message, so the maximum keeps it bounded; paging
  clients ask for 500 (client-go's and ours).
* ``status_message``: an error message cut to fit gRPC's status trailer. A message echoing a huge
  request value (a 2 MiB name) would otherwise overflow the client's metadata limit and the caller
  would see gRPC's "metadata size exceeds" instead of what was wrong.

The other limits live with the data they bound: the object size (registry.MAX_OBJECT_BYTES), label
and annotation sizes and counts (cluster.api.validation), the request size (cluster.api.limits, shared
with the client).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import TracebackType

from cluster.api import errors
from cluster.apiserver.auth.identity import RequestInfo, UserInfo
from cluster.apiserver.auth.roles import MASTERS_GROUP

#: kube-apiserver's --request-timeout default.
DEFAULT_REQUEST_TIMEOUT_S = 60.0
#: Open watches per user: an informer holds one per kind it follows, a scheduler about five; 100 leaves
#: room for many clients of one identity and stops a loop that opens watches and never closes them.
DEFAULT_MAX_WATCHES_PER_USER = 100
#: Objects per List page: ten times the page size paging clients ask for (500).
DEFAULT_MAX_PAGE_SIZE = 5000
#: Bytes of a status message once percent-encoded for the grpc-message trailer: gRPC clients refuse
#: trailers above 8 KiB by default, and the reason and other headers travel in the same block.
MAX_STATUS_MESSAGE_BYTES = 4096


@dataclass(frozen=True, slots=True)
class ApiLimits:
    #: Seconds a unary call may run before it is cut with DEADLINE_EXCEEDED (watches are exempt).
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S
    #: Watches one user may hold open at once (system:masters is exempt).
    max_watches_per_user: int = DEFAULT_MAX_WATCHES_PER_USER
    #: The largest ``limit`` a List may ask for (0, "everything", is always allowed).
    max_page_size: int = DEFAULT_MAX_PAGE_SIZE

    def __post_init__(self) -> None:
        if not self.request_timeout_s > 0:
            raise ValueError(f"request timeout must be positive, got {self.request_timeout_s}s")
        if self.max_watches_per_user < 1:
            raise ValueError(f"max watches per user must be at least 1, got {self.max_watches_per_user}")
        if self.max_page_size < 1:
            raise ValueError(f"max page size must be at least 1, got {self.max_page_size}")


def check_page_size(limit: int, maximum: int) -> None:
    """Refuse a List ``limit`` that is negative or above ``maximum``."""
    if limit < 0:
        raise errors.Invalid(f"limit must not be negative: {limit}")
    if limit > maximum:
        raise errors.Invalid(
            f"limit {limit} is more than the maximum page size of {maximum}: ask for at most {maximum} "
            "objects and follow the continue token"
        )


class RequestDeadline:
    """Cuts every unary call at ``timeout_s``: DEADLINE_EXCEEDED naming the timeout."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s

    def admit(
        self, user: UserInfo, request: RequestInfo, width: int = 1
    ) -> contextlib.AbstractAsyncContextManager[None]:
        if request.verb == "watch":
            return _UNLIMITED
        return _Deadline(self.timeout_s, request)


class _Deadline:
    """One call's deadline: asyncio.timeout, its expiry turned into errors.Timeout. A class rather than a
    generator-based context manager because every unary call enters one (3 us less a call)."""

    __slots__ = ("_request", "_timeout", "_timeout_s")

    def __init__(self, timeout_s: float, request: RequestInfo) -> None:
        self._timeout_s = timeout_s
        self._request = request
        self._timeout = asyncio.timeout(timeout_s)

    async def __aenter__(self) -> None:
        await self._timeout.__aenter__()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        try:
            await self._timeout.__aexit__(exc_type, exc, traceback)
        except TimeoutError as expired:
            if not self._timeout.expired():
                raise  # the handler's own TimeoutError, not ours
            raise errors.Timeout(
                f"the request to {self._request.verb} {self._request.resource} did not finish within the "
                f"server's request timeout of {_duration(self._timeout_s)} (--request-timeout)"
            ) from expired


_UNLIMITED = contextlib.nullcontext()


def _duration(seconds: float) -> str:
    """``seconds`` in the largest unit that keeps it at least 1, as flags take it: 60s, 50ms, 1ns."""
    for unit, size in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= size:
            return f"{seconds / size:g}{unit}"
    return f"{seconds / 1e-9:g}ns"


class WatchLimit:
    """Counts each user's open watches and refuses one past ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: collections.Counter[str] = collections.Counter()

    def open_watches(self, user_name: str) -> int:
        return self._open[user_name]

    def admit(
        self, user: UserInfo, request: RequestInfo, width: int = 1
    ) -> contextlib.AbstractAsyncContextManager[None]:
        # Every unary call passes here: those and the exempt watches share one null context.
        if request.verb != "watch" or MASTERS_GROUP in user.groups:
            return _UNLIMITED
        return self._counted(user)

    @contextlib.asynccontextmanager
    async def _counted(self, user: UserInfo) -> AsyncIterator[None]:
        if self._open[user.name] >= self.limit:
            raise errors.TooManyRequests(
                f'too many watches for user "{user.name}": {self._open[user.name]} open, the limit is '
                f"{self.limit} (--max-watches-per-user); close a watch before opening another"
            )
        self._open[user.name] += 1
        try:
            yield
        finally:
            self._open[user.name] -= 1
            if not self._open[user.name]:
                del self._open[user.name]


def status_message(message: str) -> str:
    """``message``, cut (and saying so) where its percent-encoded form would pass
    MAX_STATUS_MESSAGE_BYTES."""
    if len(message) * 9 <= MAX_STATUS_MESSAGE_BYTES:  # even all 4-byte characters, each byte escaped
        return message
    encoded_size = 0
    for index, char in enumerate(message):
        size = sum(1 if 0x20 <= byte <= 0x7E and byte != 0x25 else 3 for byte in char.encode())
        if encoded_size + size > MAX_STATUS_MESSAGE_BYTES - 100:
            cut = len(message.encode()) - len(message[:index].encode())
            return f"{message[:index]}... ({cut} more bytes of this message cut)"
        encoded_size += size
    return message
