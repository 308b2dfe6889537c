"""One limited priority level: a fixed number of seats, and fair queues for the requests that find them
all taken.

A request that finds a seat free takes it and runs. Otherwise it waits in its flow's queue (one queue
per user); whenever a seat frees, it goes to the head of the next non-empty queue in turn (round robin),
so a user who sends a thousand requests waits behind their own requests, not in front of everyone
else's. A request is refused with TooManyRequests, as kube's API Priority and Fairness refuses with 429,
when its flow already has ``queue_length_limit`` requests waiting ("queue-full"), or when it has waited
``queue_wait_s`` without a seat ("time-out"). A waiting request whose caller gives up (its task is
cancelled) leaves its queue.

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
        #: Requests holding a seat.
        self.executing = 0
        # Only flows with someone waiting; the first one gets the next seat, then goes to the back.
        self._queues: dict[str, deque[asyncio.Future[None]]] = {}

    @property
    def waiting(self) -> int:
        """Requests waiting for a seat, all flows together."""
        return sum(len(queue) for queue in self._queues.values())

    async def acquire(self, flow: str) -> None:
        """Take a seat for a request of ``flow``, waiting in its queue if need be; raise
        Refused (a TooManyRequests) when refused. The caller must ``release`` the seat."""
        if self.executing < self.seats:
            # Someone waits only while every seat is taken (a freed seat goes to a waiter at once).
            self.executing += 1
            return
        queue = self._queues.get(flow)
        if len(queue or ()) >= self.queue_length_limit:
            raise self._refusal(flow, QUEUE_FULL)
        if queue is None:
            queue = self._queues[flow] = deque()
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        queue.append(waiter)
        timer = loop.call_later(self.queue_wait_s, self._time_out, flow, waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                # The seat arrived just as the caller gave up: hand it on.
                self.release()
            else:
                self._forget(flow, waiter)
            raise
        finally:
            timer.cancel()

    def release(self) -> None:
        """Give a seat back: to the next flow in turn that has a request waiting, else free it."""
        self.executing -= 1
        while self.executing < self.seats and self._queues:
            flow = next(iter(self._queues))
            queue = self._queues.pop(flow)
            waiter = queue.popleft()
            if queue:
                self._queues[flow] = queue
            if not waiter.done():  # a cancelled waiter leaves its queue only when its task runs again
                waiter.set_result(None)
                self.executing += 1

    def _time_out(self, flow: str, waiter: asyncio.Future[None]) -> None:
        if not waiter.done():
            self._forget(flow, waiter)
            waiter.set_exception(self._refusal(flow, TIME_OUT))

    def _forget(self, flow: str, waiter: asyncio.Future[None]) -> None:
        queue = self._queues.get(flow)
        if queue is not None and waiter in queue:
            queue.remove(waiter)
            if not queue:
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
