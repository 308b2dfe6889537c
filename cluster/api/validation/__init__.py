"""Validation of API objects, with Kubernetes' rules and Kubernetes' wording.

Each check returns field errors as strings formatted like apimachinery's ``field.Error``
(``metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain ...``), so a client sees the
message kube-apiserver would print. ``ensure_valid`` joins them into one ``errors.Invalid``.

One module per API group (core, apps, scheduling, policy, coordination, node, resource, storage) declares a
``KindValidation`` (rules.py) for each kind it serves; the functions here dispatch on them. The name rules
are cluster.api.names's, the field error texts field.py's, the metadata rules meta.py's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf.message import Message

from cluster.api import errors, kinds
from cluster.api.names import (
    DNS1123_LABEL_MAX_LENGTH,
    DNS1123_SUBDOMAIN_MAX_LENGTH,
    LABEL_VALUE_MAX_LENGTH,
    QUALIFIED_NAME_MAX_LENGTH,
    is_config_map_key,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)
from cluster.api.validation import apps, coordination, core, node, policy, resource, scheduling, storage
from cluster.api.validation.field import (
    IMMUTABLE,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from cluster.api.validation.meta import validate_label_selector, validate_labels, validate_meta
from cluster.api.validation.rules import KindValidation

__all__ = [
    "DNS1123_LABEL_MAX_LENGTH", "DNS1123_SUBDOMAIN_MAX_LENGTH", "IMMUTABLE", "LABEL_VALUE_MAX_LENGTH",
    "QUALIFIED_NAME_MAX_LENGTH", "KindValidation", "duplicate", "ensure_valid", "forbidden", "invalid",
    "is_config_map_key", "is_dns1123_label", "is_dns1123_subdomain", "is_qualified_name",
    "is_valid_label_value", "not_supported", "object_problems", "qualified_kind", "required", "rules_of",
    "status_problems", "too_long", "too_many", "update_problems", "validate_label_selector",
    "validate_labels", "validate_object", "validate_status", "validate_status_update", "validate_update",
]

_RULES: dict[kinds.Kind[Any], KindValidation[Any]] = {
    rules.kind: rules
    for group in (core, apps, scheduling, policy, coordination, node, resource, storage)
    for rules in group.VALIDATIONS
}


def rules_of(kind: kinds.Kind[Any]) -> KindValidation[Any]:
    """The validation of a served kind."""
    return _RULES[kind]


def object_problems(rules: KindValidation[Any], obj: Message) -> list[str]:
    """Every field error of ``obj``, an object of ``rules``' kind."""
    problems = validate_meta(kinds.metadata_of(obj), rules.kind, rules.name_check)
    problems += rules.validate(obj)
    return problems


def update_problems(rules: KindValidation[Any], old: Message, new: Message) -> list[str]:
    """The errors of changing ``old`` into ``new`` beyond ``object_problems(rules, new)``: immutable
    metadata, then the kind's immutable fields."""
    problems = []
    for field_name, path in (
        ("name", "metadata.name"),
        ("namespace", "metadata.namespace"),
        ("uid", "metadata.uid"),
    ):
        before = getattr(kinds.metadata_of(old), field_name)
        after = getattr(kinds.metadata_of(new), field_name)
        # An update that leaves uid out means "the same object", as kubectl apply sends it.
        if before != after and not (field_name == "uid" and not after):
            problems.append(invalid(path, after, IMMUTABLE))
    problems += rules.validate_update(old, new)
    return problems


def status_problems(rules: KindValidation[Any], old: Message, new: Message) -> list[str]:
    """The errors of a status update from ``old`` to ``new``: the new status's, and its change's."""
    return rules.validate_status(new) + rules.validate_status_update(old, new)


def validate_object(obj: Message) -> list[str]:
    """Every field error of ``obj`` (an object of a served kind), in Kubernetes' words; empty when valid."""
    return object_problems(_RULES[kinds.kind_of(obj)], obj)


def validate_status(obj: Message) -> list[str]:
    """The errors of ``obj``'s status: those of ``validate_object(obj)`` whose field is under status."""
    return _RULES[kinds.kind_of(obj)].validate_status(obj)


def validate_status_update(old: Message, new: Message) -> list[str]:
    """The errors of changing ``old``'s status into ``new``'s beyond ``validate_status(new)``: a pod that
    has finished stays in its phase."""
    return _RULES[kinds.kind_of(new)].validate_status_update(old, new)


def validate_update(old: Message, new: Message) -> list[str]:
    """The errors of changing ``old`` into ``new`` beyond ``validate_object(new)``: immutable metadata,
    Pod spec immutability (only container images change, tolerations may be added), PriorityClass value and
    preemptionPolicy, a PodGroup's scheduling fields, a ResourceQuota's scopes and scopeSelector, a
    RuntimeClass's handler, a LeaseCandidate's leaseName."""
    return update_problems(_RULES[kinds.kind_of(new)], old, new)


def ensure_valid(obj: Message, problems: Sequence[str] | None = None) -> None:
    """Raise ``errors.Invalid`` as kube-apiserver words it (``Pod "web" is invalid: <problems>``) when there
    are problems; with ``problems`` None, validate ``obj`` first. Repeated messages are reported once."""
    if problems is None:
        problems = validate_object(obj)
    unique = list(dict.fromkeys(problems))
    if not unique:
        return
    detail = unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
    qualified = qualified_kind(obj)
    name = kinds.metadata_of(obj).name
    kind_name, _, group = qualified.partition(".")
    details = errors.StatusDetails(
        name=name, group=group, kind=kind_name, causes=tuple(cause_of(problem) for problem in unique))
    raise errors.Invalid(f'{qualified} "{name}" is invalid: {detail}', details)


#: apimachinery's field.ErrorType by the words its errors print, as metav1.StatusCause types.
_CAUSE_TYPES = {
    "Required value": "FieldValueRequired",
    "Invalid value": "FieldValueInvalid",
    "Unsupported value": "FieldValueNotSupported",
    "Duplicate value": "FieldValueDuplicate",
    "Forbidden": "FieldValueForbidden",
    "Too long": "FieldValueTooLong",
    "Too many": "FieldValueTooMany",
    "Not found": "FieldValueNotFound",
    "Internal error": "InternalError",
}


def cause_of(problem: str) -> errors.StatusCause:
    """A field error (``spec.priority: Invalid value: 1.5: ...``) as the StatusCause kube-apiserver sends
    for it: the field apart, the rest its message, the type from the error's words."""
    field, _, body = problem.partition(": ")
    if not body:
        return errors.StatusCause("FieldValueInvalid", problem)
    words = body.split(":", 1)[0]
    return errors.StatusCause(_CAUSE_TYPES.get(words, "FieldValueInvalid"), body, field)


def qualified_kind(obj: Message) -> str:
    """The kind as Kubernetes names it in errors: Pod, PriorityClass.scheduling.k8s.io, ..."""
    kind = kinds.kind_of(obj)
    # A kind served in several groups is named by the one the object is written in.
    written = kinds.as_api_object(obj).api_version
    group = (written if written in kind.api_versions else kind.api_version).rpartition("/")[0]
    return f"{kind.name}.{group}" if group else kind.name
