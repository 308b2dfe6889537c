"""PrioritySort: higher priority first, then the earlier queue timestamp."""

from __future__ import annotations

import pytest

from scheduler.framework import PodInfo, QueuedPodInfo, QueueSortPlugin
from scheduler.plugins import queuesort
from tests.builders import pod
from tests.unit.framework_fakes import Snapshot, fake_handle


def queued(priority: int | None, timestamp: float) -> QueuedPodInfo:
    spec = {} if priority is None else {"priority": priority}
    return QueuedPodInfo(PodInfo(pod(spec=spec, name=f"p{priority}-{timestamp}")), timestamp)


# queue_sort_test.go's cases, plus the unset priority (0).
@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (queued(100, 2.0), queued(50, 1.0), True),
        (queued(50, 1.0), queued(100, 2.0), False),
        (queued(100, 1.0), queued(100, 2.0), True),
        (queued(100, 2.0), queued(100, 1.0), False),
        (queued(100, 1.0), queued(100, 1.0), False),
        (queued(None, 1.0), queued(-1, 0.0), True),
        (queued(None, 1.0), queued(1, 2.0), False),
    ],
    ids=[
        "higher-priority-first",
        "lower-priority-later",
        "equal-priority-earlier-first",
        "equal-priority-later-second",
        "identical-is-not-less",
        "unset-priority-is-zero-above-negative",
        "unset-priority-is-zero-below-positive",
    ],
)
def test_less(a: QueuedPodInfo, b: QueuedPodInfo, expected: bool) -> None:
    plugin = queuesort.new(None, fake_handle(Snapshot([])))
    assert isinstance(plugin, QueueSortPlugin)
    assert plugin.name == queuesort.NAME == "PrioritySort"
    assert plugin.less(a, b) is expected
