"""The replay's books: what became of every pod of the trace, and what the cluster holds right now.

A ``PodLedger`` hears every pod event through the pod tracker's informer (what the API server says, not
what the scheduler believes) and keeps, incrementally, so that a sample costs nothing per pod:

- per pod: when it arrived, when it was first bound and where, when it left, and how (its run ended, or
  it was preempted);
- per node: what the bound pods request of CPU, memory and GPUs (numpy rows, for the fragmentation
  measure), and the cluster's totals, GPUs in use also in thousandths (a pod sharing a device counts its
  share);
- how many pods are pending, and how many of those the scheduler last found unschedulable (their
  PodScheduled condition is False).

A pod's resources count from its bind to its deletion, terminating or not, as the scheduler counts them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from google.protobuf.message import Message

from cluster.api import objects_pb2
from cluster.client import Informer
from cluster.simulate.outcome import unschedulable_message
from cluster.simulate.trace.bounds import counted
from cluster.simulate.trace.model import WHOLE_GPU_MILLI, gpu_share
from scheduler.framework.resource import Resource, pod_requests


@dataclass(slots=True)
class PodRecord:
    """One pod of the trace, as the replay saw it (virtual seconds)."""

    key: str
    arrived_at: float
    bound_at: float | None = None
    node: str | None = None
    left_at: float | None = None
    #: Deleted by the scheduler's preemption rather than at the end of its run.
    preempted: bool = False

    @property
    def delay(self) -> float | None:
        """Seconds from arrival to bind, or None if never bound."""
        return None if self.bound_at is None else self.bound_at - self.arrived_at


class NodeTable:
    """The nodes' allocatable and requested CPU (milli), memory (bytes) and GPUs, one row per node."""

    def __init__(self, nodes: Sequence[objects_pb2.Node]) -> None:
        self.names = [node.metadata.name for node in nodes]
        self.rows = {name: row for row, name in enumerate(self.names)}
        allocatable = [Resource.from_quantities(node.status.allocatable or node.status.capacity)
                       for node in nodes]
        self.allocatable = np.array([counted(resource) for resource in allocatable], dtype=np.int64)
        self.allocatable = self.allocatable.reshape(len(nodes), 3)
        self.requested = np.zeros_like(self.allocatable)
        self.capacity = self.allocatable.sum(axis=0)
        self.used = np.zeros(3, dtype=np.int64)
        #: GPUs in use in thousandths: a pod sharing a device uses its share of it, where the rows count
        #: the device as taken.
        self.used_gpu_milli = 0

    def add(self, node: str, request: np.ndarray, sign: int, gpu_milli: int) -> None:
        row = self.rows.get(node)
        if row is not None:
            self.requested[row] += sign * request
            self.used += sign * request
            self.used_gpu_milli += sign * gpu_milli

    def allocation(self) -> tuple[float, float, float]:
        """Requested / allocatable of CPU, memory and GPUs (a share counted as its part of a GPU) over the
        cluster (0 where there is none)."""
        cpu, memory = (float(used) / float(total) if total else 0.0
                       for used, total in zip(self.used[:2], self.capacity[:2], strict=True))
        gpus = int(self.capacity[2])
        return cpu, memory, self.used_gpu_milli / (WHOLE_GPU_MILLI * gpus) if gpus else 0.0

    def free(self) -> np.ndarray:
        return self.allocatable - self.requested


def request_row(pod: objects_pb2.Pod, devices: int = 0) -> np.ndarray:
    """What ``pod`` takes of a node: CPU, memory and GPUs, as the scheduler counts them; ``devices``: the
    GPUs its claim is allocated besides."""
    cpu, memory, gpus = counted(pod_requests(pod))
    return np.array((cpu, memory, gpus + devices), dtype=np.int64)


