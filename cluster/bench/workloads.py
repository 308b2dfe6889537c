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

TopologyGangScheduling is GangScheduling with the topology constraint of KEP-5732 (scheduler_perf has no
such config yet): the nodes are labelled into racks of ``rack_size`` nodes in a row
(``topology.kubernetes.io/rack``: ``rack-0``, ``rack-1``, ...), and every gang, all in
scheduling.k8s.io/v1alpha3, has ``schedulingConstraints.topology: [{key: topology.kubernetes.io/rack}]``,
so it must be placed whole inside one rack. A rack of 8 node-default nodes holds 320 of its pods, so the
largest gang (64) fits an empty rack, and gangs larger than a node (40 pods) must spread over the nodes
of one rack.

The DRA workloads are scheduler_perf's (dra/performance-config.yaml, whose templates they translate): a
DeviceClass ``test-class`` selecting the devices of ``test-driver.cdi.k8s.io`` by CEL, one ResourceSlice
per node from its test driver (``devices_per_node`` devices ``instance-0``... with its attributes and a
1Gi memory capacity, a pool named after the node), a ResourceClaimTemplate in each namespace, and pods
whose claims are made from it by the resourceclaim controller, which the system under test runs for
them. scheduler_perf's DRA configs stop at 500 nodes, so ``full`` and ``small`` are both its
5000pods_500nodes (2500 initial and 2500 measured pods), and ``tiny`` a quarter of it (125 nodes).
SchedulingWithResourceClaimTemplate: one claim of one device per pod, 10 devices a node, so that pods
fill the devices exactly; its threshold is that variant's with queueing hints, which podsched's queue
always uses. SchedulingWithMultipleResourceClaims (from the config before structured parameters, at
the same size): four claims per pod, two from each of two templates whose classes select two drivers,
20 devices of each driver a node, again filled exactly. SchedulingWithResourceClaim: no templates;
ResourceClaims of one device of ``test-class`` (``test-claim-<i>``) created in each namespace before its
pods, each shared by five pods (pod ``i`` of a namespace uses claim ``i // 5``), 2 devices a node:
500 claims in each namespace fill the 1000 devices.

SteadyStateClusterResourceClaimTemplate keeps the cluster at one level of use (``steady_state``): its
measured pods (from the claim template, 10 devices a node) come in batches of 10, each batch deleted once
all of it is seen scheduled and the next created, for 10 seconds. Before them, claims of the init
namespace are allocated without any pod (scheduler_perf's allocResourceClaims): none (``empty``), half
of the devices (``half``), or all but one batch's (``full``), named ``/empty``, ``/half`` and ``/full``
(upstream's empty_500nodes, half_500nodes, full_500nodes at 500 nodes: 0, 2500 and 4990 claims; tiny's
125 nodes keep the proportion, 0, 625 and 1240, as upstream's smaller variants do). No initial pods, and
no measured count to scale: the duration fixes how many pods are scheduled. The thresholds are those of
the 500-node variants (with queueing hints where upstream sets one for each).
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
RACK_LABEL = "topology.kubernetes.io/rack"
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
#: The controller that makes pods' ResourceClaims from their templates (kube-controller-manager's name).
RESOURCE_CLAIM_CONTROLLER = "resourceclaim"
#: scheduler_perf's DRA test drivers, class and claim templates.
TEST_DRIVER, ANOTHER_TEST_DRIVER = "test-driver.cdi.k8s.io", "another-test-driver.cdi.k8s.io"
TEST_CLASS, ANOTHER_TEST_CLASS = "test-class", "another-test-class"
TEST_CLAIM_TEMPLATE, ANOTHER_TEST_CLAIM_TEMPLATE = "test-claim-template", "another-test-claim-template"
RESOURCE_API_VERSION = "resource.k8s.io/v1"
#: ``tiny`` divides each of ``small``'s counts by this.
TINY_DIVISOR = 4
#: SchedulingWithResourceClaim's pods per shared claim (scheduler_perf's pod-with-claim-ref template).
PODS_PER_SHARED_CLAIM = 5

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
    gang is written in the Coscheduling spelling, the others in scheduling.k8s.io/v1alpha3's. With a
    ``topology_key``, every gang is constrained to one domain of that node label (only v1alpha3 has the
    constraint, so no gang is then written in the Coscheduling spelling)."""

    min_size: int = 8
    max_size: int = 64
    seed: int = 1
    coscheduling_every: int = 4
    topology_key: str = ""

    def __post_init__(self) -> None:
        if self.topology_key and self.coscheduling_every:
            raise ValueError("a Coscheduling PodGroup has no topology constraint: with a topology_key, "
                             "coscheduling_every must be 0")
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
            if coscheduling:
                groups.append(pod_group_coscheduling(name, namespace, size))
            else:
                groups.append(pod_group_gang(name, namespace, size, self.topology_key))
            for pod in pods[start:start + size]:
                if coscheduling:
                    pod.metadata.labels[POD_GROUP_LABEL] = name
                else:
                    pod.spec.scheduling_group.pod_group_name = name
            start += size
        return groups


FILLS = ("empty", "half", "full")


@dataclass(frozen=True)
class SteadyState:
    """scheduler_perf's createPods with ``steadyState: true``: ``batch`` pods at a time, the next batch
    created once the last is all seen scheduled and deleted, for ``duration_s``; before them, a ``fill``
    of the devices is held by claims allocated without pods: ``empty`` none, ``half`` half the devices,
    ``full`` all but ``batch`` of them."""

    fill: str
    batch: int = 10
    duration_s: float = 10.0

    def __post_init__(self) -> None:
        if self.fill not in FILLS:
            raise ValueError(f"unknown fill {self.fill!r}: use one of {', '.join(FILLS)}")

    def allocated_claims(self, devices: int) -> int:
        """How many claims of one device each to allocate beforehand, of ``devices`` in the cluster."""
        return {"empty": 0, "half": devices // 2, "full": max(0, devices - self.batch)}[self.fill]


@dataclass(frozen=True)
class DeviceDriver:
    """A DRA driver's devices as scheduler_perf's createResourceDriver publishes them: on every node, one
    ResourceSlice (a pool named after the node) of ``devices_per_node`` devices."""

    name: str
    devices_per_node: int

    def slice(self, node_name: str) -> objects_pb2.ResourceSlice:
        return resource_slice(self.name, node_name, self.devices_per_node)


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
    #: Nodes per rack: ``topology.kubernetes.io/rack`` is ``rack-<index // rack_size>``; 0: no rack label.
    rack_size: int = 0
    churn: Churn | None = None
    priority_classes: tuple[objects_pb2.PriorityClass, ...] = ()
    #: The measured pods come in gangs, each with its PodGroup created before its pods.
    gangs: Gangs | None = None
    #: DRA: the drivers whose devices every node has, the DeviceClasses, and the ResourceClaimTemplates
    #: (made for a namespace) created in both namespaces before the pods.
    drivers: tuple[DeviceDriver, ...] = ()
    device_classes: tuple[objects_pb2.DeviceClass, ...] = ()
    claim_templates: tuple[Callable[[str], objects_pb2.ResourceClaimTemplate], ...] = ()
    #: Pods share claims: every namespace gets one claim (``shared_claims``) per this many of its pods,
    #: created before them, and its pod ``i`` uses claim ``i // pods_per_claim``; 0: no shared claims.
    pods_per_claim: int = 0
    #: The measured pods come in batches for a time instead (``measured_pods`` is then 0).
    steady_state: SteadyState | None = None

    @property
    def uses_claims(self) -> bool:
        """Whether any ResourceClaim takes part (to list and check at the end)."""
        return bool(self.claim_templates or self.pods_per_claim or self.steady_state)

    def allocated_claims(self, scale: Scale) -> int:
        """The claims a steady-state workload allocates without pods at ``scale`` (one device each)."""
        if self.steady_state is None:
            return 0
        return self.steady_state.allocated_claims(
            scale.nodes * sum(driver.devices_per_node for driver in self.drivers))

    def plan(self, scale: Scale) -> str:
        """What a run at ``scale`` creates, for people."""
        if self.steady_state is None:
            return f"{scale.nodes} nodes, {scale.init_pods} initial pods, {scale.measured_pods} measured"
        return (f"{scale.nodes} nodes, {self.allocated_claims(scale)} claims allocated without pods, pods in "
                f"batches of {self.steady_state.batch} for {self.steady_state.duration_s:g}s")

    def shared_claims(self, namespace: str, pods: int) -> list[objects_pb2.ResourceClaim]:
        """The claims ``pods`` pods of ``namespace`` share (none unless pods share claims)."""
        if not self.pods_per_claim:
            return []
        count = -(-pods // self.pods_per_claim)
        return [resource_claim(indexed_claim_name(index), namespace) for index in range(count)]

    def pods(self, template: PodTemplate, role: str, namespace: str, count: int,
             start: int = 0) -> list[objects_pb2.Pod]:
        """Pods ``<role>-<index>`` of ``template`` for indexes ``start`` to ``start + count``, labelled
        with their role; where pods share claims, each names its index's claim."""
        pods = []
        for index in range(start, start + count):
            pod = template(f"{role}-{index:05d}", namespace)
            pod.metadata.labels[ROLE_LABEL] = role
            if self.pods_per_claim:
                for pod_claim in pod.spec.resource_claims:
                    pod_claim.resource_claim_name = indexed_claim_name(index // self.pods_per_claim)
            pods.append(pod)
        return pods

    @property
    def controllers(self) -> tuple[str, ...]:
        """The controllers the system under test runs beside the scheduler (none, as scheduler_perf's,
        but the resourceclaim controller where pods make their claims from templates)."""
        return (RESOURCE_CLAIM_CONTROLLER,) if self.claim_templates else ()

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
        if self.rack_size:
            labels[RACK_LABEL] = f"rack-{index // self.rack_size}"
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


def pod_group_gang(name: str, namespace: str, min_count: int, topology_key: str = "") -> objects_pb2.PodGroup:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}}}
    if topology_key:
        spec["schedulingConstraints"] = {"topology": [{"key": topology_key}]}
    return _parse(objects_pb2.PodGroup(), {
        "apiVersion": UPSTREAM_API_VERSION, "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace}, "spec": spec,
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


def device_class(name: str, driver: str) -> objects_pb2.DeviceClass:
    return _parse(objects_pb2.DeviceClass(), {
        "apiVersion": RESOURCE_API_VERSION, "kind": "DeviceClass", "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    })  # fmt: skip


def resource_slice(driver: str, node_name: str, devices: int) -> objects_pb2.ResourceSlice:
    """The test driver's slice for one node: devices ``instance-<i>`` with the test driver's attributes."""
    return _parse(objects_pb2.ResourceSlice(), {
        "apiVersion": RESOURCE_API_VERSION, "kind": "ResourceSlice",
        # Named by node and driver: with two drivers, a node has two slices.
        "metadata": {"name": f"{node_name}-{driver}"},
        "spec": {
            "driver": driver, "nodeName": node_name,
            "pool": {"name": node_name, "generation": "1", "resourceSliceCount": "1"},
            "devices": [{
                "name": f"instance-{index}",
                "attributes": {"model": {"string": "A100"}, "family": {"string": "GPU"},
                               "driverVersion": {"version": "1.2.3"}, "dra.example.com/numa": {"int": index}},
                "capacity": {"memory": {"value": "1Gi"}},
            } for index in range(devices)],
        },
    })  # fmt: skip


def _claim_template(name: str, class_name: str, namespace: str) -> objects_pb2.ResourceClaimTemplate:
    return _parse(objects_pb2.ResourceClaimTemplate(), {
        "apiVersion": RESOURCE_API_VERSION, "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": {"devices": {"requests": [
            {"name": "req-0", "exactly": {"deviceClassName": class_name}}]}}},
    })  # fmt: skip


def claim_template_of_test_class(namespace: str) -> objects_pb2.ResourceClaimTemplate:
    return _claim_template(TEST_CLAIM_TEMPLATE, TEST_CLASS, namespace)


def claim_template_of_another_class(namespace: str) -> objects_pb2.ResourceClaimTemplate:
    return _claim_template(ANOTHER_TEST_CLAIM_TEMPLATE, ANOTHER_TEST_CLASS, namespace)


def indexed_claim_name(index: int) -> str:
    """scheduler_perf's name of the ``index``-th claim made from resourceclaim.yaml."""
    return f"test-claim-{index}"


def resource_claim(name: str, namespace: str) -> objects_pb2.ResourceClaim:
    """scheduler_perf's resourceclaim.yaml: one device of the test class."""
    return _parse(objects_pb2.ResourceClaim(), {
        "apiVersion": RESOURCE_API_VERSION, "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": TEST_CLASS}}]}},
    })  # fmt: skip


