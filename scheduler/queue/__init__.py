"""The scheduling queue: activeQ, podBackoffQ, unschedulablePods and the nominator (see
scheduling_queue.py for the whole)."""

from scheduler.queue.active_queue import QueueClosed
from scheduler.queue.scheduling_queue import (
    ACTIVE,
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_UPDATE_LABEL,
    BACKOFF,
    BACKOFF_FLUSH_PERIOD_S,
    DEFAULT_POD_INITIAL_BACKOFF_S,
    DEFAULT_POD_MAX_BACKOFF_S,
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_S,
    GATED,
    LEFTOVER_FLUSH_PERIOD_S,
    UNSCHEDULABLE,
    UNSCHEDULABLE_TIMEOUT,
    SchedulingQueue,
    is_scheduling_relevant_update,
)

__all__ = [
    "ACTIVE",
    "ASSIGNED_POD_ADD",
    "ASSIGNED_POD_UPDATE_LABEL",
    "BACKOFF",
    "BACKOFF_FLUSH_PERIOD_S",
    "DEFAULT_POD_INITIAL_BACKOFF_S",
    "DEFAULT_POD_MAX_BACKOFF_S",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_S",
    "GATED",
    "LEFTOVER_FLUSH_PERIOD_S",
    "UNSCHEDULABLE",
    "UNSCHEDULABLE_TIMEOUT",
    "QueueClosed",
    "SchedulingQueue",
    "is_scheduling_relevant_update",
]
