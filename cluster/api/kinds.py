"""The kinds the API serves: one table that ties a Kind's manifest name to its protobuf message, its
storage key prefix, its place in the ``Object`` envelope and the names the CLI accepts for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast

from google.protobuf.message import Message

from cluster.api import apiserver_pb2, objects_pb2
from cluster.api.errors import Invalid

#: The message class of a kind.
M = TypeVar("M", bound=Message)


@dataclass(frozen=True, slots=True)
class Kind(Generic[M]):
    name: str
    api_version: str
    plural: str
    namespaced: bool
    message: type[M]
    #: The field of ``apiserver_pb2.Object``'s oneof that carries this kind.
    envelope_field: str
    short_names: tuple[str, ...] = ()
    #: Other apiVersions whose manifests of this kind the API also takes; an object keeps the one it was
    #: written in.
    also_served: tuple[str, ...] = ()

    @property
    def api_versions(self) -> tuple[str, ...]:
        """Every apiVersion served for this kind, the preferred one first."""
        return (self.api_version, *self.also_served)

    @property
    def group(self) -> str:
        """The API group: "" for the core group ("v1"), else the part of apiVersion before the version."""
        head, _, _ = self.api_version.rpartition("/")
        return head

    @property
    def resource(self) -> str:
        """The group-qualified resource name Kubernetes prints in messages: "pods",
        "priorityclasses.scheduling.k8s.io"."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def key_prefix(self, namespace: str = "") -> str:
        """The store prefix of every object of this kind (in ``namespace``, when given)."""
        if self.namespaced and namespace:
            return f"/registry/{self.plural}/{namespace}/"
        return f"/registry/{self.plural}/"

    def key(self, namespace: str, name: str) -> str:
        if self.namespaced:
            return f"/registry/{self.plural}/{namespace}/{name}"
        return f"/registry/{self.plural}/{name}"


POD = Kind("Pod", "v1", "pods", True, objects_pb2.Pod, "pod", ("po",))
NODE = Kind("Node", "v1", "nodes", False, objects_pb2.Node, "node", ("no",))
PRIORITY_CLASS = Kind(
    "PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", False, objects_pb2.PriorityClass,
    "priority_class", ("pc",),
)
POD_DISRUPTION_BUDGET = Kind(
    "PodDisruptionBudget", "policy/v1", "poddisruptionbudgets", True, objects_pb2.PodDisruptionBudget,
    "pod_disruption_budget", ("pdb",),
)
RESOURCE_QUOTA = Kind(
    "ResourceQuota", "v1", "resourcequotas", True, objects_pb2.ResourceQuota, "resource_quota", ("quota",)
)
#: Upstream's PodGroup and scheduler-plugins' Coscheduling PodGroup: one kind, two spellings.
POD_GROUP = Kind(
    "PodGroup", "scheduling.k8s.io/v1alpha3", "podgroups", True, objects_pb2.PodGroup, "pod_group", ("pg",),
    also_served=("scheduling.x-k8s.io/v1alpha1",),
)
#: scheduling.k8s.io/v1alpha3: the templates a workload controller makes PodGroups from, and a group of
#: PodGroups (or of CompositePodGroups) scheduled together.
WORKLOAD = Kind(
    "Workload", "scheduling.k8s.io/v1alpha3", "workloads", True, objects_pb2.Workload, "workload",
)
COMPOSITE_POD_GROUP = Kind(
    "CompositePodGroup", "scheduling.k8s.io/v1alpha3", "compositepodgroups", True,
    objects_pb2.CompositePodGroup, "composite_pod_group",
)
LEASE = Kind("Lease", "coordination.k8s.io/v1", "leases", True, objects_pb2.Lease, "lease")
#: A contender for a Lease (coordinated leader election's); podsched's scheduler replicas each keep one.
LEASE_CANDIDATE = Kind(
    "LeaseCandidate", "coordination.k8s.io/v1beta1", "leasecandidates", True, objects_pb2.LeaseCandidate,
    "lease_candidate",
)
EVENT = Kind("Event", "v1", "events", True, objects_pb2.Event, "event", ("ev",))
NAMESPACE = Kind("Namespace", "v1", "namespaces", False, objects_pb2.Namespace, "namespace", ("ns",))
#: The label every Namespace carries with its own name (the API server keeps it so).
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
RUNTIME_CLASS = Kind(
    "RuntimeClass", "node.k8s.io/v1", "runtimeclasses", False, objects_pb2.RuntimeClass, "runtime_class"
)
#: Workload kinds podsched keeps only for their selectors (PodTopologySpread's system default spreading).
SERVICE = Kind("Service", "v1", "services", True, objects_pb2.Service, "service", ("svc",))
REPLICA_SET = Kind(
    "ReplicaSet", "apps/v1", "replicasets", True, objects_pb2.ReplicaSet, "replica_set", ("rs",)
)
STATEFUL_SET = Kind(
    "StatefulSet", "apps/v1", "statefulsets", True, objects_pb2.StatefulSet, "stateful_set", ("sts",)
)
REPLICATION_CONTROLLER = Kind(
    "ReplicationController", "v1", "replicationcontrollers", True, objects_pb2.ReplicationController,
    "replication_controller", ("rc",),
)
#: Dynamic Resource Allocation (resource.k8s.io/v1): the devices drivers publish, the classes that name
#: kinds of them, and the claims pods make for them.
DEVICE_CLASS = Kind(
    "DeviceClass", "resource.k8s.io/v1", "deviceclasses", False, objects_pb2.DeviceClass, "device_class"
)
RESOURCE_SLICE = Kind(
    "ResourceSlice", "resource.k8s.io/v1", "resourceslices", False, objects_pb2.ResourceSlice,
    "resource_slice",
)
RESOURCE_CLAIM = Kind(
    "ResourceClaim", "resource.k8s.io/v1", "resourceclaims", True, objects_pb2.ResourceClaim,
    "resource_claim",
)
RESOURCE_CLAIM_TEMPLATE = Kind(
    "ResourceClaimTemplate", "resource.k8s.io/v1", "resourceclaimtemplates", True,
    objects_pb2.ResourceClaimTemplate, "resource_claim_template",
)
#: Storage: the volumes pods claim and what decides where they can be provisioned and attached.
PERSISTENT_VOLUME = Kind(
    "PersistentVolume", "v1", "persistentvolumes", False, objects_pb2.PersistentVolume, "persistent_volume",
    ("pv",),
)
PERSISTENT_VOLUME_CLAIM = Kind(
    "PersistentVolumeClaim", "v1", "persistentvolumeclaims", True, objects_pb2.PersistentVolumeClaim,
    "persistent_volume_claim", ("pvc",),
)
STORAGE_CLASS = Kind(
    "StorageClass", "storage.k8s.io/v1", "storageclasses", False, objects_pb2.StorageClass, "storage_class",
    ("sc",),
)
CSI_NODE = Kind("CSINode", "storage.k8s.io/v1", "csinodes", False, objects_pb2.CSINode, "csi_node")
CSI_DRIVER = Kind("CSIDriver", "storage.k8s.io/v1", "csidrivers", False, objects_pb2.CSIDriver, "csi_driver")
CSI_STORAGE_CAPACITY = Kind(
    "CSIStorageCapacity", "storage.k8s.io/v1", "csistoragecapacities", True, objects_pb2.CSIStorageCapacity,
    "csi_storage_capacity",
)

