"""OpenAPI schemas of the served kinds, generated from objects.proto's descriptors under upstream's
definition names (``io.k8s.api.core.v1.Pod``, ``io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta``): each
field's type and format, ``$ref``s to nested types, maps as ``additionalProperties``, the ``required``
lists of Kubernetes' types, and the list and map extensions (``x-kubernetes-list-type``, patch strategy
and merge key, ``x-kubernetes-map-type``) that patchmeta declares. Plus the few apimachinery types the
paths need (ListMeta, Status, DeleteOptions, Patch, WatchEvent) and the kinds that exist only on the wire
(policy/v1 Eviction, events.k8s.io/v1 Event)."""

from __future__ import annotations

from functools import cache
from typing import Any, cast

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from cluster.api import objects_pb2
from cluster.api.conversion import served_versions
from cluster.api.kinds import KINDS, POD, Kind
from cluster.apiserver.http.patch.patchmeta import (
    field_patch_strategy,
    is_atomic_map,
    is_atomic_struct,
    list_schema,
)

Schema = dict[str, Any]

#: Where a schema's ``$ref`` points in Swagger 2.0; OpenAPI 3 documents retarget it (``retarget``).
V2_REFS = "#/definitions/"
V3_REFS = "#/components/schemas/"

META = "io.k8s.apimachinery.pkg.apis.meta.v1"
TIME = f"{META}.Time"
MICRO_TIME = f"{META}.MicroTime"
LIST_META = f"{META}.ListMeta"
OBJECT_META = f"{META}.ObjectMeta"
STATUS = f"{META}.Status"
DELETE_OPTIONS = f"{META}.DeleteOptions"
PATCH = f"{META}.Patch"
WATCH_EVENT = f"{META}.WatchEvent"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
RAW_EXTENSION = "io.k8s.apimachinery.pkg.runtime.RawExtension"
EVICTION = "io.k8s.api.policy.v1.Eviction"

#: objects.proto's messages that are apimachinery's metav1 types.
_META_MESSAGES = frozenset(
    {"ObjectMeta", "OwnerReference", "LabelSelector", "LabelSelectorRequirement", "Condition"}
)
#: Messages whose upstream name drops the prefix objects.proto adds to keep its names unique.
_UPSTREAM_NAMES = {
    "RuntimeClassOverhead": "Overhead", "RuntimeClassScheduling": "Scheduling",
    # core/v1's name for a container's claim; resource.k8s.io's ResourceClaim lives in another package.
    "ContainerResourceClaim": "ResourceClaim",
}

