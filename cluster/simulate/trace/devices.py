"""A trace's GPUs as Dynamic Resource Allocation devices (resource.k8s.io/v1) instead of the extended
resource ``nvidia.com/gpu`` (``podsched replay --gpus devices``, docs/trace-format.md):

- one DeviceClass, ``gpu.podsched.io``, selecting every device of the driver of that name;
- each node with GPUs: no ``nvidia.com/gpu`` in its capacity and allocatable, and a ResourceSlice named
  after it (driver ``gpu.podsched.io``, pool = the node's name, ``nodeName`` = the node) with a device
  ``gpu-<i>`` per GPU that several claims may share (``allowMultipleAllocations``) by its capacity
  ``milli``, 1000 thousandths of the GPU: a claim takes 1 to 1000 of them, all 1000 when it names no
  amount. Its model (the label ``nvidia.com/gpu.product``) is the string attribute ``model`` and its
  memory (the label ``nvidia.com/gpu.memory``, MiB) the capacity ``memory`` when the node has them; a
  claim takes none of the memory unless it asks;
- each pod asking k GPUs: no ``nvidia.com/gpu`` in its containers, a ResourceClaim named after it with one
  request ``gpus`` of exactly k devices of the class, each whole, or, for a pod sharing one GPU
  (``replay.podsched.io/gpu-milli`` m below 1000), of one device with ``capacity.requests`` ``milli: m``;
  the pod names the claim in ``spec.resourceClaims`` and each container that asked GPUs in
  ``resources.claims``. The GPU models the pod accepted through its nodeSelector or its required node
  affinity (one term) on ``nvidia.com/gpu.product`` become a CEL selector on the devices' model instead.

Claims are made one per pod by the replay, not from templates by the resourceclaim controller: the same
devices asked, two writes fewer per pod, and names that do not depend on a random suffix."""

from __future__ import annotations

from dataclasses import replace

from google.protobuf.message import Message

from cluster.api import objects_pb2
from cluster.api.validation.resource import MAX_ALLOCATION_RESULTS, MAX_DEVICES
from cluster.simulate.trace.bounds import pod_gpus
from cluster.simulate.trace.model import (
    GPU_PRODUCT_LABEL,
    GPU_RESOURCE,
    WHOLE_GPU_MILLI,
    Trace,
    TraceError,
    TracePod,
    gpu_share,
)
from scheduler.framework.resource import Resource

DRIVER = "gpu.podsched.io"
#: The DeviceClass every claim asks for: all the driver's devices.
DEVICE_CLASS = DRIVER
#: The pod's resourceClaims entry and the claim's one request.
CLAIM_ENTRY = "gpus"
MODEL_ATTRIBUTE = "model"
MEMORY_CAPACITY = "memory"
#: The capacity claims share a GPU by: thousandths of it.
SHARE_CAPACITY = "milli"
#: GPU Feature Discovery's label for the memory of a node's GPUs, in MiB.
GPU_MEMORY_LABEL = "nvidia.com/gpu.memory"
EXACT_COUNT = "ExactCount"
_MODEL = f'device.attributes["{DRIVER}"].{MODEL_ATTRIBUTE}'


def as_devices(trace: Trace) -> Trace:
    """``trace`` with its GPUs as DRA devices (see the module's doc); raise TraceError naming each node with
    more GPUs than one ResourceSlice holds and each pod asking more than one claim is given."""
    problems: list[str] = []
    nodes, slices = [], []
    every_gpu_has_a_model = True
    for node in trace.nodes:
        gpus = Resource.from_quantities(node.status.allocatable or node.status.capacity).get(GPU_RESOURCE)
        if gpus > MAX_DEVICES:
            problems.append(f"node {node.metadata.name}: {gpus} GPUs: a node's devices are published in one "
                            f"ResourceSlice, which holds at most {MAX_DEVICES}")
        nodes.append(_without_gpus(node))
        if gpus:
            slices.append(resource_slice(node, gpus))
            every_gpu_has_a_model &= GPU_PRODUCT_LABEL in node.metadata.labels
    pods = []
    for entry in trace.pods:
        gpus = pod_gpus(entry.pod)
        if gpus > MAX_ALLOCATION_RESULTS:
            problems.append(f"{entry.where}: pod {entry.pod.metadata.name}: {gpus} GPUs: a claim is "
                            f"allocated at most {MAX_ALLOCATION_RESULTS} devices")
        pods.append(_pod_with_claim(entry, gpus, guard_model=not every_gpu_has_a_model) if gpus else entry)
    if problems:
        raise TraceError(problems)
    objects: list[Message] = [*trace.objects, device_class(), *slices] if slices else list(trace.objects)
    return Trace(nodes, pods, objects, trace.format)


def device_class() -> objects_pb2.DeviceClass:
    device_class = objects_pb2.DeviceClass(metadata=objects_pb2.ObjectMeta(name=DEVICE_CLASS))
    device_class.spec.selectors.add().cel.expression = f'device.driver == "{DRIVER}"'
    return device_class


