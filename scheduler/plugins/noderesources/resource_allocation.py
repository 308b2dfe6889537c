"""What NodeResourcesFit's scoring and NodeResourcesBalancedAllocation share: the configured resources
with their weights, the pod's request per resource (computed once, in PreScore), and a node's
(allocatable, requested-with-the-pod) pair per resource.

Fit scores CPU and memory with the *non-zero* requests (a container without a request counts as
100m / 200Mi, so that pods without requests still spread); BalancedAllocation uses the real requests
(``use_requested``). A resource the node does not have (allocatable 0), or an extended resource the pod
does not request, is left out of the score: both come back as (0, 0).
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.config.argtypes import ResourceSpec
from scheduler.framework import NodeInfo, PodInfo
from scheduler.framework.resource import CPU, EPHEMERAL_STORAGE, MEMORY


def request_signature(pod: PodInfo) -> tuple[int | tuple[tuple[str, int], ...], ...]:
    """Everything the resource plugins read of a pod: its requests and its non-zero CPU and memory."""
    requests = pod.requests
    return (requests.milli_cpu, requests.memory, requests.ephemeral_storage, requests.allowed_pod_number,
            tuple(sorted(requests.scalar.items())), pod.non_zero_cpu, pod.non_zero_memory)


def pod_request_list(
    pod: PodInfo, resources: Sequence[ResourceSpec], *, use_requested: bool
) -> tuple[int, ...]:
    """The pod's request of each resource, in ``resources`` order."""
    out = []
    for spec in resources:
        if spec.name == CPU and not use_requested:
            out.append(pod.non_zero_cpu)
        elif spec.name == MEMORY and not use_requested:
            out.append(pod.non_zero_memory)
        else:
            out.append(pod.requests.get(spec.name))
    return tuple(out)


def node_vectors(
    node_info: NodeInfo,
    resources: Sequence[ResourceSpec],
    pod_requests: Sequence[int],
    *,
    use_requested: bool,
) -> tuple[list[int], list[int]]:
    """(requested including the pod, allocatable) per resource, both 0 where the resource is left out."""
    allocatable = node_info.allocatable
    on_node = node_info.requested if use_requested else node_info.non_zero_requested
    requested_out = [0] * len(resources)
    allocatable_out = [0] * len(resources)
    for i, spec in enumerate(resources):
        name, pod_request = spec.name, pod_requests[i]
        if name == CPU:
            alloc, req = allocatable.milli_cpu, on_node.milli_cpu + pod_request
        elif name == MEMORY:
            alloc, req = allocatable.memory, on_node.memory + pod_request
        elif name == EPHEMERAL_STORAGE:
            alloc, req = allocatable.ephemeral_storage, node_info.requested.ephemeral_storage + pod_request
        elif pod_request == 0 or name not in allocatable.scalar:
            continue
        else:
            alloc, req = allocatable.scalar[name], node_info.requested.scalar.get(name, 0) + pod_request
        if alloc:
            allocatable_out[i], requested_out[i] = alloc, req
    return requested_out, allocatable_out
