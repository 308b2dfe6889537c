"""Extended resources backed by DRA (kube-scheduler's DRAExtendedResource): a pod asking for an extended
resource that a DeviceClass serves (``example.com/gpu: 1``) gets devices of that class on a node that does
not advertise the resource in its allocatable.

PreFilter finds the claim made for the pod in an earlier attempt, or starts one in memory (named
``<extended-resources>``, with a temporary uid, no requests yet). Filter gives it, per node, one request
per container and resource the node lacks (upstream's names, ``container-<i>-request-<j>``) and allocates
it with the pod's other claims. PreBind creates it (``<pod>-extended-resources-`` plus a generated suffix,
annotated as the pod's extended-resource claim and owned by the pod), writes its allocation and
reservedFor, then records ``status.extendedResourceClaimStatus`` on the pod.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from cluster.api import objects_pb2
from cluster.api.quantity import parse_quantity
from cluster.api.validation.resources import is_extended_resource_name
from scheduler.dra import Allocator
from scheduler.framework import NodeInfo, PodInfo
from scheduler.framework.extended_resources import DEVICE_CLASS_PREFIX, DeviceClassResolver

#: The name of the claim while it exists in memory only (not a valid object name, so no real claim has it).
SPECIAL_CLAIM_NAME = "<extended-resources>"
#: The annotation that marks the claim the scheduler made for a pod's extended resources.
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"

CANNOT_SCHEDULE = "cannot schedule extended resource claim"
CANNOT_FIT = "cannot fit resource"

#: The resources a node needs DRA for, with the pod's amounts, sorted by name.
Needed = tuple[tuple[str, int], ...]


def is_dra_extended_resource_name(name: str) -> bool:
    """A name a DeviceClass may serve: an extended resource, or a class's implicit name."""
    return is_extended_resource_name(name) or name.startswith(DEVICE_CLASS_PREFIX)


def extended_requests(pod: PodInfo, resolver: DeviceClassResolver) -> Needed:
    """The pod's requests of resources DRA may serve, when a DeviceClass serves one of them; () otherwise
    (and at no cost for a pod without extended resources)."""
    scalar = pod.requests.scalar
    if not scalar or not resolver:
        return ()
    wanted = tuple(sorted((name, amount) for name, amount in scalar.items()
                          if amount > 0 and is_dra_extended_resource_name(name)))
    if not any(resolver.get(name) is not None for name, _ in wanted):
        return ()
    return wanted


def find_claim(
    pod: objects_pb2.Pod, claims: Sequence[objects_pb2.ResourceClaim]
) -> objects_pb2.ResourceClaim | None:
    """The claim made for ``pod``'s extended resources in an earlier attempt: annotated so, and controlled
    by the pod."""
    for claim in claims:
        if claim.metadata.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) != "true":
            continue
        for owner in claim.metadata.owner_references:
            if owner.name == pod.metadata.name and owner.controller and owner.uid == pod.metadata.uid:
                return claim
    return None


def special_claim(pod: objects_pb2.Pod) -> objects_pb2.ResourceClaim:
    """The claim in memory, before PreBind creates it."""
    claim = objects_pb2.ResourceClaim()
    claim.metadata.namespace = pod.metadata.namespace
    claim.metadata.name = SPECIAL_CLAIM_NAME
    # A uid of its own until created: allocations in flight are tracked by uid.
    claim.metadata.uid = str(uuid.uuid4())
    claim.metadata.generate_name = f"{pod.metadata.name}-extended-resources-"
    claim.metadata.annotations[EXTENDED_RESOURCE_CLAIM_ANNOTATION] = "true"
    claim.metadata.owner_references.add(
        api_version="v1", kind="Pod", name=pod.metadata.name, uid=pod.metadata.uid, controller=True)
    return claim


def needed_on(wanted: Needed, node_info: NodeInfo, resolver: DeviceClassResolver) -> Needed | None:
    """What ``node_info`` needs DRA for: each resource a class serves and the node has none of. None when
    the node neither has a resource nor gets it from a class (the pod does not fit)."""
    allocatable = node_info.allocatable.scalar
    needed = []
    for name, amount in wanted:
        have = allocatable.get(name)
        if not have and resolver.get(name) is not None:
            needed.append((name, amount))
        elif have is None:
            return None
    return tuple(needed)


def _container_request(
    index: int, container: objects_pb2.Container, resource: str, class_name: str,
    reusable: Sequence[objects_pb2.DeviceRequest | None],
) -> tuple[objects_pb2.DeviceRequest | None, list[objects_pb2.ContainerExtendedResourceRequest]]:
    """The request container ``index`` needs for ``resource`` beyond what it may share of ``reusable``
    (the later long-lived containers' requests, for an init container), and its mappings."""
    requests = container.resources.requests
    if resource not in requests:
        return None, []
    amount = parse_quantity(requests[resource])
    if amount.denominator != 1 or amount == 0:
        return None, []
    wanted = int(amount)
    mappings = []
    total = 0
    for request in reusable:
        if request is None:
            continue
        total += request.exactly.count
        mappings.append(objects_pb2.ContainerExtendedResourceRequest(
            container_name=container.name, resource_name=resource, request_name=request.name))
        if total >= wanted:
            return None, mappings
    name = f"container-{index}-request-{sorted(requests).index(resource)}"
    request = objects_pb2.DeviceRequest(name=name, exactly=objects_pb2.ExactDeviceRequest(
        device_class_name=class_name, allocation_mode="ExactCount", count=wanted - total))
    mappings.append(objects_pb2.ContainerExtendedResourceRequest(
        container_name=container.name, resource_name=resource, request_name=name))
    return request, mappings