def _pod_with_claims(name: str, namespace: str, claims: dict[str, tuple[str, str]]) -> objects_pb2.Pod:
    """scheduler_perf's DRA pod: a pause container, no requests, using every claim of ``claims`` (the
    pod's claim name -> the field naming its source, ``resourceClaimTemplateName`` or
    ``resourceClaimName``, and the name there)."""
    container = {"name": "pause", "image": "registry.k8s.io/pause:3.10.1",
                 "resources": {"claims": [{"name": claim} for claim in claims]}}
    return _parse(objects_pb2.Pod(), {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [container], "resourceClaims": [
            {"name": claim, field: source} for claim, (field, source) in claims.items()]},
    })  # fmt: skip


def pod_with_claim_template(name: str, namespace: str) -> objects_pb2.Pod:
    return _pod_with_claims(name, namespace, {"resource": ("resourceClaimTemplateName", TEST_CLAIM_TEMPLATE)})


def pod_with_many_claim_templates(name: str, namespace: str) -> objects_pb2.Pod:
    return _pod_with_claims(name, namespace, {
        claim: ("resourceClaimTemplateName", template) for claim, template in (
            ("resource-1a", TEST_CLAIM_TEMPLATE), ("resource-1b", TEST_CLAIM_TEMPLATE),
            ("resource-2a", ANOTHER_TEST_CLAIM_TEMPLATE), ("resource-2b", ANOTHER_TEST_CLAIM_TEMPLATE))})