class PodLedger:
    """Follows ``informer`` (every pod of the cluster); ``on_bound(key, when)`` hears of each first bind;
    ``devices``: the GPU devices each pod's claim asks (by pod key), which count as its GPUs while it is
    bound, as the claim is allocated from the bind to the pod's deletion; a claim of one device for a
    share of it (``replay.podsched.io/gpu-milli``) counts as that share in the GPUs in use."""

    def __init__(self, informer: Informer[objects_pb2.Pod], nodes: NodeTable, now: Callable[[], float],
                 on_bound: Callable[[str, float], None], devices: Mapping[str, int] | None = None) -> None:
        self._informer = informer
        self._devices = devices or {}
        self.nodes = nodes
        self._now = now
        self._on_bound = on_bound
        self.records: dict[str, PodRecord] = {}
        #: Keys of pods whose deletion the replay asked for: their run is over.
        self._departing: set[str] = set()
        #: What each bound pod takes: its row, and its GPUs in thousandths.
        self._requests: dict[str, tuple[np.ndarray, int]] = {}
        self._pending: set[str] = set()
        self._unschedulable: set[str] = set()
        self.preempted = 0
        self.completed = 0
        #: Pods bound at least once.
        self.placed = 0
        informer.add_handler(on_add=self._added, on_update=self._updated, on_delete=self._deleted)

    # ------------------------------------------------------------------------------ what the driver says

    def arrived(self, key: str) -> None:
        self.records[key] = PodRecord(key, self._now())

    def departing(self, key: str) -> None:
        self._departing.add(key)

    # ----------------------------------------------------------------------------------- what it reads

    @property
    def pending(self) -> int:
        return len(self._pending)

    @property
    def unschedulable(self) -> int:
        return len(self._unschedulable)

    @property
    def running(self) -> int:
        return len(self._requests)

    # --------------------------------------------------------------------------------------- handlers

    def _added(self, pod: Message) -> None:
        assert isinstance(pod, objects_pb2.Pod)
        key = self._informer.key(pod)
        if key not in self.records:
            return  # not a pod of the trace
        if pod.spec.node_name:
            self._bound(key, pod)
        else:
            self._pending.add(key)
            self._note_condition(key, pod)

    def _updated(self, old: Message, new: Message) -> None:
        assert isinstance(old, objects_pb2.Pod) and isinstance(new, objects_pb2.Pod)
        key = self._informer.key(new)
        if key not in self.records:
            return
        if new.spec.node_name and not old.spec.node_name:
            self._bound(key, new)
        elif not new.spec.node_name:
            self._note_condition(key, new)

    def _deleted(self, pod: Message) -> None:
        assert isinstance(pod, objects_pb2.Pod)
        key = self._informer.key(pod)
        record = self.records.get(key)
        if record is None:
            return
        record.left_at = self._now()
        self._pending.discard(key)
        self._unschedulable.discard(key)
        taken = self._requests.pop(key, None)
        if taken is not None:
            request, gpu_milli = taken
            self.nodes.add(pod.spec.node_name, request, -1, gpu_milli)
        if key in self._departing:
            self._departing.discard(key)
            self.completed += 1
        else:
            record.preempted = True
            self.preempted += 1

    def _bound(self, key: str, pod: objects_pb2.Pod) -> None:
        record = self.records[key]
        self._pending.discard(key)
        self._unschedulable.discard(key)
        devices = self._devices.get(key, 0)
        request = request_row(pod, devices)
        share = gpu_share(pod) if devices else None
        gpu_milli = share if share is not None else WHOLE_GPU_MILLI * int(request[2])
        self._requests[key] = (request, gpu_milli)
        self.nodes.add(pod.spec.node_name, request, +1, gpu_milli)
        if record.bound_at is None:
            record.bound_at = self._now()
            record.node = pod.spec.node_name
            self.placed += 1
            self._on_bound(key, record.bound_at)

    def _note_condition(self, key: str, pod: objects_pb2.Pod) -> None:
        if unschedulable_message(pod) is not None:
            self._unschedulable.add(key)
        else:
            self._unschedulable.discard(key)