KINDS: tuple[Kind[Any], ...] = (
    POD, NODE, PRIORITY_CLASS, POD_DISRUPTION_BUDGET, RESOURCE_QUOTA, POD_GROUP, LEASE, EVENT,
    NAMESPACE, RUNTIME_CLASS, WORKLOAD, COMPOSITE_POD_GROUP,
    SERVICE, REPLICA_SET, STATEFUL_SET, REPLICATION_CONTROLLER, LEASE_CANDIDATE,
    DEVICE_CLASS, RESOURCE_SLICE, RESOURCE_CLAIM, RESOURCE_CLAIM_TEMPLATE,
    PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM, STORAGE_CLASS, CSI_NODE, CSI_DRIVER, CSI_STORAGE_CAPACITY,
)

_BY_MESSAGE: dict[type[Message], Kind[Any]] = {kind.message: kind for kind in KINDS}
_BY_ENVELOPE_FIELD: dict[str, Kind[Any]] = {kind.envelope_field: kind for kind in KINDS}
_BY_ANY_NAME: dict[str, Kind[Any]] = {}
for _kind in KINDS:
    for _alias in (_kind.name, _kind.plural, _kind.name.lower(), *_kind.short_names):
        _BY_ANY_NAME[_alias.lower()] = _kind


def kind_by_name(name: str) -> Kind[Any]:
    """The kind named ``name`` as a manifest, kubectl or the API would name it: "Pod", "pods", "po"."""
    kind = _BY_ANY_NAME.get(name.lower())
    if kind is None:
        known = ", ".join(k.name for k in KINDS)
        raise Invalid(f'unknown kind "{name}": podsched serves {known}')
    return kind


def kind_of(obj: Message) -> Kind[Any]:
    """The kind of a protobuf object."""
    kind = _BY_MESSAGE.get(type(obj))
    if kind is None:
        raise Invalid(f"{type(obj).__name__} is not a kind the API serves")
    return kind


class ApiObject(Protocol):
    """What every served kind has besides being a Message: its type meta and metadata."""

    api_version: str
    kind: str

    @property
    def metadata(self) -> objects_pb2.ObjectMeta: ...


def as_api_object(obj: Message) -> ApiObject:
    """An object of a served kind (``kind_of`` refuses any other message) as what every kind has."""
    return cast(ApiObject, obj)


def metadata_of(obj: Message) -> objects_pb2.ObjectMeta:
    """The metadata of an object of a served kind (every one has it)."""
    return as_api_object(obj).metadata


def wrap(obj: Message) -> apiserver_pb2.Object:
    """Put an object in the ``Object`` envelope the RPCs carry."""
    envelope = apiserver_pb2.Object()
    getattr(envelope, kind_of(obj).envelope_field).CopyFrom(obj)
    return envelope


def unwrap(envelope: apiserver_pb2.Object) -> Message:
    """Take the object out of an ``Object`` envelope; an empty envelope is invalid."""
    field = envelope.WhichOneof("object")
    if field is None:
        raise Invalid("the request carries no object")
    obj: Message = getattr(envelope, field)
    return obj


def envelope_kind(envelope: apiserver_pb2.Object) -> Kind[Any]:
    field = envelope.WhichOneof("object")
    if field is None:
        raise Invalid("the request carries no object")
    return _BY_ENVELOPE_FIELD[field]
