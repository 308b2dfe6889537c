"""Small builders for plugin unit tests: API objects from the dicts Kubernetes manifests use."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from google.protobuf import json_format

from cluster.api import objects_pb2
from scheduler.framework import CycleState, NodeInfo, NodeScore, PodInfo


def pod(
    spec: Mapping[str, Any] | None = None,
    *,
    name: str = "pod",
    namespace: str = "default",
    uid: str = "",
    labels: Mapping[str, str] | None = None,
    node_name: str = "",
) -> objects_pb2.Pod:
    """A pod from a (camelCase) spec dict; a spec without containers gets one empty container."""
    spec = dict(spec or {})
    spec.setdefault("containers", [{"name": "c"}])
    if node_name:
        spec["nodeName"] = node_name
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}"}
    if labels:
        metadata["labels"] = dict(labels)
    return json_format.ParseDict({"metadata": metadata, "spec": spec}, objects_pb2.Pod())


def container(
    requests: Mapping[str, str] | None = None, *, host_ports: Iterable[int | tuple[str, str, int]] = ()
) -> dict[str, Any]:
    """A container dict; a host port is a number (TCP on 0.0.0.0) or (ip, protocol, port)."""
    out: dict[str, Any] = {"name": "c"}
    if requests:
        out["resources"] = {"requests": dict(requests)}
    ports = []
    for port in host_ports:
        ip, protocol, number = port if isinstance(port, tuple) else ("", "", port)
        entry: dict[str, Any] = {"containerPort": number, "hostPort": number}
        if ip:
            entry["hostIP"] = ip
        if protocol:
            entry["protocol"] = protocol
        ports.append(entry)
    if ports:
        out["ports"] = ports
    return out


def requesting(requests: Mapping[str, str], **kw: Any) -> objects_pb2.Pod:
    """A pod with one container requesting ``requests``."""
    return pod({"containers": [container(requests)]}, **kw)


def node(
    name: str = "node",
    *,
    labels: Mapping[str, str] | None = None,
    allocatable: Mapping[str, str] | None = None,
    taints: Iterable[Mapping[str, str]] = (),
    unschedulable: bool = False,
) -> objects_pb2.Node:
    data: dict[str, Any] = {"metadata": {"name": name}, "spec": {}, "status": {}}
    if labels:
        data["metadata"]["labels"] = dict(labels)
    if taints:
        data["spec"]["taints"] = [dict(t) for t in taints]
    if unschedulable:
        data["spec"]["unschedulable"] = True
    if allocatable:
        data["status"]["allocatable"] = dict(allocatable)
    return json_format.ParseDict(data, objects_pb2.Node())


def node_info(n: objects_pb2.Node, pods: Iterable[objects_pb2.Pod] = ()) -> NodeInfo:
    return NodeInfo(n, [PodInfo(p) for p in pods])


def run_score(
    plugin: Any, p: objects_pb2.Pod, infos: Sequence[NodeInfo], state: CycleState | None = None
) -> list[int]:
    """PreScore, Score on every node, then NormalizeScore when the plugin has it: the final scores."""
    state = state if state is not None else CycleState()
    pod_info = PodInfo(p)
    status = plugin.pre_score(state, pod_info, infos)
    assert status is None, status
    scores = [NodeScore(info.name, plugin.score(state, pod_info, info)) for info in infos]
    extensions = plugin.score_extensions()
    if extensions is not None:
        assert extensions.normalize_score(state, pod_info, scores) is None
    return [s.score for s in scores]