def pod_with_claim_ref(name: str, namespace: str) -> objects_pb2.Pod:
    """scheduler_perf's pod-with-claim-ref.yaml, naming the first shared claim (``Workload.pods`` names
    each pod's own)."""
    return _pod_with_claims(name, namespace, {"resource": ("resourceClaimName", indexed_claim_name(0))})


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
        Workload("TopologyGangScheduling", Scale(5000, 0, 10000), Scale(500, 0, 1000), None,
                 pod_default, pod_gang_member, rack_size=8,
                 gangs=Gangs(coscheduling_every=0, topology_key=RACK_LABEL)),
        Workload("SchedulingWithResourceClaimTemplate", Scale(500, 2500, 2500), Scale(500, 2500, 2500), 56,
                 pod_with_claim_template, pod_with_claim_template,
                 drivers=(DeviceDriver(TEST_DRIVER, 10),),
                 device_classes=(device_class(TEST_CLASS, TEST_DRIVER),),
                 claim_templates=(claim_template_of_test_class,)),
        Workload("SchedulingWithMultipleResourceClaims", Scale(500, 2500, 2500), Scale(500, 2500, 2500), None,
                 pod_with_many_claim_templates, pod_with_many_claim_templates,
                 drivers=(DeviceDriver(TEST_DRIVER, 20), DeviceDriver(ANOTHER_TEST_DRIVER, 20)),
                 device_classes=(device_class(TEST_CLASS, TEST_DRIVER),
                                 device_class(ANOTHER_TEST_CLASS, ANOTHER_TEST_DRIVER)),
                 claim_templates=(claim_template_of_test_class, claim_template_of_another_class)),
        Workload("SchedulingWithResourceClaim", Scale(500, 2500, 2500), Scale(500, 2500, 2500), None,
                 pod_with_claim_ref, pod_with_claim_ref,
                 drivers=(DeviceDriver(TEST_DRIVER, 2),),
                 device_classes=(device_class(TEST_CLASS, TEST_DRIVER),),
                 pods_per_claim=PODS_PER_SHARED_CLAIM),
        *(Workload(f"SteadyStateClusterResourceClaimTemplate/{fill}", Scale(500, 0, 0), Scale(500, 0, 0),
                   threshold, pod_with_claim_template, pod_with_claim_template,
                   drivers=(DeviceDriver(TEST_DRIVER, 10),),
                   device_classes=(device_class(TEST_CLASS, TEST_DRIVER),),
                   claim_templates=(claim_template_of_test_class,), steady_state=SteadyState(fill))
          for fill, threshold in (("empty", 64), ("half", 60), ("full", 60))),
    )
}  # fmt: skip
