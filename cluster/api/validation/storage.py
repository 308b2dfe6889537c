"""Validation of storage.k8s.io's kinds: StorageClass, CSINode, CSIDriver, CSIStorageCapacity
(Kubernetes' pkg/apis/storage/validation)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from cluster.api import kinds, objects_pb2
from cluster.api.names import is_dns1123_subdomain, is_qualified_name
from cluster.api.quantity import parse_quantity
from cluster.api.validation.field import (
    IMMUTABLE,
    NOT_NEGATIVE,
    check,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from cluster.api.validation.meta import validate_label_selector
from cluster.api.validation.resources import check_amount
from cluster.api.validation.rules import KindValidation

RECLAIM_POLICIES = ("Delete", "Retain")
VOLUME_BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
VOLUME_LIFECYCLE_MODES = ("Ephemeral", "Persistent")
MAX_PARAMETERS = 512
MAX_PARAMETERS_SIZE = 256 * (1 << 10)
CSI_DRIVER_NAME_MAX_LENGTH = 63
CSI_NODE_ID_MAX_LENGTH = 192
MIN_TOKEN_SECONDS = 10 * 60
MAX_TOKEN_SECONDS = 1 << 32
MIN_ALLOCATABLE_UPDATE_PERIOD_SECONDS = 10


def _json(message: Message) -> str:
    return json.dumps(json_format.MessageToDict(message), separators=(",", ":"), sort_keys=True)


def validate_csi_driver_name(name: str, path: str) -> list[str]:
    """Kubernetes' ValidateCSIDriverName, as a StorageClass-free field (a CSINode's drivers, a volume's
    csi.driver)."""
    problems = [required(path)] if not name else []
    if len(name) > CSI_DRIVER_NAME_MAX_LENGTH:
        problems.append(too_long(path, CSI_DRIVER_NAME_MAX_LENGTH))
    return problems + [invalid(path, name, p) for p in is_dns1123_subdomain(name.lower())]


# ------------------------------------------------------------------------------------------ StorageClass


def _validate_provisioner(provisioner: str) -> list[str]:
    if not provisioner:
        return [required("provisioner")]
    return check("provisioner", provisioner.lower(), is_qualified_name)


def _validate_parameters(parameters: Mapping[str, str]) -> list[str]:
    if len(parameters) > MAX_PARAMETERS:
        return [too_long("parameters", MAX_PARAMETERS)]
    problems = [invalid("parameters", key, "field can not be empty.") for key in parameters if not key]
    if sum(len(k) + len(v) for k, v in parameters.items()) > MAX_PARAMETERS_SIZE:
        problems.append(too_long("parameters", MAX_PARAMETERS_SIZE))
    return problems


def validate_topology_selector_term(
    term: objects_pb2.TopologySelectorTerm, path: str
) -> tuple[dict[str, frozenset[str]], list[str]]:
    """ValidateTopologySelectorTerm: each requirement's key a label name, its values given and unique,
    no key twice; returns the term as a map of key to values, to compare terms by."""
    problems: list[str] = []
    keys: dict[str, frozenset[str]] = {}
    for i, requirement in enumerate(term.match_label_expressions):
        where = f"{path}.matchLabelExpressions[{i}]"
        if not requirement.values:
            problems.append(required(f"{where}.values"))
        seen: set[str] = set()
        for j, value in enumerate(requirement.values):
            if value in seen:
                problems.append(duplicate(f"{where}.values[{j}]", value))
            seen.add(value)
        problems += check(f"{where}.key", requirement.key, is_qualified_name)
        if requirement.key in keys:
            problems.append(duplicate(f"{where}.key", requirement.key))
        keys[requirement.key] = frozenset(seen)
    return keys, problems


def _validate_allowed_topologies(terms: Sequence[objects_pb2.TopologySelectorTerm]) -> list[str]:
    problems: list[str] = []
    # Upstream compares each term with a list that starts with one empty entry per term, so an empty
    # term is always a duplicate: kept, so that the same classes are refused.
    seen: list[dict[str, frozenset[str]]] = [{} for _ in terms]
    for i, term in enumerate(terms):
        where = f"allowedTopologies[{i}]"
        keys, term_problems = validate_topology_selector_term(term, where)
        problems += term_problems
        problems += [duplicate(f"{where}.matchLabelExpressions", "") for other in seen if other == keys]
        seen.append(keys)
    return problems


def validate_storage_class(sc: objects_pb2.StorageClass) -> list[str]:
    """ValidateStorageClass: a provisioner (a qualified name), parameters within bounds, a supported
    reclaim policy and binding mode, valid allowed topologies."""
    problems = _validate_provisioner(sc.provisioner)
    problems += _validate_parameters(sc.parameters)
    if sc.HasField("reclaim_policy") and sc.reclaim_policy and sc.reclaim_policy not in RECLAIM_POLICIES:
        problems.append(not_supported("reclaimPolicy", sc.reclaim_policy, RECLAIM_POLICIES))
    if not sc.HasField("volume_binding_mode"):
        problems.append(required("volumeBindingMode"))
    elif sc.volume_binding_mode not in VOLUME_BINDING_MODES:
        problems.append(not_supported("volumeBindingMode", sc.volume_binding_mode, VOLUME_BINDING_MODES))
    problems += _validate_allowed_topologies(sc.allowed_topologies)
    return problems


def _validate_storage_class_update(old: objects_pb2.StorageClass, new: objects_pb2.StorageClass) -> list[str]:
    problems = []
    if dict(old.parameters) != dict(new.parameters):
        problems.append(forbidden("parameters", "updates to parameters are forbidden."))
    if old.provisioner != new.provisioner:
        problems.append(forbidden("provisioner", "updates to provisioner are forbidden."))
    if old.reclaim_policy != new.reclaim_policy:
        problems.append(forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
    if old.volume_binding_mode != new.volume_binding_mode:
        problems.append(invalid("volumeBindingMode", new.volume_binding_mode, IMMUTABLE))
    return problems


# ------------------------------------------------------------------------------------------------ CSINode


def validate_csi_node(node: objects_pb2.CSINode) -> list[str]:
    """ValidateCSINode: each driver a valid, unique driver name with a node ID of at most 192 characters,
    a non-negative allocatable count and unique, valid topology keys."""
    problems: list[str] = []
    names: set[str] = set()
    for i, driver in enumerate(node.spec.drivers):
        where = f"spec.drivers[{i}]"
        problems += validate_csi_driver_name(driver.name, f"{where}.name")
        if not driver.node_id:
            problems.append(required(f"{where}.nodeID"))
        if len(driver.node_id) > CSI_NODE_ID_MAX_LENGTH:
            problems.append(invalid(f"{where}.nodeID", driver.node_id,
                                    f"must be {CSI_NODE_ID_MAX_LENGTH} characters or less"))
        if driver.allocatable.HasField("count") and driver.allocatable.count < 0:
            problems.append(invalid(f"{where}.allocatable.count", driver.allocatable.count, NOT_NEGATIVE))
        if driver.name in names:
            problems.append(duplicate(f"{where}.name", driver.name))
        names.add(driver.name)
        keys: set[str] = set()
        for key in driver.topology_keys:
            if not key:
                problems.append(required(where))
            if key in keys:
                problems.append(duplicate(where, key))
            keys.add(key)
            problems += check(where, key, is_qualified_name)
    return problems


def _validate_csi_node_update(old: objects_pb2.CSINode, new: objects_pb2.CSINode) -> list[str]:
    # A registered driver's entry stays as it was; its allocatable count may change (the kubelet
    # refreshes it).
    problems = []
    before = {driver.name: driver for driver in old.spec.drivers}
    for driver in new.spec.drivers:
        stored = before.get(driver.name)
        if stored is None:
            continue
        kept, changed = objects_pb2.CSINodeDriver(), objects_pb2.CSINodeDriver()
        kept.CopyFrom(stored)
        changed.CopyFrom(driver)
        kept.ClearField("allocatable")
        changed.ClearField("allocatable")
        if kept != changed:
            problems.append(invalid("spec.drivers", _json(changed), IMMUTABLE))
    return problems


# ---------------------------------------------------------------------------------------------- CSIDriver


def _validate_token_requests(requests: Sequence[objects_pb2.TokenRequest], path: str) -> list[str]:
    problems = []
    audiences: set[str] = set()
    for i, request in enumerate(requests):
        where = f"{path}[{i}]"
        if request.audience in audiences:
            problems.append(duplicate(f"{where}.audience", request.audience))
            continue
        audiences.add(request.audience)
        if not request.HasField("expiration_seconds"):
            continue
        if request.expiration_seconds < MIN_TOKEN_SECONDS:
            problems.append(invalid(f"{where}.expirationSeconds", request.expiration_seconds,
                                    "may not specify a duration less than 10 minutes"))
        if request.expiration_seconds > MAX_TOKEN_SECONDS:
            problems.append(invalid(f"{where}.expirationSeconds", request.expiration_seconds,
                                    "may not specify a duration larger than 2^32 seconds"))
    return problems


def validate_csi_driver(driver: objects_pb2.CSIDriver) -> list[str]:
    """ValidateCSIDriver: the spec's flags given (the defaults give them), a supported fsGroupPolicy and
    lifecycle modes, unique token audiences with sane expirations."""
    spec = driver.spec
    problems = []
    # Upstream names attachRequired "attachedRequired" in its errors.
    for field, path in (
        ("attach_required", "spec.attachedRequired"), ("pod_info_on_mount", "spec.podInfoOnMount"),
        ("storage_capacity", "spec.storageCapacity"),
    ):
        if not spec.HasField(field):
            problems.append(required(path))
    if spec.HasField("fs_group_policy") and spec.fs_group_policy not in FS_GROUP_POLICIES:
        problems.append(not_supported("spec.fsGroupPolicy", spec.fs_group_policy, FS_GROUP_POLICIES))
    problems += _validate_token_requests(spec.token_requests, "spec.tokenRequests")
    problems += [
        not_supported("spec.volumeLifecycleModes", mode, ("Persistent", "Ephemeral"))
        for mode in spec.volume_lifecycle_modes if mode not in VOLUME_LIFECYCLE_MODES
    ]
    if not spec.HasField("se_linux_mount"):
        problems.append(required("spec.seLinuxMount"))
    if spec.HasField("node_allocatable_update_period_seconds") and (
        spec.node_allocatable_update_period_seconds < MIN_ALLOCATABLE_UPDATE_PERIOD_SECONDS
    ):
        problems.append(invalid("spec.nodeAllocatableUpdatePeriodSeconds",
                                spec.node_allocatable_update_period_seconds,
                                "must be greater than or equal to 10 seconds"))
    return problems


def _validate_csi_driver_update(old: objects_pb2.CSIDriver, new: objects_pb2.CSIDriver) -> list[str]:
    problems = []
    if new.spec.attach_required != old.spec.attach_required:
        problems.append(invalid("spec.attachedRequired", new.spec.attach_required, IMMUTABLE))
    if list(new.spec.volume_lifecycle_modes) != list(old.spec.volume_lifecycle_modes):
        problems.append(invalid("spec.volumeLifecycleModes",
                                "[" + " ".join(new.spec.volume_lifecycle_modes) + "]", IMMUTABLE))
    return problems


# ------------------------------------------------------------------------------------- CSIStorageCapacity


def validate_csi_storage_capacity(capacity: objects_pb2.CSIStorageCapacity) -> list[str]:
    """ValidateCSIStorageCapacity: a valid node topology selector, a class name, a capacity that is not
    negative (upstream checks no more of maximumVolumeSize than that it parses)."""
    problems = validate_label_selector(capacity.node_topology, "nodeTopology")
    problems += check("storageClassName", capacity.storage_class_name, is_dns1123_subdomain)
    if capacity.HasField("capacity"):
        problems += check_amount("capacity", capacity.capacity, whole=False)[1]
    if capacity.HasField("maximum_volume_size"):
        problems += _parses("maximumVolumeSize", capacity.maximum_volume_size)
    return problems


def _parses(path: str, text: str) -> list[str]:
    try:
        parse_quantity(text)
    except ValueError as exc:
        return [invalid(path, text, str(exc).partition(": ")[2] or str(exc))]
    return []


def _validate_csi_storage_capacity_update(
    old: objects_pb2.CSIStorageCapacity, new: objects_pb2.CSIStorageCapacity
) -> list[str]:
    # The inputs of the driver's GetCapacity call are fixed: the external-provisioner relies on it.
    problems = []
    if new.node_topology != old.node_topology:
        problems.append(invalid("nodeTopology", _json(new.node_topology), IMMUTABLE))
    if new.storage_class_name != old.storage_class_name:
        problems.append(invalid("storageClassName", new.storage_class_name, IMMUTABLE))
    return problems


STORAGE_CLASS = KindValidation(kinds.STORAGE_CLASS, validate_storage_class, _validate_storage_class_update)
CSI_NODE = KindValidation(kinds.CSI_NODE, validate_csi_node, _validate_csi_node_update)
CSI_DRIVER = KindValidation(kinds.CSI_DRIVER, validate_csi_driver, _validate_csi_driver_update)
CSI_STORAGE_CAPACITY = KindValidation(
    kinds.CSI_STORAGE_CAPACITY, validate_csi_storage_capacity, _validate_csi_storage_capacity_update
)

VALIDATIONS: tuple[KindValidation[Any], ...] = (STORAGE_CLASS, CSI_NODE, CSI_DRIVER, CSI_STORAGE_CAPACITY)
