"""Validation of the core group's storage kinds: PersistentVolume and PersistentVolumeClaim, and the claim
spec a pod's ephemeral volume templates (Kubernetes' ValidatePersistentVolume*, ValidatePersistentVolumeClaim*
in pkg/apis/core/validation)."""

from __future__ import annotations

import json
import posixpath
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from cluster.api import kinds, objects_pb2
from cluster.api.names import is_dns1123_label, is_dns1123_subdomain
from cluster.api.quantity import int_value, parse_quantity
from cluster.api.validation.field import (
    IMMUTABLE,
    check,
    forbidden,
    invalid,
    not_supported,
    required,
)
from cluster.api.validation.meta import validate_label_selector
from cluster.api.validation.podspec import validate_node_selector
from cluster.api.validation.rules import KindValidation
from cluster.api.validation.storage import validate_csi_driver_name
from cluster.api.volumes import ACCESS_MODES, BETA_STORAGE_CLASS_ANNOTATION, READ_WRITE_ONCE_POD

SUPPORTED_ACCESS_MODES = tuple(sorted(ACCESS_MODES))
VOLUME_MODES = ("Block", "Filesystem")
PV_RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate",
                   "Socket")
AZURE_CACHING_MODES = ("None", "ReadOnly", "ReadWrite")
AZURE_DISK_KINDS = ("Dedicated", "Managed", "Shared")
AZURE_MANAGED_URI = ("/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/"
                     "{disk-id}")
AZURE_BLOB_URI = "https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"
PARTITION_RANGE = "must be between 1 and 255, inclusive"
POSITIVE = "must be greater than zero"
CLAIM_SPEC_IMMUTABLE = ("spec is immutable after creation except resources.requests and "
                        "volumeAttributesClassName for bound claims")
_VAC_TO_NIL = "update from non-nil value to nil is forbidden"
RESIZE_STATUSES = ("ControllerResizeInProgress", "ControllerResizeInfeasible", "NodeResizeInProgress",
                   "NodeResizeInfeasible", "NodeResizePending")

#: A volume's sources in the order upstream counts them (the second one found is the one refused): the
#: field, the name its refusal gives and the path of its own errors (upstream gives a gcePersistentDisk's
#: errors under "persistentDisk" and refuses a second cephfs as "cephFS").
PV_SOURCES = (
    ("host_path", "hostPath", "hostPath"), ("gce_persistent_disk", "gcePersistentDisk", "persistentDisk"),
    ("aws_elastic_block_store", "awsElasticBlockStore", "awsElasticBlockStore"),
    ("glusterfs", "glusterfs", "glusterfs"), ("flocker", "flocker", "flocker"), ("nfs", "nfs", "nfs"),
    ("rbd", "rbd", "rbd"), ("quobyte", "quobyte", "quobyte"), ("cephfs", "cephFS", "cephfs"),
    ("iscsi", "iscsi", "iscsi"), ("cinder", "cinder", "cinder"), ("fc", "fc", "fc"),
    ("flex_volume", "flexVolume", "flexVolume"), ("azure_file", "azureFile", "azureFile"),
    ("vsphere_volume", "vsphereVolume", "vsphereVolume"),
    ("photon_persistent_disk", "photonPersistentDisk", "photonPersistentDisk"),
    ("portworx_volume", "portworxVolume", "portworxVolume"), ("azure_disk", "azureDisk", "azureDisk"),
    ("scale_io", "scaleIO", "scaleIO"), ("local", "local", "local"), ("storageos", "storageos", "storageos"),
    ("csi", "csi", "csi"),
)


def _json(message: Message) -> str:
    return json.dumps(json_format.MessageToDict(message), separators=(",", ":"), sort_keys=True)


def validate_class_name(name: str, path: str) -> list[str]:
    """ValidateClassName: a non-empty class name is a DNS subdomain."""
    return check(path, name, is_dns1123_subdomain) if name else []


