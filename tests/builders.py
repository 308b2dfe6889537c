"""The one set of builders for the API objects tests need (Pods and Nodes above all, and Leases,
LeaseCandidates, Namespaces, PriorityClasses, ResourceQuotas, PodDisruptionBudgets, RuntimeClasses,
Events, PodGroups, the DRA and the storage kinds), in the spirit of kube-scheduler's ``st.MakePod()`` /
``st.MakeNode()`` wrappers.

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
from datetime import datetime
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import kinds, objects_pb2
from cluster.api.fencing import FENCING_TOKEN_ANNOTATION
from scheduler.config import API_VERSION, KIND, in_tree_registry, parse_config
from scheduler.framework import NodeInfo, PodInfo
from scheduler.framework.registry import Registry

#: What a comfortably sized test node offers: ``node(name, allocatable=ROOMY)``.
ROOMY = {"cpu": "4", "memory": "8Gi", "pods": "110"}
#: The two spellings of a PodGroup: ``pod_group(name, api_version=COSCHEDULING)``.
UPSTREAM = "scheduling.k8s.io/v1alpha3"
COSCHEDULING = "scheduling.x-k8s.io/v1alpha1"
#: An image for pods sent to an API server, whose validation requires one: ``pod(name, ns, image=IMAGE)``.
IMAGE = "busybox:1.36"

M = TypeVar("M", bound=Message)
#: A point in time as a builder takes it: a datetime, or a Timestamp where the nanoseconds matter.
When = datetime | Timestamp


def typed(obj: M) -> M:
    """``obj`` with the apiVersion and kind of its kind set, as the API server hands objects out."""
    kind = kinds.kind_of(obj)
    obj.api_version = kind.api_version  # type: ignore[attr-defined]
    obj.kind = kind.name  # type: ignore[attr-defined]
    return obj


def _stamp(target: Timestamp, when: When) -> None:
    if isinstance(when, datetime):
        target.FromDatetime(when)
    else:
        target.CopyFrom(when)


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


def pod_group(
    name: str = "g",
    namespace: str = "default",
    *,
    api_version: str = UPSTREAM,
    kind: str = "",
    spec: Mapping[str, Any] | None = None,
    status: Mapping[str, Any] | None = None,
    resource_version: str = "",
    created: int | None = None,
    min_count: int | None = None,
    basic: bool = False,
    min_member: int | None = None,
    timeout: int | None = None,
    priority_class: str = "",
    priority: int | None = None,
    phase: str = "",
) -> objects_pb2.PodGroup:
    """A PodGroup in the ``api_version`` spelling (``kind`` stays empty unless given, as a message
    built in code has it). Upstream: ``min_count`` makes a gang policy, ``basic`` a basic one;
    Coscheduling: ``min_member``, ``timeout`` (scheduleTimeoutSeconds) and ``phase``. ``spec`` /
    ``status`` are manifest dicts the keywords apply on; ``created`` is in Unix seconds."""
    data: dict[str, Any] = {"apiVersion": api_version, "metadata": {"name": name, "namespace": namespace}}
    if kind:
        data["kind"] = kind
    if spec is not None:
        data["spec"] = dict(spec)
    if status is not None:
        data["status"] = dict(status)
    result = json_format.ParseDict(data, objects_pb2.PodGroup())
    result.metadata.resource_version = resource_version
    if created is not None:
        result.metadata.creation_timestamp.seconds = created
    if min_count is not None:
        result.spec.scheduling_policy.gang.min_count = min_count
    if basic:
        result.spec.scheduling_policy.basic.SetInParent()
    if min_member is not None:
        result.spec.min_member = min_member
    if timeout is not None:
        result.spec.schedule_timeout_seconds = timeout
    if priority_class:
        result.spec.priority_class_name = priority_class
    if priority is not None:
        result.spec.priority = priority
    if phase:
        result.status.phase = phase
    return result


def workload(name: str = "w", namespace: str = "default", *, spec: Mapping[str, Any]) -> objects_pb2.Workload:
    """A scheduling.k8s.io/v1alpha3 Workload; ``spec`` is the manifest's."""
    data = {"apiVersion": UPSTREAM, "kind": "Workload", "metadata": {"name": name, "namespace": namespace},
            "spec": dict(spec)}
    return json_format.ParseDict(data, objects_pb2.Workload())


