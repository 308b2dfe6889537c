"""The API objects a CSV row becomes: a node with capacity = allocatable, a one-container pod."""

from __future__ import annotations

from collections.abc import Mapping

from cluster.api import objects_pb2
from cluster.simulate.scenario import DEFAULT_MAX_PODS, HOSTNAME_LABEL
from cluster.simulate.trace.model import GPU_RESOURCE

CONTAINER_NAME = "main"
#: What a trace pod's one container runs; nothing runs it in a replay, but the API wants an image.
CONTAINER_IMAGE = "registry.k8s.io/pause:3.9"


def new_node(name: str, resources: Mapping[str, str], gpus: int, labels: Mapping[str, str],
             max_pods: str = DEFAULT_MAX_PODS) -> objects_pb2.Node:
    """A node whose allocatable is its capacity: ``resources``, ``pods`` and, when it has GPUs,
    ``nvidia.com/gpu``; labelled with its hostname."""
    node = objects_pb2.Node(metadata=objects_pb2.ObjectMeta(name=name))
    node.metadata.labels[HOSTNAME_LABEL] = name
    node.metadata.labels.update(labels)
    capacity = dict(resources, pods=max_pods)
    if gpus:
        capacity[GPU_RESOURCE] = str(gpus)
    node.status.capacity.update(capacity)
    node.status.allocatable.update(capacity)
    return node


def new_pod(name: str, namespace: str, requests: Mapping[str, str], gpus: int) -> objects_pb2.Pod:
    """A pod of one container asking ``requests`` and ``gpus`` whole GPUs (an extended resource: the
    API requires its limit, equal to the request)."""
    container = objects_pb2.Container(name=CONTAINER_NAME, image=CONTAINER_IMAGE)
    container.resources.requests.update(requests)
    if gpus:
        container.resources.requests[GPU_RESOURCE] = str(gpus)
        container.resources.limits[GPU_RESOURCE] = str(gpus)
    pod = objects_pb2.Pod(metadata=objects_pb2.ObjectMeta(name=name, namespace=namespace))
    pod.spec.containers.append(container)
    return pod


def require_node_label_in(pod: objects_pb2.Pod, key: str, values: list[str]) -> None:
    """Required node affinity: the node's label ``key`` is one of ``values``."""
    term = objects_pb2.NodeSelectorTerm()
    term.match_expressions.append(objects_pb2.NodeSelectorRequirement(key=key, operator="In", values=values))
    pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms.append(
        term)