#: Maps of resource name to quantity (a ResourceList upstream).
_QUANTITY_MAPS = frozenset({
    ("ResourceRequirements", "requests"), ("ResourceRequirements", "limits"), ("PodSpec", "overhead"),
    ("NodeStatus", "capacity"), ("NodeStatus", "allocatable"), ("ResourceQuotaSpec", "hard"),
    ("ResourceQuotaStatus", "hard"), ("ResourceQuotaStatus", "used"), ("PodGroupSpec", "minResources"),
    ("RuntimeClassOverhead", "podFixed"), ("CapacityRequirements", "requests"),
    ("DeviceRequestAllocationResult", "consumedCapacity"),
})
#: String fields (and lists of them) that are a resource.Quantity upstream.
_QUANTITY_FIELDS = frozenset({
    ("DeviceCapacity", "value"), ("Counter", "value"), ("CapacityRequestPolicy", "default"),
    ("CapacityRequestPolicy", "validValues"), ("CapacityRequestPolicyRange", "min"),
    ("CapacityRequestPolicyRange", "max"), ("CapacityRequestPolicyRange", "step"),
    ("NodeAllocatableMapping", "capacityMultiplier"), ("NodeAllocatableMapping", "deviceMultiplier"),
    ("NodeAllocatableOverhead", "perPod"), ("NodeAllocatableOverhead", "perContainer"),
})
#: Opaque JSON objects that are a runtime.RawExtension upstream (a driver's parameters and data).
_RAW_EXTENSIONS = frozenset({("OpaqueDeviceConfiguration", "parameters"), ("AllocatedDeviceStatus", "data")})
#: Timestamps that are metav1.MicroTime upstream (every other one is metav1.Time).
_MICRO_TIMES = frozenset({
    ("LeaseSpec", "acquireTime"), ("LeaseSpec", "renewTime"),
    ("LeaseCandidateSpec", "pingTime"), ("LeaseCandidateSpec", "renewTime"),
})
#: The fields Kubernetes' types mark required (no ``omitempty``, no ``+optional``), by message.
REQUIRED: dict[str, tuple[str, ...]] = {
    "OwnerReference": ("apiVersion", "kind", "name", "uid"),
    "LabelSelectorRequirement": ("key", "operator"),
    "Condition": ("type", "status", "lastTransitionTime", "reason", "message"),
    "NodeSelectorRequirement": ("key", "operator"),
    "NodeSelector": ("nodeSelectorTerms",),
    "PreferredSchedulingTerm": ("weight", "preference"),
    "PodAffinityTerm": ("topologyKey",),
    "WeightedPodAffinityTerm": ("weight", "podAffinityTerm"),
    "TopologySpreadConstraint": ("maxSkew", "topologyKey", "whenUnsatisfiable"),
    "ContainerPort": ("containerPort",),
    "EnvVar": ("name",),
    "Container": ("name",),
    "PodSpec": ("containers",),
    "PodSchedulingGate": ("name",),
    "PodCondition": ("type", "status"),
    "Binding": ("target",),
    "Taint": ("key", "effect"),
    "NodeCondition": ("type", "status"),
    "PriorityClass": ("value",),
    "GangSchedulingPolicy": ("minCount",),
    "WorkloadReference": ("workloadName", "templateName"),
    "PodGroupSpec": ("schedulingPolicy",),
    "TopologyConstraint": ("key",),
    "PodGroupResourceClaim": ("name",),
    "PodGroupResourceClaimStatus": ("name",),
    "TypedLocalObjectReference": ("kind", "name"),
    "PodGroupTemplate": ("name", "schedulingPolicy"),
    "CompositePodGroupTemplate": ("name", "schedulingPolicy"),
    "Workload": ("spec",),
    "CompositePodGroupSpec": ("workloadRef", "schedulingPolicy"),
    "CompositeGangSchedulingPolicy": ("minGroupCount",),
    "CompositePodGroup": ("spec",),
    "WorkloadPodGroupTemplateReference": ("workloadName", "podGroupTemplateName"),
    "ScopedResourceSelectorRequirement": ("scopeName", "operator"),
    "LeaseCandidateSpec": ("leaseName", "binaryVersion", "strategy"),
    "Event": ("metadata", "involvedObject"),
    "RuntimeClass": ("handler",),
    "ServicePort": ("port",),
    "ReplicaSetSpec": ("selector",),
    "StatefulSetSpec": ("selector", "template"),
    "ContainerResourceClaim": ("name",),
    "PodResourceClaim": ("name",),
    "PodResourceClaimStatus": ("name",),
    "ContainerExtendedResourceRequest": ("containerName", "resourceName", "requestName"),
    "PodExtendedResourceClaimStatus": ("requestMappings", "resourceClaimName"),
    "CELDeviceSelector": ("expression",),
    "OpaqueDeviceConfiguration": ("driver", "parameters"),
    "ResourcePool": ("name", "generation", "resourceSliceCount"),
    "DeviceCapacity": ("value",),
    "Counter": ("value",),
    "CounterSet": ("name",),
    "DeviceCounterConsumption": ("counterSet",),
    "DeviceTaint": ("key", "effect"),
    "Device": ("name",),
    "ResourceSliceSpec": ("driver", "pool"),
    "ResourceSlice": ("spec",),
    "ExactDeviceRequest": ("deviceClassName",),
    "DeviceSubRequest": ("name", "deviceClassName"),
    "DeviceRequest": ("name",),
    "ResourceClaimConsumerReference": ("resource", "name", "uid"),
    "DeviceRequestAllocationResult": ("request", "driver", "pool", "device"),
    "DeviceAllocationConfiguration": ("source",),
    "AllocatedDeviceStatus": ("driver", "pool", "device"),
}

_INTEGER_FORMATS = {
    FieldDescriptor.TYPE_INT32: "int32", FieldDescriptor.TYPE_SINT32: "int32",
    FieldDescriptor.TYPE_SFIXED32: "int32", FieldDescriptor.TYPE_UINT32: "int32",
    FieldDescriptor.TYPE_FIXED32: "int32", FieldDescriptor.TYPE_INT64: "int64",
    FieldDescriptor.TYPE_SINT64: "int64", FieldDescriptor.TYPE_SFIXED64: "int64",
    FieldDescriptor.TYPE_UINT64: "int64", FieldDescriptor.TYPE_FIXED64: "int64",
}


