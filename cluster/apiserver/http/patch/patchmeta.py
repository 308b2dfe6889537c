"""The list and map schema of every served kind's messages, as the tags of Kubernetes' types.go declare it
(k8s.io/api, k8s.io/apimachinery's metav1): how a repeated field merges (``+listType``, ``+listMapKey``,
``patchStrategy``, ``patchMergeKey``), which maps and structs are atomic (``+mapType=atomic``,
``+structType=atomic``), and the few singular fields with a patch strategy of their own.

Strategic merge patch reads ``patch_strategy`` and ``merge_key`` (a list without a strategy is replaced
whole, whatever its listType); server-side apply reads ``list_type``, ``map_keys`` and atomicity. Every
repeated field of objects.proto is declared here, so a new one is a decision, not a silent default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from cluster.api import objects_pb2, scheduling_v1alpha2_pb2


@dataclass(frozen=True, slots=True)
class ListSchema:
    """How one repeated field merges."""

    list_type: str  # "atomic" | "set" | "map"
    map_keys: tuple[str, ...] = ()
    patch_strategy: str = ""  # "" | "merge" | "replace" | "retainKeys" | "merge,retainKeys"
    merge_key: str = ""


ATOMIC = ListSchema("atomic")


def _merged_map(*keys: str) -> ListSchema:
    """A list map whose strategic merge key is its first map key, as upstream's conditions, containers
    and ports are."""
    return ListSchema("map", keys, "merge", keys[0])


_BY_NAME = _merged_map("name")
_BY_TYPE = _merged_map("type")
#: A pod's claims and their statuses: merged by name, and a patch's entry replaces the stored one's
#: one-of fields (resourceClaimName / resourceClaimTemplateName) rather than adding to them.
_RETAINED_BY_NAME = ListSchema("map", ("name",), "merge,retainKeys", "name")

#: message name → repeated field's JSON name → its schema.
LISTS: Mapping[str, Mapping[str, ListSchema]] = {
    "ObjectMeta": {"ownerReferences": _merged_map("uid"), "managedFields": ATOMIC},
    "LabelSelectorRequirement": {"values": ATOMIC},
    "LabelSelector": {"matchExpressions": ATOMIC},
    "NodeSelectorRequirement": {"values": ATOMIC},
    "NodeSelectorTerm": {"matchExpressions": ATOMIC, "matchFields": ATOMIC},
    "NodeSelector": {"nodeSelectorTerms": ATOMIC},
    "NodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": ATOMIC},
    "PodAffinityTerm": {"namespaces": ATOMIC, "matchLabelKeys": ATOMIC, "mismatchLabelKeys": ATOMIC},
    "PodAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": ATOMIC,
        "preferredDuringSchedulingIgnoredDuringExecution": ATOMIC,
    },
    "PodAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": ATOMIC,
        "preferredDuringSchedulingIgnoredDuringExecution": ATOMIC,
    },
    "TopologySpreadConstraint": {"matchLabelKeys": ATOMIC},
    "DeleteOptions": {"dryRun": ATOMIC},
    "Container": {
        "command": ATOMIC,
        "args": ATOMIC,
        "env": _BY_NAME,
        "ports": _merged_map("containerPort", "protocol"),
        "volumeMounts": _merged_map("mountPath"),
        "volumeDevices": _merged_map("devicePath"),
    },
    "PodSpec": {
        "tolerations": ATOMIC,
        "resourceClaims": _RETAINED_BY_NAME,
        "topologySpreadConstraints": _merged_map("topologyKey", "whenUnsatisfiable"),
        "containers": _BY_NAME,
        "initContainers": _BY_NAME,
        "schedulingGates": _BY_NAME,
        "volumes": _RETAINED_BY_NAME,
    },
    "PodStatus": {"conditions": _BY_TYPE, "resourceClaimStatuses": _RETAINED_BY_NAME},
    "ResourceRequirements": {"claims": ListSchema("map", ("name",))},
    "PodExtendedResourceClaimStatus": {"requestMappings": ATOMIC},
    "NodeSpec": {"taints": ATOMIC},
    "NodeStatus": {"conditions": _BY_TYPE, "images": ATOMIC},
    "ContainerImage": {"names": ATOMIC},
    "PodGroupStatus": {"conditions": _BY_TYPE, "resourceClaimStatuses": _RETAINED_BY_NAME},
    "PodGroupSpec": {"resourceClaims": _RETAINED_BY_NAME},
    "PodGroupSchedulingConstraints": {"topology": ATOMIC},
    "PodGroupTemplate": {"resourceClaims": _RETAINED_BY_NAME},
    "CompositePodGroupTemplate": {
        "podGroupTemplates": ListSchema("map", ("name",)),
        "compositePodGroupTemplates": ListSchema("map", ("name",)),
    },
    "WorkloadSpec": {
        "podGroupTemplates": ListSchema("map", ("name",)),
        "compositePodGroupTemplates": ListSchema("map", ("name",)),
    },
    "CompositePodGroupStatus": {"conditions": _BY_TYPE},
    "ScopedResourceSelectorRequirement": {"values": ATOMIC},
    "ScopeSelector": {"matchExpressions": ATOMIC},
    "ResourceQuotaSpec": {"scopes": ATOMIC},
    "NamespaceSpec": {"finalizers": ATOMIC},
    "RuntimeClassScheduling": {"tolerations": ATOMIC},
    "ServiceSpec": {"ports": _merged_map("port", "protocol"), "clusterIPs": ATOMIC},
    # resource.k8s.io/v1: every list atomic but a claim's consumers and its devices' statuses.
    "DeviceClassSpec": {"selectors": ATOMIC, "config": ATOMIC},
    "DeviceAttribute": {"ints": ATOMIC, "bools": ATOMIC, "strings": ATOMIC, "versions": ATOMIC},
    "CapacityRequestPolicy": {"validValues": ATOMIC},
    "Device": {
        "consumesCounters": ATOMIC, "taints": ATOMIC, "bindingConditions": ATOMIC,
        "bindingFailureConditions": ATOMIC,
    },
    "ResourceSliceSpec": {
        "devices": ATOMIC, "sharedCounters": ATOMIC, "skipNodeOperations": ListSchema("set"),
    },
    "ExactDeviceRequest": {"selectors": ATOMIC, "tolerations": ATOMIC},
    "DeviceSubRequest": {"selectors": ATOMIC, "tolerations": ATOMIC},
    "DeviceRequest": {"firstAvailable": ATOMIC},
    "DeviceConstraint": {"requests": ATOMIC},
    "DeviceClaimConfiguration": {"requests": ATOMIC},
    "DeviceClaim": {"requests": ATOMIC, "constraints": ATOMIC, "config": ATOMIC},
    "DeviceRequestAllocationResult": {
        "tolerations": ATOMIC, "bindingConditions": ATOMIC, "bindingFailureConditions": ATOMIC,
        "skipNodeOperations": ListSchema("set"),
    },
    "DeviceAllocationConfiguration": {"requests": ATOMIC},
    "DeviceAllocationResult": {"results": ATOMIC, "config": ATOMIC},
    "NetworkDeviceData": {"ips": ATOMIC},
    "AllocatedDeviceStatus": {"conditions": ListSchema("map", ("type",))},
    "ResourceClaimStatus": {
        "reservedFor": _merged_map("uid"),
        "devices": ListSchema("map", ("driver", "device", "pool", "shareID")),
    },
    # core/v1 volumes and storage.k8s.io/v1.
    "ISCSIVolumeSource": {"portals": ATOMIC},
    "RBDVolumeSource": {"monitors": ATOMIC},
    "PersistentVolumeClaimSpec": {"accessModes": ATOMIC},
    "PersistentVolumeClaimStatus": {"accessModes": ATOMIC, "conditions": _BY_TYPE},
    "PersistentVolumeSpec": {"accessModes": ATOMIC, "mountOptions": ATOMIC},
    "TopologySelectorLabelRequirement": {"values": ATOMIC},
    "TopologySelectorTerm": {"matchLabelExpressions": ATOMIC},
    "StorageClass": {"mountOptions": ATOMIC, "allowedTopologies": ATOMIC},
    "CSINodeDriver": {"topologyKeys": ATOMIC},
    "CSINodeSpec": {"drivers": _BY_NAME},
    "CSIDriverSpec": {"volumeLifecycleModes": ListSchema("set"), "tokenRequests": ATOMIC},
}

#: Maps that server-side apply replaces whole (``+mapType=atomic``); every other map merges key by key.
ATOMIC_MAPS: Mapping[str, frozenset[str]] = {
    "PodSpec": frozenset({"nodeSelector"}),
    "RuntimeClassScheduling": frozenset({"nodeSelector"}),
    "ServiceSpec": frozenset({"selector"}),
    "ReplicationControllerSpec": frozenset({"selector"}),
}

#: Messages that server-side apply treats as one value (``+structType=atomic``).
ATOMIC_STRUCTS = frozenset(
    {
        "LabelSelector",
        "NodeSelector",
        "NodeSelectorTerm",
        "ScopeSelector",
        "ObjectReference",
        "OwnerReference",
    }
)

#: Singular (struct) fields with a strategic patch strategy of their own: a PodDisruptionBudget's selector
#: is replaced whole by a strategic merge patch.
FIELD_STRATEGIES: Mapping[str, Mapping[str, str]] = {
    "PodDisruptionBudgetSpec": {"selector": "replace"},
}

#: objects.proto's package, and that of the versions served by conversion, whose messages carry the names
#: (and so the tags) of the stored version's.
_PACKAGES = frozenset({objects_pb2.DESCRIPTOR.package, scheduling_v1alpha2_pb2.DESCRIPTOR.package})


def _own(message: Descriptor) -> str | None:
    """The message's name in the tables above, or None for a message of another package."""
    if message.file.package not in _PACKAGES:
        return None
    return message.name