def composite_pod_group(
    name: str = "c", namespace: str = "default", *, spec: Mapping[str, Any],
    status: Mapping[str, Any] | None = None,
) -> objects_pb2.CompositePodGroup:
    """A scheduling.k8s.io/v1alpha3 CompositePodGroup; ``spec`` and ``status`` are the manifest's."""
    data: dict[str, Any] = {"apiVersion": UPSTREAM, "kind": "CompositePodGroup",
                            "metadata": {"name": name, "namespace": namespace}, "spec": dict(spec)}
    if status is not None:
        data["status"] = dict(status)
    return json_format.ParseDict(data, objects_pb2.CompositePodGroup())


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


def namespace(
    name: str = "", *, labels: Mapping[str, str] | None = None, generate_name: str = ""
) -> objects_pb2.Namespace:
    """A Namespace (the API server adds the label ``kubernetes.io/metadata.name``; a test wanting it
    as stored passes it in ``labels``)."""
    result = objects_pb2.Namespace()
    result.metadata.name = name
    result.metadata.generate_name = generate_name
    result.metadata.labels.update(labels or {})
    return result


def lease(
    name: str = "kube-scheduler",
    namespace: str = "kube-system",
    *,
    holder: str | None = None,
    duration: int | None = None,
    transitions: int | None = None,
    renewed: When | None = None,
    token: int | str | None = None,
    resource_version: str = "",
) -> objects_pb2.Lease:
    """A Lease, the scheduler's unless named. A spec field left None stays absent (a Lease's fields
    are optional, and absent reads differently from zero); ``token`` is its fencing-token annotation."""
    result = objects_pb2.Lease(
        metadata=objects_pb2.ObjectMeta(name=name, namespace=namespace, resource_version=resource_version)
    )
    if token is not None:
        result.metadata.annotations[FENCING_TOKEN_ANNOTATION] = str(token)
    if holder is not None:
        result.spec.holder_identity = holder
    if duration is not None:
        result.spec.lease_duration_seconds = duration
    if transitions is not None:
        result.spec.lease_transitions = transitions
    if renewed is not None:
        _stamp(result.spec.renew_time, renewed)
    return result


def lease_candidate(
    name: str,
    namespace: str = "kube-system",
    *,
    lease_name: str = "kube-scheduler",
    binary_version: str = "",
    emulation_version: str = "",
    strategy: str = "",
    renewed: When | None = None,
    created: When | None = None,
    resource_version: str = "",
) -> objects_pb2.LeaseCandidate:
    """A LeaseCandidate: a scheduler replica standing for the Lease ``lease_name``."""
    result = objects_pb2.LeaseCandidate(
        metadata=objects_pb2.ObjectMeta(name=name, namespace=namespace, resource_version=resource_version),
        spec=objects_pb2.LeaseCandidateSpec(lease_name=lease_name, binary_version=binary_version,
                                            emulation_version=emulation_version, strategy=strategy),
    )
    if created is not None:
        _stamp(result.metadata.creation_timestamp, created)
    if renewed is not None:
        _stamp(result.spec.renew_time, renewed)
    return result


def priority_class(
    name: str, value: int = 0, *, global_default: bool = False, preemption_policy: str | None = None
) -> objects_pb2.PriorityClass:
    """A PriorityClass; ``preemption_policy`` None leaves it absent (the API server defaults it)."""
    result = objects_pb2.PriorityClass(
        metadata=objects_pb2.ObjectMeta(name=name), value=value, global_default=global_default
    )
    if preemption_policy is not None:
        result.preemption_policy = preemption_policy
    return result


