"""What a replay measures: samples of the cluster over virtual time, and a run's summary.

Fragmentation (the measure of "Beware of Fragmentation", ATC'23, for whole GPUs): a node's free GPUs are
fragmented *for a kind of pod* when that pod cannot use them there — the node lacks the CPU, the memory or
the GPUs it asks, or its GPU model is not one the pod accepts. The trace's GPU pods, grouped by what they
ask (CPU, memory, GPUs, nodeSelector and required node affinity), give the *workload*: each kind weighted
by its share of the trace's GPU pods. A node's fragmentation is the expected number of its free GPUs that
a pod drawn from the workload cannot use; the cluster's is the sum over nodes, reported as a share of all
GPUs. An idle, empty cluster is not fragmented for a pod that fits an empty node, and a full one has no
free GPU to strand. Only the ``MAX_WORKLOAD_KINDS`` most common kinds count (they hold nearly all pods of
a real trace); the rest are too rare to weigh.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from cluster.api import objects_pb2
from cluster.simulate.replay.ledger import NodeTable, request_row
from scheduler.plugins.helpers import RequiredNodeAffinity

MAX_WORKLOAD_KINDS = 32
#: How many samples a replay takes by default, evenly over the trace's arrivals.
DEFAULT_SAMPLES = 200


@dataclass(frozen=True, slots=True)
class Sample:
    """The cluster at one instant of virtual time."""

    t: float
    cpu_allocation: float
    memory_allocation: float
    gpu_allocation: float
    running: int
    pending: int
    unschedulable: int
    #: Expected free GPUs the workload cannot use, and that as a share of all GPUs.
    fragmented_gpus: float
    fragmentation: float

    def to_json(self) -> dict[str, float | int]:
        return asdict(self)


class Workload:
    """The trace's GPU pods by kind, each with its weight and the nodes whose labels it accepts."""

    def __init__(self, pods: Sequence[objects_pb2.Pod], nodes: Sequence[objects_pb2.Node]) -> None:
        kinds: Counter[bytes] = Counter()
        #: A pod of each kind, and what it requests.
        example: dict[bytes, tuple[objects_pb2.Pod, np.ndarray]] = {}
        for pod in pods:
            request = request_row(pod)
            if request[2] <= 0:
                continue
            placement = objects_pb2.PodSpec(node_selector=pod.spec.node_selector)
            placement.affinity.node_affinity.CopyFrom(pod.spec.affinity.node_affinity)
            kind = request.tobytes() + placement.SerializeToString(deterministic=True)
            kinds[kind] += 1
            example.setdefault(kind, (pod, request))
        common = kinds.most_common(MAX_WORKLOAD_KINDS)
        total = sum(count for _, count in common)
        self.kinds = len(common)
        self.weights = np.array([count / total for _, count in common], dtype=np.float64)
        self.requests = np.array([example[kind][1] for kind, _ in common], dtype=np.int64)
        self.requests = self.requests.reshape(len(common), 3)
        affinities = [RequiredNodeAffinity.from_pod(example[kind][0]) for kind, _ in common]
        #: accepts[k, n]: pods of kind k may run on node n.
        self.accepts = np.array([[affinity.matches(node) for node in nodes] for affinity in affinities],
                                dtype=bool).reshape(len(common), len(nodes))

    def fragmented_gpus(self, free: np.ndarray) -> float:
        """The expected free GPUs of the nodes (rows of CPU, memory, GPUs free) a kind cannot use."""
        if not self.kinds:
            return 0.0
        gpus = free[:, 2]
        total = 0.0
        for k in range(self.kinds):
            cpu, memory, want = self.requests[k]
            fits = (free[:, 0] >= cpu) & (free[:, 1] >= memory) & (gpus >= want) & self.accepts[k]
            total += float(self.weights[k]) * float(gpus[~fits].sum())
        return total


def sample(t: float, nodes: NodeTable, workload: Workload, *, running: int, pending: int,
           unschedulable: int) -> Sample:
    cpu, memory, gpus = nodes.allocation()
    fragmented = workload.fragmented_gpus(nodes.free())
    capacity = int(nodes.capacity[2])
    return Sample(t, cpu, memory, gpus, running, pending, unschedulable, fragmented,
                  fragmented / capacity if capacity else 0.0)


def percentile(values: Sequence[float], p: float) -> float | None:
    """The nearest-rank percentile ``p`` (0-100] of ``values``; None for none."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
