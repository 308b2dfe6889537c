"""Validation of scheduling.k8s.io's kinds (and the Coscheduling spelling of PodGroup): PriorityClass,
PodGroup."""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from cluster.api import kinds, objects_pb2, podgroups
from cluster.api.names import is_dns1123_label, is_dns1123_subdomain, is_qualified_name
from cluster.api.validation.field import (
    IMMUTABLE,
    NOT_NEGATIVE,
    check,
    forbidden,
    invalid,
    not_supported,
    required,
)
from cluster.api.validation.podspec import PREEMPTION_POLICIES
from cluster.api.validation.resources import check_quantities
from cluster.api.validation.rules import KindValidation


def validate_priority_class(pc: objects_pb2.PriorityClass) -> list[str]:
    if pc.HasField("preemption_policy") and pc.preemption_policy not in PREEMPTION_POLICIES:
        return [not_supported("preemptionPolicy", pc.preemption_policy, PREEMPTION_POLICIES)]
    return []


#: The spec fields of each PodGroup spelling, as (proto field, manifest path); the other spelling's are
#: refused.
_UPSTREAM_GROUP_FIELDS = (
    ("workload_ref", "spec.workloadRef"),
    ("scheduling_policy", "spec.schedulingPolicy"),
    ("disruption_mode", "spec.disruptionMode"),
    ("priority_class_name", "spec.priorityClassName"),
    ("priority", "spec.priority"),
)


_COSCHEDULING_GROUP_FIELDS = (
    ("min_member", "spec.minMember"),
    ("min_resources", "spec.minResources"),
    ("schedule_timeout_seconds", "spec.scheduleTimeoutSeconds"),
)


CONDITION_STATUSES = ("True", "False", "Unknown")


def _is_set(message: Message, field_name: str) -> bool:
    field = message.DESCRIPTOR.fields_by_name[field_name]
    if field.has_presence:
        return message.HasField(field_name)
    return bool(getattr(message, field_name))  # scalars other than 0/"", non-empty maps


def _exactly_one(message: Message, path: str, choices: tuple[str, ...]) -> list[str]:
    """Upstream's one-of structs (schedulingPolicy, disruptionMode): exactly one member set (the members'
    proto and JSON names are the same)."""
    chosen = [name for name in choices if message.HasField(name)]
    if len(chosen) == 1:
        return []
    wanted = ", ".join(f"`{name}`" for name in choices)
    if not chosen:
        return [required(path, f"must specify exactly one of: {wanted}")]
    return [invalid(path, ", ".join(chosen), f"must specify exactly one of: {wanted}")]


def _validate_upstream_pod_group(spec: objects_pb2.PodGroupSpec) -> list[str]:
    problems = []
    if not spec.HasField("scheduling_policy"):
        problems.append(required("spec.schedulingPolicy", "must specify exactly one of: `basic`, `gang`"))
    else:
        policy = spec.scheduling_policy
        problems += _exactly_one(policy, "spec.schedulingPolicy", ("basic", "gang"))
        if policy.HasField("gang") and policy.gang.min_count < 1:
            problems.append(invalid("spec.schedulingPolicy.gang.minCount", policy.gang.min_count,
                                    "must be greater than zero"))
    if spec.HasField("workload_ref"):
        workload, path = spec.workload_ref, "spec.workloadRef"
        if not workload.workload_name:
            problems.append(required(f"{path}.workloadName"))
        else:
            problems += check(f"{path}.workloadName", workload.workload_name, is_dns1123_subdomain)
        if not workload.template_name:
            problems.append(required(f"{path}.templateName"))
        else:
            problems += check(f"{path}.templateName", workload.template_name, is_dns1123_label)
    if spec.HasField("disruption_mode"):
        problems += _exactly_one(spec.disruption_mode, "spec.disruptionMode", ("single", "all"))
    if spec.priority_class_name:
        problems += check("spec.priorityClassName", spec.priority_class_name, is_dns1123_subdomain)
    return problems


