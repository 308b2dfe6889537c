"""``PluggedQueue``: the scheduling queue, for those built before it.

The frameworks are built before the queue (the queue is sorted by their QueueSort and requeues by their
plugins' events), yet their handles need the queue as the nominator, and the preemptions, which the
handles also hold, need it to hold and release preemptors. They get this stand-in, and the queue is
plugged into it once it exists, before the first scheduling cycle.
"""

from __future__ import annotations

from collections.abc import Collection

from cluster.api import objects_pb2
from scheduler.framework import PodInfo
from scheduler.queue.scheduling_queue import SchedulingQueue


class PluggedQueue:
    """The nominator and preemption calls of the ``SchedulingQueue`` plugged in with ``plug``."""

    def __init__(self) -> None:
        self._queue: SchedulingQueue | None = None

    def plug(self, queue: SchedulingQueue) -> None:
        self._queue = queue
        # Filter asks once per node per cycle: hand out the queue's own method, one call less each time.
        self.nominated_pods_for_node = queue.nominated_pods_for_node  # type: ignore[method-assign]

    @property
    def queue(self) -> SchedulingQueue:
        assert self._queue is not None, "the scheduling queue is plugged in before the first cycle"
        return self._queue

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self.queue.nominated_pods_for_node(node_name)

    def nominated_node_names(self) -> Collection[str]:
        return self.queue.nominated_node_names()

    def delete_nominated_pod_if_exists(self, pod: objects_pb2.Pod) -> None:
        self.queue.delete_nominated_pod_if_exists(pod)

    def hold(self, key: str) -> None:
        self.queue.hold(key)

    def release(self, key: str) -> None:
        self.queue.release(key)

    def activate(self, key: str) -> bool:
        return self.queue.activate(key)