def package_of(api_version: str) -> str:
    """The package upstream's definition names use for an apiVersion: "io.k8s.api.core.v1" for "v1",
    "io.k8s.api.scheduling.v1" for "scheduling.k8s.io/v1", the reversed group for others' groups (as
    a CustomResourceDefinition's are named): "io.x-k8s.scheduling.v1alpha1"."""
    group, _, version = api_version.rpartition("/")
    if not group:
        return f"io.k8s.api.core.{version}"
    if "." not in group:
        return f"io.k8s.api.{group}.{version}"
    if group.endswith(".k8s.io"):
        return f"io.k8s.api.{group.split('.')[0]}.{version}"
    return ".".join(reversed(group.split("."))) + f".{version}"


def descriptor(message: type[Message]) -> Descriptor:
    """A message class's descriptor (the generated stubs type it loosely)."""
    return cast(Descriptor, message.DESCRIPTOR)


def gvk(api_version: str, kind: str) -> dict[str, str]:
    group, _, version = api_version.rpartition("/")
    return {"group": group, "kind": kind, "version": version}


def _nested(message: Descriptor) -> list[Descriptor]:
    """The messages of this package a message's fields hold (a map's values included)."""
    nested = []
    for field in message.fields:
        target = field.message_type
        if target is not None and target.GetOptions().map_entry:
            target = target.fields_by_name["value"].message_type
        if target is not None and target.file.package == objects_pb2.DESCRIPTOR.package:
            nested.append(target)
    return nested


@cache
def _homes() -> dict[str, Kind]:
    """Each message's kind: the first kind that holds it, core kinds first, names it in its package (so
    PodTemplateSpec is core's, as upstream's, though apps' ReplicaSet holds it too)."""
    homes: dict[str, Kind] = {descriptor(objects_pb2.Binding).full_name: POD}
    for kind in sorted(KINDS, key=lambda k: k.group != ""):
        pending = [kind.message.DESCRIPTOR]
        while pending:
            message = pending.pop()
            if message.full_name in homes:
                continue
            homes[message.full_name] = kind
            pending.extend(m for m in _nested(message) if m.full_name not in homes)
    return homes


def definition_name(message: Descriptor, served_as: str) -> str:
    """The definition name of a message of objects.proto within an object of apiVersion ``served_as``:
    a kind's own types are named in the package of the version being described."""
    upstream = _UPSTREAM_NAMES.get(message.name, message.name)
    if message.name in _META_MESSAGES:
        return f"{META}.{upstream}"
    home = _homes().get(message.full_name)
    if home is None:  # a message of a version served by conversion, described only in that version
        return f"{package_of(served_as)}.{upstream}"
    api_version = served_as if served_as in served_versions(home) else home.api_version
    return f"{package_of(api_version)}.{upstream}"


