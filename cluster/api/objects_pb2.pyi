import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ObjectMeta(_message.Message):
    __slots__ = ("name", "generate_name", "namespace", "uid", "resource_version", "generation", "creation_timestamp", "deletion_timestamp", "deletion_grace_period_seconds", "labels", "annotations", "owner_references", "managed_fields")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class AnnotationsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    GENERATE_NAME_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    CREATION_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    DELETION_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    DELETION_GRACE_PERIOD_SECONDS_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    ANNOTATIONS_FIELD_NUMBER: _ClassVar[int]
    OWNER_REFERENCES_FIELD_NUMBER: _ClassVar[int]
    MANAGED_FIELDS_FIELD_NUMBER: _ClassVar[int]
    name: str
    generate_name: str
    namespace: str
    uid: str
    resource_version: str
    generation: int
    creation_timestamp: _timestamp_pb2.Timestamp
    deletion_timestamp: _timestamp_pb2.Timestamp
    deletion_grace_period_seconds: int
    labels: _containers.ScalarMap[str, str]
    annotations: _containers.ScalarMap[str, str]
    owner_references: _containers.RepeatedCompositeFieldContainer[OwnerReference]
    managed_fields: _containers.RepeatedCompositeFieldContainer[ManagedFieldsEntry]
    def __init__(self, name: _Optional[str] = ..., generate_name: _Optional[str] = ..., namespace: _Optional[str] = ..., uid: _Optional[str] = ..., resource_version: _Optional[str] = ..., generation: _Optional[int] = ..., creation_timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deletion_timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deletion_grace_period_seconds: _Optional[int] = ..., labels: _Optional[_Mapping[str, str]] = ..., annotations: _Optional[_Mapping[str, str]] = ..., owner_references: _Optional[_Iterable[_Union[OwnerReference, _Mapping]]] = ..., managed_fields: _Optional[_Iterable[_Union[ManagedFieldsEntry, _Mapping]]] = ...) -> None: ...

class ManagedFieldsEntry(_message.Message):
    __slots__ = ("manager", "operation", "api_version", "time", "fields_type", "fields_v1", "subresource")
    MANAGER_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    FIELDS_TYPE_FIELD_NUMBER: _ClassVar[int]
    FIELDS_V1_FIELD_NUMBER: _ClassVar[int]
    SUBRESOURCE_FIELD_NUMBER: _ClassVar[int]
    manager: str
    operation: str
    api_version: str
    time: _timestamp_pb2.Timestamp
    fields_type: str
    fields_v1: _struct_pb2.Struct
    subresource: str
    def __init__(self, manager: _Optional[str] = ..., operation: _Optional[str] = ..., api_version: _Optional[str] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., fields_type: _Optional[str] = ..., fields_v1: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., subresource: _Optional[str] = ...) -> None: ...

class OwnerReference(_message.Message):
    __slots__ = ("api_version", "kind", "name", "uid", "controller", "block_owner_deletion")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    CONTROLLER_FIELD_NUMBER: _ClassVar[int]
    BLOCK_OWNER_DELETION_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool
    block_owner_deletion: bool
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., name: _Optional[str] = ..., uid: _Optional[str] = ..., controller: _Optional[bool] = ..., block_owner_deletion: _Optional[bool] = ...) -> None: ...

class LabelSelectorRequirement(_message.Message):
    __slots__ = ("key", "operator", "values")
    KEY_FIELD_NUMBER: _ClassVar[int]
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    key: str
    operator: str
    values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, key: _Optional[str] = ..., operator: _Optional[str] = ..., values: _Optional[_Iterable[str]] = ...) -> None: ...

class LabelSelector(_message.Message):
    __slots__ = ("match_labels", "match_expressions")
    class MatchLabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MATCH_LABELS_FIELD_NUMBER: _ClassVar[int]
    MATCH_EXPRESSIONS_FIELD_NUMBER: _ClassVar[int]
    match_labels: _containers.ScalarMap[str, str]
    match_expressions: _containers.RepeatedCompositeFieldContainer[LabelSelectorRequirement]
    def __init__(self, match_labels: _Optional[_Mapping[str, str]] = ..., match_expressions: _Optional[_Iterable[_Union[LabelSelectorRequirement, _Mapping]]] = ...) -> None: ...

class ObjectReference(_message.Message):
    __slots__ = ("kind", "namespace", "name", "uid", "api_version", "resource_version", "field_path")
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    FIELD_PATH_FIELD_NUMBER: _ClassVar[int]
    kind: str
    namespace: str
    name: str
    uid: str
    api_version: str
    resource_version: str
    field_path: str
    def __init__(self, kind: _Optional[str] = ..., namespace: _Optional[str] = ..., name: _Optional[str] = ..., uid: _Optional[str] = ..., api_version: _Optional[str] = ..., resource_version: _Optional[str] = ..., field_path: _Optional[str] = ...) -> None: ...

class NodeSelectorRequirement(_message.Message):
    __slots__ = ("key", "operator", "values")
    KEY_FIELD_NUMBER: _ClassVar[int]
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    key: str
    operator: str
    values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, key: _Optional[str] = ..., operator: _Optional[str] = ..., values: _Optional[_Iterable[str]] = ...) -> None: ...

class NodeSelectorTerm(_message.Message):
    __slots__ = ("match_expressions", "match_fields")
    MATCH_EXPRESSIONS_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELDS_FIELD_NUMBER: _ClassVar[int]
    match_expressions: _containers.RepeatedCompositeFieldContainer[NodeSelectorRequirement]
    match_fields: _containers.RepeatedCompositeFieldContainer[NodeSelectorRequirement]
    def __init__(self, match_expressions: _Optional[_Iterable[_Union[NodeSelectorRequirement, _Mapping]]] = ..., match_fields: _Optional[_Iterable[_Union[NodeSelectorRequirement, _Mapping]]] = ...) -> None: ...

class NodeSelector(_message.Message):
    __slots__ = ("node_selector_terms",)
    NODE_SELECTOR_TERMS_FIELD_NUMBER: _ClassVar[int]
    node_selector_terms: _containers.RepeatedCompositeFieldContainer[NodeSelectorTerm]
    def __init__(self, node_selector_terms: _Optional[_Iterable[_Union[NodeSelectorTerm, _Mapping]]] = ...) -> None: ...

class PreferredSchedulingTerm(_message.Message):
    __slots__ = ("weight", "preference")
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    PREFERENCE_FIELD_NUMBER: _ClassVar[int]
    weight: int
    preference: NodeSelectorTerm
    def __init__(self, weight: _Optional[int] = ..., preference: _Optional[_Union[NodeSelectorTerm, _Mapping]] = ...) -> None: ...

class NodeAffinity(_message.Message):
    __slots__ = ("required_during_scheduling_ignored_during_execution", "preferred_during_scheduling_ignored_during_execution")
    REQUIRED_DURING_SCHEDULING_IGNORED_DURING_EXECUTION_FIELD_NUMBER: _ClassVar[int]
    PREFERRED_DURING_SCHEDULING_IGNORED_DURING_EXECUTION_FIELD_NUMBER: _ClassVar[int]
    required_during_scheduling_ignored_during_execution: NodeSelector
    preferred_during_scheduling_ignored_during_execution: _containers.RepeatedCompositeFieldContainer[PreferredSchedulingTerm]
    def __init__(self, required_during_scheduling_ignored_during_execution: _Optional[_Union[NodeSelector, _Mapping]] = ..., preferred_during_scheduling_ignored_during_execution: _Optional[_Iterable[_Union[PreferredSchedulingTerm, _Mapping]]] = ...) -> None: ...

class PodAffinityTerm(_message.Message):
    __slots__ = ("label_selector", "namespaces", "topology_key", "namespace_selector", "match_label_keys", "mismatch_label_keys")
    LABEL_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_KEY_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    MATCH_LABEL_KEYS_FIELD_NUMBER: _ClassVar[int]
    MISMATCH_LABEL_KEYS_FIELD_NUMBER: _ClassVar[int]
    label_selector: LabelSelector
    namespaces: _containers.RepeatedScalarFieldContainer[str]
    topology_key: str
    namespace_selector: LabelSelector
    match_label_keys: _containers.RepeatedScalarFieldContainer[str]
    mismatch_label_keys: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, label_selector: _Optional[_Union[LabelSelector, _Mapping]] = ..., namespaces: _Optional[_Iterable[str]] = ..., topology_key: _Optional[str] = ..., namespace_selector: _Optional[_Union[LabelSelector, _Mapping]] = ..., match_label_keys: _Optional[_Iterable[str]] = ..., mismatch_label_keys: _Optional[_Iterable[str]] = ...) -> None: ...

class WeightedPodAffinityTerm(_message.Message):
    __slots__ = ("weight", "pod_affinity_term")
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    POD_AFFINITY_TERM_FIELD_NUMBER: _ClassVar[int]
    weight: int
    pod_affinity_term: PodAffinityTerm
    def __init__(self, weight: _Optional[int] = ..., pod_affinity_term: _Optional[_Union[PodAffinityTerm, _Mapping]] = ...) -> None: ...

class PodAffinity(_message.Message):
    __slots__ = ("required_during_scheduling_ignored_during_execution", "preferred_during_scheduling_ignored_during_execution")
    REQUIRED_DURING_SCHEDULING_IGNORED_DURING_EXECUTION_FIELD_NUMBER: _ClassVar[int]
    PREFERRED_DURING_SCHEDULING_IGNORED_DURING_EXECUTION_FIELD_NUMBER: _ClassVar[int]
    required_during_scheduling_ignored_during_execution: _containers.RepeatedCompositeFieldContainer[PodAffinityTerm]
    preferred_during_scheduling_ignored_during_execution: _containers.RepeatedCompositeFieldContainer[WeightedPodAffinityTerm]
    def __init__(self, required_during_scheduling_ignored_during_execution: _Optional[_Iterable[_Union[PodAffinityTerm, _Mapping]]] = ..., preferred_during_scheduling_ignored_during_execution: _Optional[_Iterable[_Union[WeightedPodAffinityTerm, _Mapping]]] = ...) -> None: ...

class PodAntiAffinity(_message.Message):
    __slots__ = ("required_during_scheduling_ignored_during_execution", "preferred_during_scheduling_ignored_during_execution")
    REQUIRED_DURING_SCHEDULING_IGNORED_DURING_EXECUTION_FIELD_NUMBER: _ClassVar[int]
    PREFERRED_DURING_SCHEDULING_IGNORED_DURING_EXECUTION_FIELD_NUMBER: _ClassVar[int]
    required_during_scheduling_ignored_during_execution: _containers.RepeatedCompositeFieldContainer[PodAffinityTerm]
    preferred_during_scheduling_ignored_during_execution: _containers.RepeatedCompositeFieldContainer[WeightedPodAffinityTerm]
    def __init__(self, required_during_scheduling_ignored_during_execution: _Optional[_Iterable[_Union[PodAffinityTerm, _Mapping]]] = ..., preferred_during_scheduling_ignored_during_execution: _Optional[_Iterable[_Union[WeightedPodAffinityTerm, _Mapping]]] = ...) -> None: ...

class Affinity(_message.Message):
    __slots__ = ("node_affinity", "pod_affinity", "pod_anti_affinity")
    NODE_AFFINITY_FIELD_NUMBER: _ClassVar[int]
    POD_AFFINITY_FIELD_NUMBER: _ClassVar[int]
    POD_ANTI_AFFINITY_FIELD_NUMBER: _ClassVar[int]
    node_affinity: NodeAffinity
    pod_affinity: PodAffinity
    pod_anti_affinity: PodAntiAffinity
    def __init__(self, node_affinity: _Optional[_Union[NodeAffinity, _Mapping]] = ..., pod_affinity: _Optional[_Union[PodAffinity, _Mapping]] = ..., pod_anti_affinity: _Optional[_Union[PodAntiAffinity, _Mapping]] = ...) -> None: ...

class Toleration(_message.Message):
    __slots__ = ("key", "operator", "value", "effect", "toleration_seconds")
    KEY_FIELD_NUMBER: _ClassVar[int]
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    EFFECT_FIELD_NUMBER: _ClassVar[int]
    TOLERATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    key: str
    operator: str
    value: str
    effect: str
    toleration_seconds: int
    def __init__(self, key: _Optional[str] = ..., operator: _Optional[str] = ..., value: _Optional[str] = ..., effect: _Optional[str] = ..., toleration_seconds: _Optional[int] = ...) -> None: ...

class TopologySpreadConstraint(_message.Message):
    __slots__ = ("max_skew", "topology_key", "when_unsatisfiable", "label_selector", "min_domains", "node_affinity_policy", "node_taints_policy", "match_label_keys")
    MAX_SKEW_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_KEY_FIELD_NUMBER: _ClassVar[int]
    WHEN_UNSATISFIABLE_FIELD_NUMBER: _ClassVar[int]
    LABEL_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    MIN_DOMAINS_FIELD_NUMBER: _ClassVar[int]
    NODE_AFFINITY_POLICY_FIELD_NUMBER: _ClassVar[int]
    NODE_TAINTS_POLICY_FIELD_NUMBER: _ClassVar[int]
    MATCH_LABEL_KEYS_FIELD_NUMBER: _ClassVar[int]
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector
    min_domains: int
    node_affinity_policy: str
    node_taints_policy: str
    match_label_keys: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, max_skew: _Optional[int] = ..., topology_key: _Optional[str] = ..., when_unsatisfiable: _Optional[str] = ..., label_selector: _Optional[_Union[LabelSelector, _Mapping]] = ..., min_domains: _Optional[int] = ..., node_affinity_policy: _Optional[str] = ..., node_taints_policy: _Optional[str] = ..., match_label_keys: _Optional[_Iterable[str]] = ...) -> None: ...

class ResourceRequirements(_message.Message):
    __slots__ = ("requests", "limits", "claims")
    class RequestsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class LimitsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.ScalarMap[str, str]
    limits: _containers.ScalarMap[str, str]
    claims: _containers.RepeatedCompositeFieldContainer[ContainerResourceClaim]
    def __init__(self, requests: _Optional[_Mapping[str, str]] = ..., limits: _Optional[_Mapping[str, str]] = ..., claims: _Optional[_Iterable[_Union[ContainerResourceClaim, _Mapping]]] = ...) -> None: ...

class ContainerResourceClaim(_message.Message):
    __slots__ = ("name", "request")
    NAME_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    name: str
    request: str
    def __init__(self, name: _Optional[str] = ..., request: _Optional[str] = ...) -> None: ...

class ContainerPort(_message.Message):
    __slots__ = ("name", "host_port", "container_port", "protocol", "host_ip")
    NAME_FIELD_NUMBER: _ClassVar[int]
    HOST_PORT_FIELD_NUMBER: _ClassVar[int]
    CONTAINER_PORT_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    HOST_IP_FIELD_NUMBER: _ClassVar[int]
    name: str
    host_port: int
    container_port: int
    protocol: str
    host_ip: str
    def __init__(self, name: _Optional[str] = ..., host_port: _Optional[int] = ..., container_port: _Optional[int] = ..., protocol: _Optional[str] = ..., host_ip: _Optional[str] = ...) -> None: ...

