"""The rules every object's metadata meets (apimachinery's ValidateObjectMeta), and the label and
selector rules other fields share."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cluster.api import kinds, objects_pb2
from cluster.api.names import (
    is_dns1123_label,
    is_qualified_name,
    is_valid_label_value,
)
from cluster.api.validation.field import check, forbidden, invalid, required, too_long, too_many

#: Kubernetes' limit on the total size of an object's annotations (keys plus values).
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024


#: apimachinery's FieldManagerMaxLength and MaxSubresourceNameLength.
FIELD_MANAGER_MAX_LENGTH = 128
MAX_SUBRESOURCE_NAME_LENGTH = 256
MANAGED_FIELDS_OPERATIONS = ("Apply", "Update")

#: Labels per object. Kubernetes sets no number, but every label is indexed by every selector match and
#: copied into every watch event; 64 is far above what workloads use (a handful) and keeps both bounded.
MAX_LABELS = 64


def validate_meta(
    meta: objects_pb2.ObjectMeta, kind: kinds.Kind[Any], name_check: Callable[[str], list[str]]
) -> list[str]:
    """ObjectMeta's rules; ``name_check`` is the kind's rule for names (and generateName's prefix)."""
    problems = []
    if meta.name:
        problems += check("metadata.name", meta.name, name_check)
    elif not meta.generate_name:
        problems.append(required("metadata.name", "name or generateName is required"))
    if meta.generate_name:
        # A generated name is the prefix plus random characters, so a trailing '-' is fine.
        prefix = meta.generate_name[:-1] if meta.generate_name.endswith("-") else meta.generate_name
        problems += [
            invalid("metadata.generateName", meta.generate_name, p) for p in name_check(prefix)
        ]
    if kind.namespaced:
        if meta.namespace:
            problems += check("metadata.namespace", meta.namespace, is_dns1123_label)
    elif meta.namespace:
        problems.append(forbidden("metadata.namespace", "not allowed on this type"))
    if len(meta.labels) > MAX_LABELS:
        problems.append(too_many("metadata.labels", len(meta.labels), MAX_LABELS))
    problems += validate_labels(meta.labels, "metadata.labels")
    problems += _validate_annotations(meta.annotations, "metadata.annotations")
    if meta.generation < 0:
        problems.append(invalid("metadata.generation", meta.generation, "must be greater than or equal to 0"))
    if meta.HasField("deletion_grace_period_seconds") and meta.deletion_grace_period_seconds < 0:
        problems.append(
            invalid(
                "metadata.deletionGracePeriodSeconds",
                meta.deletion_grace_period_seconds,
                "must be greater than or equal to 0",
            )
        )
    problems += _validate_owner_references(meta.owner_references)
    problems += _validate_managed_fields(meta.managed_fields)
    return problems


def _validate_managed_fields(entries: Sequence[objects_pb2.ManagedFieldsEntry]) -> list[str]:
    """apimachinery's ValidateManagedFields: each entry's operation, fieldsType, manager and
    subresource."""
    problems = []
    for i, entry in enumerate(entries):
        path = f"metadata.managedFields[{i}]"
        if entry.operation not in MANAGED_FIELDS_OPERATIONS:
            problems.append(invalid(f"{path}.operation", entry.operation, "must be `Apply` or `Update`"))
        if entry.fields_type and entry.fields_type != "FieldsV1":
            problems.append(invalid(f"{path}.fieldsType", entry.fields_type, "must be `FieldsV1`"))
        problems += validate_field_manager(entry.manager, f"{path}.manager")
        if len(entry.subresource) > MAX_SUBRESOURCE_NAME_LENGTH:
            problems.append(too_long(f"{path}.subresource", MAX_SUBRESOURCE_NAME_LENGTH))
    return problems


def validate_field_manager(manager: str, path: str) -> list[str]:
    """apimachinery's ValidateFieldManager: at most 128 bytes, every character printable (each bad one
    named by its byte offset, as Go ranges over a string)."""
    problems = []
    if len(manager.encode()) > FIELD_MANAGER_MAX_LENGTH:
        problems.append(too_long(path, FIELD_MANAGER_MAX_LENGTH))
    offset = 0
    for char in manager:
        if not char.isprintable():
            problems.append(invalid(f"{path}[{offset}]", manager, f"invalid character U+{ord(char):04X}"))
        offset += len(char.encode())
    return problems


def _validate_owner_references(references: Sequence[objects_pb2.OwnerReference]) -> list[str]:
    """apimachinery's ValidateOwnerReferences: apiVersion (with a version), kind, name and uid given; at
    most one reference is the controller."""
    problems = []
    controller = ""
    for i, ref in enumerate(references):
        path = f"metadata.ownerReferences[{i}]"
        group_version = ref.api_version.split("/")
        if len(group_version) > 2 or not group_version[-1]:
            problems.append(invalid(f"{path}.apiVersion", ref.api_version, "version must not be empty"))
        if not ref.kind:
            problems.append(invalid(f"{path}.kind", ref.kind, "kind must not be empty"))
        if not ref.name:
            problems.append(invalid(f"{path}.name", ref.name, "name must not be empty"))
        if not ref.uid:
            problems.append(invalid(f"{path}.uid", ref.uid, "uid must not be empty"))
        if ref.controller:
            name = f"{ref.kind}/{ref.name}"
            if controller:
                problems.append(invalid(
                    "metadata.ownerReferences", f"{controller}, {name}",
                    f'Only one reference can have Controller set to true. Found "true" in references for '
                    f"{controller} and {name}",
                ))
            else:
                controller = name
    return problems


def validate_labels(labels: Mapping[str, str], path: str) -> list[str]:
    """Label keys and values (also node selectors), reported at ``path`` as Kubernetes reports them."""
    problems = []
    for key, value in labels.items():
        problems += check(path, key, is_qualified_name)
        problems += check(path, value, is_valid_label_value)
    return problems


def _validate_annotations(annotations: Mapping[str, str], path: str) -> list[str]:
    problems = []
    total = 0
    for key, value in annotations.items():
        # Kubernetes lowercases the key first: annotation keys may use capitals.
        problems += [invalid(path, key, p) for p in is_qualified_name(key.lower())]
        total += len(key.encode()) + len(value.encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        problems.append(too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return problems


#: The fields of an object template's metadata (a ResourceClaimTemplate's spec.metadata) the objects made
#: from it take; anything else there would be silently dropped, so it is refused.
_TEMPLATE_META_FIELDS = frozenset({"labels", "annotations"})


def validate_template_meta(meta: objects_pb2.ObjectMeta, path: str) -> list[str]:
    """Kubernetes' ValidateTemplateObjectMeta: valid labels and annotations, and nothing else set."""
    problems = validate_labels(meta.labels, f"{path}.labels")
    problems += _validate_annotations(meta.annotations, f"{path}.annotations")
    problems += [
        forbidden(f"{path}.{field.json_name}", "cannot be set for a template")
        for field, _ in meta.ListFields() if field.name not in _TEMPLATE_META_FIELDS
    ]
    return problems


def validate_label_selector(selector: objects_pb2.LabelSelector, path: str) -> list[str]:
    """A LabelSelector message (metav1 ValidateLabelSelector)."""
    problems = validate_labels(selector.match_labels, f"{path}.matchLabels")
    for i, expression in enumerate(selector.match_expressions):
        where = f"{path}.matchExpressions[{i}]"
        problems += check(f"{where}.key", expression.key, is_qualified_name)
        if expression.operator in ("In", "NotIn"):
            if not expression.values:
                problems.append(
                    required(f"{where}.values", "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif expression.operator in ("Exists", "DoesNotExist"):
            if expression.values:
                problems.append(
                    forbidden(
                        f"{where}.values",
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            problems.append(
                invalid(f"{where}.operator", expression.operator, "not a valid selector operator")
            )
        for j, value in enumerate(expression.values):
            problems += [invalid(f"{where}.values[{j}]", value, p) for p in is_valid_label_value(value)]
    return problems