class SchemaBuilder:
    """Collects definitions (with Swagger 2.0 ``$ref``s) as kinds and messages are added."""

    def __init__(self) -> None:
        self.definitions: dict[str, Schema] = dict(_fixed_definitions())

    def kind(self, kind: Kind, api_version: str, shape: type[Message] | None = None) -> str:
        """Add a kind (with its List) as served in ``api_version``, in the message ``shape`` (the kind's
        own by default; a version served by conversion has its own); returns the kind's definition name."""
        name = self.top_level(descriptor(shape or kind.message), api_version, kind.name)
        self.add_list(name, api_version, kind.name)
        return name

    def top_level(self, message: Descriptor, api_version: str, kind: str) -> str:
        """Add a message that is a kind of its own (a Kind, a subresource's Binding)."""
        name = self.message(message, api_version)
        self.definitions[name]["x-kubernetes-group-version-kind"] = [gvk(api_version, kind)]
        return name

    def subresource_body(self, kind: str) -> str:
        """The definition of what a subresource that is not the parent's status takes: a pod's Binding
        or Eviction."""
        if kind == "Eviction":
            return EVICTION
        return self.top_level(descriptor(objects_pb2.Binding), "v1", kind)

    def add_list(self, item: str, api_version: str, kind: str) -> str:
        name = f"{item}List"
        self.definitions[name] = {
            "type": "object",
            "required": ["items"],
            "properties": {
                "apiVersion": {"type": "string"},
                "items": {"type": "array", "items": ref(item)},
                "kind": {"type": "string"},
                "metadata": ref(LIST_META),
            },
            "x-kubernetes-group-version-kind": [gvk(api_version, f"{kind}List")],
        }
        return name

    def message(self, message: Descriptor, served_as: str) -> str:
        """Add a message's definition (and its nested messages'); returns its name."""
        name = definition_name(message, served_as)
        if name in self.definitions:
            return name
        schema: Schema = {"type": "object"}
        self.definitions[name] = schema
        required = REQUIRED.get(message.name)
        if required:
            schema["required"] = list(required)
        schema["properties"] = {f.json_name: self._field(message, f, served_as) for f in message.fields}
        if is_atomic_struct(message):
            schema["x-kubernetes-map-type"] = "atomic"
        return name

    def _field(self, message: Descriptor, field: FieldDescriptor, served_as: str) -> Schema:
        json_name = field.json_name
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            value = field.message_type.fields_by_name["value"]
            quantity = (message.name, json_name) in _QUANTITY_MAPS
            values = ref(QUANTITY) if quantity else self._single(message, value, served_as)
            schema: Schema = {"type": "object", "additionalProperties": values}
            if is_atomic_map(message, json_name):
                schema["x-kubernetes-map-type"] = "atomic"
            return schema
        if field.is_repeated:
            schema = {"type": "array", "items": self._single(message, field, served_as)}
            merge = list_schema(message, json_name)
            if merge.map_keys:
                schema["x-kubernetes-list-map-keys"] = list(merge.map_keys)
            schema["x-kubernetes-list-type"] = merge.list_type
            if merge.merge_key:
                schema["x-kubernetes-patch-merge-key"] = merge.merge_key
            if merge.patch_strategy:
                schema["x-kubernetes-patch-strategy"] = merge.patch_strategy
            return schema
        schema = self._single(message, field, served_as)
        strategy = field_patch_strategy(message, json_name)
        if strategy:
            schema = {**schema, "x-kubernetes-patch-strategy": strategy}
        return schema

    def _single(self, message: Descriptor, field: FieldDescriptor, served_as: str) -> Schema:
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            target = field.message_type
            assert target is not None, "a message field has a message type"
            if target.full_name == "google.protobuf.Timestamp":
                return ref(MICRO_TIME if (message.name, field.json_name) in _MICRO_TIMES else TIME)
            if target.full_name == "google.protobuf.Value":
                return ref(INT_OR_STRING)
            if target.full_name == "google.protobuf.Struct":
                if (message.name, field.json_name) in _RAW_EXTENSIONS:
                    return ref(RAW_EXTENSION)
                return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            return ref(self.message(target, served_as))
        if (message.name, field.json_name) in _QUANTITY_FIELDS:
            return ref(QUANTITY)
        if field.type in _INTEGER_FORMATS:
            return {"type": "integer", "format": _INTEGER_FORMATS[field.type]}
        if field.type == FieldDescriptor.TYPE_DOUBLE:
            return {"type": "number", "format": "double"}
        if field.type == FieldDescriptor.TYPE_FLOAT:
            return {"type": "number", "format": "float"}
        if field.type == FieldDescriptor.TYPE_BOOL:
            return {"type": "boolean"}
        if field.type == FieldDescriptor.TYPE_BYTES:
            return {"type": "string", "format": "byte"}
        return {"type": "string"}  # strings and enums (by name)


def ref(name: str) -> Schema:
    return {"$ref": f"{V2_REFS}{name}"}