class EnvVar(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: str
    def __init__(self, name: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class Container(_message.Message):
    __slots__ = ("name", "image", "command", "args", "env", "ports", "resources", "image_pull_policy", "working_dir", "restart_policy", "volume_mounts", "volume_devices")
    NAME_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    PORTS_FIELD_NUMBER: _ClassVar[int]
    RESOURCES_FIELD_NUMBER: _ClassVar[int]
    IMAGE_PULL_POLICY_FIELD_NUMBER: _ClassVar[int]
    WORKING_DIR_FIELD_NUMBER: _ClassVar[int]
    RESTART_POLICY_FIELD_NUMBER: _ClassVar[int]
    VOLUME_MOUNTS_FIELD_NUMBER: _ClassVar[int]
    VOLUME_DEVICES_FIELD_NUMBER: _ClassVar[int]
    name: str
    image: str
    command: _containers.RepeatedScalarFieldContainer[str]
    args: _containers.RepeatedScalarFieldContainer[str]
    env: _containers.RepeatedCompositeFieldContainer[EnvVar]
    ports: _containers.RepeatedCompositeFieldContainer[ContainerPort]
    resources: ResourceRequirements
    image_pull_policy: str
    working_dir: str
    restart_policy: str
    volume_mounts: _containers.RepeatedCompositeFieldContainer[VolumeMount]
    volume_devices: _containers.RepeatedCompositeFieldContainer[VolumeDevice]
    def __init__(self, name: _Optional[str] = ..., image: _Optional[str] = ..., command: _Optional[_Iterable[str]] = ..., args: _Optional[_Iterable[str]] = ..., env: _Optional[_Iterable[_Union[EnvVar, _Mapping]]] = ..., ports: _Optional[_Iterable[_Union[ContainerPort, _Mapping]]] = ..., resources: _Optional[_Union[ResourceRequirements, _Mapping]] = ..., image_pull_policy: _Optional[str] = ..., working_dir: _Optional[str] = ..., restart_policy: _Optional[str] = ..., volume_mounts: _Optional[_Iterable[_Union[VolumeMount, _Mapping]]] = ..., volume_devices: _Optional[_Iterable[_Union[VolumeDevice, _Mapping]]] = ...) -> None: ...

class VolumeMount(_message.Message):
    __slots__ = ("name", "read_only", "recursive_read_only", "mount_path", "sub_path", "mount_propagation", "sub_path_expr")
    NAME_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    RECURSIVE_READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    MOUNT_PATH_FIELD_NUMBER: _ClassVar[int]
    SUB_PATH_FIELD_NUMBER: _ClassVar[int]
    MOUNT_PROPAGATION_FIELD_NUMBER: _ClassVar[int]
    SUB_PATH_EXPR_FIELD_NUMBER: _ClassVar[int]
    name: str
    read_only: bool
    recursive_read_only: str
    mount_path: str
    sub_path: str
    mount_propagation: str
    sub_path_expr: str
    def __init__(self, name: _Optional[str] = ..., read_only: _Optional[bool] = ..., recursive_read_only: _Optional[str] = ..., mount_path: _Optional[str] = ..., sub_path: _Optional[str] = ..., mount_propagation: _Optional[str] = ..., sub_path_expr: _Optional[str] = ...) -> None: ...

class VolumeDevice(_message.Message):
    __slots__ = ("name", "device_path")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DEVICE_PATH_FIELD_NUMBER: _ClassVar[int]
    name: str
    device_path: str
    def __init__(self, name: _Optional[str] = ..., device_path: _Optional[str] = ...) -> None: ...

class PodSpec(_message.Message):
    __slots__ = ("node_name", "scheduler_name", "priority", "priority_class_name", "preemption_policy", "node_selector", "affinity", "tolerations", "topology_spread_constraints", "containers", "init_containers", "termination_grace_period_seconds", "overhead", "restart_policy", "service_account_name", "scheduling_group", "runtime_class_name", "scheduling_gates", "resource_claims", "volumes")
    class NodeSelectorEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class OverheadEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NODE_NAME_FIELD_NUMBER: _ClassVar[int]
    SCHEDULER_NAME_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    PREEMPTION_POLICY_FIELD_NUMBER: _ClassVar[int]
    NODE_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    AFFINITY_FIELD_NUMBER: _ClassVar[int]
    TOLERATIONS_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_SPREAD_CONSTRAINTS_FIELD_NUMBER: _ClassVar[int]
    CONTAINERS_FIELD_NUMBER: _ClassVar[int]
    INIT_CONTAINERS_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_GRACE_PERIOD_SECONDS_FIELD_NUMBER: _ClassVar[int]
    OVERHEAD_FIELD_NUMBER: _ClassVar[int]
    RESTART_POLICY_FIELD_NUMBER: _ClassVar[int]
    SERVICE_ACCOUNT_NAME_FIELD_NUMBER: _ClassVar[int]
    SCHEDULING_GROUP_FIELD_NUMBER: _ClassVar[int]
    RUNTIME_CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    SCHEDULING_GATES_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_CLAIMS_FIELD_NUMBER: _ClassVar[int]
    VOLUMES_FIELD_NUMBER: _ClassVar[int]
    node_name: str
    scheduler_name: str
    priority: int
    priority_class_name: str
    preemption_policy: str
    node_selector: _containers.ScalarMap[str, str]
    affinity: Affinity
    tolerations: _containers.RepeatedCompositeFieldContainer[Toleration]
    topology_spread_constraints: _containers.RepeatedCompositeFieldContainer[TopologySpreadConstraint]
    containers: _containers.RepeatedCompositeFieldContainer[Container]
    init_containers: _containers.RepeatedCompositeFieldContainer[Container]
    termination_grace_period_seconds: int
    overhead: _containers.ScalarMap[str, str]
    restart_policy: str
    service_account_name: str
    scheduling_group: PodSchedulingGroup
    runtime_class_name: str
    scheduling_gates: _containers.RepeatedCompositeFieldContainer[PodSchedulingGate]
    resource_claims: _containers.RepeatedCompositeFieldContainer[PodResourceClaim]
    volumes: _containers.RepeatedCompositeFieldContainer[Volume]
    def __init__(self, node_name: _Optional[str] = ..., scheduler_name: _Optional[str] = ..., priority: _Optional[int] = ..., priority_class_name: _Optional[str] = ..., preemption_policy: _Optional[str] = ..., node_selector: _Optional[_Mapping[str, str]] = ..., affinity: _Optional[_Union[Affinity, _Mapping]] = ..., tolerations: _Optional[_Iterable[_Union[Toleration, _Mapping]]] = ..., topology_spread_constraints: _Optional[_Iterable[_Union[TopologySpreadConstraint, _Mapping]]] = ..., containers: _Optional[_Iterable[_Union[Container, _Mapping]]] = ..., init_containers: _Optional[_Iterable[_Union[Container, _Mapping]]] = ..., termination_grace_period_seconds: _Optional[int] = ..., overhead: _Optional[_Mapping[str, str]] = ..., restart_policy: _Optional[str] = ..., service_account_name: _Optional[str] = ..., scheduling_group: _Optional[_Union[PodSchedulingGroup, _Mapping]] = ..., runtime_class_name: _Optional[str] = ..., scheduling_gates: _Optional[_Iterable[_Union[PodSchedulingGate, _Mapping]]] = ..., resource_claims: _Optional[_Iterable[_Union[PodResourceClaim, _Mapping]]] = ..., volumes: _Optional[_Iterable[_Union[Volume, _Mapping]]] = ...) -> None: ...

class PodResourceClaim(_message.Message):
    __slots__ = ("name", "resource_claim_name", "resource_claim_template_name")
    NAME_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_CLAIM_NAME_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_CLAIM_TEMPLATE_NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    resource_claim_name: str
    resource_claim_template_name: str
    def __init__(self, name: _Optional[str] = ..., resource_claim_name: _Optional[str] = ..., resource_claim_template_name: _Optional[str] = ...) -> None: ...

class PodResourceClaimStatus(_message.Message):
    __slots__ = ("name", "resource_claim_name")
    NAME_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_CLAIM_NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    resource_claim_name: str
    def __init__(self, name: _Optional[str] = ..., resource_claim_name: _Optional[str] = ...) -> None: ...

class ContainerExtendedResourceRequest(_message.Message):
    __slots__ = ("container_name", "resource_name", "request_name")
    CONTAINER_NAME_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_NAME_FIELD_NUMBER: _ClassVar[int]
    REQUEST_NAME_FIELD_NUMBER: _ClassVar[int]
    container_name: str
    resource_name: str
    request_name: str
    def __init__(self, container_name: _Optional[str] = ..., resource_name: _Optional[str] = ..., request_name: _Optional[str] = ...) -> None: ...

class PodExtendedResourceClaimStatus(_message.Message):
    __slots__ = ("request_mappings", "resource_claim_name")
    REQUEST_MAPPINGS_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_CLAIM_NAME_FIELD_NUMBER: _ClassVar[int]
    request_mappings: _containers.RepeatedCompositeFieldContainer[ContainerExtendedResourceRequest]
    resource_claim_name: str
    def __init__(self, request_mappings: _Optional[_Iterable[_Union[ContainerExtendedResourceRequest, _Mapping]]] = ..., resource_claim_name: _Optional[str] = ...) -> None: ...

class PodSchedulingGate(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class PodSchedulingGroup(_message.Message):
    __slots__ = ("pod_group_name",)
    POD_GROUP_NAME_FIELD_NUMBER: _ClassVar[int]
    pod_group_name: str
    def __init__(self, pod_group_name: _Optional[str] = ...) -> None: ...

class PodCondition(_message.Message):
    __slots__ = ("type", "status", "reason", "message", "last_probe_time", "last_transition_time")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    LAST_PROBE_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_TRANSITION_TIME_FIELD_NUMBER: _ClassVar[int]
    type: str
    status: str
    reason: str
    message: str
    last_probe_time: _timestamp_pb2.Timestamp
    last_transition_time: _timestamp_pb2.Timestamp
    def __init__(self, type: _Optional[str] = ..., status: _Optional[str] = ..., reason: _Optional[str] = ..., message: _Optional[str] = ..., last_probe_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_transition_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class PodStatus(_message.Message):
    __slots__ = ("phase", "conditions", "nominated_node_name", "start_time", "message", "reason", "host_ip", "pod_ip", "resource_claim_statuses", "extended_resource_claim_status")
    PHASE_FIELD_NUMBER: _ClassVar[int]
    CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    NOMINATED_NODE_NAME_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    HOST_IP_FIELD_NUMBER: _ClassVar[int]
    POD_IP_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_CLAIM_STATUSES_FIELD_NUMBER: _ClassVar[int]
    EXTENDED_RESOURCE_CLAIM_STATUS_FIELD_NUMBER: _ClassVar[int]
    phase: str
    conditions: _containers.RepeatedCompositeFieldContainer[PodCondition]
    nominated_node_name: str
    start_time: _timestamp_pb2.Timestamp
    message: str
    reason: str
    host_ip: str
    pod_ip: str
    resource_claim_statuses: _containers.RepeatedCompositeFieldContainer[PodResourceClaimStatus]
    extended_resource_claim_status: PodExtendedResourceClaimStatus
    def __init__(self, phase: _Optional[str] = ..., conditions: _Optional[_Iterable[_Union[PodCondition, _Mapping]]] = ..., nominated_node_name: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., message: _Optional[str] = ..., reason: _Optional[str] = ..., host_ip: _Optional[str] = ..., pod_ip: _Optional[str] = ..., resource_claim_statuses: _Optional[_Iterable[_Union[PodResourceClaimStatus, _Mapping]]] = ..., extended_resource_claim_status: _Optional[_Union[PodExtendedResourceClaimStatus, _Mapping]] = ...) -> None: ...

class Pod(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec", "status")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: PodSpec
    status: PodStatus
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[PodSpec, _Mapping]] = ..., status: _Optional[_Union[PodStatus, _Mapping]] = ...) -> None: ...

class Binding(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "target")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    target: ObjectReference
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., target: _Optional[_Union[ObjectReference, _Mapping]] = ...) -> None: ...

class Preconditions(_message.Message):
    __slots__ = ("uid", "resource_version")
    UID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    uid: str
    resource_version: str
    def __init__(self, uid: _Optional[str] = ..., resource_version: _Optional[str] = ...) -> None: ...

class DeleteOptions(_message.Message):
    __slots__ = ("api_version", "kind", "grace_period_seconds", "preconditions", "propagation_policy", "dry_run")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    GRACE_PERIOD_SECONDS_FIELD_NUMBER: _ClassVar[int]
    PRECONDITIONS_FIELD_NUMBER: _ClassVar[int]
    PROPAGATION_POLICY_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    grace_period_seconds: int
    preconditions: Preconditions
    propagation_policy: str
    dry_run: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., grace_period_seconds: _Optional[int] = ..., preconditions: _Optional[_Union[Preconditions, _Mapping]] = ..., propagation_policy: _Optional[str] = ..., dry_run: _Optional[_Iterable[str]] = ...) -> None: ...

class Eviction(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "delete_options")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    DELETE_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    delete_options: DeleteOptions
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., delete_options: _Optional[_Union[DeleteOptions, _Mapping]] = ...) -> None: ...

class Taint(_message.Message):
    __slots__ = ("key", "value", "effect", "time_added")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    EFFECT_FIELD_NUMBER: _ClassVar[int]
    TIME_ADDED_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: str
    effect: str
    time_added: _timestamp_pb2.Timestamp
    def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ..., effect: _Optional[str] = ..., time_added: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class NodeSpec(_message.Message):
    __slots__ = ("unschedulable", "taints", "pod_cidr", "provider_id")
    UNSCHEDULABLE_FIELD_NUMBER: _ClassVar[int]
    TAINTS_FIELD_NUMBER: _ClassVar[int]
    POD_CIDR_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ID_FIELD_NUMBER: _ClassVar[int]
    unschedulable: bool
    taints: _containers.RepeatedCompositeFieldContainer[Taint]
    pod_cidr: str
    provider_id: str
    def __init__(self, unschedulable: _Optional[bool] = ..., taints: _Optional[_Iterable[_Union[Taint, _Mapping]]] = ..., pod_cidr: _Optional[str] = ..., provider_id: _Optional[str] = ...) -> None: ...

