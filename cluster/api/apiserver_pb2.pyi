from cluster.api import objects_pb2 as _objects_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Object(_message.Message):
    __slots__ = ("pod", "node", "priority_class", "pod_disruption_budget", "lease", "event", "resource_quota", "pod_group", "namespace", "runtime_class", "service", "replica_set", "stateful_set", "replication_controller", "lease_candidate", "device_class", "resource_slice", "resource_claim", "resource_claim_template", "workload", "composite_pod_group", "persistent_volume", "persistent_volume_claim", "storage_class", "csi_node", "csi_driver", "csi_storage_capacity")
    POD_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_CLASS_FIELD_NUMBER: _ClassVar[int]
    POD_DISRUPTION_BUDGET_FIELD_NUMBER: _ClassVar[int]
    LEASE_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_QUOTA_FIELD_NUMBER: _ClassVar[int]
    POD_GROUP_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    RUNTIME_CLASS_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    REPLICA_SET_FIELD_NUMBER: _ClassVar[int]
    STATEFUL_SET_FIELD_NUMBER: _ClassVar[int]
    REPLICATION_CONTROLLER_FIELD_NUMBER: _ClassVar[int]
    LEASE_CANDIDATE_FIELD_NUMBER: _ClassVar[int]
    DEVICE_CLASS_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_SLICE_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_CLAIM_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_CLAIM_TEMPLATE_FIELD_NUMBER: _ClassVar[int]
    WORKLOAD_FIELD_NUMBER: _ClassVar[int]
    COMPOSITE_POD_GROUP_FIELD_NUMBER: _ClassVar[int]
    PERSISTENT_VOLUME_FIELD_NUMBER: _ClassVar[int]
    PERSISTENT_VOLUME_CLAIM_FIELD_NUMBER: _ClassVar[int]
    STORAGE_CLASS_FIELD_NUMBER: _ClassVar[int]
    CSI_NODE_FIELD_NUMBER: _ClassVar[int]
    CSI_DRIVER_FIELD_NUMBER: _ClassVar[int]
    CSI_STORAGE_CAPACITY_FIELD_NUMBER: _ClassVar[int]
    pod: _objects_pb2.Pod
    node: _objects_pb2.Node
    priority_class: _objects_pb2.PriorityClass
    pod_disruption_budget: _objects_pb2.PodDisruptionBudget
    lease: _objects_pb2.Lease
    event: _objects_pb2.Event
    resource_quota: _objects_pb2.ResourceQuota
    pod_group: _objects_pb2.PodGroup
    namespace: _objects_pb2.Namespace
    runtime_class: _objects_pb2.RuntimeClass
    service: _objects_pb2.Service
    replica_set: _objects_pb2.ReplicaSet
    stateful_set: _objects_pb2.StatefulSet
    replication_controller: _objects_pb2.ReplicationController
    lease_candidate: _objects_pb2.LeaseCandidate
    device_class: _objects_pb2.DeviceClass
    resource_slice: _objects_pb2.ResourceSlice
    resource_claim: _objects_pb2.ResourceClaim
    resource_claim_template: _objects_pb2.ResourceClaimTemplate
    workload: _objects_pb2.Workload
    composite_pod_group: _objects_pb2.CompositePodGroup
    persistent_volume: _objects_pb2.PersistentVolume
    persistent_volume_claim: _objects_pb2.PersistentVolumeClaim
    storage_class: _objects_pb2.StorageClass
    csi_node: _objects_pb2.CSINode
    csi_driver: _objects_pb2.CSIDriver
    csi_storage_capacity: _objects_pb2.CSIStorageCapacity
    def __init__(self, pod: _Optional[_Union[_objects_pb2.Pod, _Mapping]] = ..., node: _Optional[_Union[_objects_pb2.Node, _Mapping]] = ..., priority_class: _Optional[_Union[_objects_pb2.PriorityClass, _Mapping]] = ..., pod_disruption_budget: _Optional[_Union[_objects_pb2.PodDisruptionBudget, _Mapping]] = ..., lease: _Optional[_Union[_objects_pb2.Lease, _Mapping]] = ..., event: _Optional[_Union[_objects_pb2.Event, _Mapping]] = ..., resource_quota: _Optional[_Union[_objects_pb2.ResourceQuota, _Mapping]] = ..., pod_group: _Optional[_Union[_objects_pb2.PodGroup, _Mapping]] = ..., namespace: _Optional[_Union[_objects_pb2.Namespace, _Mapping]] = ..., runtime_class: _Optional[_Union[_objects_pb2.RuntimeClass, _Mapping]] = ..., service: _Optional[_Union[_objects_pb2.Service, _Mapping]] = ..., replica_set: _Optional[_Union[_objects_pb2.ReplicaSet, _Mapping]] = ..., stateful_set: _Optional[_Union[_objects_pb2.StatefulSet, _Mapping]] = ..., replication_controller: _Optional[_Union[_objects_pb2.ReplicationController, _Mapping]] = ..., lease_candidate: _Optional[_Union[_objects_pb2.LeaseCandidate, _Mapping]] = ..., device_class: _Optional[_Union[_objects_pb2.DeviceClass, _Mapping]] = ..., resource_slice: _Optional[_Union[_objects_pb2.ResourceSlice, _Mapping]] = ..., resource_claim: _Optional[_Union[_objects_pb2.ResourceClaim, _Mapping]] = ..., resource_claim_template: _Optional[_Union[_objects_pb2.ResourceClaimTemplate, _Mapping]] = ..., workload: _Optional[_Union[_objects_pb2.Workload, _Mapping]] = ..., composite_pod_group: _Optional[_Union[_objects_pb2.CompositePodGroup, _Mapping]] = ..., persistent_volume: _Optional[_Union[_objects_pb2.PersistentVolume, _Mapping]] = ..., persistent_volume_claim: _Optional[_Union[_objects_pb2.PersistentVolumeClaim, _Mapping]] = ..., storage_class: _Optional[_Union[_objects_pb2.StorageClass, _Mapping]] = ..., csi_node: _Optional[_Union[_objects_pb2.CSINode, _Mapping]] = ..., csi_driver: _Optional[_Union[_objects_pb2.CSIDriver, _Mapping]] = ..., csi_storage_capacity: _Optional[_Union[_objects_pb2.CSIStorageCapacity, _Mapping]] = ...) -> None: ...

