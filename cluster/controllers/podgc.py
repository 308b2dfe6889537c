"""The pod garbage collector: deletes the pods bound to a node that no longer exists, as Kubernetes'
pkg/controller/podgc does for orphaned pods. Without it a deleted node's pods stay bound to it forever,
and when a node of the same name comes back they count against its capacity.

How it decides:
- A pod whose spec.nodeName names a node missing from the node informer puts that node in quarantine
  (``NodeQuarantine``), as does a node deleted while pods are bound to it. A node that (re)appears
  leaves quarantine, and its pods are kept.
- When a node's quarantine (``quarantine_s``, 40 s by default as upstream) ends and the node is still
  missing from the informer, the node is read with a direct Get, not the cache, so an informer that lags
  behind a quickly re-created node kills nothing. Only a NotFound lets the collection go on.
- Each pod bound to the node is then collected (``collect_pod``): marked Failed with a DisruptionTarget
  condition (reason DeletionByPodGC), unless it has finished already, and deleted with a grace period of
  0, which also force-deletes a pod that was terminating. Both writes carry the resourceVersion of the
  version read, so a pod changed or re-created under the same name meanwhile is not touched: the
  conflict sends the node back to the queue with a backoff, and the newer version is judged again.

What upstream's podgc also does that this one leaves out: deleting terminated pods beyond
--terminated-pod-gc-threshold (podsched's pods only finish when a user writes their status); force-
deleting terminating pods on nodes tainted out-of-service (podsched has no node lifecycle controller);
and force-deleting unscheduled terminating pods, which podsched cannot have: a pod without a node is
deleted at once, never marked, and spec.nodeName cannot be cleared.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import errors, objects_pb2, timeutil
from cluster.api.kinds import NODE, POD
from cluster.api.quota import FINISHED_PHASES
from cluster.client import Client, Informer
from cluster.controllers.controller import InformerController

log = logging.getLogger(__name__)

#: How long a missing node stays in quarantine before its pods are collected (upstream's quarantineTime).
DEFAULT_QUARANTINE_S = 40.0
NODE_INDEX = "node"
DISRUPTION_TARGET = "DisruptionTarget"
REASON_DELETION_BY_POD_GC = "DeletionByPodGC"
FAILED = "Failed"


class NodeQuarantine:
    """The missing nodes that pods are bound to, each with the time its quarantine ends. Times are
    whatever clock the caller passes (the controller's is monotonic)."""

    def __init__(self, quarantine_s: float) -> None:
        if not quarantine_s >= 0:
            raise ValueError(f"quarantine_s must be 0 or more, got {quarantine_s}")
        self._quarantine_s = quarantine_s
        self._ends: dict[str, float] = {}
        #: (end, node) in end order; an entry whose end _ends no longer holds is stale.
        self._heap: list[tuple[float, str]] = []

    def __contains__(self, node: str) -> bool:
        return node in self._ends

    def suspect(self, node: str, now: float) -> bool:
        """Put ``node`` in quarantine from ``now``, unless it is there already (the first sighting
        counts); True when it was not."""
        if node in self._ends:
            return False
        end = now + self._quarantine_s
        self._ends[node] = end
        heapq.heappush(self._heap, (end, node))
        return True

    def clear(self, node: str) -> None:
        """``node`` exists: its quarantine ends without consequence."""
        self._ends.pop(node, None)

    def due(self, now: float) -> list[str]:
        """The nodes whose quarantine is over at ``now``, in the order it ended; they leave quarantine."""
        ended = []
        while self._heap and self._heap[0][0] <= now:
            end, node = heapq.heappop(self._heap)
            if self._ends.get(node) == end:
                del self._ends[node]
                ended.append(node)
        return ended

    def next_end(self) -> float | None:
        """When the next quarantine ends, None when no node is in quarantine."""
        while self._heap and self._ends.get(self._heap[0][1]) != self._heap[0][0]:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None


def failed_for_gc(pod: objects_pb2.Pod, node: str, now: Timestamp) -> objects_pb2.Pod | None:
    """``pod`` as the collector marks it before deleting it: phase Failed and a DisruptionTarget
    condition saying its node is gone, at ``pod``'s resourceVersion; None when the pod has finished
    already (Succeeded or Failed), which upstream leaves as it is."""
    if pod.status.phase in FINISHED_PHASES:
        return None
    marked = objects_pb2.Pod()
    marked.CopyFrom(pod)
    marked.status.phase = FAILED
    message = f'node "{node}" no longer exists'
    for condition in marked.status.conditions:
        if condition.type == DISRUPTION_TARGET:
            if condition.status != "True":
                condition.last_transition_time.CopyFrom(now)
            break
    else:
        condition = marked.status.conditions.add(type=DISRUPTION_TARGET, last_transition_time=now)
    condition.status = "True"
    condition.reason = REASON_DELETION_BY_POD_GC
    condition.message = message
    return marked


async def collect_pod(client: Client, pod: objects_pb2.Pod) -> bool:
    """Mark ``pod`` (as read, bound to a node that is gone) Failed and delete it with grace 0, each write
    preconditioned on the resourceVersion it follows. True when this call deleted it, False when it was
    gone already; `errors.Conflict` when it changed, or was re-created under its name, since it was read."""
    meta = pod.metadata
    version = meta.resource_version
    marked = failed_for_gc(pod, pod.spec.node_name, timeutil.now())
    try:
        if marked is not None:
            version = (await client.update_status(marked)).metadata.resource_version
        await client.delete(
            POD, meta.name, meta.namespace, grace_period_seconds=0, resource_version=version
        )
    except errors.NotFound:
        return False
    return True


def _node_of(pod: Message) -> list[str]:
    node = pod.spec.node_name  # type: ignore[attr-defined]
    return [node] if node else []


class PodGarbageCollector(InformerController):
    """Deletes the pods bound to nodes that no longer exist while ``run()`` runs."""

    name = "podgc"

    def __init__(self, client: Client, *, quarantine_s: float = DEFAULT_QUARANTINE_S) -> None:
        """``quarantine_s``: how long a node must stay missing before its pods go (0: at once, after the
        direct Get that confirms it is gone)."""
        super().__init__(client)
        self._quarantine_s = quarantine_s
        self._quarantine = NodeQuarantine(quarantine_s)
        self._pods = Informer(client, POD, indexers={NODE_INDEX: _node_of})
        self._nodes = Informer(client, NODE)
        self._pods.add_handler(self._pod_added, self._pod_updated)
        self._nodes.add_handler(self._node_added, None, self._node_deleted)
        # The queue holds nodes out of quarantine, to be confirmed gone and have their pods collected.
        self._wakeup = asyncio.Event()

    def _informers(self) -> Mapping[str, Informer[Any]]:
        return {"pod": self._pods, "node": self._nodes}

    def _after_sync(self, tasks: asyncio.TaskGroup) -> None:
        log.info("pod garbage collector synced: %d pods, %d nodes", len(self._pods), len(self._nodes))
        # Before both informers synced a pod could name a node not listed yet; judge them now.
        self._suspect(pod.spec.node_name for _, pod in self._pods.items())
        tasks.create_task(self._end_quarantines(), name="podgc-quarantine")

    # ---------------------------------------------------------------------------------------- events

    def _pod_added(self, pod: Message) -> None:
        if self._synced.is_set():
            self._suspect(_node_of(pod))

    def _pod_updated(self, old: Message, new: Message) -> None:
        # Only a binding changes a pod's node; other updates (the collector's own status writes among
        # them) say nothing new about nodes.
        if _node_of(old) != _node_of(new):
            self._pod_added(new)

    def _node_added(self, node: Message) -> None:
        self._quarantine.clear(node.metadata.name)  # type: ignore[attr-defined]

    def _node_deleted(self, node: Message) -> None:
        name = node.metadata.name  # type: ignore[attr-defined]
        if self._synced.is_set() and self._pods.by_index(NODE_INDEX, name):
            self._suspect([name])

    def _suspect(self, nodes: Iterable[str]) -> None:
        now = time.monotonic()
        for node in nodes:
            if node and self._nodes.get(node) is None and self._quarantine.suspect(node, now):
                log.info("node %s is missing but has pods bound to it; they go unless it is back within %gs",
                         node, self._quarantine_s)
                self._wakeup.set()

    # ------------------------------------------------------------------------------------------ work

    async def _end_quarantines(self) -> None:
        while True:
            self._wakeup.clear()
            for node in self._quarantine.due(time.monotonic()):
                if self._nodes.get(node) is None:
                    self._queue.add(node)
            end = self._quarantine.next_end()
            timeout = None if end is None else max(0.0, end - time.monotonic())
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._wakeup.wait()

    async def _sync(self, key: str) -> None:
        await self.collect(key)

    def _what(self, key: str) -> str:
        return f"the pods of the gone node {key}"

    async def collect(self, node: str) -> int:
        """Delete the pods bound to ``node`` if the node is gone, confirmed by a Get; how many this call
        deleted. A pod it cannot delete raises (the first such error) once the others are done."""
        if self._nodes.get(node) is not None:
            return 0
        try:
            await self._client.get(NODE, node)
            return 0  # the informer lags behind; the node's arrival will clear its quarantine
        except errors.NotFound:
            pass
        deleted = 0
        failure: errors.ApiError | None = None
        for pod in self._pods.by_index(NODE_INDEX, node):
            try:
                deleted += await collect_pod(self._client, pod)
            except errors.ApiError as exc:
                failure = failure or exc
        if deleted:
            log.info("deleted %d pods bound to node %s, which no longer exists", deleted, node)
        if failure is not None:
            raise failure
        return deleted