def resource_quota(
    name: str = "q",
    namespace: str = "default",
    *,
    spec: Mapping[str, Any] | None = None,
    status: Mapping[str, Any] | None = None,
    hard: Mapping[str, str] | None = None,
    priority_classes: Iterable[str] = (),
) -> objects_pb2.ResourceQuota:
    """A ResourceQuota: ``hard`` limits, scoped to pods of ``priority_classes`` when any are given (a
    PriorityClass In scope selector); ``spec`` / ``status`` are manifest dicts the keywords apply on."""
    spec_data = dict(spec or {})
    if hard:
        spec_data["hard"] = {**spec_data.get("hard", {}), **hard}
    classes = list(priority_classes)
    if classes:
        spec_data["scopeSelector"] = {
            "matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": classes}]
        }
    data: dict[str, Any] = {"metadata": {"name": name, "namespace": namespace}, "spec": spec_data}
    if status is not None:
        data["status"] = dict(status)
    return json_format.ParseDict(data, objects_pb2.ResourceQuota())


def pdb(
    name: str = "pdb",
    namespace: str = "default",
    *,
    spec: Mapping[str, Any] | None = None,
    min_available: int | str | None = None,
    max_unavailable: int | str | None = None,
    selector: Mapping[str, Any] | None = None,
) -> objects_pb2.PodDisruptionBudget:
    """A PodDisruptionBudget; ``spec`` and ``selector`` (a LabelSelector) are manifest dicts, and
    ``min_available`` / ``max_unavailable`` a count or a percentage string."""
    spec_data = dict(spec or {})
    for key, value in (("minAvailable", min_available), ("maxUnavailable", max_unavailable)):
        if value is not None:
            spec_data[key] = value
    if selector is not None:
        spec_data["selector"] = dict(selector)
    data = {"metadata": {"name": name, "namespace": namespace}, "spec": spec_data}
    return json_format.ParseDict(data, objects_pb2.PodDisruptionBudget())


def runtime_class(
    name: str = "kata",
    handler: str = "kata",
    *,
    overhead: Mapping[str, str] | None = None,
    node_selector: Mapping[str, str] | None = None,
    tolerations: Iterable[Mapping[str, Any]] = (),
) -> objects_pb2.RuntimeClass:
    """A RuntimeClass; ``overhead`` is its pods' fixed overhead, ``tolerations`` are manifest dicts."""
    result = objects_pb2.RuntimeClass(metadata=objects_pb2.ObjectMeta(name=name), handler=handler)
    result.overhead.pod_fixed.update(overhead or {})
    result.scheduling.node_selector.update(node_selector or {})
    parsed = (json_format.ParseDict(t, objects_pb2.Toleration()) for t in tolerations)
    result.scheduling.tolerations.extend(parsed)
    return result


def event(
    name: str,
    namespace: str = "default",
    *,
    about: Mapping[str, str] | None = None,
    reason: str = "",
    message: str = "",
    type_: str = "Normal",
    count: int = 0,
    component: str = "",
    last_seen: int | None = None,
    resource_version: str = "",
    annotations: Mapping[str, str] | None = None,
) -> objects_pb2.Event:
    """An Event about ``about`` (an ObjectReference as a manifest dict: kind, namespace, name), from
    ``component`` when given; ``last_seen`` is its lastTimestamp in Unix seconds."""
    result = objects_pb2.Event(
        metadata=objects_pb2.ObjectMeta(name=name, namespace=namespace, resource_version=resource_version),
        reason=reason, message=message, type=type_, count=count,
    )
    result.metadata.annotations.update(annotations or {})
    if about is not None:
        json_format.ParseDict(dict(about), result.involved_object)
    if component:
        result.source.component = component
    if last_seen is not None:
        result.last_timestamp.seconds = last_seen
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


# ------------------------------------------------------------------ Dynamic Resource Allocation (v1)

DeviceManifest = str | Mapping[str, Any]


def device_class(
    name: str, *selectors: str, config: Iterable[Mapping[str, Any]] = ()
) -> objects_pb2.DeviceClass:
    """A DeviceClass selecting devices by the CEL ``selectors``; ``config`` are its opaque
    configurations as manifest dicts (``{"driver": ..., "parameters": {...}}``)."""
    return json_format.ParseDict(
        {
            "metadata": {"name": name},
            "spec": {
                "selectors": [{"cel": {"expression": expression}} for expression in selectors],
                "config": [{"opaque": dict(opaque)} for opaque in config],
            },
        },
        objects_pb2.DeviceClass(),
    )