def requests_and_mappings(
    pod: objects_pb2.Pod, needed: Needed, resolver: DeviceClassResolver
) -> tuple[list[objects_pb2.DeviceRequest], list[objects_pb2.ContainerExtendedResourceRequest]]:
    """The claim's requests for the ``needed`` resources (sorted by name) and which container's resource
    each request serves, as upstream: one request per container and resource; init containers that do not
    keep running (not sidecars) share one request, the largest, or reuse the requests of the containers
    started after them."""
    containers = [*pod.spec.init_containers, *pod.spec.containers]
    inits = len(pod.spec.init_containers)
    short_lived = [i for i, c in enumerate(containers) if i < inits and c.restart_policy != "Always"]
    long_lived = [i for i in range(len(containers)) if i not in short_lived]
    requests: list[objects_pb2.DeviceRequest] = []
    mappings: list[objects_pb2.ContainerExtendedResourceRequest] = []
    for resource, _ in needed:
        device_class = resolver.get(resource)
        if device_class is None:
            continue
        class_name = device_class.metadata.name
        long_requests: list[objects_pb2.DeviceRequest | None] = [None] * len(containers)
        long_mappings: list[objects_pb2.ContainerExtendedResourceRequest] = []
        for i in long_lived:
            long_requests[i], found = _container_request(i, containers[i], resource, class_name, ())
            long_mappings.extend(found)
        largest: objects_pb2.DeviceRequest | None = None
        short_names: set[str] = set()
        short_mappings: list[objects_pb2.ContainerExtendedResourceRequest] = []
        for i in short_lived:
            request, found = _container_request(i, containers[i], resource, class_name, long_requests[i:])
            if request is not None:
                short_names.add(request.name)
                if largest is None or largest.exactly.count < request.exactly.count:
                    largest = request
            short_mappings.extend(found)
        if largest is not None and len(short_names) > 1:
            # Init containers run one after the other: the largest request serves each of them.
            for mapping in short_mappings:
                if mapping.request_name in short_names:
                    mapping.request_name = largest.name
        if largest is not None:
            requests.append(largest)
        requests.extend(request for request in long_requests if request is not None)
        mappings.extend(long_mappings)
        mappings.extend(short_mappings)
    requests.sort(key=lambda request: request.name)
    return requests, mappings


@dataclass(slots=True)
class NodeVariant:
    """The claim as one kind of node needs it (the same resources lacking: the same claim)."""

    claim: objects_pb2.ResourceClaim
    mappings: list[objects_pb2.ContainerExtendedResourceRequest]
    allocator: Allocator


@dataclass(slots=True)
class ExtendedClaim:
    """What PreFilter leaves for the later points about the pod's extended resources backed by DRA."""

    #: The claim found from an earlier attempt, or the one in memory.
    claim: objects_pb2.ResourceClaim
    #: The pod's requests of resources DRA may serve.
    wanted: Needed
    #: The uid the allocation in flight is tracked by (the claim's uid when PreFilter ran).
    pending_uid: str
    #: Per set of resources nodes lack, the claim for them and its allocator with the other claims.
    variants: dict[Needed, NodeVariant] = field(default_factory=dict)
    #: Filter's variant of each node that fits and needs one.
    on_node: dict[str, NodeVariant] = field(default_factory=dict)
    #: Reserve's choice: the variant, and its allocation on the chosen node.
    chosen: tuple[NodeVariant, objects_pb2.AllocationResult] | None = None
    #: The claim PreBind created (Unreserve deletes it).
    created: objects_pb2.ResourceClaim | None = None

    @property
    def stale(self) -> bool:
        """A claim from an earlier attempt: it is deleted (PostFilter) and the pod tries anew."""
        return self.claim.metadata.name != SPECIAL_CLAIM_NAME

    def variant(
        self, pod: objects_pb2.Pod, needed: Needed, resolver: DeviceClassResolver,
        make_allocator: Callable[[objects_pb2.ResourceClaim], Allocator],
    ) -> NodeVariant:
        found = self.variants.get(needed)
        if found is None:
            claim = objects_pb2.ResourceClaim()
            claim.CopyFrom(self.claim)
            requests, mappings = requests_and_mappings(pod, needed, resolver)
            claim.spec.devices.requests.extend(requests)
            found = self.variants[needed] = NodeVariant(claim, mappings, make_allocator(claim))
        return found

    def clone(self) -> ExtendedClaim:
        """A copy for a dry run, with allocators of its own."""
        return ExtendedClaim(claim=self.claim, wanted=self.wanted, pending_uid=self.pending_uid)


def claim_to_create(variant: NodeVariant) -> objects_pb2.ResourceClaim:
    """The object PreBind creates: the variant's claim without the fields the server sets."""
    claim = objects_pb2.ResourceClaim()
    claim.CopyFrom(variant.claim)
    claim.metadata.name = ""
    claim.metadata.uid = ""
    claim.ClearField("status")
    return claim


def with_claim_status(
    pod: objects_pb2.Pod, claim_name: str, mappings: Sequence[objects_pb2.ContainerExtendedResourceRequest]
) -> objects_pb2.Pod:
    """``pod`` recording its extended-resource claim."""
    updated = objects_pb2.Pod()
    updated.CopyFrom(pod)
    status = updated.status.extended_resource_claim_status
    status.Clear()
    status.request_mappings.extend(mappings)
    status.resource_claim_name = claim_name
    return updated
