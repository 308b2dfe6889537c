"""The flow-control request gate: each API call takes a seat at its priority level before it runs, and
gives it back when it ends. An observer (the server's metrics) hears of each request dispatched or
refused, with how long it waited.

A watch gives its seat back once it has started (see ``watch_started``), not when its stream ends:
watches stream for hours, and holding a seat that long would let a few idle watches use up a level.
The seat covers the watch's setup, which for a watch from "now" is the initial list.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import math
import time
from typing import Protocol

from cluster.apiserver.auth import RequestInfo, UserInfo
from cluster.apiserver.flowcontrol.config import FlowControlConfig
from cluster.apiserver.flowcontrol.fairqueue import CANCELLED, PriorityLevel, Refused
from cluster.apiserver.flowcontrol.schemas import (
    EXEMPT,
    NOMINAL_CONCURRENCY_SHARES,
    Allows,
    Classification,
    FlowSchemas,
)


class FlowObserver(Protocol):
    def dispatched(self, priority_level: str, flow_schema: str, waited_s: float) -> None: ...

    def rejected(self, priority_level: str, flow_schema: str, reason: str, waited_s: float) -> None: ...


async def _take_seat(
    level: PriorityLevel, classification: Classification, observer: FlowObserver | None, width: int = 1
) -> None:
    """``level.acquire``, told to ``observer``."""
    if observer is None:
        await level.acquire(classification.flow, width)
        return
    start = time.monotonic()
    try:
        await level.acquire(classification.flow, width)
    except Refused as exc:
        observer.rejected(level.name, classification.flow_schema, exc.flow_control_reason,
                          time.monotonic() - start)
        raise
    except asyncio.CancelledError:
        observer.rejected(level.name, classification.flow_schema, CANCELLED, time.monotonic() - start)
        raise
    observer.dispatched(level.name, classification.flow_schema, time.monotonic() - start)


class _Seat:
    """A call's seats (one, or its width): taken on entry (where the call waits, or is refused), given
    back on exit. A class rather than a generator-based context manager: every limited call enters one,
    and this costs less."""

    __slots__ = ("_classification", "_level", "_observer", "_width")

    def __init__(
        self, level: PriorityLevel, classification: Classification, observer: FlowObserver | None,
        width: int,
    ) -> None:
        self._level = level
        self._classification = classification
        self._observer = observer
        self._width = level.width_of(width)

    async def __aenter__(self) -> None:
        await _take_seat(self._level, self._classification, self._observer, self._width)

    async def __aexit__(self, *exc_info: object) -> None:
        self._level.release(self._width)


class _WatchSeat:
    """A watch's seat, given back once: when the watch starts, when its setup time is up, or when it
    ends, whichever comes first."""

    __slots__ = ("_classification", "_level", "_observer", "_setup_s", "_timer")

    def __init__(
        self, level: PriorityLevel, classification: Classification, observer: FlowObserver | None,
        setup_s: float,
    ) -> None:
        self._level: PriorityLevel | None = level
        self._classification = classification
        self._observer = observer
        self._setup_s = setup_s
        self._timer: asyncio.TimerHandle | None = None

    async def __aenter__(self) -> None:
        assert self._level is not None
        await _take_seat(self._level, self._classification, self._observer)
        self._timer = asyncio.get_running_loop().call_later(self._setup_s, self.release)
        # Not reset on the way out: the call's task ends with the watch, and a released seat is inert.
        _watch_seat.set(self)

    async def __aexit__(self, *exc_info: object) -> None:
        self.release()

    def release(self) -> None:
        if self._level is not None and self._timer is not None:
            self._timer.cancel()
            self._level.release()
            self._level = None


#: Exempt calls take no seat.
_NO_SEAT: contextlib.AbstractAsyncContextManager[None] = contextlib.nullcontext()


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
    ``allows`` is the authorizer's answer to "may this user make this request?"; ``observer`` hears of
    every request dispatched or refused."""

    def __init__(
        self, config: FlowControlConfig, *, allows: Allows, observer: FlowObserver | None = None
    ) -> None:
        self._schemas = FlowSchemas(allows)
        self._observer = observer
        self._watch_setup_s = config.watch_setup_s
        self.levels = {
            name: PriorityLevel(
                name, seats, queue_length_limit=config.queue_length_limit, queue_wait_s=config.queue_wait_s
            )
            for name, seats in nominal_seats(config).items()
        }

    def classify(self, user: UserInfo, request: RequestInfo) -> Classification:
        """The flow schema and priority level ``request`` falls in (what the HTTP API names in its
        X-Kubernetes-PF-* headers)."""
        return self._schemas.classify(user, request)

    def admit(
        self, user: UserInfo, request: RequestInfo, width: int = 1
    ) -> contextlib.AbstractAsyncContextManager[None]:
        """``width``: the seats the request needs (a Batch, one per item), at most the level's."""
        classification = self._schemas.classify(user, request)
        if classification.priority_level == EXEMPT:
            return _NO_SEAT
        level = self.levels[classification.priority_level]
        if request.verb == "watch":
            return _WatchSeat(level, classification, self._observer, self._watch_setup_s)
        return _Seat(level, classification, self._observer, width)

    def level_state(self) -> dict[str, tuple[int, int, int]]:
        """Each limited level's seats, requests executing and requests waiting."""
        return {name: (level.seats, level.executing, level.waiting) for name, level in self.levels.items()}