def validate_access_modes(modes: Sequence[str], path: str, *, claim: bool) -> list[str]:
    """At least one mode, each supported; ReadWriteOncePod alone."""
    problems = []
    if not modes:
        problems.append(required(path, "at least 1 access mode is required" if claim else ""))
    problems += [
        not_supported(path, mode, SUPPORTED_ACCESS_MODES) for mode in modes if mode not in ACCESS_MODES
    ]
    others = [mode for mode in modes if mode != READ_WRITE_ONCE_POD and mode in ACCESS_MODES]
    if READ_WRITE_ONCE_POD in modes and others:
        problems.append(forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return problems


def _parsed(text: str, path: str) -> tuple[Fraction | None, list[str]]:
    """A quantity's value, or the error of one that does not parse."""
    try:
        return parse_quantity(text), []
    except ValueError as exc:
        return None, [invalid(path, text, str(exc).partition(": ")[2] or str(exc))]


def _basic_resource(text: str, path: str) -> list[str]:
    """validateBasicResource: a quantity that is not negative (shown as its integer value)."""
    value, problems = _parsed(text, path)
    if value is not None and value < 0:
        problems.append(invalid(path, int_value(text), "must be a valid resource quantity"))
    return problems


def _positive_quantity(text: str, path: str) -> list[str]:
    """ValidatePositiveQuantityValue."""
    value, problems = _parsed(text, path)
    if value is not None and value <= 0:
        problems.append(invalid(path, text, POSITIVE))
    return problems


def _validate_volume_mode(spec: Any, path: str) -> list[str]:
    if spec.HasField("volume_mode") and spec.volume_mode not in VOLUME_MODES:
        return [not_supported(path, spec.volume_mode, VOLUME_MODES)]
    return []


def validate_partition(partition: int, path: str) -> list[str]:
    return [invalid(path, partition, PARTITION_RANGE)] if partition < 0 or partition > 255 else []


def _no_backsteps(target: str, path: str) -> list[str]:
    parts = target.replace("\\", "/").split("/")
    return [invalid(path, target, "must not contain '..'")] if ".." in parts else []


def _validate_pv_source(spec: objects_pb2.PersistentVolumeSpec, source: str, path: str) -> list[str]:
    """The rules of the modelled sources; the others are kept as written."""
    problems: list[str] = []
    if source == "host_path":
        if not spec.host_path.path:
            return [required(f"{path}.path")]
        problems += _no_backsteps(spec.host_path.path, f"{path}.path")
        if spec.host_path.HasField("type") and spec.host_path.type not in HOST_PATH_TYPES:
            problems.append(not_supported(f"{path}.type", spec.host_path.type, HOST_PATH_TYPES))
    elif source == "local":
        if not spec.local.path:
            return [required(f"{path}.path")]
        problems += _no_backsteps(spec.local.path, f"{path}.path")
    elif source == "gce_persistent_disk":
        if not spec.gce_persistent_disk.pd_name:
            problems.append(required(f"{path}.pdName"))
        problems += validate_partition(spec.gce_persistent_disk.partition, f"{path}.partition")
    elif source == "aws_elastic_block_store":
        if not spec.aws_elastic_block_store.volume_id:
            problems.append(required(f"{path}.volumeID"))
        problems += validate_partition(spec.aws_elastic_block_store.partition, f"{path}.partition")
    elif source == "azure_disk":
        problems += validate_azure_disk(spec.azure_disk, path)
    elif source == "csi":
        problems += validate_csi_driver_name(spec.csi.driver, f"{path}.driver")
        if not spec.csi.volume_handle:
            problems.append(required(f"{path}.volumeHandle"))
    return problems


def validate_azure_disk(disk: objects_pb2.AzureDiskVolumeSource, path: str) -> list[str]:
    """validateAzureDisk: a disk name and URI, upstream's caching modes and kinds, a managed disk's URI
    under /subscriptions/ and a blob disk's an https:// one."""
    problems = []
    if not disk.disk_name:
        problems.append(required(f"{path}.diskName"))
    if not disk.disk_uri:
        problems.append(required(f"{path}.diskURI"))
    if disk.HasField("caching_mode") and disk.caching_mode not in AZURE_CACHING_MODES:
        problems.append(not_supported(f"{path}.cachingMode", disk.caching_mode, AZURE_CACHING_MODES))
    if disk.HasField("kind"):
        if disk.kind not in AZURE_DISK_KINDS:
            problems.append(not_supported(f"{path}.kind", disk.kind, AZURE_DISK_KINDS))
        if disk.kind == "Managed" and not disk.disk_uri.startswith("/subscriptions/"):
            problems.append(not_supported(f"{path}.diskURI", disk.disk_uri, (AZURE_MANAGED_URI,)))
        if disk.kind != "Managed" and not disk.disk_uri.startswith("https://"):
            problems.append(not_supported(f"{path}.diskURI", disk.disk_uri, (AZURE_BLOB_URI,)))
    return problems


def validate_persistent_volume(pv: objects_pb2.PersistentVolume) -> list[str]:
    """ValidatePersistentVolume: access modes, a positive storage capacity and nothing else, a reclaim
    policy upstream supports, a valid node affinity (a local volume must have one), exactly one source and
    each modelled source's fields, a class name, a volume mode, a volume attributes class (a CSI volume's)."""
    spec = pv.spec
    problems = validate_access_modes(spec.access_modes, "spec.accessModes", claim=False)
    if not spec.capacity:
        problems.append(required("spec.capacity"))
    if "storage" not in spec.capacity or len(spec.capacity) > 1:
        shown = ",".join(sorted(spec.capacity))
        problems.append(not_supported("spec.capacity", shown, ("storage",)))
    for name, text in spec.capacity.items():
        problems += _basic_resource(text, f"spec.capacity[{name}]")
        problems += _positive_quantity(text, f"spec.capacity[{name}]")
    policy = spec.persistent_volume_reclaim_policy
    if policy and policy not in PV_RECLAIM_POLICIES:
        problems.append(not_supported("spec.persistentVolumeReclaimPolicy", policy, PV_RECLAIM_POLICIES))
    has_affinity = spec.HasField("node_affinity")
    if has_affinity:
        if spec.node_affinity.HasField("required"):
            problems += validate_node_selector(spec.node_affinity.required, "spec.nodeAffinity.required")
        else:
            problems.append(required("spec.nodeAffinity.required", "must specify required node constraints"))
    sources = 0
    for field, json_name, path in PV_SOURCES:
        if not spec.HasField(field):
            continue
        # Upstream counts a flexVolume without refusing it as a second source.
        if sources and field != "flex_volume":
            problems.append(forbidden(f"spec.{json_name}", "may not specify more than 1 volume type"))
            continue
        sources += 1
        problems += _validate_pv_source(spec, field, f"spec.{path}")
        if field == "local" and not has_affinity:
            problems.append(required("spec.nodeAffinity", "Local volume requires node affinity"))
    if not sources:
        problems.append(required("spec", "must specify a volume type"))
    root = spec.HasField("host_path") and posixpath.normpath(spec.host_path.path) == "/"
    if root and policy == "Recycle":
        problems.append(forbidden("spec.persistentVolumeReclaimPolicy",
                                  "may not be 'recycle' for a hostPath mount of '/'"))
    problems += validate_class_name(spec.storage_class_name, "spec.storageClassName")
    problems += _validate_volume_mode(spec, "spec.volumeMode")
    if spec.HasField("volume_attributes_class_name"):
        if not spec.volume_attributes_class_name:
            problems.append(required("spec.volumeAttributesClassName", "an empty string is disallowed"))
        problems += validate_class_name(spec.volume_attributes_class_name, "spec.volumeAttributesClassName")
        if not spec.HasField("csi"):
            problems.append(required("spec.csi", "has to be specified when using volumeAttributesClassName"))
    return problems


def _source_of(spec: objects_pb2.PersistentVolumeSpec) -> objects_pb2.PersistentVolumeSpec:
    source = objects_pb2.PersistentVolumeSpec()
    for field, _, _ in PV_SOURCES:
        if spec.HasField(field):
            getattr(source, field).CopyFrom(getattr(spec, field))
    return source


def _validate_persistent_volume_update(
    old: objects_pb2.PersistentVolume, new: objects_pb2.PersistentVolume
) -> list[str]:
    """ValidatePersistentVolumeUpdate: the source, the volume mode and (once set) the node affinity stay
    as they were."""
    problems = []
    if _source_of(old.spec) != _source_of(new.spec):
        problems.append(forbidden("spec.persistentvolumesource",
                                  "spec.persistentvolumesource is immutable after creation"))
    if old.spec.volume_mode != new.spec.volume_mode:
        problems.append(invalid("volumeMode", new.spec.volume_mode, IMMUTABLE))
    if old.spec.HasField("node_affinity") and old.spec.node_affinity != new.spec.node_affinity:
        problems.append(invalid("nodeAffinity", _json(new.spec.node_affinity), IMMUTABLE))
    if old.spec.HasField("volume_attributes_class_name") and (
        not new.spec.HasField("volume_attributes_class_name")
    ):
        problems.append(forbidden("spec.volumeAttributesClassName", _VAC_TO_NIL))
    return problems


# ------------------------------------------------------------------------------------------------- claims


def _validate_data_source(reference: Any, path: str) -> list[str]:
    """validateDataSource and validateDataSourceRef: a name and a kind, a claim when no group is given,
    a group that is a DNS subdomain, a namespace that is a namespace's name."""
    problems = []
    if not reference.name:
        problems.append(required(f"{path}.name"))
    if not reference.kind:
        problems.append(required(f"{path}.kind"))
    if not reference.api_group and reference.kind != "PersistentVolumeClaim":
        problems.append(invalid(path, reference.kind,
                                "must be 'PersistentVolumeClaim' when referencing the default apiGroup"))
    if reference.api_group:
        problems += check(f"{path}.apiGroup", reference.api_group, is_dns1123_subdomain)
    if isinstance(reference, objects_pb2.TypedObjectReference) and reference.namespace:
        problems += check(f"{path}.namespace", reference.namespace, is_dns1123_label)
    return problems


def validate_claim_spec(spec: objects_pb2.PersistentVolumeClaimSpec, path: str) -> list[str]:
    """ValidatePersistentVolumeClaimSpec: access modes, a valid selector, a positive storage request, a
    class name, a volume mode upstream supports, data sources of a kind a claim can be made from."""
    problems = validate_access_modes(spec.access_modes, f"{path}.accessModes", claim=True)
    if spec.HasField("selector"):
        problems += validate_label_selector(spec.selector, f"{path}.selector")
    storage = spec.resources.requests.get("storage")
    if storage is None:
        problems.append(required(f"{path}.resources[storage]"))
    else:
        problems += _positive_quantity(storage, f"{path}.resources[storage]")
    if spec.storage_class_name:
        problems += validate_class_name(spec.storage_class_name, f"{path}.storageClassName")
    problems += _validate_volume_mode(spec, f"{path}.volumeMode")
    if spec.HasField("data_source"):
        problems += _validate_data_source(spec.data_source, f"{path}.dataSource")
    if spec.HasField("data_source_ref"):
        problems += _validate_data_source(spec.data_source_ref, f"{path}.dataSourceRef")
    source, ref = spec.data_source, spec.data_source_ref
    if spec.HasField("data_source_ref") and ref.namespace:
        if spec.HasField("data_source"):
            problems.append(invalid(path, f"{path}.dataSource",
                                    "may not be specified when dataSourceRef.namespace is specified"))
    elif spec.HasField("data_source") and spec.HasField("data_source_ref") and (
        (source.api_group, source.kind, source.name) != (ref.api_group, ref.kind, ref.name)
    ):
        problems.append(invalid(path, f"{path}.dataSource", "must match dataSourceRef"))
    if spec.volume_attributes_class_name:
        problems += validate_class_name(spec.volume_attributes_class_name,
                                        f"{path}.volumeAttributesClassName")
    return problems


def validate_persistent_volume_claim(pvc: objects_pb2.PersistentVolumeClaim) -> list[str]:
    return validate_claim_spec(pvc.spec, "spec") + validate_claim_status(pvc)


def _storage(amounts: Any) -> Fraction:
    text = amounts.get("storage")
    try:
        return parse_quantity(text) if text is not None else Fraction(0)
    except ValueError:
        return Fraction(0)


def _class_comparable(old: objects_pb2.PersistentVolumeClaim, new: objects_pb2.PersistentVolumeClaim,
                      after: objects_pb2.PersistentVolumeClaimSpec) -> list[str]:
    """The class part of ValidatePersistentVolumeClaimUpdate: a class written in the beta annotation may
    move to spec.storageClassName, and a claim created without a class may be given one (a default class
    that came later); else the annotation is immutable. Clears, in ``after``, the class change allowed."""
    old_beta = old.metadata.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    new_beta = new.metadata.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    old_unset = not old.spec.HasField("storage_class_name")
    new_set = new.spec.HasField("storage_class_name")
    if (old_beta is not None and old_unset and new_set and new.spec.storage_class_name == old_beta
            and new_beta in (None, old_beta)):
        after.ClearField("storage_class_name")
        return []
    problems = []
    if (new_beta or "") != (old_beta or ""):
        problems.append(invalid(f"metadata.annotations.{BETA_STORAGE_CLASS_ANNOTATION}", new_beta or "",
                                IMMUTABLE))
    if new_set and old_unset and old_beta in (None, new.spec.storage_class_name):
        after.ClearField("storage_class_name")
    return problems


def _validate_claim_update(
    old: objects_pb2.PersistentVolumeClaim, new: objects_pb2.PersistentVolumeClaim
) -> list[str]:
    """ValidatePersistentVolumeClaimUpdate: the spec is fixed once created, except that the volume name
    may be set once (the binder does), a class may be given to a claim that had none, the volume
    attributes class may change, and a bound claim's storage request may grow (or shrink back while above
    the capacity it has)."""
    before, after = objects_pb2.PersistentVolumeClaimSpec(), objects_pb2.PersistentVolumeClaimSpec()
    before.CopyFrom(old.spec)
    after.CopyFrom(new.spec)
    if not old.spec.volume_name:
        before.volume_name = after.volume_name
    problems = _class_comparable(old, new, after)
    if new.status.phase == "Bound" and "storage" in after.resources.requests:
        if "storage" in old.spec.resources.requests:
            after.resources.requests["storage"] = old.spec.resources.requests["storage"]
        else:
            del after.resources.requests["storage"]
    for spec in (before, after):
        spec.ClearField("volume_attributes_class_name")
    if before != after:
        problems.append(forbidden("spec", CLAIM_SPEC_IMMUTABLE))
    old_size, new_size = _storage(old.spec.resources.requests), _storage(new.spec.resources.requests)
    if new_size < old_size and new_size <= _storage(old.status.capacity):
        problems.append(forbidden("spec.resources.requests.storage",
                                  "field can not be less than status.capacity"))
    if old.spec.volume_mode != new.spec.volume_mode:
        problems.append(invalid("volumeMode", new.spec.volume_mode, IMMUTABLE))
    if old.spec.HasField("volume_attributes_class_name"):
        if not new.spec.HasField("volume_attributes_class_name"):
            problems.append(forbidden("spec.volumeAttributesClassName", _VAC_TO_NIL))
        elif not new.spec.volume_attributes_class_name:
            problems.append(forbidden("spec.volumeAttributesClassName",
                                      "update from non-nil value to an empty string is forbidden"))
    return problems


def validate_claim_status(pvc: objects_pb2.PersistentVolumeClaim) -> list[str]:
    """The status rules of ValidatePersistentVolumeClaimStatusUpdate: capacities that are not negative,
    only storage allocated, resize statuses upstream knows."""
    status = pvc.status
    problems = []
    for name, text in status.capacity.items():
        problems += _basic_resource(text, f"status.capacity[{name}]")
    for name, state in status.allocated_resource_statuses.items():
        if name != "storage":
            problems.append(not_supported("status.allocatedResourceStatus", name, ("storage",)))
        elif state not in RESIZE_STATUSES:
            problems.append(not_supported("status.allocatedResourceStatus", state, RESIZE_STATUSES))
    for name, text in status.allocated_resources.items():
        if name != "storage":
            problems.append(not_supported("status.allocatedResources", name, ("storage",)))
            continue
        problems += _basic_resource(text, f"status.allocatedResources[{name}]")
    return problems


def _claim_status_update(
    old: objects_pb2.PersistentVolumeClaim, new: objects_pb2.PersistentVolumeClaim
) -> list[str]:
    if not new.spec.access_modes:
        return [required("Spec.accessModes")]
    return []


PERSISTENT_VOLUME = KindValidation(
    kinds.PERSISTENT_VOLUME, validate_persistent_volume, _validate_persistent_volume_update
)
PERSISTENT_VOLUME_CLAIM = KindValidation(
    kinds.PERSISTENT_VOLUME_CLAIM, validate_persistent_volume_claim, _validate_claim_update,
    validate_claim_status, _claim_status_update,
)

VALIDATIONS: tuple[KindValidation[Any], ...] = (PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM)
