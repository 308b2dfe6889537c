"""Validation of scheduling.k8s.io's kinds (and the Coscheduling spelling of PodGroup): PriorityClass,
PodGroup, CompositePodGroup; Workload's is workload.py's, the fields the group kinds share
groupfields.py's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cluster.api import kinds, objects_pb2, podgroups
from cluster.api.names import is_dns1123_subdomain, is_qualified_name
from cluster.api.validation import groupfields
from cluster.api.validation.field import (
    IMMUTABLE,
    NOT_NEGATIVE,
    check,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_many,
)
from cluster.api.validation.podspec import PREEMPTION_POLICIES
from cluster.api.validation.resources import check_quantities
from cluster.api.validation.rules import KindValidation
from cluster.api.validation.workload import WORKLOAD


def validate_priority_class(pc: objects_pb2.PriorityClass) -> list[str]:
    if pc.HasField("preemption_policy") and pc.preemption_policy not in PREEMPTION_POLICIES:
        return [not_supported("preemptionPolicy", pc.preemption_policy, PREEMPTION_POLICIES)]
    return []


#: The spec fields of each PodGroup spelling, as (proto field, manifest path); the other spelling's are
#: refused.
_UPSTREAM_GROUP_FIELDS = (
    ("parent_composite_pod_group_name", "spec.parentCompositePodGroupName"),
    ("workload_ref", "spec.workloadRef"),
    ("scheduling_policy", "spec.schedulingPolicy"),
    ("scheduling_constraints", "spec.schedulingConstraints"),
    ("resource_claims", "spec.resourceClaims"),
    ("disruption_mode", "spec.disruptionMode"),
    ("priority_class_name", "spec.priorityClassName"),
    ("priority", "spec.priority"),
    ("preemption_policy", "spec.preemptionPolicy"),
)


_COSCHEDULING_GROUP_FIELDS = (
    ("min_member", "spec.minMember"),
    ("min_resources", "spec.minResources"),
    ("schedule_timeout_seconds", "spec.scheduleTimeoutSeconds"),
)


CONDITION_STATUSES = ("True", "False", "Unknown")


# A group's spec.priority is not bounded as a template's: upstream bounds it by the highest a user may
# give, but the Priority admission plugin writes it from the class named, and podsched admits a group of
# a system class (above that bound) where a quota opens the class, as a pod of it.
def _validate_upstream_pod_group(spec: objects_pb2.PodGroupSpec) -> list[str]:
    problems = groupfields.parent_name(spec, "spec")
    if spec.HasField("workload_ref"):
        problems += groupfields.workload_ref(spec.workload_ref, "spec.workloadRef")
    problems += groupfields.scheduling_policy(spec.scheduling_policy, "spec.schedulingPolicy")
    problems += groupfields.constraints(spec, "spec")
    problems += groupfields.resource_claims(spec.resource_claims, "spec.resourceClaims")
    problems += groupfields.disruption_mode(spec, "spec")
    problems += groupfields.priority_fields(spec, "spec", bounded=False)
    return problems


def _validate_coscheduling_pod_group(spec: objects_pb2.PodGroupSpec) -> list[str]:
    problems = []
    if spec.min_member < 0:
        problems.append(invalid("spec.minMember", spec.min_member, NOT_NEGATIVE))
    problems += check_quantities(spec.min_resources, "spec.minResources", container=False)[0]
    if spec.HasField("schedule_timeout_seconds") and spec.schedule_timeout_seconds < 0:
        problems.append(invalid("spec.scheduleTimeoutSeconds", spec.schedule_timeout_seconds, NOT_NEGATIVE))
    return problems


def validate_conditions(conditions: Sequence[objects_pb2.Condition], path: str) -> list[str]:
    """metav1.Conditions of a status, a list keyed by type."""
    problems = []
    seen: set[str] = set()
    for index, condition in enumerate(conditions):
        where = f"{path}[{index}]"
        if condition.type and condition.type in seen:
            problems.append(duplicate(where, groupfields.as_json(condition)))
        seen.add(condition.type)
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
    return problems


def _validate_claim_statuses(statuses: Sequence[objects_pb2.PodGroupResourceClaimStatus]) -> list[str]:
    path = "status.resourceClaimStatuses"
    if len(statuses) > groupfields.MAX_GROUP_RESOURCE_CLAIMS:
        return [too_many(path, len(statuses), groupfields.MAX_GROUP_RESOURCE_CLAIMS)]
    problems = groupfields.unique_names(statuses, path)
    for index, status in enumerate(statuses):
        if status.HasField("resource_claim_name"):
            problems += check(f"{path}[{index}].resourceClaimName", status.resource_claim_name,
                              is_dns1123_subdomain)
    return problems


def validate_pod_group_status(group: objects_pb2.PodGroup) -> list[str]:
    status = group.status
    problems = validate_conditions(status.conditions, "status.conditions")
    problems += _validate_claim_statuses(status.resource_claim_statuses)
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
        for field_name, path in others if groupfields.is_set(spec, field_name)
    ]
    problems += _validate_coscheduling_pod_group(spec) if coscheduling else _validate_upstream_pod_group(spec)
    problems += validate_pod_group_status(group)
    return problems


#: The fields of upstream's PodGroup spec that never change, in the spec's order around
#: schedulingPolicy, whose own rule is policy_kind_update's (priority is admission's, kept from the
#: stored object).
_IMMUTABLE_GROUP_REFERENCES = (
    ("parent_composite_pod_group_name", "spec.parentCompositePodGroupName"),
    ("workload_ref", "spec.workloadRef"),
)
_IMMUTABLE_GROUP_FIELDS = (
    ("scheduling_constraints", "spec.schedulingConstraints"),
    ("resource_claims", "spec.resourceClaims"),
    ("disruption_mode", "spec.disruptionMode"),
    ("priority_class_name", "spec.priorityClassName"),
    ("preemption_policy", "spec.preemptionPolicy"),
)


def validate_pod_group_update(old: objects_pb2.PodGroup, new: objects_pb2.PodGroup) -> list[str]:
    """Upstream's PodGroup keeps its scheduling fields for life but its gang's minCount; Coscheduling's
    CRD has no such rule."""
    if podgroups.is_coscheduling(new):
        return []
    problems = groupfields.changed(old.spec, new.spec, _IMMUTABLE_GROUP_REFERENCES)
    problems += groupfields.policy_kind_update(old.spec.scheduling_policy, new.spec.scheduling_policy,
                                               "spec.schedulingPolicy")
    problems += groupfields.changed(old.spec, new.spec, _IMMUTABLE_GROUP_FIELDS)
    return problems


def _validate_priority_class_update(
    old: objects_pb2.PriorityClass, new: objects_pb2.PriorityClass
) -> list[str]:
    problems = []
    if new.value != old.value:
        problems.append(forbidden("value", "may not be changed in an update."))
    if new.preemption_policy != old.preemption_policy:
        problems.append(invalid("preemptionPolicy", new.preemption_policy, IMMUTABLE))
    return problems


def validate_composite_pod_group_status(group: objects_pb2.CompositePodGroup) -> list[str]:
    return validate_conditions(group.status.conditions, "status.conditions")


def validate_composite_pod_group(group: objects_pb2.CompositePodGroup) -> list[str]:
    spec = group.spec
    problems = groupfields.parent_name(spec, "spec")
    if not spec.HasField("workload_ref"):
        problems.append(required("spec.workloadRef"))
    else:
        problems += groupfields.workload_ref(spec.workload_ref, "spec.workloadRef")
    problems += groupfields.composite_scheduling_policy(spec.scheduling_policy, "spec.schedulingPolicy")
    problems += groupfields.constraints(spec, "spec")
    problems += groupfields.disruption_mode(spec, "spec")
    problems += groupfields.priority_fields(spec, "spec", bounded=False)
    problems += validate_composite_pod_group_status(group)
    return problems


#: Every spec field of a CompositePodGroup is fixed at creation (priority is admission's).
_IMMUTABLE_COMPOSITE_FIELDS = (
    ("parent_composite_pod_group_name", "spec.parentCompositePodGroupName"),
    ("workload_ref", "spec.workloadRef"),
    ("scheduling_policy", "spec.schedulingPolicy"),
    ("scheduling_constraints", "spec.schedulingConstraints"),
    ("disruption_mode", "spec.disruptionMode"),
    ("priority_class_name", "spec.priorityClassName"),
    ("preemption_policy", "spec.preemptionPolicy"),
)


def validate_composite_pod_group_update(
    old: objects_pb2.CompositePodGroup, new: objects_pb2.CompositePodGroup
) -> list[str]:
    return groupfields.changed(old.spec, new.spec, _IMMUTABLE_COMPOSITE_FIELDS)


PRIORITY_CLASS = KindValidation(
    kinds.PRIORITY_CLASS, validate_priority_class, _validate_priority_class_update
)
POD_GROUP = KindValidation(
    kinds.POD_GROUP, validate_pod_group, validate_pod_group_update, validate_pod_group_status
)

COMPOSITE_POD_GROUP = KindValidation(
    kinds.COMPOSITE_POD_GROUP, validate_composite_pod_group, validate_composite_pod_group_update,
    validate_composite_pod_group_status,
)

VALIDATIONS: tuple[KindValidation[Any], ...] = (PRIORITY_CLASS, POD_GROUP, WORKLOAD, COMPOSITE_POD_GROUP)
