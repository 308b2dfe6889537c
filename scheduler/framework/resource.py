"""Resource arithmetic in integer units: milli-CPU, bytes, counts.

Quantities are parsed once, when a pod or node enters the scheduler, never in Filter or Score.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from cluster.api import objects_pb2
from cluster.api.containers import pair_total, pod_total
from cluster.api.quantity import int_value, milli_value

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

#: What a container without a request counts as when *scoring* (never when fitting), so that pods
#: without requests still spread: kube-scheduler's DefaultMilliCPURequest and DefaultMemoryRequest.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


@dataclass(slots=True)
class Resource:
    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    #: Extended resources (nvidia.com/gpu, hugepages-2Mi, ...) by name, in their integer unit.
    scalar: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_quantities(cls, quantities: Mapping[str, str]) -> Resource:
        """A resource list such as requests, limits or allocatable ({"cpu": "500m", ...})."""
        resource = cls()
        for name, text in quantities.items():
            resource.set(name, milli_value(text) if name == CPU else int_value(text))
        return resource

    def get(self, name: str) -> int:
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def set(self, name: str, value: int) -> None:
        if name == CPU:
            self.milli_cpu = value
        elif name == MEMORY:
            self.memory = value
        elif name == EPHEMERAL_STORAGE:
            self.ephemeral_storage = value
        elif name == PODS:
            self.allowed_pod_number = value
        else:
            self.scalar[name] = value

    def add(self, other: Resource) -> None:
        self.milli_cpu += other.milli_cpu
        self.memory += other.memory
        self.ephemeral_storage += other.ephemeral_storage
        self.allowed_pod_number += other.allowed_pod_number
        for name, value in other.scalar.items():
            self.scalar[name] = self.scalar.get(name, 0) + value

    def sub(self, other: Resource) -> None:
        self.milli_cpu -= other.milli_cpu
        self.memory -= other.memory
        self.ephemeral_storage -= other.ephemeral_storage
        self.allowed_pod_number -= other.allowed_pod_number
        for name, value in other.scalar.items():
            self.scalar[name] = self.scalar.get(name, 0) - value

    def set_max(self, other: Resource) -> None:
        """Each resource becomes the larger of the two (the init-container rule)."""
        self.milli_cpu = max(self.milli_cpu, other.milli_cpu)
        self.memory = max(self.memory, other.memory)
        self.ephemeral_storage = max(self.ephemeral_storage, other.ephemeral_storage)
        self.allowed_pod_number = max(self.allowed_pod_number, other.allowed_pod_number)
        for name, value in other.scalar.items():
            self.scalar[name] = max(self.scalar.get(name, 0), value)

    def names(self) -> Iterable[str]:
        """The resources this value mentions (non-zero)."""
        if self.milli_cpu:
            yield CPU
        if self.memory:
            yield MEMORY
        if self.ephemeral_storage:
            yield EPHEMERAL_STORAGE
        yield from (name for name, value in self.scalar.items() if value)

    def clone(self) -> Resource:
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number,
                        dict(self.scalar))


def pod_requests(pod: objects_pb2.Pod) -> Resource:
    """What a pod needs on a node, as kube-scheduler computes it (``cluster.api.containers.pod_total``:
    init containers one at a time, sidecars beside everything after them), plus the pod overhead."""
    total = pod_total(
        pod, lambda container: Resource.from_quantities(container.resources.requests), _plus, _larger,
        Resource(),
    )
    if pod.spec.overhead:
        total.add(Resource.from_quantities(pod.spec.overhead))
    return total


def pod_non_zero_requests(pod: objects_pb2.Pod) -> tuple[int, int]:
    """(milli-CPU, memory) for scoring, with DEFAULT_*_REQUEST standing in for each container's missing
    request before the containers are added up as ``pod_requests`` adds them, overhead included."""

    def non_zero(container: objects_pb2.Container) -> tuple[int, int]:
        requests = container.resources.requests
        cpu = milli_value(requests[CPU]) if CPU in requests else DEFAULT_MILLI_CPU_REQUEST
        memory = int_value(requests[MEMORY]) if MEMORY in requests else DEFAULT_MEMORY_REQUEST
        return cpu, memory

    cpu, memory = pair_total(pod, non_zero)
    overhead = pod.spec.overhead
    if CPU in overhead:
        cpu += milli_value(overhead[CPU])
    if MEMORY in overhead:
        memory += int_value(overhead[MEMORY])
    return cpu, memory


def _plus(a: Resource, b: Resource) -> Resource:
    total = a.clone()
    total.add(b)
    return total


def _larger(a: Resource, b: Resource) -> Resource:
    most = a.clone()
    most.set_max(b)
    return most