class NodeCondition(_message.Message):
    __slots__ = ("type", "status", "reason", "message", "last_heartbeat_time", "last_transition_time")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    LAST_HEARTBEAT_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_TRANSITION_TIME_FIELD_NUMBER: _ClassVar[int]
    type: str
    status: str
    reason: str
    message: str
    last_heartbeat_time: _timestamp_pb2.Timestamp
    last_transition_time: _timestamp_pb2.Timestamp
    def __init__(self, type: _Optional[str] = ..., status: _Optional[str] = ..., reason: _Optional[str] = ..., message: _Optional[str] = ..., last_heartbeat_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_transition_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class NodeStatus(_message.Message):
    __slots__ = ("capacity", "allocatable", "conditions", "images")
    class CapacityEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class AllocatableEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    ALLOCATABLE_FIELD_NUMBER: _ClassVar[int]
    CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    IMAGES_FIELD_NUMBER: _ClassVar[int]
    capacity: _containers.ScalarMap[str, str]
    allocatable: _containers.ScalarMap[str, str]
    conditions: _containers.RepeatedCompositeFieldContainer[NodeCondition]
    images: _containers.RepeatedCompositeFieldContainer[ContainerImage]
    def __init__(self, capacity: _Optional[_Mapping[str, str]] = ..., allocatable: _Optional[_Mapping[str, str]] = ..., conditions: _Optional[_Iterable[_Union[NodeCondition, _Mapping]]] = ..., images: _Optional[_Iterable[_Union[ContainerImage, _Mapping]]] = ...) -> None: ...

class ContainerImage(_message.Message):
    __slots__ = ("names", "size_bytes")
    NAMES_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    size_bytes: int
    def __init__(self, names: _Optional[_Iterable[str]] = ..., size_bytes: _Optional[int] = ...) -> None: ...

class Node(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec", "status")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: NodeSpec
    status: NodeStatus
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[NodeSpec, _Mapping]] = ..., status: _Optional[_Union[NodeStatus, _Mapping]] = ...) -> None: ...

class PriorityClass(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "value", "global_default", "description", "preemption_policy")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    GLOBAL_DEFAULT_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    PREEMPTION_POLICY_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    value: int
    global_default: bool
    description: str
    preemption_policy: str
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., value: _Optional[int] = ..., global_default: _Optional[bool] = ..., description: _Optional[str] = ..., preemption_policy: _Optional[str] = ...) -> None: ...

class BasicSchedulingPolicy(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GangSchedulingPolicy(_message.Message):
    __slots__ = ("min_count",)
    MIN_COUNT_FIELD_NUMBER: _ClassVar[int]
    min_count: int
    def __init__(self, min_count: _Optional[int] = ...) -> None: ...

class PodGroupSchedulingPolicy(_message.Message):
    __slots__ = ("basic", "gang")
    BASIC_FIELD_NUMBER: _ClassVar[int]
    GANG_FIELD_NUMBER: _ClassVar[int]
    basic: BasicSchedulingPolicy
    gang: GangSchedulingPolicy
    def __init__(self, basic: _Optional[_Union[BasicSchedulingPolicy, _Mapping]] = ..., gang: _Optional[_Union[GangSchedulingPolicy, _Mapping]] = ...) -> None: ...

class WorkloadReference(_message.Message):
    __slots__ = ("workload_name", "template_name")
    WORKLOAD_NAME_FIELD_NUMBER: _ClassVar[int]
    TEMPLATE_NAME_FIELD_NUMBER: _ClassVar[int]
    workload_name: str
    template_name: str
    def __init__(self, workload_name: _Optional[str] = ..., template_name: _Optional[str] = ...) -> None: ...

class SingleDisruptionMode(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class AllDisruptionMode(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DisruptionMode(_message.Message):
    __slots__ = ("single", "all")
    SINGLE_FIELD_NUMBER: _ClassVar[int]
    ALL_FIELD_NUMBER: _ClassVar[int]
    single: SingleDisruptionMode
    all: AllDisruptionMode
    def __init__(self, single: _Optional[_Union[SingleDisruptionMode, _Mapping]] = ..., all: _Optional[_Union[AllDisruptionMode, _Mapping]] = ...) -> None: ...

class TopologyConstraint(_message.Message):
    __slots__ = ("key",)
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: str
    def __init__(self, key: _Optional[str] = ...) -> None: ...

class PodGroupSchedulingConstraints(_message.Message):
    __slots__ = ("topology",)
    TOPOLOGY_FIELD_NUMBER: _ClassVar[int]
    topology: _containers.RepeatedCompositeFieldContainer[TopologyConstraint]
    def __init__(self, topology: _Optional[_Iterable[_Union[TopologyConstraint, _Mapping]]] = ...) -> None: ...

class PodGroupResourceClaim(_message.Message):
    __slots__ = ("name", "resource_claim_name", "resource_claim_template_name")
    NAME_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_CLAIM_NAME_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_CLAIM_TEMPLATE_NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    resource_claim_name: str
    resource_claim_template_name: str
    def __init__(self, name: _Optional[str] = ..., resource_claim_name: _Optional[str] = ..., resource_claim_template_name: _Optional[str] = ...) -> None: ...

class PodGroupResourceClaimStatus(_message.Message):
    __slots__ = ("name", "resource_claim_name")
    NAME_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_CLAIM_NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    resource_claim_name: str
    def __init__(self, name: _Optional[str] = ..., resource_claim_name: _Optional[str] = ...) -> None: ...

class PodGroupSpec(_message.Message):
    __slots__ = ("parent_composite_pod_group_name", "workload_ref", "scheduling_policy", "scheduling_constraints", "resource_claims", "disruption_mode", "priority_class_name", "priority", "preemption_policy", "min_member", "min_resources", "schedule_timeout_seconds")
    class MinResourcesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    PARENT_COMPOSITE_POD_GROUP_NAME_FIELD_NUMBER: _ClassVar[int]
    WORKLOAD_REF_FIELD_NUMBER: _ClassVar[int]
    SCHEDULING_POLICY_FIELD_NUMBER: _ClassVar[int]
    SCHEDULING_CONSTRAINTS_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_CLAIMS_FIELD_NUMBER: _ClassVar[int]
    DISRUPTION_MODE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    PREEMPTION_POLICY_FIELD_NUMBER: _ClassVar[int]
    MIN_MEMBER_FIELD_NUMBER: _ClassVar[int]
    MIN_RESOURCES_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_TIMEOUT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    parent_composite_pod_group_name: str
    workload_ref: WorkloadReference
    scheduling_policy: PodGroupSchedulingPolicy
    scheduling_constraints: PodGroupSchedulingConstraints
    resource_claims: _containers.RepeatedCompositeFieldContainer[PodGroupResourceClaim]
    disruption_mode: DisruptionMode
    priority_class_name: str
    priority: int
    preemption_policy: str
    min_member: int
    min_resources: _containers.ScalarMap[str, str]
    schedule_timeout_seconds: int
    def __init__(self, parent_composite_pod_group_name: _Optional[str] = ..., workload_ref: _Optional[_Union[WorkloadReference, _Mapping]] = ..., scheduling_policy: _Optional[_Union[PodGroupSchedulingPolicy, _Mapping]] = ..., scheduling_constraints: _Optional[_Union[PodGroupSchedulingConstraints, _Mapping]] = ..., resource_claims: _Optional[_Iterable[_Union[PodGroupResourceClaim, _Mapping]]] = ..., disruption_mode: _Optional[_Union[DisruptionMode, _Mapping]] = ..., priority_class_name: _Optional[str] = ..., priority: _Optional[int] = ..., preemption_policy: _Optional[str] = ..., min_member: _Optional[int] = ..., min_resources: _Optional[_Mapping[str, str]] = ..., schedule_timeout_seconds: _Optional[int] = ...) -> None: ...

class Condition(_message.Message):
    __slots__ = ("type", "status", "observed_generation", "last_transition_time", "reason", "message")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    OBSERVED_GENERATION_FIELD_NUMBER: _ClassVar[int]
    LAST_TRANSITION_TIME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    type: str
    status: str
    observed_generation: int
    last_transition_time: _timestamp_pb2.Timestamp
    reason: str
    message: str
    def __init__(self, type: _Optional[str] = ..., status: _Optional[str] = ..., observed_generation: _Optional[int] = ..., last_transition_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., reason: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class PodGroupStatus(_message.Message):
    __slots__ = ("conditions", "resource_claim_statuses", "phase", "occupied_by", "scheduled", "running", "succeeded", "failed", "schedule_start_time")
    CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_CLAIM_STATUSES_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    OCCUPIED_BY_FIELD_NUMBER: _ClassVar[int]
    SCHEDULED_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    SUCCEEDED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_START_TIME_FIELD_NUMBER: _ClassVar[int]
    conditions: _containers.RepeatedCompositeFieldContainer[Condition]
    resource_claim_statuses: _containers.RepeatedCompositeFieldContainer[PodGroupResourceClaimStatus]
    phase: str
    occupied_by: str
    scheduled: int
    running: int
    succeeded: int
    failed: int
    schedule_start_time: _timestamp_pb2.Timestamp
    def __init__(self, conditions: _Optional[_Iterable[_Union[Condition, _Mapping]]] = ..., resource_claim_statuses: _Optional[_Iterable[_Union[PodGroupResourceClaimStatus, _Mapping]]] = ..., phase: _Optional[str] = ..., occupied_by: _Optional[str] = ..., scheduled: _Optional[int] = ..., running: _Optional[int] = ..., succeeded: _Optional[int] = ..., failed: _Optional[int] = ..., schedule_start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class PodGroup(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec", "status")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: PodGroupSpec
    status: PodGroupStatus
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[PodGroupSpec, _Mapping]] = ..., status: _Optional[_Union[PodGroupStatus, _Mapping]] = ...) -> None: ...

class TypedLocalObjectReference(_message.Message):
    __slots__ = ("api_group", "kind", "name")
    API_GROUP_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    api_group: str
    kind: str
    name: str
    def __init__(self, api_group: _Optional[str] = ..., kind: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class PodGroupTemplate(_message.Message):
    __slots__ = ("name", "scheduling_policy", "scheduling_constraints", "resource_claims", "disruption_mode", "priority_class_name", "priority", "preemption_policy")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SCHEDULING_POLICY_FIELD_NUMBER: _ClassVar[int]
    SCHEDULING_CONSTRAINTS_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_CLAIMS_FIELD_NUMBER: _ClassVar[int]
    DISRUPTION_MODE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    PREEMPTION_POLICY_FIELD_NUMBER: _ClassVar[int]
    name: str
    scheduling_policy: PodGroupSchedulingPolicy
    scheduling_constraints: PodGroupSchedulingConstraints
    resource_claims: _containers.RepeatedCompositeFieldContainer[PodGroupResourceClaim]
    disruption_mode: DisruptionMode
    priority_class_name: str
    priority: int
    preemption_policy: str
    def __init__(self, name: _Optional[str] = ..., scheduling_policy: _Optional[_Union[PodGroupSchedulingPolicy, _Mapping]] = ..., scheduling_constraints: _Optional[_Union[PodGroupSchedulingConstraints, _Mapping]] = ..., resource_claims: _Optional[_Iterable[_Union[PodGroupResourceClaim, _Mapping]]] = ..., disruption_mode: _Optional[_Union[DisruptionMode, _Mapping]] = ..., priority_class_name: _Optional[str] = ..., priority: _Optional[int] = ..., preemption_policy: _Optional[str] = ...) -> None: ...

class CompositeGangSchedulingPolicy(_message.Message):
    __slots__ = ("min_group_count",)
    MIN_GROUP_COUNT_FIELD_NUMBER: _ClassVar[int]
    min_group_count: int
    def __init__(self, min_group_count: _Optional[int] = ...) -> None: ...

class CompositePodGroupSchedulingPolicy(_message.Message):
    __slots__ = ("basic", "gang")
    BASIC_FIELD_NUMBER: _ClassVar[int]
    GANG_FIELD_NUMBER: _ClassVar[int]
    basic: BasicSchedulingPolicy
    gang: CompositeGangSchedulingPolicy
    def __init__(self, basic: _Optional[_Union[BasicSchedulingPolicy, _Mapping]] = ..., gang: _Optional[_Union[CompositeGangSchedulingPolicy, _Mapping]] = ...) -> None: ...

class CompositePodGroupTemplate(_message.Message):
    __slots__ = ("name", "scheduling_policy", "scheduling_constraints", "disruption_mode", "priority_class_name", "priority", "preemption_policy", "pod_group_templates", "composite_pod_group_templates")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SCHEDULING_POLICY_FIELD_NUMBER: _ClassVar[int]
    SCHEDULING_CONSTRAINTS_FIELD_NUMBER: _ClassVar[int]
    DISRUPTION_MODE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    PREEMPTION_POLICY_FIELD_NUMBER: _ClassVar[int]
    POD_GROUP_TEMPLATES_FIELD_NUMBER: _ClassVar[int]
    COMPOSITE_POD_GROUP_TEMPLATES_FIELD_NUMBER: _ClassVar[int]
    name: str
    scheduling_policy: CompositePodGroupSchedulingPolicy
    scheduling_constraints: PodGroupSchedulingConstraints
    disruption_mode: DisruptionMode
    priority_class_name: str
    priority: int
    preemption_policy: str
    pod_group_templates: _containers.RepeatedCompositeFieldContainer[PodGroupTemplate]
    composite_pod_group_templates: _containers.RepeatedCompositeFieldContainer[CompositePodGroupTemplate]
    def __init__(self, name: _Optional[str] = ..., scheduling_policy: _Optional[_Union[CompositePodGroupSchedulingPolicy, _Mapping]] = ..., scheduling_constraints: _Optional[_Union[PodGroupSchedulingConstraints, _Mapping]] = ..., disruption_mode: _Optional[_Union[DisruptionMode, _Mapping]] = ..., priority_class_name: _Optional[str] = ..., priority: _Optional[int] = ..., preemption_policy: _Optional[str] = ..., pod_group_templates: _Optional[_Iterable[_Union[PodGroupTemplate, _Mapping]]] = ..., composite_pod_group_templates: _Optional[_Iterable[_Union[CompositePodGroupTemplate, _Mapping]]] = ...) -> None: ...

class WorkloadSpec(_message.Message):
    __slots__ = ("controller_ref", "pod_group_templates", "composite_pod_group_templates")
    CONTROLLER_REF_FIELD_NUMBER: _ClassVar[int]
    POD_GROUP_TEMPLATES_FIELD_NUMBER: _ClassVar[int]
    COMPOSITE_POD_GROUP_TEMPLATES_FIELD_NUMBER: _ClassVar[int]
    controller_ref: TypedLocalObjectReference
    pod_group_templates: _containers.RepeatedCompositeFieldContainer[PodGroupTemplate]
    composite_pod_group_templates: _containers.RepeatedCompositeFieldContainer[CompositePodGroupTemplate]
    def __init__(self, controller_ref: _Optional[_Union[TypedLocalObjectReference, _Mapping]] = ..., pod_group_templates: _Optional[_Iterable[_Union[PodGroupTemplate, _Mapping]]] = ..., composite_pod_group_templates: _Optional[_Iterable[_Union[CompositePodGroupTemplate, _Mapping]]] = ...) -> None: ...

class Workload(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: WorkloadSpec
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[WorkloadSpec, _Mapping]] = ...) -> None: ...

class CompositePodGroupSpec(_message.Message):
    __slots__ = ("parent_composite_pod_group_name", "workload_ref", "scheduling_policy", "scheduling_constraints", "disruption_mode", "priority_class_name", "priority", "preemption_policy")
    PARENT_COMPOSITE_POD_GROUP_NAME_FIELD_NUMBER: _ClassVar[int]
    WORKLOAD_REF_FIELD_NUMBER: _ClassVar[int]
    SCHEDULING_POLICY_FIELD_NUMBER: _ClassVar[int]
    SCHEDULING_CONSTRAINTS_FIELD_NUMBER: _ClassVar[int]
    DISRUPTION_MODE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    PREEMPTION_POLICY_FIELD_NUMBER: _ClassVar[int]
    parent_composite_pod_group_name: str
    workload_ref: WorkloadReference
    scheduling_policy: CompositePodGroupSchedulingPolicy
    scheduling_constraints: PodGroupSchedulingConstraints
    disruption_mode: DisruptionMode
    priority_class_name: str
    priority: int
    preemption_policy: str
    def __init__(self, parent_composite_pod_group_name: _Optional[str] = ..., workload_ref: _Optional[_Union[WorkloadReference, _Mapping]] = ..., scheduling_policy: _Optional[_Union[CompositePodGroupSchedulingPolicy, _Mapping]] = ..., scheduling_constraints: _Optional[_Union[PodGroupSchedulingConstraints, _Mapping]] = ..., disruption_mode: _Optional[_Union[DisruptionMode, _Mapping]] = ..., priority_class_name: _Optional[str] = ..., priority: _Optional[int] = ..., preemption_policy: _Optional[str] = ...) -> None: ...

class CompositePodGroupStatus(_message.Message):
    __slots__ = ("conditions",)
    CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    conditions: _containers.RepeatedCompositeFieldContainer[Condition]
    def __init__(self, conditions: _Optional[_Iterable[_Union[Condition, _Mapping]]] = ...) -> None: ...

class CompositePodGroup(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec", "status")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: CompositePodGroupSpec
    status: CompositePodGroupStatus
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[CompositePodGroupSpec, _Mapping]] = ..., status: _Optional[_Union[CompositePodGroupStatus, _Mapping]] = ...) -> None: ...

class ScopedResourceSelectorRequirement(_message.Message):
    __slots__ = ("scope_name", "operator", "values")
    SCOPE_NAME_FIELD_NUMBER: _ClassVar[int]
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    scope_name: str
    operator: str
    values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, scope_name: _Optional[str] = ..., operator: _Optional[str] = ..., values: _Optional[_Iterable[str]] = ...) -> None: ...

class ScopeSelector(_message.Message):
    __slots__ = ("match_expressions",)
    MATCH_EXPRESSIONS_FIELD_NUMBER: _ClassVar[int]
    match_expressions: _containers.RepeatedCompositeFieldContainer[ScopedResourceSelectorRequirement]
    def __init__(self, match_expressions: _Optional[_Iterable[_Union[ScopedResourceSelectorRequirement, _Mapping]]] = ...) -> None: ...

class ResourceQuotaSpec(_message.Message):
    __slots__ = ("hard", "scopes", "scope_selector")
    class HardEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    HARD_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    SCOPE_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    hard: _containers.ScalarMap[str, str]
    scopes: _containers.RepeatedScalarFieldContainer[str]
    scope_selector: ScopeSelector
    def __init__(self, hard: _Optional[_Mapping[str, str]] = ..., scopes: _Optional[_Iterable[str]] = ..., scope_selector: _Optional[_Union[ScopeSelector, _Mapping]] = ...) -> None: ...

class ResourceQuotaStatus(_message.Message):
    __slots__ = ("hard", "used")
    class HardEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class UsedEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    HARD_FIELD_NUMBER: _ClassVar[int]
    USED_FIELD_NUMBER: _ClassVar[int]
    hard: _containers.ScalarMap[str, str]
    used: _containers.ScalarMap[str, str]
    def __init__(self, hard: _Optional[_Mapping[str, str]] = ..., used: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ResourceQuota(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec", "status")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: ResourceQuotaSpec
    status: ResourceQuotaStatus
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[ResourceQuotaSpec, _Mapping]] = ..., status: _Optional[_Union[ResourceQuotaStatus, _Mapping]] = ...) -> None: ...

class PodDisruptionBudgetSpec(_message.Message):
    __slots__ = ("min_available", "selector", "max_unavailable", "unhealthy_pod_eviction_policy")
    MIN_AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    MAX_UNAVAILABLE_FIELD_NUMBER: _ClassVar[int]
    UNHEALTHY_POD_EVICTION_POLICY_FIELD_NUMBER: _ClassVar[int]
    min_available: _struct_pb2.Value
    selector: LabelSelector
    max_unavailable: _struct_pb2.Value
    unhealthy_pod_eviction_policy: str
    def __init__(self, min_available: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., selector: _Optional[_Union[LabelSelector, _Mapping]] = ..., max_unavailable: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., unhealthy_pod_eviction_policy: _Optional[str] = ...) -> None: ...

class PodDisruptionBudgetStatus(_message.Message):
    __slots__ = ("observed_generation", "disrupted_pods", "disruptions_allowed", "current_healthy", "desired_healthy", "expected_pods")
    class DisruptedPodsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _timestamp_pb2.Timestamp
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...
    OBSERVED_GENERATION_FIELD_NUMBER: _ClassVar[int]
    DISRUPTED_PODS_FIELD_NUMBER: _ClassVar[int]
    DISRUPTIONS_ALLOWED_FIELD_NUMBER: _ClassVar[int]
    CURRENT_HEALTHY_FIELD_NUMBER: _ClassVar[int]
    DESIRED_HEALTHY_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_PODS_FIELD_NUMBER: _ClassVar[int]
    observed_generation: int
    disrupted_pods: _containers.MessageMap[str, _timestamp_pb2.Timestamp]
    disruptions_allowed: int
    current_healthy: int
    desired_healthy: int
    expected_pods: int
    def __init__(self, observed_generation: _Optional[int] = ..., disrupted_pods: _Optional[_Mapping[str, _timestamp_pb2.Timestamp]] = ..., disruptions_allowed: _Optional[int] = ..., current_healthy: _Optional[int] = ..., desired_healthy: _Optional[int] = ..., expected_pods: _Optional[int] = ...) -> None: ...

class PodDisruptionBudget(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec", "status")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: PodDisruptionBudgetSpec
    status: PodDisruptionBudgetStatus
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[PodDisruptionBudgetSpec, _Mapping]] = ..., status: _Optional[_Union[PodDisruptionBudgetStatus, _Mapping]] = ...) -> None: ...

class LeaseSpec(_message.Message):
    __slots__ = ("holder_identity", "lease_duration_seconds", "acquire_time", "renew_time", "lease_transitions")
    HOLDER_IDENTITY_FIELD_NUMBER: _ClassVar[int]
    LEASE_DURATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    ACQUIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    RENEW_TIME_FIELD_NUMBER: _ClassVar[int]
    LEASE_TRANSITIONS_FIELD_NUMBER: _ClassVar[int]
    holder_identity: str
    lease_duration_seconds: int
    acquire_time: _timestamp_pb2.Timestamp
    renew_time: _timestamp_pb2.Timestamp
    lease_transitions: int
    def __init__(self, holder_identity: _Optional[str] = ..., lease_duration_seconds: _Optional[int] = ..., acquire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., renew_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., lease_transitions: _Optional[int] = ...) -> None: ...

class Lease(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: LeaseSpec
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[LeaseSpec, _Mapping]] = ...) -> None: ...