def resource_slice(node: objects_pb2.Node, gpus: int) -> objects_pb2.ResourceSlice:
    """The slice of ``node``'s ``gpus`` devices: pool and name the node's."""
    name = node.metadata.name
    model = node.metadata.labels.get(GPU_PRODUCT_LABEL)
    memory = node.metadata.labels.get(GPU_MEMORY_LABEL, "")
    resource_slice = objects_pb2.ResourceSlice(metadata=objects_pb2.ObjectMeta(name=name))
    spec = resource_slice.spec
    spec.driver = DRIVER
    spec.node_name = name
    spec.pool.name = name
    spec.pool.generation = 1
    spec.pool.resource_slice_count = 1
    for index in range(gpus):
        device = spec.devices.add(name=f"gpu-{index}", allow_multiple_allocations=True)
        if model is not None:
            device.attributes[MODEL_ATTRIBUTE].string_value = model
        share = device.capacity[SHARE_CAPACITY]
        share.value = str(WHOLE_GPU_MILLI)
        # A claim naming no amount takes the whole GPU, so that no share can join it.
        share.request_policy.default = str(WHOLE_GPU_MILLI)
        share.request_policy.valid_range.min = "1"
        share.request_policy.valid_range.max = str(WHOLE_GPU_MILLI)
        share.request_policy.valid_range.step = "1"
        if memory.isdigit():
            # Without a policy, a claim naming no memory would take all of it and leave none to share.
            device.capacity[MEMORY_CAPACITY].value = f"{memory}Mi"
            device.capacity[MEMORY_CAPACITY].request_policy.default = "0"
            device.capacity[MEMORY_CAPACITY].request_policy.valid_range.min = "0"
    return resource_slice


def model_selector(models: list[str], *, guard: bool) -> str:
    """CEL true for a device whose model is one of ``models``; ``guard``: also false (rather than an error)
    for a device without a model."""
    # Models are label values (alphanumerics, '-', '_', '.'): nothing in them needs escaping in CEL.
    quoted = [f'"{model}"' for model in models]
    test = f"{_MODEL} == {quoted[0]}" if len(quoted) == 1 else f"{_MODEL} in [{', '.join(quoted)}]"
    return f"has({_MODEL}) && {test}" if guard else test


def _without_gpus(node: objects_pb2.Node) -> objects_pb2.Node:
    if GPU_RESOURCE not in node.status.capacity and GPU_RESOURCE not in node.status.allocatable:
        return node
    node = objects_pb2.Node(metadata=node.metadata, spec=node.spec, status=node.status)
    del node.status.capacity[GPU_RESOURCE]
    del node.status.allocatable[GPU_RESOURCE]
    return node


def _pod_with_claim(entry: TracePod, gpus: int, *, guard_model: bool) -> TracePod:
    pod = objects_pb2.Pod()
    pod.CopyFrom(entry.pod)
    for container in [*pod.spec.init_containers, *pod.spec.containers]:
        resources = container.resources
        if GPU_RESOURCE in resources.requests or GPU_RESOURCE in resources.limits:
            resources.requests.pop(GPU_RESOURCE, None)
            resources.limits.pop(GPU_RESOURCE, None)
            resources.claims.add(name=CLAIM_ENTRY)
    pod.spec.resource_claims.add(name=CLAIM_ENTRY, resource_claim_name=pod.metadata.name)
    claim = objects_pb2.ResourceClaim(
        metadata=objects_pb2.ObjectMeta(name=pod.metadata.name, namespace=pod.metadata.namespace))
    request = claim.spec.devices.requests.add(name=CLAIM_ENTRY).exactly
    request.device_class_name = DEVICE_CLASS
    request.allocation_mode = EXACT_COUNT
    request.count = gpus
    share = gpu_share(entry.pod)
    if share is not None:
        request.capacity.requests[SHARE_CAPACITY] = str(share)
    for models in _take_model_restrictions(pod):
        request.selectors.add().cel.expression = model_selector(models, guard=guard_model)
    return replace(entry, pod=pod, claim=claim)


def _take_model_restrictions(pod: objects_pb2.Pod) -> list[list[str]]:
    """The lists of GPU models ``pod`` accepts through its nodeSelector and through its required node
    affinity of one term, each removed from the pod. An affinity of several terms (alternatives) is left
    as it is: the nodes keep their label, so it still holds."""
    restrictions = []
    selector = pod.spec.node_selector
    if GPU_PRODUCT_LABEL in selector:
        restrictions.append([selector[GPU_PRODUCT_LABEL]])
        del selector[GPU_PRODUCT_LABEL]
    affinity = pod.spec.affinity.node_affinity
    required = affinity.required_during_scheduling_ignored_during_execution
    if len(required.node_selector_terms) == 1:
        term = required.node_selector_terms[0]
        kept = []
        for requirement in term.match_expressions:
            if requirement.key == GPU_PRODUCT_LABEL and requirement.operator == "In":
                restrictions.append(list(requirement.values))
            else:
                kept.append(requirement)
        if len(kept) < len(term.match_expressions):
            del term.match_expressions[:]
            term.match_expressions.extend(kept)
            if not term.match_expressions and not term.match_fields:
                affinity.ClearField("required_during_scheduling_ignored_during_execution")
                if not affinity.ListFields():
                    pod.spec.affinity.ClearField("node_affinity")
                    if not pod.spec.affinity.ListFields():
                        pod.spec.ClearField("affinity")
    return restrictions
