"""The scheduler workloads of `podsched bench`, named and shaped like kube-scheduler's scheduler_perf
configs (test/integration/scheduler_perf: misc/, affinity/, default_preemption/ performance-config.yaml).

Each workload creates nodes (the ``node-default`` template: 4 CPUs, 32Gi, 110 pods, zone labels where
the config's ``labelNodePrepareStrategy`` sets them, given round robin here where scheduler_perf picks
at random), then its initial pods (waited for until bound, not measured), then its measured pods, while
the bench samples the scheduling throughput. Sizes are the configs' 5000-node performance variants
(``full``) and their 500-node variants (``small``); ``threshold`` is the CI threshold of the full one.
``tiny`` is a quarter of ``small`` (125 nodes, every pod count quartered), for checking placements
quickly: still over the 100 nodes below which a scheduling cycle scores every node, so the cycles sample
nodes as they do at the larger scales.

PreemptionAsync is scheduler_perf's (default_preemption/performance-config.yaml): every node is filled
with four 900m low-priority pods (3.6 of 4 CPUs), high-priority 3-CPU pods arrive every 200 ms, each of
which must preempt, and the measured pods are plain 100m pods that always fit. Full: 5000 nodes, 20000
low-priority pods, 5000 measured; small: its 500Nodes variant (500, 2000, 500).

GangScheduling is scheduler_perf's (podgroup/gangscheduling/performance-config.yaml): PodGroups with a gang
policy are created first, then their pods, which are the measured pods (100m, 100Mi, as its gang-pod
template). Where scheduler_perf's gangs all have one size, here the measured pods form gangs of 8 to 64
whose sizes are drawn from a seeded RNG, so every run forms the same gangs; every fourth gang is written
in scheduler-plugins' Coscheduling spelling (``scheduling.x-k8s.io/v1alpha1``, minMember, the pod-group
label), the others in ``scheduling.k8s.io/v1alpha3`` (gang.minCount, spec.schedulingGroup); a gang's
minimum is its size. No initial pods, as scheduler_perf's; the 10000 measured pods of the full scale are
SchedulingBasic's count.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf.json_format import ParseDict

from cluster.api import objects_pb2
from cluster.api.podgroups import COSCHEDULING_API_VERSION, POD_GROUP_LABEL, UPSTREAM_API_VERSION

ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"
#: Which part of a workload a pod belongs to: ``init``, ``measured`` or ``churn``.
ROLE_LABEL = "podsched.io/bench-role"
INIT, MEASURED, CHURN = "init", "measured", "churn"
#: scheduler_perf's anti-affinity configs put initial and measured pods in two namespaces; every
#: workload here does the same.
INIT_NAMESPACE, MEASURED_NAMESPACE = "sched-0", "sched-1"
#: The PriorityClass of PreemptionAsync's arriving pods (the template's ``priority: 10``; podsched's
#: Priority admission, like Kubernetes', takes a pod's priority from its class).
HIGH_PRIORITY_CLASS = "bench-high-priority"
HIGH_PRIORITY = 10
SCALES = ("tiny", "small", "full")
#: ``tiny`` divides each of ``small``'s counts by this.
TINY_DIVISOR = 4

PodTemplate = Callable[[str, str], objects_pb2.Pod]


@dataclass(frozen=True)
class Scale:
    nodes: int
    init_pods: int
    measured_pods: int


@dataclass(frozen=True)
class Churn:
    """Pods created at a steady rate while the measured pods are scheduled (scheduler_perf's ``churn``
    opcode in ``create`` mode)."""

    template: PodTemplate
    interval_s: float


@dataclass(frozen=True)
class Gangs:
    """How a gang workload's measured pods form gangs: in the order they are created, each gang's size
    drawn from ``random.Random(seed)`` within [min_size, max_size] (the last gang takes what remains,
    also within it), so that every run of one scale forms the same gangs. Every ``coscheduling_every``-th
    gang is written in the Coscheduling spelling, the others in scheduling.k8s.io/v1alpha3's."""

    min_size: int = 8
    max_size: int = 64
    seed: int = 1
    coscheduling_every: int = 4

    def __post_init__(self) -> None:
        # Any remainder above max_size must split into two gangs of at least min_size.
        if not 1 <= self.min_size or 2 * self.min_size > self.max_size + 1:
            raise ValueError(f"gang sizes {self.min_size} to {self.max_size}: need 1 <= min_size and "
                             "2 * min_size <= max_size + 1")

    def sizes(self, total: int) -> list[int]:
        if total < self.min_size:
            raise ValueError(f"{total} pods cannot form a gang of at least {self.min_size}")
        rng = random.Random(self.seed)
        sizes, remaining = [], total
        while remaining > self.max_size:
            # Never leave less than a whole gang behind.
            size = rng.randint(self.min_size, min(self.max_size, remaining - self.min_size))
            sizes.append(size)
            remaining -= size
        sizes.append(remaining)
        return sizes

    def form(self, pods: Sequence[objects_pb2.Pod]) -> list[objects_pb2.PodGroup]:
        """One PodGroup per gang (its minimum the gang's size), each pod made a member of its gang."""
        groups, start = [], 0
        for index, size in enumerate(self.sizes(len(pods))):
            name, namespace = f"gang-{index:05d}", pods[start].metadata.namespace
            every = self.coscheduling_every
            coscheduling = every > 0 and index % every == every - 1
            groups.append((pod_group_coscheduling if coscheduling else pod_group_gang)(name, namespace, size))
            for pod in pods[start:start + size]:
                if coscheduling:
                    pod.metadata.labels[POD_GROUP_LABEL] = name
                else:
                    pod.spec.scheduling_group.pod_group_name = name
            start += size
        return groups


