"""The client's one retry policy: which failures are worth another attempt, how long to wait between
attempts, and for how long to keep trying.

A call is retried only when another attempt is safe: UNAVAILABLE means the request never reached
a server that could serve it (or the server could not reach its store), and DEADLINE_EXCEEDED is retried
for reads only, since a write that timed out may have been applied. A TooManyRequests refusal (flow
control's RESOURCE_EXHAUSTED) is retried too, writes included, as client-go retries a 429: the server refused
the call before running it. Every other status is the server's answer and is final, the server's own
request Timeout included (it answered: the call ran too long there). The waits are exponential with full
jitter, so that the clients of a restarted API server do not return all at once, and the whole sequence
stays within the call's own deadline.

How long to wait for a server that nobody serves is the caller's choice. A long-running component (the
scheduler, the controllers, the web view, informers) keeps trying until the call's deadline: its server
may be restarting. A one-shot command takes FAIL_FAST_POLICY, as kubectl does: once every server has
refused the connection (or its name did not resolve), the call raises `ServerUnreachable` at once.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import grpc
import tenacity

from cluster.api import errors

#: The first backoff window: a failover to a healthy server should cost next to nothing.
INITIAL_BACKOFF_S = 0.05
#: The widest backoff window for calls: an API server restart takes about a second.
MAX_BACKOFF_S = 2.0
#: The widest backoff window between an informer's re-watch attempts (client-go's reflector caps at 30 s;
#: podsched's clusters are small and an informer that stays away long risks a full relist).
MAX_REWATCH_BACKOFF_S = 10.0


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """The backoff schedule: attempt n waits a random time in [0, min(max_s, initial_s * 2**n)]."""

    #: Width of the first backoff window, in seconds (default 50 ms).
    initial_s: float = INITIAL_BACKOFF_S
    #: Cap on the width of any backoff window, in seconds (default 2 s).
    max_s: float = MAX_BACKOFF_S
    #: How many times in a row each server may be found unreachable (`unreachable_reason`) before a call
    #: gives up; None: keep trying until the call's deadline.
    unreachable_attempts: int | None = None

    def __post_init__(self) -> None:
        if not 0 < self.initial_s <= self.max_s:
            raise ValueError(
                f"retry policy needs 0 < initial_s <= max_s, "
                f"got initial_s={self.initial_s} max_s={self.max_s}"
            )
        if self.unreachable_attempts is not None and self.unreachable_attempts < 1:
            raise ValueError(f"retry policy needs unreachable_attempts >= 1 or None, "
                             f"got {self.unreachable_attempts}")

    def gives_up_unreachable(self, failures: int, servers: int) -> bool:
        """Whether a call that found a server unreachable ``failures`` times in a row, going round
        ``servers`` servers, stops trying."""
        return self.unreachable_attempts is not None and failures >= self.unreachable_attempts * servers

    def tenacity_wait(self) -> tenacity.wait.wait_base:
        return tenacity.wait_random_exponential(multiplier=self.initial_s, max=self.max_s)

    def delay_s(self, attempt: int) -> float:
        """The wait before retry number ``attempt`` (0-based), for loops that do not use tenacity."""
        window = self.max_s if attempt >= 60 else min(self.max_s, self.initial_s * 2**attempt)
        return random.uniform(0, window)


DEFAULT_POLICY = RetryPolicy()
REWATCH_POLICY = RetryPolicy(initial_s=0.2, max_s=MAX_REWATCH_BACKOFF_S)
#: One-shot commands' policy: each server is tried once when none can be reached.
FAIL_FAST_POLICY = RetryPolicy(unreachable_attempts=1)


class ServerUnreachable(errors.Unavailable):
    """No server of the list could be reached, and the retry policy says not to wait for one."""

    def __init__(self, reasons: dict[str, str]) -> None:
        """``reasons``: why each server could not be reached, by address, in the order tried."""
        if len(set(reasons.values())) == 1:
            where = f"{', '.join(reasons)}: {next(iter(reasons.values()))}"
        else:
            where = ", ".join(f"{server} ({why})" for server, why in reasons.items())
        super().__init__(f"cannot reach the API server at {where}")
        self.reasons = reasons


class UnreachableRun:
    """The attempts of one call that found their server unreachable, the latest in a row."""

    def __init__(self) -> None:
        self.reasons: dict[str, str] = {}
        self.failures = 0

    def note(self, server: str, err: grpc.aio.AioRpcError, policy: RetryPolicy, servers: int) -> None:
        """Take in the failure of an attempt on ``server``; raise `ServerUnreachable` when it makes
        ``policy`` give up."""
        reason = unreachable_reason(err)
        if reason is None:
            self.reasons.clear()
            self.failures = 0
            return
        self.reasons[server] = reason
        self.failures += 1
        if policy.gives_up_unreachable(self.failures, servers):
            raise ServerUnreachable(dict(self.reasons)) from err


def unreachable_reason(err: grpc.aio.AioRpcError) -> str | None:
    """Why the call never reached its server, in gRPC's last words ("connection refused", "domain name
    not found"); None when it may have (a server's own UNAVAILABLE, a connection closed during its
    handshake, which a restarting or TLS-refusing server also causes)."""
    details = err.details() or ""
    if err.code() != grpc.StatusCode.UNAVAILABLE or "Socket closed" in details:
        return None
    if not any(marker in details for marker in _UNREACHABLE_MARKERS):
        return None
    return details.rpartition(": ")[2].strip(" []").lower() or "no connection"


#: What gRPC's status details say when no connection could be made, or the address did not resolve.
_UNREACHABLE_MARKERS = ("failed to connect to all addresses", "errors resolving", "DNS resolution failed")


def is_retryable(err: BaseException, *, idempotent: bool) -> bool:
    """Whether another attempt (on the next server) can succeed where ``err`` failed."""
    if not isinstance(err, grpc.aio.AioRpcError):
        return False
    code = err.code()
    if code in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.DEADLINE_EXCEEDED):
        reason = errors.reason_of(err.trailing_metadata())
        if reason == errors.TooManyRequests.reason:
            return True
        if reason == errors.Timeout.reason:
            return False
    return code == grpc.StatusCode.UNAVAILABLE or (idempotent and code == grpc.StatusCode.DEADLINE_EXCEEDED)


def is_server_timeout(err: grpc.aio.AioRpcError) -> bool:
    """The server cut the call at its request timeout (it answered), as opposed to the client's own
    deadline passing without an answer."""
    return (
        err.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        and errors.reason_of(err.trailing_metadata()) == errors.Timeout.reason
    )


def retrying(policy: RetryPolicy, *, budget_s: float, idempotent: bool) -> tenacity.AsyncRetrying:
    """A tenacity loop over attempts of one call: retry what ``is_retryable`` allows, never start an
    attempt (or a wait) that would end past ``budget_s`` from the first attempt, and re-raise the last
    failure as it is."""
    return tenacity.AsyncRetrying(
        retry=tenacity.retry_if_exception(lambda err: is_retryable(err, idempotent=idempotent)),
        wait=policy.tenacity_wait(),
        stop=tenacity.stop_before_delay(budget_s),
        reraise=True,
    )