class LeaseCandidateSpec(_message.Message):
    __slots__ = ("lease_name", "ping_time", "renew_time", "binary_version", "emulation_version", "strategy")
    LEASE_NAME_FIELD_NUMBER: _ClassVar[int]
    PING_TIME_FIELD_NUMBER: _ClassVar[int]
    RENEW_TIME_FIELD_NUMBER: _ClassVar[int]
    BINARY_VERSION_FIELD_NUMBER: _ClassVar[int]
    EMULATION_VERSION_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    lease_name: str
    ping_time: _timestamp_pb2.Timestamp
    renew_time: _timestamp_pb2.Timestamp
    binary_version: str
    emulation_version: str
    strategy: str
    def __init__(self, lease_name: _Optional[str] = ..., ping_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., renew_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., binary_version: _Optional[str] = ..., emulation_version: _Optional[str] = ..., strategy: _Optional[str] = ...) -> None: ...

class LeaseCandidate(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: LeaseCandidateSpec
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[LeaseCandidateSpec, _Mapping]] = ...) -> None: ...

class EventSource(_message.Message):
    __slots__ = ("component", "host")
    COMPONENT_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    component: str
    host: str
    def __init__(self, component: _Optional[str] = ..., host: _Optional[str] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "involved_object", "reason", "message", "source", "first_timestamp", "last_timestamp", "count", "type", "reporting_component", "reporting_instance", "action", "event_time", "series", "related")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    INVOLVED_OBJECT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    FIRST_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    LAST_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    REPORTING_COMPONENT_FIELD_NUMBER: _ClassVar[int]
    REPORTING_INSTANCE_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    EVENT_TIME_FIELD_NUMBER: _ClassVar[int]
    SERIES_FIELD_NUMBER: _ClassVar[int]
    RELATED_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    involved_object: ObjectReference
    reason: str
    message: str
    source: EventSource
    first_timestamp: _timestamp_pb2.Timestamp
    last_timestamp: _timestamp_pb2.Timestamp
    count: int
    type: str
    reporting_component: str
    reporting_instance: str
    action: str
    event_time: _timestamp_pb2.Timestamp
    series: EventSeries
    related: ObjectReference
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., involved_object: _Optional[_Union[ObjectReference, _Mapping]] = ..., reason: _Optional[str] = ..., message: _Optional[str] = ..., source: _Optional[_Union[EventSource, _Mapping]] = ..., first_timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., count: _Optional[int] = ..., type: _Optional[str] = ..., reporting_component: _Optional[str] = ..., reporting_instance: _Optional[str] = ..., action: _Optional[str] = ..., event_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., series: _Optional[_Union[EventSeries, _Mapping]] = ..., related: _Optional[_Union[ObjectReference, _Mapping]] = ...) -> None: ...

class EventSeries(_message.Message):
    __slots__ = ("count", "last_observed_time")
    COUNT_FIELD_NUMBER: _ClassVar[int]
    LAST_OBSERVED_TIME_FIELD_NUMBER: _ClassVar[int]
    count: int
    last_observed_time: _timestamp_pb2.Timestamp
    def __init__(self, count: _Optional[int] = ..., last_observed_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class NamespaceSpec(_message.Message):
    __slots__ = ("finalizers",)
    FINALIZERS_FIELD_NUMBER: _ClassVar[int]
    finalizers: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, finalizers: _Optional[_Iterable[str]] = ...) -> None: ...

class NamespaceStatus(_message.Message):
    __slots__ = ("phase",)
    PHASE_FIELD_NUMBER: _ClassVar[int]
    phase: str
    def __init__(self, phase: _Optional[str] = ...) -> None: ...

class Namespace(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec", "status")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: NamespaceSpec
    status: NamespaceStatus
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[NamespaceSpec, _Mapping]] = ..., status: _Optional[_Union[NamespaceStatus, _Mapping]] = ...) -> None: ...

class RuntimeClassOverhead(_message.Message):
    __slots__ = ("pod_fixed",)
    class PodFixedEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    POD_FIXED_FIELD_NUMBER: _ClassVar[int]
    pod_fixed: _containers.ScalarMap[str, str]
    def __init__(self, pod_fixed: _Optional[_Mapping[str, str]] = ...) -> None: ...

class RuntimeClassScheduling(_message.Message):
    __slots__ = ("node_selector", "tolerations")
    class NodeSelectorEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NODE_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    TOLERATIONS_FIELD_NUMBER: _ClassVar[int]
    node_selector: _containers.ScalarMap[str, str]
    tolerations: _containers.RepeatedCompositeFieldContainer[Toleration]
    def __init__(self, node_selector: _Optional[_Mapping[str, str]] = ..., tolerations: _Optional[_Iterable[_Union[Toleration, _Mapping]]] = ...) -> None: ...

class RuntimeClass(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "handler", "overhead", "scheduling")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    HANDLER_FIELD_NUMBER: _ClassVar[int]
    OVERHEAD_FIELD_NUMBER: _ClassVar[int]
    SCHEDULING_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    handler: str
    overhead: RuntimeClassOverhead
    scheduling: RuntimeClassScheduling
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., handler: _Optional[str] = ..., overhead: _Optional[_Union[RuntimeClassOverhead, _Mapping]] = ..., scheduling: _Optional[_Union[RuntimeClassScheduling, _Mapping]] = ...) -> None: ...

class ServicePort(_message.Message):
    __slots__ = ("name", "protocol", "port", "target_port", "node_port", "app_protocol")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    TARGET_PORT_FIELD_NUMBER: _ClassVar[int]
    NODE_PORT_FIELD_NUMBER: _ClassVar[int]
    APP_PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    name: str
    protocol: str
    port: int
    target_port: _struct_pb2.Value
    node_port: int
    app_protocol: str
    def __init__(self, name: _Optional[str] = ..., protocol: _Optional[str] = ..., port: _Optional[int] = ..., target_port: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., node_port: _Optional[int] = ..., app_protocol: _Optional[str] = ...) -> None: ...

class ServiceSpec(_message.Message):
    __slots__ = ("selector", "type", "ports", "cluster_ip", "cluster_ips", "session_affinity")
    class SelectorEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    PORTS_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_IP_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_IPS_FIELD_NUMBER: _ClassVar[int]
    SESSION_AFFINITY_FIELD_NUMBER: _ClassVar[int]
    selector: _containers.ScalarMap[str, str]
    type: str
    ports: _containers.RepeatedCompositeFieldContainer[ServicePort]
    cluster_ip: str
    cluster_ips: _containers.RepeatedScalarFieldContainer[str]
    session_affinity: str
    def __init__(self, selector: _Optional[_Mapping[str, str]] = ..., type: _Optional[str] = ..., ports: _Optional[_Iterable[_Union[ServicePort, _Mapping]]] = ..., cluster_ip: _Optional[str] = ..., cluster_ips: _Optional[_Iterable[str]] = ..., session_affinity: _Optional[str] = ...) -> None: ...

class Service(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: ServiceSpec
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[ServiceSpec, _Mapping]] = ...) -> None: ...

class PodTemplateSpec(_message.Message):
    __slots__ = ("metadata", "spec")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    metadata: ObjectMeta
    spec: PodSpec
    def __init__(self, metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[PodSpec, _Mapping]] = ...) -> None: ...