@dataclass(frozen=True)
class Workload:
    name: str
    full: Scale
    small: Scale
    #: kube-scheduler's CI threshold at full scale, in pods/s (average throughput of the measured pods);
    #: None where scheduler_perf sets none.
    threshold: float | None
    init_template: PodTemplate
    measured_template: PodTemplate
    #: Values of ``topology.kubernetes.io/zone`` given to the nodes round robin; empty: no zone label.
    zones: tuple[str, ...] = ()
    churn: Churn | None = None
    priority_classes: tuple[objects_pb2.PriorityClass, ...] = ()
    #: The measured pods come in gangs, each with its PodGroup created before its pods.
    gangs: Gangs | None = None

    def scale(self, name: str) -> Scale:
        if name not in SCALES:
            raise ValueError(f"unknown scale {name!r}: use one of {', '.join(SCALES)}")
        if name == "tiny":
            return Scale(*(count // TINY_DIVISOR for count in
                           (self.small.nodes, self.small.init_pods, self.small.measured_pods)))
        return self.full if name == "full" else self.small

    def node(self, index: int) -> objects_pb2.Node:
        name = f"scheduler-perf-{index:05d}"
        labels = {HOSTNAME_LABEL: name}
        if self.zones:
            labels[ZONE_LABEL] = self.zones[index % len(self.zones)]
        return node_default(name, labels)


# -- templates ---------------------------------------------------------------------------------------


def node_default(name: str, labels: dict[str, str]) -> objects_pb2.Node:
    resources = {"pods": "110", "cpu": "4", "memory": "32Gi"}
    return _parse(objects_pb2.Node(), {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"capacity": resources, "allocatable": dict(resources),
                   "conditions": [{"type": "Ready", "status": "True"}]},
    })  # fmt: skip


def _pod(name: str, namespace: str, *, cpu: str = "100m", memory: str = "500Mi",
         labels: dict[str, str] | None = None, **spec: Any) -> objects_pb2.Pod:
    resources = {"cpu": cpu, "memory": memory}
    container = {"name": "pause", "image": "registry.k8s.io/pause:3.10",
                 "ports": [{"containerPort": 80}], "resources": {"requests": resources, "limits": resources}}
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = labels
    return _parse(objects_pb2.Pod(), {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
                                      "spec": {"containers": [container], **spec}})