def retarget(value: Any) -> Any:
    """A copy of a Swagger 2.0 schema (or any part of a document) with its ``$ref``s pointing into an
    OpenAPI 3 document's components."""
    if isinstance(value, dict):
        return {
            key: (V3_REFS + item[len(V2_REFS):] if key == "$ref" else retarget(item))
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [retarget(item) for item in value]
    return value


#: Types OpenAPI 3 describes better than Swagger 2.0 can: a Quantity's JSON is a string or a number.
_V3_SCHEMAS: dict[str, Schema] = {QUANTITY: {"oneOf": [{"type": "string"}, {"type": "number"}]}}


def v3_schemas(definitions: dict[str, Schema]) -> dict[str, Schema]:
    """Swagger 2.0 definitions as an OpenAPI 3 document's component schemas."""
    return {name: _V3_SCHEMAS.get(name) or retarget(schema) for name, schema in definitions.items()}


def refs_of(value: Any) -> set[str]:
    """The definition names a schema (or any part of a document) refers to, directly."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "$ref" and isinstance(item, str):
                found.add(item.rpartition("/")[2])
            else:
                found |= refs_of(item)
    elif isinstance(value, list):
        for item in value:
            found |= refs_of(item)
    return found


def closure(definitions: dict[str, Schema], roots: set[str]) -> dict[str, Schema]:
    """The definitions ``roots`` need, themselves included, by name."""
    needed: set[str] = set()
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in needed:
            continue
        needed.add(name)
        pending.extend(refs_of(definitions[name]) - needed)
    return {name: definitions[name] for name in sorted(needed)}


_STRING: Schema = {"type": "string"}
_INT32: Schema = {"type": "integer", "format": "int32"}
_INT64: Schema = {"type": "integer", "format": "int64"}
_BOOLEAN: Schema = {"type": "boolean"}


def _fixed_definitions() -> dict[str, Schema]:
    """The apimachinery types objects.proto has no message for, as upstream defines them."""
    return {
        TIME: {"type": "string", "format": "date-time"},
        MICRO_TIME: {"type": "string", "format": "date-time"},
        QUANTITY: {"type": "string"},
        INT_OR_STRING: {"type": "string", "format": "int-or-string"},
        RAW_EXTENSION: {"type": "object"},
        PATCH: {"type": "object"},
        LIST_META: {"type": "object", "properties": {
            "continue": _STRING, "remainingItemCount": _INT64, "resourceVersion": _STRING,
            "selfLink": _STRING,
        }},
        f"{META}.StatusCause": {"type": "object", "properties": {
            "field": _STRING, "message": _STRING, "reason": _STRING,
        }},
        f"{META}.StatusDetails": {"type": "object", "properties": {
            "causes": {
                "type": "array", "items": ref(f"{META}.StatusCause"), "x-kubernetes-list-type": "atomic",
            },
            "group": _STRING, "kind": _STRING, "name": _STRING, "retryAfterSeconds": _INT32, "uid": _STRING,
        }},
        STATUS: {"type": "object", "properties": {
            "apiVersion": _STRING, "code": _INT32, "details": ref(f"{META}.StatusDetails"), "kind": _STRING,
            "message": _STRING, "metadata": ref(LIST_META), "reason": _STRING, "status": _STRING,
        }, "x-kubernetes-group-version-kind": [gvk("v1", "Status")]},
        f"{META}.Preconditions": {"type": "object", "properties": {
            "resourceVersion": _STRING, "uid": _STRING,
        }},
        DELETE_OPTIONS: {"type": "object", "properties": {
            "apiVersion": _STRING,
            "dryRun": {"type": "array", "items": _STRING, "x-kubernetes-list-type": "atomic"},
            "gracePeriodSeconds": _INT64,
            "ignoreStoreReadErrorWithClusterBreakingPotential": _BOOLEAN,
            "kind": _STRING,
            "orphanDependents": _BOOLEAN,
            "preconditions": ref(f"{META}.Preconditions"),
            "propagationPolicy": _STRING,
        }},
        WATCH_EVENT: {"type": "object", "required": ["type", "object"], "properties": {
            "object": ref(RAW_EXTENSION), "type": _STRING,
        }},
        EVICTION: {"type": "object", "properties": {
            "apiVersion": _STRING, "deleteOptions": ref(DELETE_OPTIONS), "kind": _STRING,
            "metadata": ref(OBJECT_META),
        }, "x-kubernetes-group-version-kind": [gvk("policy/v1", "Eviction")]},
    }


def add_events_v1(builder: SchemaBuilder) -> str:
    """events.k8s.io/v1 Event, which objects.proto keeps as a core Event: its own field names, the
    shared references and source as core's. Returns the kind's definition name."""
    package = package_of("events.k8s.io/v1")
    reference = ref(builder.message(descriptor(objects_pb2.ObjectReference), "v1"))
    source = ref(builder.message(descriptor(objects_pb2.EventSource), "v1"))
    builder.definitions[f"{package}.EventSeries"] = {
        "type": "object",
        "required": ["count", "lastObservedTime"],
        "properties": {"count": _INT32, "lastObservedTime": ref(MICRO_TIME)},
    }
    name = f"{package}.Event"
    builder.definitions[name] = {
        "type": "object",
        "required": ["eventTime"],
        "properties": {
            "action": _STRING, "apiVersion": _STRING, "deprecatedCount": _INT32,
            "deprecatedFirstTimestamp": ref(TIME), "deprecatedLastTimestamp": ref(TIME),
            "deprecatedSource": source, "eventTime": ref(MICRO_TIME), "kind": _STRING,
            "metadata": ref(OBJECT_META), "note": _STRING, "reason": _STRING, "regarding": reference,
            "related": reference, "reportingController": _STRING, "reportingInstance": _STRING,
            "series": ref(f"{package}.EventSeries"), "type": _STRING,
        },
        "x-kubernetes-group-version-kind": [gvk("events.k8s.io/v1", "Event")],
    }
    builder.add_list(name, "events.k8s.io/v1", "Event")
    return name