class ReplicaSetSpec(_message.Message):
    __slots__ = ("replicas", "selector", "template", "min_ready_seconds")
    REPLICAS_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    TEMPLATE_FIELD_NUMBER: _ClassVar[int]
    MIN_READY_SECONDS_FIELD_NUMBER: _ClassVar[int]
    replicas: int
    selector: LabelSelector
    template: PodTemplateSpec
    min_ready_seconds: int
    def __init__(self, replicas: _Optional[int] = ..., selector: _Optional[_Union[LabelSelector, _Mapping]] = ..., template: _Optional[_Union[PodTemplateSpec, _Mapping]] = ..., min_ready_seconds: _Optional[int] = ...) -> None: ...

class ReplicaSet(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: ReplicaSetSpec
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[ReplicaSetSpec, _Mapping]] = ...) -> None: ...

class StatefulSetSpec(_message.Message):
    __slots__ = ("replicas", "selector", "template", "service_name", "pod_management_policy", "min_ready_seconds")
    REPLICAS_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    TEMPLATE_FIELD_NUMBER: _ClassVar[int]
    SERVICE_NAME_FIELD_NUMBER: _ClassVar[int]
    POD_MANAGEMENT_POLICY_FIELD_NUMBER: _ClassVar[int]
    MIN_READY_SECONDS_FIELD_NUMBER: _ClassVar[int]
    replicas: int
    selector: LabelSelector
    template: PodTemplateSpec
    service_name: str
    pod_management_policy: str
    min_ready_seconds: int
    def __init__(self, replicas: _Optional[int] = ..., selector: _Optional[_Union[LabelSelector, _Mapping]] = ..., template: _Optional[_Union[PodTemplateSpec, _Mapping]] = ..., service_name: _Optional[str] = ..., pod_management_policy: _Optional[str] = ..., min_ready_seconds: _Optional[int] = ...) -> None: ...

class StatefulSet(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: StatefulSetSpec
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[StatefulSetSpec, _Mapping]] = ...) -> None: ...

class ReplicationControllerSpec(_message.Message):
    __slots__ = ("replicas", "selector", "template", "min_ready_seconds")
    class SelectorEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    REPLICAS_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    TEMPLATE_FIELD_NUMBER: _ClassVar[int]
    MIN_READY_SECONDS_FIELD_NUMBER: _ClassVar[int]
    replicas: int
    selector: _containers.ScalarMap[str, str]
    template: PodTemplateSpec
    min_ready_seconds: int
    def __init__(self, replicas: _Optional[int] = ..., selector: _Optional[_Mapping[str, str]] = ..., template: _Optional[_Union[PodTemplateSpec, _Mapping]] = ..., min_ready_seconds: _Optional[int] = ...) -> None: ...

class ReplicationController(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: ReplicationControllerSpec
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[ReplicationControllerSpec, _Mapping]] = ...) -> None: ...

class CELDeviceSelector(_message.Message):
    __slots__ = ("expression",)
    EXPRESSION_FIELD_NUMBER: _ClassVar[int]
    expression: str
    def __init__(self, expression: _Optional[str] = ...) -> None: ...

class DeviceSelector(_message.Message):
    __slots__ = ("cel",)
    CEL_FIELD_NUMBER: _ClassVar[int]
    cel: CELDeviceSelector
    def __init__(self, cel: _Optional[_Union[CELDeviceSelector, _Mapping]] = ...) -> None: ...

class OpaqueDeviceConfiguration(_message.Message):
    __slots__ = ("driver", "parameters")
    DRIVER_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    driver: str
    parameters: _struct_pb2.Struct
    def __init__(self, driver: _Optional[str] = ..., parameters: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class DeviceClassConfiguration(_message.Message):
    __slots__ = ("opaque",)
    OPAQUE_FIELD_NUMBER: _ClassVar[int]
    opaque: OpaqueDeviceConfiguration
    def __init__(self, opaque: _Optional[_Union[OpaqueDeviceConfiguration, _Mapping]] = ...) -> None: ...

class DeviceClassSpec(_message.Message):
    __slots__ = ("selectors", "config", "extended_resource_name")
    SELECTORS_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    EXTENDED_RESOURCE_NAME_FIELD_NUMBER: _ClassVar[int]
    selectors: _containers.RepeatedCompositeFieldContainer[DeviceSelector]
    config: _containers.RepeatedCompositeFieldContainer[DeviceClassConfiguration]
    extended_resource_name: str
    def __init__(self, selectors: _Optional[_Iterable[_Union[DeviceSelector, _Mapping]]] = ..., config: _Optional[_Iterable[_Union[DeviceClassConfiguration, _Mapping]]] = ..., extended_resource_name: _Optional[str] = ...) -> None: ...

class DeviceClass(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: DeviceClassSpec
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[DeviceClassSpec, _Mapping]] = ...) -> None: ...

class ResourcePool(_message.Message):
    __slots__ = ("name", "generation", "resource_slice_count")
    NAME_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_SLICE_COUNT_FIELD_NUMBER: _ClassVar[int]
    name: str
    generation: int
    resource_slice_count: int
    def __init__(self, name: _Optional[str] = ..., generation: _Optional[int] = ..., resource_slice_count: _Optional[int] = ...) -> None: ...

class DeviceAttribute(_message.Message):
    __slots__ = ("int_value", "bool_value", "string_value", "version_value", "int_values", "bool_values", "string_values", "version_values")
    INT_VALUE_FIELD_NUMBER: _ClassVar[int]
    BOOL_VALUE_FIELD_NUMBER: _ClassVar[int]
    STRING_VALUE_FIELD_NUMBER: _ClassVar[int]
    VERSION_VALUE_FIELD_NUMBER: _ClassVar[int]
    INT_VALUES_FIELD_NUMBER: _ClassVar[int]
    BOOL_VALUES_FIELD_NUMBER: _ClassVar[int]
    STRING_VALUES_FIELD_NUMBER: _ClassVar[int]
    VERSION_VALUES_FIELD_NUMBER: _ClassVar[int]
    int_value: int
    bool_value: bool
    string_value: str
    version_value: str
    int_values: _containers.RepeatedScalarFieldContainer[int]
    bool_values: _containers.RepeatedScalarFieldContainer[bool]
    string_values: _containers.RepeatedScalarFieldContainer[str]
    version_values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, int_value: _Optional[int] = ..., bool_value: _Optional[bool] = ..., string_value: _Optional[str] = ..., version_value: _Optional[str] = ..., int_values: _Optional[_Iterable[int]] = ..., bool_values: _Optional[_Iterable[bool]] = ..., string_values: _Optional[_Iterable[str]] = ..., version_values: _Optional[_Iterable[str]] = ...) -> None: ...

class CapacityRequestPolicyRange(_message.Message):
    __slots__ = ("min", "max", "step")
    MIN_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    min: str
    max: str
    step: str
    def __init__(self, min: _Optional[str] = ..., max: _Optional[str] = ..., step: _Optional[str] = ...) -> None: ...

class CapacityRequestPolicy(_message.Message):
    __slots__ = ("default", "valid_values", "valid_range")
    DEFAULT_FIELD_NUMBER: _ClassVar[int]
    VALID_VALUES_FIELD_NUMBER: _ClassVar[int]
    VALID_RANGE_FIELD_NUMBER: _ClassVar[int]
    default: str
    valid_values: _containers.RepeatedScalarFieldContainer[str]
    valid_range: CapacityRequestPolicyRange
    def __init__(self, default: _Optional[str] = ..., valid_values: _Optional[_Iterable[str]] = ..., valid_range: _Optional[_Union[CapacityRequestPolicyRange, _Mapping]] = ...) -> None: ...

class DeviceCapacity(_message.Message):
    __slots__ = ("value", "request_policy")
    VALUE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_POLICY_FIELD_NUMBER: _ClassVar[int]
    value: str
    request_policy: CapacityRequestPolicy
    def __init__(self, value: _Optional[str] = ..., request_policy: _Optional[_Union[CapacityRequestPolicy, _Mapping]] = ...) -> None: ...

class Counter(_message.Message):
    __slots__ = ("value",)
    VALUE_FIELD_NUMBER: _ClassVar[int]
    value: str
    def __init__(self, value: _Optional[str] = ...) -> None: ...

class CounterSet(_message.Message):
    __slots__ = ("name", "counters")
    class CountersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: Counter
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[Counter, _Mapping]] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    COUNTERS_FIELD_NUMBER: _ClassVar[int]
    name: str
    counters: _containers.MessageMap[str, Counter]
    def __init__(self, name: _Optional[str] = ..., counters: _Optional[_Mapping[str, Counter]] = ...) -> None: ...

class DeviceCounterConsumption(_message.Message):
    __slots__ = ("counter_set", "counters")
    class CountersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: Counter
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[Counter, _Mapping]] = ...) -> None: ...
    COUNTER_SET_FIELD_NUMBER: _ClassVar[int]
    COUNTERS_FIELD_NUMBER: _ClassVar[int]
    counter_set: str
    counters: _containers.MessageMap[str, Counter]
    def __init__(self, counter_set: _Optional[str] = ..., counters: _Optional[_Mapping[str, Counter]] = ...) -> None: ...

class DeviceTaint(_message.Message):
    __slots__ = ("key", "value", "effect", "time_added")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    EFFECT_FIELD_NUMBER: _ClassVar[int]
    TIME_ADDED_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: str
    effect: str
    time_added: _timestamp_pb2.Timestamp
    def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ..., effect: _Optional[str] = ..., time_added: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class NodeAllocatableMapping(_message.Message):
    __slots__ = ("capacity_key", "capacity_multiplier", "device_multiplier")
    CAPACITY_KEY_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_MULTIPLIER_FIELD_NUMBER: _ClassVar[int]
    DEVICE_MULTIPLIER_FIELD_NUMBER: _ClassVar[int]
    capacity_key: str
    capacity_multiplier: str
    device_multiplier: str
    def __init__(self, capacity_key: _Optional[str] = ..., capacity_multiplier: _Optional[str] = ..., device_multiplier: _Optional[str] = ...) -> None: ...

class NodeAllocatableOverhead(_message.Message):
    __slots__ = ("per_pod", "per_container")
    PER_POD_FIELD_NUMBER: _ClassVar[int]
    PER_CONTAINER_FIELD_NUMBER: _ClassVar[int]
    per_pod: str
    per_container: str
    def __init__(self, per_pod: _Optional[str] = ..., per_container: _Optional[str] = ...) -> None: ...

class NodeAllocatableResource(_message.Message):
    __slots__ = ("mapping", "overhead")
    MAPPING_FIELD_NUMBER: _ClassVar[int]
    OVERHEAD_FIELD_NUMBER: _ClassVar[int]
    mapping: NodeAllocatableMapping
    overhead: NodeAllocatableOverhead
    def __init__(self, mapping: _Optional[_Union[NodeAllocatableMapping, _Mapping]] = ..., overhead: _Optional[_Union[NodeAllocatableOverhead, _Mapping]] = ...) -> None: ...

class Device(_message.Message):
    __slots__ = ("name", "attributes", "capacity", "consumes_counters", "node_name", "node_selector", "all_nodes", "taints", "binds_to_node", "binding_conditions", "binding_failure_conditions", "allow_multiple_allocations", "node_allocatable_resources")
    class AttributesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: DeviceAttribute
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[DeviceAttribute, _Mapping]] = ...) -> None: ...
    class CapacityEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: DeviceCapacity
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[DeviceCapacity, _Mapping]] = ...) -> None: ...
    class NodeAllocatableResourcesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: NodeAllocatableResource
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[NodeAllocatableResource, _Mapping]] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    CONSUMES_COUNTERS_FIELD_NUMBER: _ClassVar[int]
    NODE_NAME_FIELD_NUMBER: _ClassVar[int]
    NODE_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    ALL_NODES_FIELD_NUMBER: _ClassVar[int]
    TAINTS_FIELD_NUMBER: _ClassVar[int]
    BINDS_TO_NODE_FIELD_NUMBER: _ClassVar[int]
    BINDING_CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    BINDING_FAILURE_CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    ALLOW_MULTIPLE_ALLOCATIONS_FIELD_NUMBER: _ClassVar[int]
    NODE_ALLOCATABLE_RESOURCES_FIELD_NUMBER: _ClassVar[int]
    name: str
    attributes: _containers.MessageMap[str, DeviceAttribute]
    capacity: _containers.MessageMap[str, DeviceCapacity]
    consumes_counters: _containers.RepeatedCompositeFieldContainer[DeviceCounterConsumption]
    node_name: str
    node_selector: NodeSelector
    all_nodes: bool
    taints: _containers.RepeatedCompositeFieldContainer[DeviceTaint]
    binds_to_node: bool
    binding_conditions: _containers.RepeatedScalarFieldContainer[str]
    binding_failure_conditions: _containers.RepeatedScalarFieldContainer[str]
    allow_multiple_allocations: bool
    node_allocatable_resources: _containers.MessageMap[str, NodeAllocatableResource]
    def __init__(self, name: _Optional[str] = ..., attributes: _Optional[_Mapping[str, DeviceAttribute]] = ..., capacity: _Optional[_Mapping[str, DeviceCapacity]] = ..., consumes_counters: _Optional[_Iterable[_Union[DeviceCounterConsumption, _Mapping]]] = ..., node_name: _Optional[str] = ..., node_selector: _Optional[_Union[NodeSelector, _Mapping]] = ..., all_nodes: _Optional[bool] = ..., taints: _Optional[_Iterable[_Union[DeviceTaint, _Mapping]]] = ..., binds_to_node: _Optional[bool] = ..., binding_conditions: _Optional[_Iterable[str]] = ..., binding_failure_conditions: _Optional[_Iterable[str]] = ..., allow_multiple_allocations: _Optional[bool] = ..., node_allocatable_resources: _Optional[_Mapping[str, NodeAllocatableResource]] = ...) -> None: ...

class ResourceSliceSpec(_message.Message):
    __slots__ = ("driver", "pool", "node_name", "node_selector", "all_nodes", "devices", "per_device_node_selection", "shared_counters", "partition_type_attribute", "skip_node_operations")
    DRIVER_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    NODE_NAME_FIELD_NUMBER: _ClassVar[int]
    NODE_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    ALL_NODES_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    PER_DEVICE_NODE_SELECTION_FIELD_NUMBER: _ClassVar[int]
    SHARED_COUNTERS_FIELD_NUMBER: _ClassVar[int]
    PARTITION_TYPE_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    SKIP_NODE_OPERATIONS_FIELD_NUMBER: _ClassVar[int]
    driver: str
    pool: ResourcePool
    node_name: str
    node_selector: NodeSelector
    all_nodes: bool
    devices: _containers.RepeatedCompositeFieldContainer[Device]
    per_device_node_selection: bool
    shared_counters: _containers.RepeatedCompositeFieldContainer[CounterSet]
    partition_type_attribute: str
    skip_node_operations: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, driver: _Optional[str] = ..., pool: _Optional[_Union[ResourcePool, _Mapping]] = ..., node_name: _Optional[str] = ..., node_selector: _Optional[_Union[NodeSelector, _Mapping]] = ..., all_nodes: _Optional[bool] = ..., devices: _Optional[_Iterable[_Union[Device, _Mapping]]] = ..., per_device_node_selection: _Optional[bool] = ..., shared_counters: _Optional[_Iterable[_Union[CounterSet, _Mapping]]] = ..., partition_type_attribute: _Optional[str] = ..., skip_node_operations: _Optional[_Iterable[str]] = ...) -> None: ...

