"""The one set of builders for the Pods and Nodes tests need, in the spirit of kube-scheduler's
``st.MakePod()`` / ``st.MakeNode()`` wrappers.

Keyword functions rather than fluent wrappers: Go chains setters because it has no keyword arguments;
in Python ``pod("web", cpu="1", node_name="n1", priority=10)`` names every field at the call site in
one call, leaves the rest at its zero value, and hands back a plain protobuf message a test can still
edit. As with kube's wrappers, a builder sets little it is not asked for: a pod gets one bare
container (the least a pod has), no uid and no image, so a test states every input it depends on.
The rarer parts of a spec (affinity, tolerations, topology spread constraints, ports) are given as
``spec=`` / ``status=`` dicts in the camelCase shape of a Kubernetes manifest, the way they read in
YAML; keyword fields are applied on top of them.

A plugin's args are built as a configuration file gives them: ``plugin_args("NodeResourcesFit",
{"scoringStrategy": {"type": "MostAllocated"}})`` decodes, defaults and validates them as the
configuration does, its ConfigError naming each problem under ``PLUGIN_ARGS_PATH``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from google.protobuf import json_format

from cluster.api import objects_pb2
from scheduler.config import API_VERSION, KIND, in_tree_registry, parse_config
from scheduler.framework import NodeInfo, PodInfo
from scheduler.framework.registry import Registry

#: What a comfortably sized test node offers: ``node(name, allocatable=ROOMY)``.
ROOMY = {"cpu": "4", "memory": "8Gi", "pods": "110"}
#: An image for pods sent to an API server, whose validation requires one: ``pod(name, ns, image=IMAGE)``.
IMAGE = "busybox:1.36"


def pod(
    name: str = "pod",
    namespace: str = "default",
    *,
    spec: Mapping[str, Any] | None = None,
    status: Mapping[str, Any] | None = None,
    uid: str = "",
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    resource_version: str = "",
    node_name: str = "",
    nominated: str = "",
    priority: int | None = None,
    priority_class: str = "",
    scheduler_name: str = "",
    phase: str = "",
    cpu: str = "",
    memory: str = "",
    requests: Mapping[str, str] | None = None,
    image: str = "",
    deletion_timestamp: int | None = None,
) -> objects_pb2.Pod:
    """A Pod. Unless ``spec`` lists containers it has one, named "c", which ``cpu``, ``memory``,
    ``requests`` and ``image`` describe (``spec={"containers": []}`` gives none). ``deletion_timestamp``
    is in Unix seconds."""
    spec_data = dict(spec or {})
    wanted = {**(requests or {}), **{k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}}
    if "containers" not in spec_data:
        spec_data["containers"] = [container(wanted, image=image)]
    elif wanted or image:
        raise ValueError("pod(): requests and image go in spec['containers'] or in the keywords, not both")
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    data: dict[str, Any] = {"metadata": metadata, "spec": spec_data}
    if status:
        data["status"] = dict(status)
    result = json_format.ParseDict(data, objects_pb2.Pod())
    meta = result.metadata
    meta.uid = uid
    meta.resource_version = resource_version
    meta.labels.update(labels or {})
    meta.annotations.update(annotations or {})
    if deletion_timestamp is not None:
        meta.deletion_timestamp.seconds = deletion_timestamp
    if node_name:
        result.spec.node_name = node_name
    if priority is not None:
        result.spec.priority = priority
    if priority_class:
        result.spec.priority_class_name = priority_class
    if scheduler_name:
        result.spec.scheduler_name = scheduler_name
    if nominated:
        result.status.nominated_node_name = nominated
    if phase:
        result.status.phase = phase
    return result


def container(
    requests: Mapping[str, str] | None = None,
    *,
    name: str = "c",
    image: str = "",
    host_ports: Iterable[int | tuple[str, str, int]] = (),
) -> dict[str, Any]:
    """A container as manifest data, for ``spec={"containers": [...]}``; a host port is a number (TCP on
    0.0.0.0) or (ip, protocol, port)."""
    out: dict[str, Any] = {"name": name}
    if image:
        out["image"] = image
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


def node(
    name: str = "node",
    *,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    allocatable: Mapping[str, str] | None = None,
    capacity: Mapping[str, str] | None = None,
    cpu: str = "",
    memory: str = "",
    pods: str = "",
    taints: Iterable[Mapping[str, str]] = (),
    unschedulable: bool = False,
    ready: str = "",
    images: Iterable[tuple[Iterable[str], int]] = (),
) -> objects_pb2.Node:
    """A Node. ``cpu``, ``memory`` and ``pods`` set those keys of its allocatable; ``taints`` are manifest
    dicts (key, value, effect); ``ready`` ("True", "False", "Unknown") adds a Ready condition; ``images``
    are its ``status.images`` as (names, sizeBytes)."""
    result = json_format.ParseDict(
        {"metadata": {"name": name}, "spec": {"taints": [dict(t) for t in taints]}, "status": {}},
        objects_pb2.Node(),
    )
    result.metadata.labels.update(labels or {})
    result.metadata.annotations.update(annotations or {})
    if unschedulable:
        result.spec.unschedulable = True
    result.status.allocatable.update(allocatable or {})
    shorthand = {"cpu": cpu, "memory": memory, "pods": pods}
    result.status.allocatable.update({key: value for key, value in shorthand.items() if value})
    result.status.capacity.update(capacity or {})
    if ready:
        result.status.conditions.add(type="Ready", status=ready)
    for names, size_bytes in images:
        result.status.images.add(names=list(names), size_bytes=size_bytes)
    return result


def node_info(n: objects_pb2.Node, pods: Iterable[objects_pb2.Pod] = ()) -> NodeInfo:
    """The scheduler's view of ``n`` with ``pods`` on it."""
    return NodeInfo(n, [PodInfo(p) for p in pods])


#: Where ``plugin_args`` puts the args: every problem it reports names a field below this.
PLUGIN_ARGS_PATH = "profiles[0].pluginConfig[0].args"


def plugin_args(name: str, args: Mapping[str, Any] | None = None, registry: Registry | None = None) -> Any:
    """Plugin ``name``'s args from a pluginConfig entry of ``args`` (None: no entry), read by the
    configuration (``scheduler.config.parse_config``) of a profile enabling the plugin; ``registry``
    defaults to the in-tree plugins."""
    profile: dict[str, Any] = {"plugins": {"multiPoint": {"enabled": [{"name": name}]}}}
    if args is not None:
        profile["pluginConfig"] = [{"name": name, "args": dict(args)}]
    config = {"apiVersion": API_VERSION, "kind": KIND, "profiles": [profile]}
    parsed = parse_config(config, source="", registry=registry or in_tree_registry())
    return parsed.profiles[0].plugin_args[name]