def list_schema(message: Descriptor, json_name: str) -> ListSchema:
    """The schema of the repeated field ``json_name`` of ``message``; atomic when nothing is declared."""
    name = _own(message)
    if name is None:
        return ATOMIC
    return LISTS.get(name, {}).get(json_name, ATOMIC)


def is_atomic_map(message: Descriptor, json_name: str) -> bool:
    """Whether the map field ``json_name`` of ``message`` is ``+mapType=atomic``."""
    name = _own(message)
    return name is not None and json_name in ATOMIC_MAPS.get(name, frozenset())


def is_atomic_struct(message: Descriptor) -> bool:
    """Whether ``message`` is ``+structType=atomic``."""
    return _own(message) in ATOMIC_STRUCTS


def field_patch_strategy(message: Descriptor, json_name: str) -> str:
    """The strategic patch strategy of the singular field ``json_name`` of ``message`` ("" for none)."""
    name = _own(message)
    if name is None:
        return ""
    return FIELD_STRATEGIES.get(name, {}).get(json_name, "")


def field_by_json_name(message: Descriptor, json_name: str) -> FieldDescriptor | None:
    """The field of ``message`` that Kubernetes JSON calls ``json_name``, or None."""
    return _fields_by_json_name(message).get(json_name)


@cache
def _fields_by_json_name(message: Descriptor) -> dict[str, FieldDescriptor]:
    return {field.json_name: field for field in message.fields}
