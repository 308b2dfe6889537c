"""Timestamps as the API carries them, and kubectl's way of printing an age.

Timestamps the API server sets (creationTimestamp, deletionTimestamp, ...) have whole-second precision:
Kubernetes' metav1.Time serializes as RFC 3339 without fractions, so a finer value would not survive a
round trip through YAML and two reads of one object could disagree.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp


def utc_now() -> datetime:
    """The wall clock as an aware datetime in UTC (the default clock of what compares lease times)."""
    return datetime.now(UTC)


def now() -> Timestamp:
    """The wall clock, truncated to whole seconds."""
    return Timestamp(seconds=int(time.time()))


def from_seconds(seconds: float) -> Timestamp:
    """A Timestamp for a Unix time (whole seconds, like ``now``)."""
    return Timestamp(seconds=int(seconds))


def to_datetime(ts: Timestamp) -> datetime:
    """The timestamp as an aware UTC datetime."""
    return ts.ToDatetime(tzinfo=UTC)


def is_set(ts: Timestamp) -> bool:
    """Whether a Timestamp field carries a time (proto3 leaves an unset one at the epoch)."""
    return ts.seconds != 0 or ts.nanos != 0


def age(ts: Timestamp, now: Timestamp | datetime | None = None) -> str:
    """How long ago ``ts`` was, as kubectl prints an AGE column ("45s", "3m5s", "12m", "5h3m", "2d3h",
    "400d", "3y2d"); "<unknown>" for an unset timestamp, "<invalid>" for one in the future."""
    if not is_set(ts):
        return "<unknown>"
    if now is None:
        current = time.time()
    elif isinstance(now, datetime):
        current = now.timestamp()
    else:
        current = now.seconds + now.nanos / 1e9
    return human_duration(current - (ts.seconds + ts.nanos / 1e9))


def human_duration(seconds: float) -> str:
    """kubectl's duration printer: two or three significant figures, coarser as durations grow."""
    # Up to a second in the future reads as "0s": clocks of two machines are never quite equal.
    whole = int(seconds)  # toward zero, as Go's int(d.Seconds())
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        rest = whole % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 24 * 8:
        rest = hours % 24
        return f"{days}d{rest}h" if rest else f"{days}d"
    if hours < 24 * 365 * 2:
        return f"{days}d"
    years = days // 365
    if hours < 24 * 365 * 8:
        rest = days % 365
        return f"{years}y{rest}d" if rest else f"{years}y"
    return f"{years}y"
