"""One limited priority level: a fixed number of seats, and fair queues for the requests that find them
all taken.

A request that finds a seat free takes it and runs. Otherwise it waits in its flow's queue (one queue
per user); whenever a seat frees, it goes to the head of the next non-empty queue in turn (round robin),
so a user who sends a thousand requests waits behind their own requests, not in front of everyone
else's. A request is refused with TooManyRequests, as kube's API Priority and Fairness refuses with 429,
when its flow already has ``queue_length_limit`` requests waiting ("queue-full"), or when it has waited
``queue_wait_s`` without a seat ("time-out"). A waiting request whose caller gives up (its task is
cancelled) leaves its queue.

A request may be wider than one seat (a Batch of several writes takes a seat per item, as kube's APF
gives wide requests a width): it runs once that many seats are free, at most the level's seats. A wide
request at the head of the queues waits for its seats rather than being passed by narrower ones, so it
is never starved.

Everything runs on the server's event loop: seats are handed over in plain callbacks, so a seat is
never both given to a waiter and lost with it.
"""

from __future__ import annotations

import asyncio
from collections import deque

from cluster.api import errors

#: Why a request was refused, in kube's words (its apiserver_flowcontrol_rejected_requests_total{reason}).
QUEUE_FULL = "queue-full"
TIME_OUT = "time-out"
#: The caller gave up while its request waited (the metric's reason; the caller gets no answer).
CANCELLED = "cancelled"
#: kube's answer to a request it will not execute (HTTP 429).
TOO_MANY_REQUESTS = "Too many requests, please try again later."


class Refused(errors.TooManyRequests):
    """TooManyRequests from flow control, with the reason (QUEUE_FULL or TIME_OUT) for the metrics."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.flow_control_reason = reason


class PriorityLevel:
    def __init__(self, name: str, seats: int, *, queue_length_limit: int, queue_wait_s: float) -> None:
        if seats <= 0:
            raise ValueError(f"priority level {name!r} needs at least one seat, got {seats}")
        self.name = name
        self.seats = seats
        self.queue_length_limit = queue_length_limit
        self.queue_wait_s = queue_wait_s
        #: Requests executing, and the seats they hold.
        self.executing = 0
        self.seats_in_use = 0
        # Only flows with someone waiting; the first one gets the next seats, then goes to the back. Each
        # waiter with the seats it needs.
        self._queues: dict[str, deque[tuple[asyncio.Future[None], int]]] = {}

    @property
    def waiting(self) -> int:
        """Requests waiting for seats, all flows together."""
        return sum(len(queue) for queue in self._queues.values())

    def width_of(self, seats: int) -> int:
        """The seats a request asking for ``seats`` takes: at most the level's, or it could never run."""
        return max(1, min(seats, self.seats))

    async def acquire(self, flow: str, width: int = 1) -> None:
        """Take ``width`` seats (``width_of``) for a request of ``flow``, waiting in its queue if need be;
        raise Refused (a TooManyRequests) when refused. The caller must ``release`` the same width."""
        if self._queues:
            self._dispatch()  # drops the heads whose callers gave up, and may run this request's turn
        if self.seats_in_use + width <= self.seats and not self._queues:
            # Someone waits only while too few seats are free (freed seats go to the waiters first).
            self._take(width)
            return
        queue = self._queues.get(flow)
        if len(queue or ()) >= self.queue_length_limit:
            raise self._refusal(flow, QUEUE_FULL)
        if queue is None:
            queue = self._queues[flow] = deque()
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        queue.append((waiter, width))
        timer = loop.call_later(self.queue_wait_s, self._time_out, flow, waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                # The seats arrived just as the caller gave up: hand them on.
                self.release(width)
            else:
                self._forget(flow, waiter)
                self._dispatch()  # a wide waiter leaving may let narrower ones behind it run
            raise
        finally:
            timer.cancel()

    def release(self, width: int = 1) -> None:
        """Give ``width`` seats back: to the next flows in turn that have a request waiting, else free."""
        self.executing -= 1
        self.seats_in_use -= width
        self._dispatch()

    def _dispatch(self) -> None:
        """Hand free seats to the waiters, flow by flow in turn, while the next one's width fits."""
        while self._queues:
            flow = next(iter(self._queues))
            queue = self._queues[flow]
            waiter, width = queue[0]
            if waiter.done():  # a cancelled waiter leaves its queue only when its task runs again
                self._pop_head(flow, queue)
                continue
            if self.seats_in_use + width > self.seats:
                return
            self._pop_head(flow, queue)
            waiter.set_result(None)
            self._take(width)

    def _take(self, width: int) -> None:
        self.executing += 1
        self.seats_in_use += width

    def _pop_head(self, flow: str, queue: deque[tuple[asyncio.Future[None], int]]) -> None:
        """Take the head of ``flow``'s queue off, and send the flow to the back of the turn."""
        queue.popleft()
        del self._queues[flow]
        if queue:
            self._queues[flow] = queue

    def _time_out(self, flow: str, waiter: asyncio.Future[None]) -> None:
        if not waiter.done():
            self._forget(flow, waiter)
            waiter.set_exception(self._refusal(flow, TIME_OUT))
            self._dispatch()

    def _forget(self, flow: str, waiter: asyncio.Future[None]) -> None:
        queue = self._queues.get(flow)
        if queue is None:
            return
        kept = deque(entry for entry in queue if entry[0] is not waiter)
        if len(kept) == len(queue):
            return
        if kept:
            self._queues[flow] = kept
        else:
            del self._queues[flow]

    def _refusal(self, flow: str, reason: str) -> Refused:
        if reason == QUEUE_FULL:
            why = (
                f"priority level {self.name!r} is at its concurrency limit of {self.seats} and user "
                f"{flow!r} already has {self.queue_length_limit} requests queued (the queue length limit)"
            )
        else:
            why = (
                f"user {flow!r} waited {self.queue_wait_s:g}s in the queue of priority level {self.name!r} "
                f"(concurrency limit {self.seats})"
            )
        return Refused(f"{TOO_MANY_REQUESTS[:-1]}: {why}", reason)
