"""The flow-control request gate: each API call takes a seat at its priority level before it runs, and
gives it back when it ends.

A watch gives its seat back once it has started (see ``watch_started``), not when its stream ends:
watches stream for hours, and holding a seat that long would let a few idle watches use up a level.
The seat covers the watch's setup, which for a watch from "now" is the initial list.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import math
from collections.abc import AsyncIterator

from cluster.apiserver.auth import RequestInfo, UserInfo
from cluster.apiserver.flowcontrol.config import FlowControlConfig
from cluster.apiserver.flowcontrol.fairqueue import PriorityLevel
from cluster.apiserver.flowcontrol.schemas import EXEMPT, NOMINAL_CONCURRENCY_SHARES, Allows, FlowSchemas


class _WatchSeat:
    """A watch's seat, given back once: when the watch starts, when its setup time is up, or when it
    ends, whichever comes first."""

    def __init__(self, level: PriorityLevel, setup_s: float) -> None:
        self._level: PriorityLevel | None = level
        self._timer = asyncio.get_running_loop().call_later(setup_s, self.release)

    def release(self) -> None:
        if self._level is not None:
            self._timer.cancel()
            self._level.release()
            self._level = None


#: The seat of the watch the current task serves (each gRPC call runs in a task of its own).
_watch_seat: contextvars.ContextVar[_WatchSeat | None] = contextvars.ContextVar("watch_seat", default=None)


def watch_started() -> None:
    """Called by a watch once it has sent its first event: its setup is done, and its seat goes back to
    its priority level. Does nothing outside a watch admitted by flow control."""
    seat = _watch_seat.get()
    if seat is not None:
        seat.release()


def nominal_seats(config: FlowControlConfig) -> dict[str, int]:
    """Each limited level's seats: its share of the server's concurrency limit, rounded up (kube's
    nominal concurrency limit)."""
    total_shares = sum(NOMINAL_CONCURRENCY_SHARES.values())
    return {
        level: math.ceil(config.concurrency_limit * shares / total_shares)
        for level, shares in NOMINAL_CONCURRENCY_SHARES.items()
    }


class FlowControl:
    """A RequestGate: API Priority and Fairness, with the levels and flow schemas of schemas.py;
    ``allows`` is the authorizer's answer to "may this user make this request?"."""

    def __init__(self, config: FlowControlConfig, *, allows: Allows) -> None:
        self._schemas = FlowSchemas(allows)
        self._watch_setup_s = config.watch_setup_s
        self.levels = {
            name: PriorityLevel(
                name, seats, queue_length_limit=config.queue_length_limit, queue_wait_s=config.queue_wait_s
            )
            for name, seats in nominal_seats(config).items()
        }

    @contextlib.asynccontextmanager
    async def admit(self, user: UserInfo, request: RequestInfo) -> AsyncIterator[None]:
        classification = self._schemas.classify(user, request)
        if classification.priority_level == EXEMPT:
            yield
            return
        level = self.levels[classification.priority_level]
        await level.acquire(classification.flow)
        if request.verb != "watch":
            try:
                yield
            finally:
                level.release()
            return
        seat = _WatchSeat(level, self._watch_setup_s)
        # Not reset on the way out: the call's task ends with the watch, and a released seat is inert.
        _watch_seat.set(seat)
        try:
            yield
        finally:
            seat.release()
