from cluster.api import objects_pb2 as _objects_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class WorkloadPodGroupTemplateReference(_message.Message):
    __slots__ = ("workload_name", "pod_group_template_name")
    WORKLOAD_NAME_FIELD_NUMBER: _ClassVar[int]
    POD_GROUP_TEMPLATE_NAME_FIELD_NUMBER: _ClassVar[int]
    workload_name: str
    pod_group_template_name: str
    def __init__(self, workload_name: _Optional[str] = ..., pod_group_template_name: _Optional[str] = ...) -> None: ...

class PodGroupTemplateReference(_message.Message):
    __slots__ = ("workload",)
    WORKLOAD_FIELD_NUMBER: _ClassVar[int]
    workload: WorkloadPodGroupTemplateReference
    def __init__(self, workload: _Optional[_Union[WorkloadPodGroupTemplateReference, _Mapping]] = ...) -> None: ...

class PodGroupTemplate(_message.Message):
    __slots__ = ("name", "scheduling_policy", "scheduling_constraints", "resource_claims", "disruption_mode", "priority_class_name", "priority")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SCHEDULING_POLICY_FIELD_NUMBER: _ClassVar[int]
    SCHEDULING_CONSTRAINTS_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_CLAIMS_FIELD_NUMBER: _ClassVar[int]
    DISRUPTION_MODE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    name: str
    scheduling_policy: _objects_pb2.PodGroupSchedulingPolicy
    scheduling_constraints: _objects_pb2.PodGroupSchedulingConstraints
    resource_claims: _containers.RepeatedCompositeFieldContainer[_objects_pb2.PodGroupResourceClaim]
    disruption_mode: str
    priority_class_name: str
    priority: int
    def __init__(self, name: _Optional[str] = ..., scheduling_policy: _Optional[_Union[_objects_pb2.PodGroupSchedulingPolicy, _Mapping]] = ..., scheduling_constraints: _Optional[_Union[_objects_pb2.PodGroupSchedulingConstraints, _Mapping]] = ..., resource_claims: _Optional[_Iterable[_Union[_objects_pb2.PodGroupResourceClaim, _Mapping]]] = ..., disruption_mode: _Optional[str] = ..., priority_class_name: _Optional[str] = ..., priority: _Optional[int] = ...) -> None: ...

class WorkloadSpec(_message.Message):
    __slots__ = ("controller_ref", "pod_group_templates")
    CONTROLLER_REF_FIELD_NUMBER: _ClassVar[int]
    POD_GROUP_TEMPLATES_FIELD_NUMBER: _ClassVar[int]
    controller_ref: _objects_pb2.TypedLocalObjectReference
    pod_group_templates: _containers.RepeatedCompositeFieldContainer[PodGroupTemplate]
    def __init__(self, controller_ref: _Optional[_Union[_objects_pb2.TypedLocalObjectReference, _Mapping]] = ..., pod_group_templates: _Optional[_Iterable[_Union[PodGroupTemplate, _Mapping]]] = ...) -> None: ...

class Workload(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: _objects_pb2.ObjectMeta
    spec: WorkloadSpec
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[_objects_pb2.ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[WorkloadSpec, _Mapping]] = ...) -> None: ...

class PodGroupSpec(_message.Message):
    __slots__ = ("pod_group_template_ref", "scheduling_policy", "scheduling_constraints", "resource_claims", "disruption_mode", "priority_class_name", "priority")
    POD_GROUP_TEMPLATE_REF_FIELD_NUMBER: _ClassVar[int]
    SCHEDULING_POLICY_FIELD_NUMBER: _ClassVar[int]
    SCHEDULING_CONSTRAINTS_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_CLAIMS_FIELD_NUMBER: _ClassVar[int]
    DISRUPTION_MODE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    pod_group_template_ref: PodGroupTemplateReference
    scheduling_policy: _objects_pb2.PodGroupSchedulingPolicy
    scheduling_constraints: _objects_pb2.PodGroupSchedulingConstraints
    resource_claims: _containers.RepeatedCompositeFieldContainer[_objects_pb2.PodGroupResourceClaim]
    disruption_mode: str
    priority_class_name: str
    priority: int
    def __init__(self, pod_group_template_ref: _Optional[_Union[PodGroupTemplateReference, _Mapping]] = ..., scheduling_policy: _Optional[_Union[_objects_pb2.PodGroupSchedulingPolicy, _Mapping]] = ..., scheduling_constraints: _Optional[_Union[_objects_pb2.PodGroupSchedulingConstraints, _Mapping]] = ..., resource_claims: _Optional[_Iterable[_Union[_objects_pb2.PodGroupResourceClaim, _Mapping]]] = ..., disruption_mode: _Optional[str] = ..., priority_class_name: _Optional[str] = ..., priority: _Optional[int] = ...) -> None: ...

class PodGroupStatus(_message.Message):
    __slots__ = ("conditions", "resource_claim_statuses")
    CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_CLAIM_STATUSES_FIELD_NUMBER: _ClassVar[int]
    conditions: _containers.RepeatedCompositeFieldContainer[_objects_pb2.Condition]
    resource_claim_statuses: _containers.RepeatedCompositeFieldContainer[_objects_pb2.PodGroupResourceClaimStatus]
    def __init__(self, conditions: _Optional[_Iterable[_Union[_objects_pb2.Condition, _Mapping]]] = ..., resource_claim_statuses: _Optional[_Iterable[_Union[_objects_pb2.PodGroupResourceClaimStatus, _Mapping]]] = ...) -> None: ...

class PodGroup(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec", "status")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: _objects_pb2.ObjectMeta
    spec: PodGroupSpec
    status: PodGroupStatus
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[_objects_pb2.ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[PodGroupSpec, _Mapping]] = ..., status: _Optional[_Union[PodGroupStatus, _Mapping]] = ...) -> None: ...
