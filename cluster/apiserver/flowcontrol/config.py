"""The settings of flow control: how many requests the server executes at once, and how long and how
many of them may wait.

As in kube-apiserver with API Priority and Fairness, ``--max-requests-inflight`` and
``--max-mutating-requests-inflight`` are summed into the server's concurrency limit, which the limited
priority levels share in proportion to their nominal concurrency shares (kube's defaults for the levels
podsched has). Our defaults are smaller than kube's 400 and 200: one Python event loop serves every
request, and beyond a few dozen requests in flight it only adds latency, to lease renewals too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Defaults of --max-requests-inflight and --max-mutating-requests-inflight (kube's: 400 and 200).
DEFAULT_MAX_REQUESTS_INFLIGHT = 60
DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT = 30
#: How many requests one flow (one user) may have waiting at a priority level; kube's default
#: queueLengthLimit of the suggested levels. One more is refused at once ("queue-full").
DEFAULT_QUEUE_LENGTH_LIMIT = 50
#: How long a request waits for a seat before it is refused ("time-out"). kube waits a quarter of its
#: 60 s request timeout; our clients give a call 30 s in all, so a refusal still reaches them.
DEFAULT_QUEUE_WAIT_S = 15.0
#: The longest a watch keeps its seat while it starts: until its first event is sent or, served from the
#: watch cache, until it has sent what it had; this long at most (a store watch with nothing to send).
#: Watches stream for hours; like kube, only their setup (the initial list) counts against the
#: concurrency limit.
DEFAULT_WATCH_SETUP_S = 1.0


@dataclass(frozen=True, slots=True)
class FlowControlConfig:
    #: kube's limit of read requests in flight (default 60); here, as in kube with API Priority and
    #: Fairness, only its sum with the next one counts: the server's concurrency limit.
    max_requests_inflight: int = DEFAULT_MAX_REQUESTS_INFLIGHT
    #: kube's limit of mutating requests in flight (default 30); see above.
    max_mutating_requests_inflight: int = DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT
    #: Requests one flow may have waiting at one priority level (default 50).
    queue_length_limit: int = DEFAULT_QUEUE_LENGTH_LIMIT
    #: Seconds a request may wait for a seat (default 15).
    queue_wait_s: float = DEFAULT_QUEUE_WAIT_S
    #: Seconds at most a starting watch holds its seat (default 1).
    watch_setup_s: float = DEFAULT_WATCH_SETUP_S

    def __post_init__(self) -> None:
        for name in ("max_requests_inflight", "max_mutating_requests_inflight"):
            value = getattr(self, name)
            if value < 0:
                raise ValueError(f"--{name.replace('_', '-')} must not be negative, got {value}")
        if self.concurrency_limit <= 0:
            raise ValueError(
                "--max-requests-inflight plus --max-mutating-requests-inflight is the server's concurrency "
                f"limit and must be positive, got {self.max_requests_inflight} + "
                f"{self.max_mutating_requests_inflight}"
            )
        if self.queue_length_limit < 0:
            raise ValueError(f"queue length limit must not be negative, got {self.queue_length_limit}")
        for name in ("queue_wait_s", "watch_setup_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number of seconds, got {value}")

    @property
    def concurrency_limit(self) -> int:
        """The seats all limited priority levels share."""
        return self.max_requests_inflight + self.max_mutating_requests_inflight