def resource_slice(
    name: str,
    driver: str,
    pool: str,
    *devices: DeviceManifest,
    node_name: str = "",
    all_nodes: bool = False,
    node_selector: Mapping[str, Any] | None = None,
    per_device_node_selection: bool = False,
    shared_counters: Iterable[Mapping[str, Any]] = (),
    generation: int = 1,
    slice_count: int = 1,
) -> objects_pb2.ResourceSlice:
    """A ResourceSlice of ``driver``'s ``pool`` (generation ``generation`` of ``slice_count`` slices);
    ``devices`` are names or manifest dicts, ``node_selector`` and ``shared_counters`` manifest dicts.
    Where its devices are is what the keywords say (nothing by default)."""
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool, "generation": generation, "resourceSliceCount": slice_count},
        "devices": [{"name": d} if isinstance(d, str) else dict(d) for d in devices],
        "sharedCounters": [dict(counter_set) for counter_set in shared_counters],
    }
    if node_name:
        spec["nodeName"] = node_name
    if all_nodes:
        spec["allNodes"] = True
    if node_selector is not None:
        spec["nodeSelector"] = dict(node_selector)
    if per_device_node_selection:
        spec["perDeviceNodeSelection"] = True
    return json_format.ParseDict({"metadata": {"name": name}, "spec": spec}, objects_pb2.ResourceSlice())


def device_request(
    name: str,
    device_class_name: str,
    count: int = 1,
    *selectors: str,
    all_devices: bool = False,
    **fields: Any,
) -> dict[str, Any]:
    """A claim's request for ``count`` devices of the class (``all_devices``: allocation mode All), as a
    manifest dict; further ``fields`` of ``exactly`` (adminAccess, tolerations, capacity) in camelCase."""
    exactly: dict[str, Any] = {
        "deviceClassName": device_class_name,
        "allocationMode": "All" if all_devices else "ExactCount",
        "selectors": [{"cel": {"expression": expression}} for expression in selectors],
        **fields,
    }
    if not all_devices:
        exactly["count"] = count
    return {"name": name, "exactly": exactly}


def resource_claim(
    name: str,
    *requests: Mapping[str, Any],
    namespace: str = "",
    constraints: Iterable[Mapping[str, Any]] = (),
    config: Iterable[Mapping[str, Any]] = (),
    allocation: Mapping[str, Any] | None = None,
) -> objects_pb2.ResourceClaim:
    """A ResourceClaim with the manifest dicts ``requests`` (``device_request`` builds them),
    ``constraints`` and ``config``; ``allocation`` is its status.allocation."""
    claim = json_format.ParseDict(
        {
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "devices": {
                    "requests": [dict(request) for request in requests],
                    "constraints": [dict(constraint) for constraint in constraints],
                    "config": [dict(entry) for entry in config],
                }
            },
        },
        objects_pb2.ResourceClaim(),
    )
    if allocation is not None:
        json_format.ParseDict({"allocation": dict(allocation)}, claim.status)
    return claim


def storage_class(
    name: str,
    provisioner: str = "example.com/provisioner",
    *,
    binding_mode: str | None = None,
    reclaim_policy: str | None = None,
    default: bool = False,
    allowed_topologies: Iterable[Mapping[str, Any]] = (),
    parameters: Mapping[str, str] | None = None,
    created: When | None = None,
) -> objects_pb2.StorageClass:
    """A StorageClass of ``provisioner``; ``default`` annotates it as the default class;
    ``allowed_topologies`` are TopologySelectorTerm manifest dicts."""
    sc = objects_pb2.StorageClass(provisioner=provisioner, parameters=parameters or {})
    sc.metadata.name = name
    if binding_mode is not None:
        sc.volume_binding_mode = binding_mode
    if reclaim_policy is not None:
        sc.reclaim_policy = reclaim_policy
    if default:
        sc.metadata.annotations["storageclass.kubernetes.io/is-default-class"] = "true"
    for term in allowed_topologies:
        json_format.ParseDict(dict(term), sc.allowed_topologies.add())
    if created is not None:
        _stamp(sc.metadata.creation_timestamp, created)
    return sc