class CreateRequest(_message.Message):
    __slots__ = ("object", "dry_run", "fence")
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    FENCE_FIELD_NUMBER: _ClassVar[int]
    object: Object
    dry_run: bool
    fence: Fence
    def __init__(self, object: _Optional[_Union[Object, _Mapping]] = ..., dry_run: _Optional[bool] = ..., fence: _Optional[_Union[Fence, _Mapping]] = ...) -> None: ...

class GetRequest(_message.Message):
    __slots__ = ("kind", "namespace", "name")
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    kind: str
    namespace: str
    name: str
    def __init__(self, kind: _Optional[str] = ..., namespace: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class Fence(_message.Message):
    __slots__ = ("lease_namespace", "lease_name", "holder_identity", "token")
    LEASE_NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    LEASE_NAME_FIELD_NUMBER: _ClassVar[int]
    HOLDER_IDENTITY_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    lease_namespace: str
    lease_name: str
    holder_identity: str
    token: int
    def __init__(self, lease_namespace: _Optional[str] = ..., lease_name: _Optional[str] = ..., holder_identity: _Optional[str] = ..., token: _Optional[int] = ...) -> None: ...

class UpdateRequest(_message.Message):
    __slots__ = ("object", "dry_run", "fence")
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    FENCE_FIELD_NUMBER: _ClassVar[int]
    object: Object
    dry_run: bool
    fence: Fence
    def __init__(self, object: _Optional[_Union[Object, _Mapping]] = ..., dry_run: _Optional[bool] = ..., fence: _Optional[_Union[Fence, _Mapping]] = ...) -> None: ...

class DeleteRequest(_message.Message):
    __slots__ = ("kind", "namespace", "name", "grace_period_seconds", "resource_version", "dry_run", "fence")
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    GRACE_PERIOD_SECONDS_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    FENCE_FIELD_NUMBER: _ClassVar[int]
    kind: str
    namespace: str
    name: str
    grace_period_seconds: int
    resource_version: str
    dry_run: bool
    fence: Fence
    def __init__(self, kind: _Optional[str] = ..., namespace: _Optional[str] = ..., name: _Optional[str] = ..., grace_period_seconds: _Optional[int] = ..., resource_version: _Optional[str] = ..., dry_run: _Optional[bool] = ..., fence: _Optional[_Union[Fence, _Mapping]] = ...) -> None: ...

class ListRequest(_message.Message):
    __slots__ = ("kind", "namespace", "label_selector", "field_selector", "limit", "continue_token")
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    LABEL_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    FIELD_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CONTINUE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    kind: str
    namespace: str
    label_selector: str
    field_selector: str
    limit: int
    continue_token: str
    def __init__(self, kind: _Optional[str] = ..., namespace: _Optional[str] = ..., label_selector: _Optional[str] = ..., field_selector: _Optional[str] = ..., limit: _Optional[int] = ..., continue_token: _Optional[str] = ...) -> None: ...

class ListResponse(_message.Message):
    __slots__ = ("items", "resource_version", "continue_token")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    CONTINUE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[Object]
    resource_version: str
    continue_token: str
    def __init__(self, items: _Optional[_Iterable[_Union[Object, _Mapping]]] = ..., resource_version: _Optional[str] = ..., continue_token: _Optional[str] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("kind", "namespace", "label_selector", "field_selector", "resource_version")
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    LABEL_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    FIELD_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    kind: str
    namespace: str
    label_selector: str
    field_selector: str
    resource_version: str
    def __init__(self, kind: _Optional[str] = ..., namespace: _Optional[str] = ..., label_selector: _Optional[str] = ..., field_selector: _Optional[str] = ..., resource_version: _Optional[str] = ...) -> None: ...

class WatchEvent(_message.Message):
    __slots__ = ("type", "object")
    class Type(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        TYPE_UNSPECIFIED: _ClassVar[WatchEvent.Type]
        ADDED: _ClassVar[WatchEvent.Type]
        MODIFIED: _ClassVar[WatchEvent.Type]
        DELETED: _ClassVar[WatchEvent.Type]
    TYPE_UNSPECIFIED: WatchEvent.Type
    ADDED: WatchEvent.Type
    MODIFIED: WatchEvent.Type
    DELETED: WatchEvent.Type
    TYPE_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    type: WatchEvent.Type
    object: Object
    def __init__(self, type: _Optional[_Union[WatchEvent.Type, str]] = ..., object: _Optional[_Union[Object, _Mapping]] = ...) -> None: ...

class BindRequest(_message.Message):
    __slots__ = ("binding", "fence")
    BINDING_FIELD_NUMBER: _ClassVar[int]
    FENCE_FIELD_NUMBER: _ClassVar[int]
    binding: _objects_pb2.Binding
    fence: Fence
    def __init__(self, binding: _Optional[_Union[_objects_pb2.Binding, _Mapping]] = ..., fence: _Optional[_Union[Fence, _Mapping]] = ...) -> None: ...

class BindGroupRequest(_message.Message):
    __slots__ = ("bindings", "fence")
    BINDINGS_FIELD_NUMBER: _ClassVar[int]
    FENCE_FIELD_NUMBER: _ClassVar[int]
    bindings: _containers.RepeatedCompositeFieldContainer[_objects_pb2.Binding]
    fence: Fence
    def __init__(self, bindings: _Optional[_Iterable[_Union[_objects_pb2.Binding, _Mapping]]] = ..., fence: _Optional[_Union[Fence, _Mapping]] = ...) -> None: ...

class BindGroupResponse(_message.Message):
    __slots__ = ("pods",)
    PODS_FIELD_NUMBER: _ClassVar[int]
    pods: _containers.RepeatedCompositeFieldContainer[_objects_pb2.Pod]
    def __init__(self, pods: _Optional[_Iterable[_Union[_objects_pb2.Pod, _Mapping]]] = ...) -> None: ...

class BatchItem(_message.Message):
    __slots__ = ("create", "bind")
    CREATE_FIELD_NUMBER: _ClassVar[int]
    BIND_FIELD_NUMBER: _ClassVar[int]
    create: CreateRequest
    bind: BindRequest
    def __init__(self, create: _Optional[_Union[CreateRequest, _Mapping]] = ..., bind: _Optional[_Union[BindRequest, _Mapping]] = ...) -> None: ...

class BatchRequest(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[BatchItem]
    def __init__(self, items: _Optional[_Iterable[_Union[BatchItem, _Mapping]]] = ...) -> None: ...

class Status(_message.Message):
    __slots__ = ("code", "message", "reason")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    reason: str
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class BatchResult(_message.Message):
    __slots__ = ("object", "error")
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    object: Object
    error: Status
    def __init__(self, object: _Optional[_Union[Object, _Mapping]] = ..., error: _Optional[_Union[Status, _Mapping]] = ...) -> None: ...

class BatchResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[BatchResult]
    def __init__(self, results: _Optional[_Iterable[_Union[BatchResult, _Mapping]]] = ...) -> None: ...

class VersionRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class VersionInfo(_message.Message):
    __slots__ = ("version",)
    VERSION_FIELD_NUMBER: _ClassVar[int]
    version: str
    def __init__(self, version: _Optional[str] = ...) -> None: ...