class ResourceSlice(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: ResourceSliceSpec
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[ResourceSliceSpec, _Mapping]] = ...) -> None: ...

class DeviceToleration(_message.Message):
    __slots__ = ("key", "operator", "value", "effect", "toleration_seconds")
    KEY_FIELD_NUMBER: _ClassVar[int]
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    EFFECT_FIELD_NUMBER: _ClassVar[int]
    TOLERATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    key: str
    operator: str
    value: str
    effect: str
    toleration_seconds: int
    def __init__(self, key: _Optional[str] = ..., operator: _Optional[str] = ..., value: _Optional[str] = ..., effect: _Optional[str] = ..., toleration_seconds: _Optional[int] = ...) -> None: ...

class CapacityRequirements(_message.Message):
    __slots__ = ("requests",)
    class RequestsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.ScalarMap[str, str]
    def __init__(self, requests: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ExactDeviceRequest(_message.Message):
    __slots__ = ("device_class_name", "selectors", "allocation_mode", "count", "admin_access", "tolerations", "capacity")
    DEVICE_CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    SELECTORS_FIELD_NUMBER: _ClassVar[int]
    ALLOCATION_MODE_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    ADMIN_ACCESS_FIELD_NUMBER: _ClassVar[int]
    TOLERATIONS_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    device_class_name: str
    selectors: _containers.RepeatedCompositeFieldContainer[DeviceSelector]
    allocation_mode: str
    count: int
    admin_access: bool
    tolerations: _containers.RepeatedCompositeFieldContainer[DeviceToleration]
    capacity: CapacityRequirements
    def __init__(self, device_class_name: _Optional[str] = ..., selectors: _Optional[_Iterable[_Union[DeviceSelector, _Mapping]]] = ..., allocation_mode: _Optional[str] = ..., count: _Optional[int] = ..., admin_access: _Optional[bool] = ..., tolerations: _Optional[_Iterable[_Union[DeviceToleration, _Mapping]]] = ..., capacity: _Optional[_Union[CapacityRequirements, _Mapping]] = ...) -> None: ...

class DeviceSubRequest(_message.Message):
    __slots__ = ("name", "device_class_name", "selectors", "allocation_mode", "count", "tolerations", "capacity")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DEVICE_CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    SELECTORS_FIELD_NUMBER: _ClassVar[int]
    ALLOCATION_MODE_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    TOLERATIONS_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    name: str
    device_class_name: str
    selectors: _containers.RepeatedCompositeFieldContainer[DeviceSelector]
    allocation_mode: str
    count: int
    tolerations: _containers.RepeatedCompositeFieldContainer[DeviceToleration]
    capacity: CapacityRequirements
    def __init__(self, name: _Optional[str] = ..., device_class_name: _Optional[str] = ..., selectors: _Optional[_Iterable[_Union[DeviceSelector, _Mapping]]] = ..., allocation_mode: _Optional[str] = ..., count: _Optional[int] = ..., tolerations: _Optional[_Iterable[_Union[DeviceToleration, _Mapping]]] = ..., capacity: _Optional[_Union[CapacityRequirements, _Mapping]] = ...) -> None: ...

class DeviceRequest(_message.Message):
    __slots__ = ("name", "exactly", "first_available")
    NAME_FIELD_NUMBER: _ClassVar[int]
    EXACTLY_FIELD_NUMBER: _ClassVar[int]
    FIRST_AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    name: str
    exactly: ExactDeviceRequest
    first_available: _containers.RepeatedCompositeFieldContainer[DeviceSubRequest]
    def __init__(self, name: _Optional[str] = ..., exactly: _Optional[_Union[ExactDeviceRequest, _Mapping]] = ..., first_available: _Optional[_Iterable[_Union[DeviceSubRequest, _Mapping]]] = ...) -> None: ...

class DeviceConstraint(_message.Message):
    __slots__ = ("requests", "match_attribute", "distinct_attribute")
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    MATCH_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    DISTINCT_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedScalarFieldContainer[str]
    match_attribute: str
    distinct_attribute: str
    def __init__(self, requests: _Optional[_Iterable[str]] = ..., match_attribute: _Optional[str] = ..., distinct_attribute: _Optional[str] = ...) -> None: ...

class DeviceClaimConfiguration(_message.Message):
    __slots__ = ("requests", "opaque")
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    OPAQUE_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedScalarFieldContainer[str]
    opaque: OpaqueDeviceConfiguration
    def __init__(self, requests: _Optional[_Iterable[str]] = ..., opaque: _Optional[_Union[OpaqueDeviceConfiguration, _Mapping]] = ...) -> None: ...

class DeviceClaim(_message.Message):
    __slots__ = ("requests", "constraints", "config")
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    CONSTRAINTS_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[DeviceRequest]
    constraints: _containers.RepeatedCompositeFieldContainer[DeviceConstraint]
    config: _containers.RepeatedCompositeFieldContainer[DeviceClaimConfiguration]
    def __init__(self, requests: _Optional[_Iterable[_Union[DeviceRequest, _Mapping]]] = ..., constraints: _Optional[_Iterable[_Union[DeviceConstraint, _Mapping]]] = ..., config: _Optional[_Iterable[_Union[DeviceClaimConfiguration, _Mapping]]] = ...) -> None: ...

class ResourceClaimSpec(_message.Message):
    __slots__ = ("devices",)
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    devices: DeviceClaim
    def __init__(self, devices: _Optional[_Union[DeviceClaim, _Mapping]] = ...) -> None: ...

class ResourceClaimConsumerReference(_message.Message):
    __slots__ = ("api_group", "resource", "name", "uid")
    API_GROUP_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    api_group: str
    resource: str
    name: str
    uid: str
    def __init__(self, api_group: _Optional[str] = ..., resource: _Optional[str] = ..., name: _Optional[str] = ..., uid: _Optional[str] = ...) -> None: ...

class DeviceRequestAllocationResult(_message.Message):
    __slots__ = ("request", "driver", "pool", "device", "admin_access", "tolerations", "binding_conditions", "binding_failure_conditions", "share_id", "consumed_capacity", "skip_node_operations")
    class ConsumedCapacityEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    DRIVER_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    ADMIN_ACCESS_FIELD_NUMBER: _ClassVar[int]
    TOLERATIONS_FIELD_NUMBER: _ClassVar[int]
    BINDING_CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    BINDING_FAILURE_CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    SHARE_ID_FIELD_NUMBER: _ClassVar[int]
    CONSUMED_CAPACITY_FIELD_NUMBER: _ClassVar[int]
    SKIP_NODE_OPERATIONS_FIELD_NUMBER: _ClassVar[int]
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool
    tolerations: _containers.RepeatedCompositeFieldContainer[DeviceToleration]
    binding_conditions: _containers.RepeatedScalarFieldContainer[str]
    binding_failure_conditions: _containers.RepeatedScalarFieldContainer[str]
    share_id: str
    consumed_capacity: _containers.ScalarMap[str, str]
    skip_node_operations: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, request: _Optional[str] = ..., driver: _Optional[str] = ..., pool: _Optional[str] = ..., device: _Optional[str] = ..., admin_access: _Optional[bool] = ..., tolerations: _Optional[_Iterable[_Union[DeviceToleration, _Mapping]]] = ..., binding_conditions: _Optional[_Iterable[str]] = ..., binding_failure_conditions: _Optional[_Iterable[str]] = ..., share_id: _Optional[str] = ..., consumed_capacity: _Optional[_Mapping[str, str]] = ..., skip_node_operations: _Optional[_Iterable[str]] = ...) -> None: ...

class DeviceAllocationConfiguration(_message.Message):
    __slots__ = ("source", "requests", "opaque")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    OPAQUE_FIELD_NUMBER: _ClassVar[int]
    source: str
    requests: _containers.RepeatedScalarFieldContainer[str]
    opaque: OpaqueDeviceConfiguration
    def __init__(self, source: _Optional[str] = ..., requests: _Optional[_Iterable[str]] = ..., opaque: _Optional[_Union[OpaqueDeviceConfiguration, _Mapping]] = ...) -> None: ...

class DeviceAllocationResult(_message.Message):
    __slots__ = ("results", "config")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[DeviceRequestAllocationResult]
    config: _containers.RepeatedCompositeFieldContainer[DeviceAllocationConfiguration]
    def __init__(self, results: _Optional[_Iterable[_Union[DeviceRequestAllocationResult, _Mapping]]] = ..., config: _Optional[_Iterable[_Union[DeviceAllocationConfiguration, _Mapping]]] = ...) -> None: ...

class AllocationResult(_message.Message):
    __slots__ = ("devices", "node_selector", "allocation_timestamp")
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    NODE_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    ALLOCATION_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    devices: DeviceAllocationResult
    node_selector: NodeSelector
    allocation_timestamp: _timestamp_pb2.Timestamp
    def __init__(self, devices: _Optional[_Union[DeviceAllocationResult, _Mapping]] = ..., node_selector: _Optional[_Union[NodeSelector, _Mapping]] = ..., allocation_timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class NetworkDeviceData(_message.Message):
    __slots__ = ("interface_name", "ips", "hardware_address")
    INTERFACE_NAME_FIELD_NUMBER: _ClassVar[int]
    IPS_FIELD_NUMBER: _ClassVar[int]
    HARDWARE_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    interface_name: str
    ips: _containers.RepeatedScalarFieldContainer[str]
    hardware_address: str
    def __init__(self, interface_name: _Optional[str] = ..., ips: _Optional[_Iterable[str]] = ..., hardware_address: _Optional[str] = ...) -> None: ...

class AllocatedDeviceStatus(_message.Message):
    __slots__ = ("driver", "pool", "device", "share_id", "conditions", "data", "network_data")
    DRIVER_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    SHARE_ID_FIELD_NUMBER: _ClassVar[int]
    CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    NETWORK_DATA_FIELD_NUMBER: _ClassVar[int]
    driver: str
    pool: str
    device: str
    share_id: str
    conditions: _containers.RepeatedCompositeFieldContainer[Condition]
    data: _struct_pb2.Struct
    network_data: NetworkDeviceData
    def __init__(self, driver: _Optional[str] = ..., pool: _Optional[str] = ..., device: _Optional[str] = ..., share_id: _Optional[str] = ..., conditions: _Optional[_Iterable[_Union[Condition, _Mapping]]] = ..., data: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., network_data: _Optional[_Union[NetworkDeviceData, _Mapping]] = ...) -> None: ...

class ResourceClaimStatus(_message.Message):
    __slots__ = ("allocation", "reserved_for", "devices")
    ALLOCATION_FIELD_NUMBER: _ClassVar[int]
    RESERVED_FOR_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    allocation: AllocationResult
    reserved_for: _containers.RepeatedCompositeFieldContainer[ResourceClaimConsumerReference]
    devices: _containers.RepeatedCompositeFieldContainer[AllocatedDeviceStatus]
    def __init__(self, allocation: _Optional[_Union[AllocationResult, _Mapping]] = ..., reserved_for: _Optional[_Iterable[_Union[ResourceClaimConsumerReference, _Mapping]]] = ..., devices: _Optional[_Iterable[_Union[AllocatedDeviceStatus, _Mapping]]] = ...) -> None: ...

class ResourceClaim(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec", "status")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: ResourceClaimSpec
    status: ResourceClaimStatus
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[ResourceClaimSpec, _Mapping]] = ..., status: _Optional[_Union[ResourceClaimStatus, _Mapping]] = ...) -> None: ...

class ResourceClaimTemplateSpec(_message.Message):
    __slots__ = ("metadata", "spec")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    metadata: ObjectMeta
    spec: ResourceClaimSpec
    def __init__(self, metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[ResourceClaimSpec, _Mapping]] = ...) -> None: ...

class ResourceClaimTemplate(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: ResourceClaimTemplateSpec
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[ResourceClaimTemplateSpec, _Mapping]] = ...) -> None: ...

class PersistentVolumeClaimVolumeSource(_message.Message):
    __slots__ = ("claim_name", "read_only")
    CLAIM_NAME_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    claim_name: str
    read_only: bool
    def __init__(self, claim_name: _Optional[str] = ..., read_only: _Optional[bool] = ...) -> None: ...

class PersistentVolumeClaimTemplate(_message.Message):
    __slots__ = ("metadata", "spec")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    metadata: ObjectMeta
    spec: PersistentVolumeClaimSpec
    def __init__(self, metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[PersistentVolumeClaimSpec, _Mapping]] = ...) -> None: ...

class EphemeralVolumeSource(_message.Message):
    __slots__ = ("volume_claim_template",)
    VOLUME_CLAIM_TEMPLATE_FIELD_NUMBER: _ClassVar[int]
    volume_claim_template: PersistentVolumeClaimTemplate
    def __init__(self, volume_claim_template: _Optional[_Union[PersistentVolumeClaimTemplate, _Mapping]] = ...) -> None: ...