def pod_default(name: str, namespace: str) -> objects_pb2.Pod:
    return _pod(name, namespace)


def pod_low_priority(name: str, namespace: str) -> objects_pb2.Pod:
    return _pod(name, namespace, cpu="900m", terminationGracePeriodSeconds=0)


def pod_high_priority(name: str, namespace: str) -> objects_pb2.Pod:
    return _pod(name, namespace, cpu="3000m", priorityClassName=HIGH_PRIORITY_CLASS)


def pod_with_node_affinity(name: str, namespace: str) -> objects_pb2.Pod:
    term = {"matchExpressions": [{"key": ZONE_LABEL, "operator": "In", "values": ["zone1", "zone2"]}]}
    return _pod(name, namespace, affinity={
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}})


def pod_with_pod_anti_affinity(name: str, namespace: str) -> objects_pb2.Pod:
    term = {"labelSelector": {"matchLabels": {"color": "green"}}, "topologyKey": HOSTNAME_LABEL,
            "namespaces": [MEASURED_NAMESPACE, INIT_NAMESPACE]}
    return _pod(name, namespace, labels={"color": "green"}, affinity={
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})


def pod_with_topology_spreading(name: str, namespace: str) -> objects_pb2.Pod:
    constraint = {"maxSkew": 5, "topologyKey": ZONE_LABEL, "whenUnsatisfiable": "DoNotSchedule",
                  "labelSelector": {"matchLabels": {"color": "blue"}}}
    return _pod(name, namespace, labels={"color": "blue"}, topologySpreadConstraints=[constraint])


def pod_gang_member(name: str, namespace: str) -> objects_pb2.Pod:
    return _pod(name, namespace, memory="100Mi")


def pod_group_gang(name: str, namespace: str, min_count: int) -> objects_pb2.PodGroup:
    return _parse(objects_pb2.PodGroup(), {
        "apiVersion": UPSTREAM_API_VERSION, "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
    })  # fmt: skip


def pod_group_coscheduling(name: str, namespace: str, min_member: int) -> objects_pb2.PodGroup:
    return _parse(objects_pb2.PodGroup(), {
        "apiVersion": COSCHEDULING_API_VERSION, "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace}, "spec": {"minMember": min_member},
    })  # fmt: skip


def high_priority_class() -> objects_pb2.PriorityClass:
    return _parse(objects_pb2.PriorityClass(), {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": HIGH_PRIORITY_CLASS}, "value": HIGH_PRIORITY,
        "description": "PreemptionAsync's arriving pods",
    })  # fmt: skip


def _parse(message: Any, data: dict[str, Any]) -> Any:
    return ParseDict(data, message)


# -- the workloads -----------------------------------------------------------------------------------

WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload("SchedulingBasic", Scale(5000, 1000, 10000), Scale(500, 500, 1000), 680,
                 pod_default, pod_default),
        Workload("PreemptionAsync", Scale(5000, 20000, 5000), Scale(500, 2000, 500), 570,
                 pod_low_priority, pod_default, churn=Churn(pod_high_priority, 0.2),
                 priority_classes=(high_priority_class(),)),
        Workload("SchedulingNodeAffinity", Scale(5000, 5000, 10000), Scale(500, 500, 1000), 220,
                 pod_with_node_affinity, pod_with_node_affinity, zones=("zone1",)),
        Workload("SchedulingPodAntiAffinity", Scale(5000, 1000, 2000), Scale(500, 100, 400), 60,
                 pod_with_pod_anti_affinity, pod_with_pod_anti_affinity),
        Workload("TopologySpreading", Scale(5000, 5000, 5000), Scale(500, 1000, 1000), 460,
                 pod_default, pod_with_topology_spreading, zones=("moon-1", "moon-2", "moon-3")),
        Workload("GangScheduling", Scale(5000, 0, 10000), Scale(500, 0, 1000), None,
                 pod_default, pod_gang_member, gangs=Gangs()),
    )
}  # fmt: skip