def _validate_coscheduling_pod_group(spec: objects_pb2.PodGroupSpec) -> list[str]:
    problems = []
    if spec.min_member < 0:
        problems.append(invalid("spec.minMember", spec.min_member, NOT_NEGATIVE))
    problems += check_quantities(spec.min_resources, "spec.minResources", container=False)[0]
    if spec.HasField("schedule_timeout_seconds") and spec.schedule_timeout_seconds < 0:
        problems.append(invalid("spec.scheduleTimeoutSeconds", spec.schedule_timeout_seconds, NOT_NEGATIVE))
    return problems


def validate_pod_group_status(group: objects_pb2.PodGroup) -> list[str]:
    status = group.status
    problems = []
    for index, condition in enumerate(status.conditions):
        where = f"status.conditions[{index}]"
        if not condition.type:
            problems.append(required(f"{where}.type"))
        else:
            problems += check(f"{where}.type", condition.type, is_qualified_name)
        if condition.status not in CONDITION_STATUSES:
            problems.append(not_supported(f"{where}.status", condition.status, CONDITION_STATUSES))
        if condition.observed_generation < 0:
            problems.append(
                invalid(f"{where}.observedGeneration", condition.observed_generation, NOT_NEGATIVE)
            )
    if status.phase and status.phase not in podgroups.PHASES:
        problems.append(not_supported("status.phase", status.phase, podgroups.PHASES))
    for field_name, path in (("scheduled", "status.scheduled"), ("running", "status.running"),
                             ("succeeded", "status.succeeded"), ("failed", "status.failed")):
        value = getattr(status, field_name)
        if value < 0:
            problems.append(invalid(path, value, NOT_NEGATIVE))
    return problems


def validate_pod_group(group: objects_pb2.PodGroup) -> list[str]:
    spec = group.spec
    coscheduling = podgroups.is_coscheduling(group)
    others = _UPSTREAM_GROUP_FIELDS if coscheduling else _COSCHEDULING_GROUP_FIELDS
    version = group.api_version or kinds.POD_GROUP.api_version
    problems = [
        forbidden(path, f"not a field of {version} PodGroup")
        for field_name, path in others if _is_set(spec, field_name)
    ]
    problems += _validate_coscheduling_pod_group(spec) if coscheduling else _validate_upstream_pod_group(spec)
    problems += validate_pod_group_status(group)
    return problems


def validate_pod_group_update(old: objects_pb2.PodGroup, new: objects_pb2.PodGroup) -> list[str]:
    """Upstream's PodGroup keeps its scheduling fields for life (a gang's size and priority are what the
    scheduler admitted it with); Coscheduling's CRD has no such rule."""
    if podgroups.is_coscheduling(new):
        return []
    problems = []
    for field_name, path in _UPSTREAM_GROUP_FIELDS:
        if field_name == "priority":
            continue  # admission's, kept from the stored object
        before, after = getattr(old.spec, field_name), getattr(new.spec, field_name)
        if before != after:
            shown = after if isinstance(after, str) else _short_text(after)
            problems.append(invalid(path, shown, IMMUTABLE))
    return problems


def _short_text(message: Message) -> str:
    """A struct as its JSON, for an error that shows the new value."""
    return json.dumps(json_format.MessageToDict(message), separators=(",", ":"), sort_keys=True)


def _validate_priority_class_update(
    old: objects_pb2.PriorityClass, new: objects_pb2.PriorityClass
) -> list[str]:
    problems = []
    if new.value != old.value:
        problems.append(forbidden("value", "may not be changed in an update."))
    if new.preemption_policy != old.preemption_policy:
        problems.append(invalid("preemptionPolicy", new.preemption_policy, IMMUTABLE))
    return problems


PRIORITY_CLASS = KindValidation(
    kinds.PRIORITY_CLASS, validate_priority_class, _validate_priority_class_update
)
POD_GROUP = KindValidation(
    kinds.POD_GROUP, validate_pod_group, validate_pod_group_update, validate_pod_group_status
)

VALIDATIONS: tuple[KindValidation[Any], ...] = (PRIORITY_CLASS, POD_GROUP)
