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

    def __post_init__(self) -> None:
        if not 0 < self.initial_s <= self.max_s:
            raise ValueError(
                f"retry policy needs 0 < initial_s <= max_s, "
                f"got initial_s={self.initial_s} max_s={self.max_s}"
            )

    def tenacity_wait(self) -> tenacity.wait.wait_base:
        return tenacity.wait_random_exponential(multiplier=self.initial_s, max=self.max_s)

    def delay_s(self, attempt: int) -> float:
        """The wait before retry number ``attempt`` (0-based), for loops that do not use tenacity."""
        window = self.max_s if attempt >= 60 else min(self.max_s, self.initial_s * 2**attempt)
        return random.uniform(0, window)


DEFAULT_POLICY = RetryPolicy()
REWATCH_POLICY = RetryPolicy(initial_s=0.2, max_s=MAX_REWATCH_BACKOFF_S)


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