def persistent_volume(
    name: str,
    *,
    capacity: str = "1Gi",
    access_modes: Iterable[str] = ("ReadWriteOnce",),
    storage_class: str = "",
    spec: Mapping[str, Any] | None = None,
    phase: str = "",
) -> objects_pb2.PersistentVolume:
    """A PersistentVolume of ``capacity`` storage; its source, node affinity and claimRef are ``spec``
    manifest fields (``{"local": {"path": "/mnt"}, "nodeAffinity": {...}}``), keywords applied on top."""
    pv = json_format.ParseDict({"metadata": {"name": name}, "spec": dict(spec or {})},
                               objects_pb2.PersistentVolume())
    pv.spec.capacity["storage"] = capacity
    pv.spec.access_modes[:] = list(access_modes)
    if storage_class:
        pv.spec.storage_class_name = storage_class
    pv.status.phase = phase
    return pv


def persistent_volume_claim(
    name: str,
    namespace: str = "default",
    *,
    storage: str = "1Gi",
    access_modes: Iterable[str] = ("ReadWriteOnce",),
    storage_class: str | None = None,
    volume_name: str = "",
    spec: Mapping[str, Any] | None = None,
    phase: str = "",
    annotations: Mapping[str, str] | None = None,
) -> objects_pb2.PersistentVolumeClaim:
    """A PersistentVolumeClaim requesting ``storage``; ``storage_class`` None leaves the class unset (""
    asks for no class); other spec fields as ``spec`` manifest fields, keywords applied on top."""
    pvc = json_format.ParseDict(
        {"metadata": {"name": name, "namespace": namespace, "annotations": dict(annotations or {})},
         "spec": dict(spec or {})},
        objects_pb2.PersistentVolumeClaim(),
    )
    pvc.spec.resources.requests["storage"] = storage
    pvc.spec.access_modes[:] = list(access_modes)
    if storage_class is not None:
        pvc.spec.storage_class_name = storage_class
    pvc.spec.volume_name = volume_name
    pvc.status.phase = phase
    return pvc


def csi_node(name: str, *drivers: Mapping[str, Any]) -> objects_pb2.CSINode:
    """A CSINode with the CSINodeDriver manifest dicts ``drivers``
    (``{"name": ..., "nodeID": ..., "topologyKeys": [...], "allocatable": {"count": 2}}``)."""
    return json_format.ParseDict(
        {"metadata": {"name": name}, "spec": {"drivers": [dict(driver) for driver in drivers]}},
        objects_pb2.CSINode(),
    )


def csi_driver(name: str, spec: Mapping[str, Any] | None = None) -> objects_pb2.CSIDriver:
    """A CSIDriver with the CSIDriverSpec manifest fields ``spec``."""
    return json_format.ParseDict({"metadata": {"name": name}, "spec": dict(spec or {})},
                                 objects_pb2.CSIDriver())


def csi_storage_capacity(
    name: str,
    storage_class: str,
    *,
    namespace: str = "default",
    capacity: str | None = None,
    maximum_volume_size: str | None = None,
    node_topology: Mapping[str, Any] | None = None,
) -> objects_pb2.CSIStorageCapacity:
    """A CSIStorageCapacity of ``storage_class`` in the segment ``node_topology`` (a LabelSelector
    manifest dict)."""
    capacity_object = objects_pb2.CSIStorageCapacity(storage_class_name=storage_class)
    capacity_object.metadata.name = name
    capacity_object.metadata.namespace = namespace
    if capacity is not None:
        capacity_object.capacity = capacity
    if maximum_volume_size is not None:
        capacity_object.maximum_volume_size = maximum_volume_size
    if node_topology is not None:
        json_format.ParseDict(dict(node_topology), capacity_object.node_topology)
    return capacity_object