class LocalObjectReference(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class CSIVolumeSource(_message.Message):
    __slots__ = ("driver", "read_only", "fs_type", "volume_attributes", "node_publish_secret_ref")
    class VolumeAttributesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    DRIVER_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    FS_TYPE_FIELD_NUMBER: _ClassVar[int]
    VOLUME_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    NODE_PUBLISH_SECRET_REF_FIELD_NUMBER: _ClassVar[int]
    driver: str
    read_only: bool
    fs_type: str
    volume_attributes: _containers.ScalarMap[str, str]
    node_publish_secret_ref: LocalObjectReference
    def __init__(self, driver: _Optional[str] = ..., read_only: _Optional[bool] = ..., fs_type: _Optional[str] = ..., volume_attributes: _Optional[_Mapping[str, str]] = ..., node_publish_secret_ref: _Optional[_Union[LocalObjectReference, _Mapping]] = ...) -> None: ...

class GCEPersistentDiskVolumeSource(_message.Message):
    __slots__ = ("pd_name", "fs_type", "partition", "read_only")
    PD_NAME_FIELD_NUMBER: _ClassVar[int]
    FS_TYPE_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    pd_name: str
    fs_type: str
    partition: int
    read_only: bool
    def __init__(self, pd_name: _Optional[str] = ..., fs_type: _Optional[str] = ..., partition: _Optional[int] = ..., read_only: _Optional[bool] = ...) -> None: ...

class AWSElasticBlockStoreVolumeSource(_message.Message):
    __slots__ = ("volume_id", "fs_type", "partition", "read_only")
    VOLUME_ID_FIELD_NUMBER: _ClassVar[int]
    FS_TYPE_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    volume_id: str
    fs_type: str
    partition: int
    read_only: bool
    def __init__(self, volume_id: _Optional[str] = ..., fs_type: _Optional[str] = ..., partition: _Optional[int] = ..., read_only: _Optional[bool] = ...) -> None: ...

class ISCSIVolumeSource(_message.Message):
    __slots__ = ("target_portal", "iqn", "lun", "iscsi_interface", "fs_type", "read_only", "portals", "chap_auth_discovery", "chap_auth_session", "secret_ref", "initiator_name")
    TARGET_PORTAL_FIELD_NUMBER: _ClassVar[int]
    IQN_FIELD_NUMBER: _ClassVar[int]
    LUN_FIELD_NUMBER: _ClassVar[int]
    ISCSI_INTERFACE_FIELD_NUMBER: _ClassVar[int]
    FS_TYPE_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    PORTALS_FIELD_NUMBER: _ClassVar[int]
    CHAP_AUTH_DISCOVERY_FIELD_NUMBER: _ClassVar[int]
    CHAP_AUTH_SESSION_FIELD_NUMBER: _ClassVar[int]
    SECRET_REF_FIELD_NUMBER: _ClassVar[int]
    INITIATOR_NAME_FIELD_NUMBER: _ClassVar[int]
    target_portal: str
    iqn: str
    lun: int
    iscsi_interface: str
    fs_type: str
    read_only: bool
    portals: _containers.RepeatedScalarFieldContainer[str]
    chap_auth_discovery: bool
    chap_auth_session: bool
    secret_ref: _struct_pb2.Struct
    initiator_name: str
    def __init__(self, target_portal: _Optional[str] = ..., iqn: _Optional[str] = ..., lun: _Optional[int] = ..., iscsi_interface: _Optional[str] = ..., fs_type: _Optional[str] = ..., read_only: _Optional[bool] = ..., portals: _Optional[_Iterable[str]] = ..., chap_auth_discovery: _Optional[bool] = ..., chap_auth_session: _Optional[bool] = ..., secret_ref: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., initiator_name: _Optional[str] = ...) -> None: ...

class RBDVolumeSource(_message.Message):
    __slots__ = ("monitors", "image", "fs_type", "pool", "user", "keyring", "secret_ref", "read_only")
    MONITORS_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    FS_TYPE_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    KEYRING_FIELD_NUMBER: _ClassVar[int]
    SECRET_REF_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    monitors: _containers.RepeatedScalarFieldContainer[str]
    image: str
    fs_type: str
    pool: str
    user: str
    keyring: str
    secret_ref: _struct_pb2.Struct
    read_only: bool
    def __init__(self, monitors: _Optional[_Iterable[str]] = ..., image: _Optional[str] = ..., fs_type: _Optional[str] = ..., pool: _Optional[str] = ..., user: _Optional[str] = ..., keyring: _Optional[str] = ..., secret_ref: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., read_only: _Optional[bool] = ...) -> None: ...

class AzureDiskVolumeSource(_message.Message):
    __slots__ = ("disk_name", "disk_uri", "caching_mode", "fs_type", "read_only", "kind")
    DISK_NAME_FIELD_NUMBER: _ClassVar[int]
    DISK_URI_FIELD_NUMBER: _ClassVar[int]
    CACHING_MODE_FIELD_NUMBER: _ClassVar[int]
    FS_TYPE_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    disk_name: str
    disk_uri: str
    caching_mode: str
    fs_type: str
    read_only: bool
    kind: str
    def __init__(self, disk_name: _Optional[str] = ..., disk_uri: _Optional[str] = ..., caching_mode: _Optional[str] = ..., fs_type: _Optional[str] = ..., read_only: _Optional[bool] = ..., kind: _Optional[str] = ...) -> None: ...

class Volume(_message.Message):
    __slots__ = ("name", "persistent_volume_claim", "ephemeral", "csi", "gce_persistent_disk", "aws_elastic_block_store", "iscsi", "rbd", "azure_disk", "host_path", "empty_dir", "git_repo", "secret", "nfs", "glusterfs", "flex_volume", "cinder", "cephfs", "flocker", "downward_api", "fc", "azure_file", "config_map", "vsphere_volume", "quobyte", "photon_persistent_disk", "projected", "portworx_volume", "scale_io", "storageos", "image")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PERSISTENT_VOLUME_CLAIM_FIELD_NUMBER: _ClassVar[int]
    EPHEMERAL_FIELD_NUMBER: _ClassVar[int]
    CSI_FIELD_NUMBER: _ClassVar[int]
    GCE_PERSISTENT_DISK_FIELD_NUMBER: _ClassVar[int]
    AWS_ELASTIC_BLOCK_STORE_FIELD_NUMBER: _ClassVar[int]
    ISCSI_FIELD_NUMBER: _ClassVar[int]
    RBD_FIELD_NUMBER: _ClassVar[int]
    AZURE_DISK_FIELD_NUMBER: _ClassVar[int]
    HOST_PATH_FIELD_NUMBER: _ClassVar[int]
    EMPTY_DIR_FIELD_NUMBER: _ClassVar[int]
    GIT_REPO_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    NFS_FIELD_NUMBER: _ClassVar[int]
    GLUSTERFS_FIELD_NUMBER: _ClassVar[int]
    FLEX_VOLUME_FIELD_NUMBER: _ClassVar[int]
    CINDER_FIELD_NUMBER: _ClassVar[int]
    CEPHFS_FIELD_NUMBER: _ClassVar[int]
    FLOCKER_FIELD_NUMBER: _ClassVar[int]
    DOWNWARD_API_FIELD_NUMBER: _ClassVar[int]
    FC_FIELD_NUMBER: _ClassVar[int]
    AZURE_FILE_FIELD_NUMBER: _ClassVar[int]
    CONFIG_MAP_FIELD_NUMBER: _ClassVar[int]
    VSPHERE_VOLUME_FIELD_NUMBER: _ClassVar[int]
    QUOBYTE_FIELD_NUMBER: _ClassVar[int]
    PHOTON_PERSISTENT_DISK_FIELD_NUMBER: _ClassVar[int]
    PROJECTED_FIELD_NUMBER: _ClassVar[int]
    PORTWORX_VOLUME_FIELD_NUMBER: _ClassVar[int]
    SCALE_IO_FIELD_NUMBER: _ClassVar[int]
    STORAGEOS_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    name: str
    persistent_volume_claim: PersistentVolumeClaimVolumeSource
    ephemeral: EphemeralVolumeSource
    csi: CSIVolumeSource
    gce_persistent_disk: GCEPersistentDiskVolumeSource
    aws_elastic_block_store: AWSElasticBlockStoreVolumeSource
    iscsi: ISCSIVolumeSource
    rbd: RBDVolumeSource
    azure_disk: AzureDiskVolumeSource
    host_path: _struct_pb2.Struct
    empty_dir: _struct_pb2.Struct
    git_repo: _struct_pb2.Struct
    secret: _struct_pb2.Struct
    nfs: _struct_pb2.Struct
    glusterfs: _struct_pb2.Struct
    flex_volume: _struct_pb2.Struct
    cinder: _struct_pb2.Struct
    cephfs: _struct_pb2.Struct
    flocker: _struct_pb2.Struct
    downward_api: _struct_pb2.Struct
    fc: _struct_pb2.Struct
    azure_file: _struct_pb2.Struct
    config_map: _struct_pb2.Struct
    vsphere_volume: _struct_pb2.Struct
    quobyte: _struct_pb2.Struct
    photon_persistent_disk: _struct_pb2.Struct
    projected: _struct_pb2.Struct
    portworx_volume: _struct_pb2.Struct
    scale_io: _struct_pb2.Struct
    storageos: _struct_pb2.Struct
    image: _struct_pb2.Struct
    def __init__(self, name: _Optional[str] = ..., persistent_volume_claim: _Optional[_Union[PersistentVolumeClaimVolumeSource, _Mapping]] = ..., ephemeral: _Optional[_Union[EphemeralVolumeSource, _Mapping]] = ..., csi: _Optional[_Union[CSIVolumeSource, _Mapping]] = ..., gce_persistent_disk: _Optional[_Union[GCEPersistentDiskVolumeSource, _Mapping]] = ..., aws_elastic_block_store: _Optional[_Union[AWSElasticBlockStoreVolumeSource, _Mapping]] = ..., iscsi: _Optional[_Union[ISCSIVolumeSource, _Mapping]] = ..., rbd: _Optional[_Union[RBDVolumeSource, _Mapping]] = ..., azure_disk: _Optional[_Union[AzureDiskVolumeSource, _Mapping]] = ..., host_path: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., empty_dir: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., git_repo: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., secret: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., nfs: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., glusterfs: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., flex_volume: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., cinder: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., cephfs: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., flocker: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., downward_api: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., fc: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., azure_file: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., config_map: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., vsphere_volume: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., quobyte: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., photon_persistent_disk: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., projected: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., portworx_volume: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., scale_io: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., storageos: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., image: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class TypedObjectReference(_message.Message):
    __slots__ = ("api_group", "kind", "name", "namespace")
    API_GROUP_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    api_group: str
    kind: str
    name: str
    namespace: str
    def __init__(self, api_group: _Optional[str] = ..., kind: _Optional[str] = ..., name: _Optional[str] = ..., namespace: _Optional[str] = ...) -> None: ...

class VolumeResourceRequirements(_message.Message):
    __slots__ = ("limits", "requests")
    class LimitsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class RequestsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    limits: _containers.ScalarMap[str, str]
    requests: _containers.ScalarMap[str, str]
    def __init__(self, limits: _Optional[_Mapping[str, str]] = ..., requests: _Optional[_Mapping[str, str]] = ...) -> None: ...

class PersistentVolumeClaimSpec(_message.Message):
    __slots__ = ("access_modes", "selector", "resources", "volume_name", "storage_class_name", "volume_mode", "data_source", "data_source_ref", "volume_attributes_class_name")
    ACCESS_MODES_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    RESOURCES_FIELD_NUMBER: _ClassVar[int]
    VOLUME_NAME_FIELD_NUMBER: _ClassVar[int]
    STORAGE_CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    VOLUME_MODE_FIELD_NUMBER: _ClassVar[int]
    DATA_SOURCE_FIELD_NUMBER: _ClassVar[int]
    DATA_SOURCE_REF_FIELD_NUMBER: _ClassVar[int]
    VOLUME_ATTRIBUTES_CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    access_modes: _containers.RepeatedScalarFieldContainer[str]
    selector: LabelSelector
    resources: VolumeResourceRequirements
    volume_name: str
    storage_class_name: str
    volume_mode: str
    data_source: TypedLocalObjectReference
    data_source_ref: TypedObjectReference
    volume_attributes_class_name: str
    def __init__(self, access_modes: _Optional[_Iterable[str]] = ..., selector: _Optional[_Union[LabelSelector, _Mapping]] = ..., resources: _Optional[_Union[VolumeResourceRequirements, _Mapping]] = ..., volume_name: _Optional[str] = ..., storage_class_name: _Optional[str] = ..., volume_mode: _Optional[str] = ..., data_source: _Optional[_Union[TypedLocalObjectReference, _Mapping]] = ..., data_source_ref: _Optional[_Union[TypedObjectReference, _Mapping]] = ..., volume_attributes_class_name: _Optional[str] = ...) -> None: ...

class PersistentVolumeClaimCondition(_message.Message):
    __slots__ = ("type", "status", "last_probe_time", "last_transition_time", "reason", "message")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    LAST_PROBE_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_TRANSITION_TIME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    type: str
    status: str
    last_probe_time: _timestamp_pb2.Timestamp
    last_transition_time: _timestamp_pb2.Timestamp
    reason: str
    message: str
    def __init__(self, type: _Optional[str] = ..., status: _Optional[str] = ..., last_probe_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_transition_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., reason: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class PersistentVolumeClaimStatus(_message.Message):
    __slots__ = ("phase", "access_modes", "capacity", "conditions", "allocated_resources", "allocated_resource_statuses", "current_volume_attributes_class_name")
    class CapacityEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class AllocatedResourcesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class AllocatedResourceStatusesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    PHASE_FIELD_NUMBER: _ClassVar[int]
    ACCESS_MODES_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    ALLOCATED_RESOURCES_FIELD_NUMBER: _ClassVar[int]
    ALLOCATED_RESOURCE_STATUSES_FIELD_NUMBER: _ClassVar[int]
    CURRENT_VOLUME_ATTRIBUTES_CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    phase: str
    access_modes: _containers.RepeatedScalarFieldContainer[str]
    capacity: _containers.ScalarMap[str, str]
    conditions: _containers.RepeatedCompositeFieldContainer[PersistentVolumeClaimCondition]
    allocated_resources: _containers.ScalarMap[str, str]
    allocated_resource_statuses: _containers.ScalarMap[str, str]
    current_volume_attributes_class_name: str
    def __init__(self, phase: _Optional[str] = ..., access_modes: _Optional[_Iterable[str]] = ..., capacity: _Optional[_Mapping[str, str]] = ..., conditions: _Optional[_Iterable[_Union[PersistentVolumeClaimCondition, _Mapping]]] = ..., allocated_resources: _Optional[_Mapping[str, str]] = ..., allocated_resource_statuses: _Optional[_Mapping[str, str]] = ..., current_volume_attributes_class_name: _Optional[str] = ...) -> None: ...

class PersistentVolumeClaim(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec", "status")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: PersistentVolumeClaimSpec
    status: PersistentVolumeClaimStatus
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[PersistentVolumeClaimSpec, _Mapping]] = ..., status: _Optional[_Union[PersistentVolumeClaimStatus, _Mapping]] = ...) -> None: ...

class LocalVolumeSource(_message.Message):
    __slots__ = ("path", "fs_type")
    PATH_FIELD_NUMBER: _ClassVar[int]
    FS_TYPE_FIELD_NUMBER: _ClassVar[int]
    path: str
    fs_type: str
    def __init__(self, path: _Optional[str] = ..., fs_type: _Optional[str] = ...) -> None: ...

class HostPathVolumeSource(_message.Message):
    __slots__ = ("path", "type")
    PATH_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    path: str
    type: str
    def __init__(self, path: _Optional[str] = ..., type: _Optional[str] = ...) -> None: ...

class CSIPersistentVolumeSource(_message.Message):
    __slots__ = ("driver", "volume_handle", "read_only", "fs_type", "volume_attributes", "controller_publish_secret_ref", "node_stage_secret_ref", "node_publish_secret_ref", "controller_expand_secret_ref", "node_expand_secret_ref")
    class VolumeAttributesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    DRIVER_FIELD_NUMBER: _ClassVar[int]
    VOLUME_HANDLE_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    FS_TYPE_FIELD_NUMBER: _ClassVar[int]
    VOLUME_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    CONTROLLER_PUBLISH_SECRET_REF_FIELD_NUMBER: _ClassVar[int]
    NODE_STAGE_SECRET_REF_FIELD_NUMBER: _ClassVar[int]
    NODE_PUBLISH_SECRET_REF_FIELD_NUMBER: _ClassVar[int]
    CONTROLLER_EXPAND_SECRET_REF_FIELD_NUMBER: _ClassVar[int]
    NODE_EXPAND_SECRET_REF_FIELD_NUMBER: _ClassVar[int]
    driver: str
    volume_handle: str
    read_only: bool
    fs_type: str
    volume_attributes: _containers.ScalarMap[str, str]
    controller_publish_secret_ref: _struct_pb2.Struct
    node_stage_secret_ref: _struct_pb2.Struct
    node_publish_secret_ref: _struct_pb2.Struct
    controller_expand_secret_ref: _struct_pb2.Struct
    node_expand_secret_ref: _struct_pb2.Struct
    def __init__(self, driver: _Optional[str] = ..., volume_handle: _Optional[str] = ..., read_only: _Optional[bool] = ..., fs_type: _Optional[str] = ..., volume_attributes: _Optional[_Mapping[str, str]] = ..., controller_publish_secret_ref: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., node_stage_secret_ref: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., node_publish_secret_ref: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., controller_expand_secret_ref: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., node_expand_secret_ref: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class VolumeNodeAffinity(_message.Message):
    __slots__ = ("required",)
    REQUIRED_FIELD_NUMBER: _ClassVar[int]
    required: NodeSelector
    def __init__(self, required: _Optional[_Union[NodeSelector, _Mapping]] = ...) -> None: ...

class PersistentVolumeSpec(_message.Message):
    __slots__ = ("capacity", "access_modes", "claim_ref", "persistent_volume_reclaim_policy", "storage_class_name", "mount_options", "volume_mode", "node_affinity", "volume_attributes_class_name", "csi", "local", "host_path", "gce_persistent_disk", "aws_elastic_block_store", "azure_disk", "glusterfs", "nfs", "rbd", "iscsi", "cinder", "cephfs", "fc", "flocker", "flex_volume", "azure_file", "vsphere_volume", "quobyte", "photon_persistent_disk", "portworx_volume", "scale_io", "storageos")
    class CapacityEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    ACCESS_MODES_FIELD_NUMBER: _ClassVar[int]
    CLAIM_REF_FIELD_NUMBER: _ClassVar[int]
    PERSISTENT_VOLUME_RECLAIM_POLICY_FIELD_NUMBER: _ClassVar[int]
    STORAGE_CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    MOUNT_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    VOLUME_MODE_FIELD_NUMBER: _ClassVar[int]
    NODE_AFFINITY_FIELD_NUMBER: _ClassVar[int]
    VOLUME_ATTRIBUTES_CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    CSI_FIELD_NUMBER: _ClassVar[int]
    LOCAL_FIELD_NUMBER: _ClassVar[int]
    HOST_PATH_FIELD_NUMBER: _ClassVar[int]
    GCE_PERSISTENT_DISK_FIELD_NUMBER: _ClassVar[int]
    AWS_ELASTIC_BLOCK_STORE_FIELD_NUMBER: _ClassVar[int]
    AZURE_DISK_FIELD_NUMBER: _ClassVar[int]
    GLUSTERFS_FIELD_NUMBER: _ClassVar[int]
    NFS_FIELD_NUMBER: _ClassVar[int]
    RBD_FIELD_NUMBER: _ClassVar[int]
    ISCSI_FIELD_NUMBER: _ClassVar[int]
    CINDER_FIELD_NUMBER: _ClassVar[int]
    CEPHFS_FIELD_NUMBER: _ClassVar[int]
    FC_FIELD_NUMBER: _ClassVar[int]
    FLOCKER_FIELD_NUMBER: _ClassVar[int]
    FLEX_VOLUME_FIELD_NUMBER: _ClassVar[int]
    AZURE_FILE_FIELD_NUMBER: _ClassVar[int]
    VSPHERE_VOLUME_FIELD_NUMBER: _ClassVar[int]
    QUOBYTE_FIELD_NUMBER: _ClassVar[int]
    PHOTON_PERSISTENT_DISK_FIELD_NUMBER: _ClassVar[int]
    PORTWORX_VOLUME_FIELD_NUMBER: _ClassVar[int]
    SCALE_IO_FIELD_NUMBER: _ClassVar[int]
    STORAGEOS_FIELD_NUMBER: _ClassVar[int]
    capacity: _containers.ScalarMap[str, str]
    access_modes: _containers.RepeatedScalarFieldContainer[str]
    claim_ref: ObjectReference
    persistent_volume_reclaim_policy: str
    storage_class_name: str
    mount_options: _containers.RepeatedScalarFieldContainer[str]
    volume_mode: str
    node_affinity: VolumeNodeAffinity
    volume_attributes_class_name: str
    csi: CSIPersistentVolumeSource
    local: LocalVolumeSource
    host_path: HostPathVolumeSource
    gce_persistent_disk: GCEPersistentDiskVolumeSource
    aws_elastic_block_store: AWSElasticBlockStoreVolumeSource
    azure_disk: AzureDiskVolumeSource
    glusterfs: _struct_pb2.Struct
    nfs: _struct_pb2.Struct
    rbd: _struct_pb2.Struct
    iscsi: _struct_pb2.Struct
    cinder: _struct_pb2.Struct
    cephfs: _struct_pb2.Struct
    fc: _struct_pb2.Struct
    flocker: _struct_pb2.Struct
    flex_volume: _struct_pb2.Struct
    azure_file: _struct_pb2.Struct
    vsphere_volume: _struct_pb2.Struct
    quobyte: _struct_pb2.Struct
    photon_persistent_disk: _struct_pb2.Struct
    portworx_volume: _struct_pb2.Struct
    scale_io: _struct_pb2.Struct
    storageos: _struct_pb2.Struct
    def __init__(self, capacity: _Optional[_Mapping[str, str]] = ..., access_modes: _Optional[_Iterable[str]] = ..., claim_ref: _Optional[_Union[ObjectReference, _Mapping]] = ..., persistent_volume_reclaim_policy: _Optional[str] = ..., storage_class_name: _Optional[str] = ..., mount_options: _Optional[_Iterable[str]] = ..., volume_mode: _Optional[str] = ..., node_affinity: _Optional[_Union[VolumeNodeAffinity, _Mapping]] = ..., volume_attributes_class_name: _Optional[str] = ..., csi: _Optional[_Union[CSIPersistentVolumeSource, _Mapping]] = ..., local: _Optional[_Union[LocalVolumeSource, _Mapping]] = ..., host_path: _Optional[_Union[HostPathVolumeSource, _Mapping]] = ..., gce_persistent_disk: _Optional[_Union[GCEPersistentDiskVolumeSource, _Mapping]] = ..., aws_elastic_block_store: _Optional[_Union[AWSElasticBlockStoreVolumeSource, _Mapping]] = ..., azure_disk: _Optional[_Union[AzureDiskVolumeSource, _Mapping]] = ..., glusterfs: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., nfs: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., rbd: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., iscsi: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., cinder: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., cephfs: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., fc: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., flocker: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., flex_volume: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., azure_file: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., vsphere_volume: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., quobyte: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., photon_persistent_disk: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., portworx_volume: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., scale_io: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., storageos: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class PersistentVolumeStatus(_message.Message):
    __slots__ = ("phase", "message", "reason", "last_phase_transition_time")
    PHASE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    LAST_PHASE_TRANSITION_TIME_FIELD_NUMBER: _ClassVar[int]
    phase: str
    message: str
    reason: str
    last_phase_transition_time: _timestamp_pb2.Timestamp
    def __init__(self, phase: _Optional[str] = ..., message: _Optional[str] = ..., reason: _Optional[str] = ..., last_phase_transition_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class PersistentVolume(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec", "status")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: PersistentVolumeSpec
    status: PersistentVolumeStatus
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[PersistentVolumeSpec, _Mapping]] = ..., status: _Optional[_Union[PersistentVolumeStatus, _Mapping]] = ...) -> None: ...

class TopologySelectorLabelRequirement(_message.Message):
    __slots__ = ("key", "values")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    key: str
    values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, key: _Optional[str] = ..., values: _Optional[_Iterable[str]] = ...) -> None: ...

class TopologySelectorTerm(_message.Message):
    __slots__ = ("match_label_expressions",)
    MATCH_LABEL_EXPRESSIONS_FIELD_NUMBER: _ClassVar[int]
    match_label_expressions: _containers.RepeatedCompositeFieldContainer[TopologySelectorLabelRequirement]
    def __init__(self, match_label_expressions: _Optional[_Iterable[_Union[TopologySelectorLabelRequirement, _Mapping]]] = ...) -> None: ...

class StorageClass(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "provisioner", "parameters", "reclaim_policy", "mount_options", "allow_volume_expansion", "volume_binding_mode", "allowed_topologies")
    class ParametersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PROVISIONER_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    RECLAIM_POLICY_FIELD_NUMBER: _ClassVar[int]
    MOUNT_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    ALLOW_VOLUME_EXPANSION_FIELD_NUMBER: _ClassVar[int]
    VOLUME_BINDING_MODE_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_TOPOLOGIES_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    provisioner: str
    parameters: _containers.ScalarMap[str, str]
    reclaim_policy: str
    mount_options: _containers.RepeatedScalarFieldContainer[str]
    allow_volume_expansion: bool
    volume_binding_mode: str
    allowed_topologies: _containers.RepeatedCompositeFieldContainer[TopologySelectorTerm]
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., provisioner: _Optional[str] = ..., parameters: _Optional[_Mapping[str, str]] = ..., reclaim_policy: _Optional[str] = ..., mount_options: _Optional[_Iterable[str]] = ..., allow_volume_expansion: _Optional[bool] = ..., volume_binding_mode: _Optional[str] = ..., allowed_topologies: _Optional[_Iterable[_Union[TopologySelectorTerm, _Mapping]]] = ...) -> None: ...

class VolumeNodeResources(_message.Message):
    __slots__ = ("count",)
    COUNT_FIELD_NUMBER: _ClassVar[int]
    count: int
    def __init__(self, count: _Optional[int] = ...) -> None: ...

class CSINodeDriver(_message.Message):
    __slots__ = ("name", "node_id", "topology_keys", "allocatable")
    NAME_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_KEYS_FIELD_NUMBER: _ClassVar[int]
    ALLOCATABLE_FIELD_NUMBER: _ClassVar[int]
    name: str
    node_id: str
    topology_keys: _containers.RepeatedScalarFieldContainer[str]
    allocatable: VolumeNodeResources
    def __init__(self, name: _Optional[str] = ..., node_id: _Optional[str] = ..., topology_keys: _Optional[_Iterable[str]] = ..., allocatable: _Optional[_Union[VolumeNodeResources, _Mapping]] = ...) -> None: ...

class CSINodeSpec(_message.Message):
    __slots__ = ("drivers",)
    DRIVERS_FIELD_NUMBER: _ClassVar[int]
    drivers: _containers.RepeatedCompositeFieldContainer[CSINodeDriver]
    def __init__(self, drivers: _Optional[_Iterable[_Union[CSINodeDriver, _Mapping]]] = ...) -> None: ...

class CSINode(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: CSINodeSpec
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[CSINodeSpec, _Mapping]] = ...) -> None: ...

class TokenRequest(_message.Message):
    __slots__ = ("audience", "expiration_seconds")
    AUDIENCE_FIELD_NUMBER: _ClassVar[int]
    EXPIRATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    audience: str
    expiration_seconds: int
    def __init__(self, audience: _Optional[str] = ..., expiration_seconds: _Optional[int] = ...) -> None: ...

class CSIDriverSpec(_message.Message):
    __slots__ = ("attach_required", "pod_info_on_mount", "volume_lifecycle_modes", "storage_capacity", "fs_group_policy", "token_requests", "requires_republish", "se_linux_mount", "node_allocatable_update_period_seconds", "service_account_token_in_secrets", "prevent_pod_scheduling_if_missing")
    ATTACH_REQUIRED_FIELD_NUMBER: _ClassVar[int]
    POD_INFO_ON_MOUNT_FIELD_NUMBER: _ClassVar[int]
    VOLUME_LIFECYCLE_MODES_FIELD_NUMBER: _ClassVar[int]
    STORAGE_CAPACITY_FIELD_NUMBER: _ClassVar[int]
    FS_GROUP_POLICY_FIELD_NUMBER: _ClassVar[int]
    TOKEN_REQUESTS_FIELD_NUMBER: _ClassVar[int]
    REQUIRES_REPUBLISH_FIELD_NUMBER: _ClassVar[int]
    SE_LINUX_MOUNT_FIELD_NUMBER: _ClassVar[int]
    NODE_ALLOCATABLE_UPDATE_PERIOD_SECONDS_FIELD_NUMBER: _ClassVar[int]
    SERVICE_ACCOUNT_TOKEN_IN_SECRETS_FIELD_NUMBER: _ClassVar[int]
    PREVENT_POD_SCHEDULING_IF_MISSING_FIELD_NUMBER: _ClassVar[int]
    attach_required: bool
    pod_info_on_mount: bool
    volume_lifecycle_modes: _containers.RepeatedScalarFieldContainer[str]
    storage_capacity: bool
    fs_group_policy: str
    token_requests: _containers.RepeatedCompositeFieldContainer[TokenRequest]
    requires_republish: bool
    se_linux_mount: bool
    node_allocatable_update_period_seconds: int
    service_account_token_in_secrets: bool
    prevent_pod_scheduling_if_missing: bool
    def __init__(self, attach_required: _Optional[bool] = ..., pod_info_on_mount: _Optional[bool] = ..., volume_lifecycle_modes: _Optional[_Iterable[str]] = ..., storage_capacity: _Optional[bool] = ..., fs_group_policy: _Optional[str] = ..., token_requests: _Optional[_Iterable[_Union[TokenRequest, _Mapping]]] = ..., requires_republish: _Optional[bool] = ..., se_linux_mount: _Optional[bool] = ..., node_allocatable_update_period_seconds: _Optional[int] = ..., service_account_token_in_secrets: _Optional[bool] = ..., prevent_pod_scheduling_if_missing: _Optional[bool] = ...) -> None: ...

class CSIDriver(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "spec")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: CSIDriverSpec
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[CSIDriverSpec, _Mapping]] = ...) -> None: ...

class CSIStorageCapacity(_message.Message):
    __slots__ = ("api_version", "kind", "metadata", "node_topology", "storage_class_name", "capacity", "maximum_volume_size")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    NODE_TOPOLOGY_FIELD_NUMBER: _ClassVar[int]
    STORAGE_CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    MAXIMUM_VOLUME_SIZE_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    kind: str
    metadata: ObjectMeta
    node_topology: LabelSelector
    storage_class_name: str
    capacity: str
    maximum_volume_size: str
    def __init__(self, api_version: _Optional[str] = ..., kind: _Optional[str] = ..., metadata: _Optional[_Union[ObjectMeta, _Mapping]] = ..., node_topology: _Optional[_Union[LabelSelector, _Mapping]] = ..., storage_class_name: _Optional[str] = ..., capacity: _Optional[str] = ..., maximum_volume_size: _Optional[str] = ...) -> None: ...
