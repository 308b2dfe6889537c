"""The scheduler workloads of `podsched bench`, named and shaped like kube-scheduler's scheduler_perf
configs (test/integration/scheduler_perf: misc/, affinity/, default_preemption/ performance-config.yaml).

Each workload creates nodes (the ``node-default`` template: 4 CPUs, 32Gi, 110 pods, zone labels where
the config's ``labelNodePrepareStrategy`` sets them, given round robin here where scheduler_perf picks
at random), then its initial pods (waited for until bound, not measured), then its measured pods, while
the bench samples the scheduling throughput. Sizes are the configs' 5000-node performance variants
(``full``) and their 500-node variants (``small``); ``threshold`` is the CI threshold of the full one.

PreemptionAsync is scheduler_perf's (default_preemption/performance-config.yaml): every node is filled
with four 900m low-priority pods (3.6 of 4 CPUs), high-priority 3-CPU pods arrive every 200 ms, each of
which must preempt, and the measured pods are plain 100m pods that always fit. Full: 5000 nodes, 20000
low-priority pods, 5000 measured; small: its 500Nodes variant (500, 2000, 500).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf.json_format import ParseDict

from cluster.api import objects_pb2

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
SCALES = ("small", "full")

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
class Workload:
    name: str
    full: Scale
    small: Scale
    #: kube-scheduler's CI threshold at full scale, in pods/s (average throughput of the measured pods).
    threshold: float
    init_template: PodTemplate
    measured_template: PodTemplate
    #: Values of ``topology.kubernetes.io/zone`` given to the nodes round robin; empty: no zone label.
    zones: tuple[str, ...] = ()
    churn: Churn | None = None
    priority_classes: tuple[objects_pb2.PriorityClass, ...] = ()

    def scale(self, name: str) -> Scale:
        if name not in SCALES:
            raise ValueError(f"unknown scale {name!r}: use one of {', '.join(SCALES)}")
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


def _pod(name: str, namespace: str, *, cpu: str = "100m", labels: dict[str, str] | None = None,
         **spec: Any) -> objects_pb2.Pod:
    resources = {"cpu": cpu, "memory": "500Mi"}
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
    )
}  # fmt: skip
