"""The fields scheduling.k8s.io/v1alpha3 repeats across PodGroup, CompositePodGroup and a Workload's
templates (scheduling policy, topology constraints, group claims, disruption mode, priority), checked as
upstream's declarative validation words them (zz_generated.validations.go and apimachinery's validate
package): a union member missing or doubled, maxItems, a list keyed by name, formats."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from google.protobuf import json_format
from google.protobuf.message import Message

from cluster.api import objects_pb2
from cluster.api.names import is_dns1123_label, is_dns1123_subdomain, is_qualified_name
from cluster.api.validation.field import (
    IMMUTABLE,
    check,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_many,
)
from cluster.api.validation.podspec import PREEMPTION_POLICIES

#: The highest priority a client may give (HighestUserDefinablePriority).
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
#: A group's (and a template's) topology constraints: one, for now.
MAX_TOPOLOGY_CONSTRAINTS = 1
#: A group's (and a PodGroup template's) claims (MaxPodGroupResourceClaims).
MAX_GROUP_RESOURCE_CLAIMS = 4

#: apimachinery's update rules NoSet and NoUnset, NoAddItem and NoRemoveItem.
CANNOT_SET = "field cannot be set once created"
CANNOT_CLEAR = "field cannot be cleared once set"
CANNOT_ADD = "items cannot be added"
CANNOT_REMOVE = "items cannot be removed"

_Claims = Sequence[objects_pb2.PodGroupResourceClaim]


def as_json(message: Message) -> str:
    """A struct as compact JSON, for an error that shows a value."""
    return json.dumps(json_format.MessageToDict(message), separators=(",", ":"), sort_keys=True)


def is_set(message: Message, field_name: str) -> bool:
    """Whether a field is given: a field with presence set, a list or map not empty, a scalar not zero."""
    if message.DESCRIPTOR.fields_by_name[field_name].has_presence:
        return message.HasField(field_name)
    return bool(getattr(message, field_name))


def union(message: Message, path: str, members: tuple[str, ...],
          json_names: tuple[str, ...] | None = None) -> list[str]:
    """apimachinery's validate.Union: exactly one member set. ``json_names``: the members' names in a
    manifest, when they are not the proto fields' own."""
    names = json_names or members
    chosen = [name for field, name in zip(members, names, strict=True) if is_set(message, field)]
    wanted = ", ".join(f"`{name}`" for name in names)
    if not chosen:
        return [invalid(path, "", f"must specify one of: {wanted}")]
    if len(chosen) > 1:
        return [invalid(path, "{" + ", ".join(chosen) + "}", f"must specify exactly one of: {wanted}")]
    return []


def required_format(path: str, value: str, rule: Callable[[str], list[str]]) -> list[str]:
    """A required string of a format: Required when empty, else the format's errors."""
    if not value:
        return [required(path)]
    return check(path, value, rule)


def is_path_segment_name(value: str) -> list[str]:
    """apimachinery's content.IsPathSegmentName: a name that can be one segment of a URL path."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def scheduling_policy(policy: objects_pb2.PodGroupSchedulingPolicy, path: str) -> list[str]:
    problems = union(policy, path, ("basic", "gang"))
    if policy.HasField("gang"):
        problems += min_one(policy.gang.min_count, f"{path}.gang.minCount")
    return problems


def composite_scheduling_policy(
    policy: objects_pb2.CompositePodGroupSchedulingPolicy, path: str
) -> list[str]:
    problems = union(policy, path, ("basic", "gang"))
    if policy.HasField("gang"):
        problems += min_one(policy.gang.min_group_count, f"{path}.gang.minGroupCount")
    return problems


def min_one(value: int, path: str) -> list[str]:
    """A required count of at least one: 0 is "missing" to declarative validation."""
    if value == 0:
        return [required(path)]
    if value < 1:
        return [invalid(path, value, "must be greater than or equal to 1")]
    return []


def constraints(spec: Message, path: str) -> list[str]:
    """schedulingConstraints: at most one topology constraint, its key a label key."""
    if not spec.HasField("scheduling_constraints"):
        return []
    topology = spec.scheduling_constraints.topology  # type: ignore[attr-defined]
    where = f"{path}.schedulingConstraints.topology"
    if len(topology) > MAX_TOPOLOGY_CONSTRAINTS:
        return [too_many(where, len(topology), MAX_TOPOLOGY_CONSTRAINTS)]
    problems = []
    for index, constraint in enumerate(topology):
        problems += required_format(f"{where}[{index}].key", constraint.key, is_qualified_name)
    return problems


def resource_claims(claims: _Claims, path: str) -> list[str]:
    """resourceClaims: at most four, keyed by a unique DNS label name, each naming exactly one of a claim
    or a claim template."""
    if len(claims) > MAX_GROUP_RESOURCE_CLAIMS:
        return [too_many(path, len(claims), MAX_GROUP_RESOURCE_CLAIMS)]
    problems = unique_names(claims, path)
    for index, claim in enumerate(claims):
        where = f"{path}[{index}]"
        problems += union(claim, where, ("resource_claim_name", "resource_claim_template_name"),
                          ("resourceClaimName", "resourceClaimTemplateName"))
        problems += required_format(f"{where}.name", claim.name, is_dns1123_label)
        if claim.HasField("resource_claim_name"):
            problems += check(f"{where}.resourceClaimName", claim.resource_claim_name, is_dns1123_subdomain)
        if claim.HasField("resource_claim_template_name"):
            problems += check(f"{where}.resourceClaimTemplateName", claim.resource_claim_template_name,
                              is_dns1123_subdomain)
    return problems


def unique_names(items: Sequence[Message], path: str) -> list[str]:
    """A list keyed by name: each later item with a name seen before is a Duplicate, shown whole."""
    seen: set[str] = set()
    problems = []
    for index, item in enumerate(items):
        name = item.name  # type: ignore[attr-defined]
        if name in seen:
            problems.append(duplicate(f"{path}[{index}]", as_json(item)))
        seen.add(name)
    return problems


def disruption_mode(spec: Message, path: str) -> list[str]:
    if not spec.HasField("disruption_mode"):
        return []
    return union(spec.disruption_mode, f"{path}.disruptionMode", ("single", "all"))  # type: ignore[attr-defined]


def priority_fields(spec: Message, path: str, *, bounded: bool) -> list[str]:
    """priorityClassName (a DNS subdomain), priority (with ``bounded``, at most the highest a user may
    give) and preemptionPolicy (an enum)."""
    problems = []
    class_name: str = spec.priority_class_name  # type: ignore[attr-defined]
    if class_name:
        problems += check(f"{path}.priorityClassName", class_name, is_dns1123_subdomain)
    if bounded and spec.HasField("priority"):
        priority: int = spec.priority  # type: ignore[attr-defined]
        if priority > HIGHEST_USER_DEFINABLE_PRIORITY:
            problems.append(invalid(f"{path}.priority", priority,
                                    f"must be less than or equal to {HIGHEST_USER_DEFINABLE_PRIORITY}"))
    if spec.HasField("preemption_policy"):
        policy: str = spec.preemption_policy  # type: ignore[attr-defined]
        if policy not in PREEMPTION_POLICIES:
            problems.append(not_supported(f"{path}.preemptionPolicy", policy, PREEMPTION_POLICIES))
    return problems


def workload_ref(ref: objects_pb2.WorkloadReference, path: str) -> list[str]:
    return (required_format(f"{path}.workloadName", ref.workload_name, is_dns1123_subdomain)
            + required_format(f"{path}.templateName", ref.template_name, is_dns1123_label))


def parent_name(spec: Message, path: str) -> list[str]:
    """parentCompositePodGroupName: a DNS subdomain, given only with a workloadRef."""
    if not spec.HasField("parent_composite_pod_group_name"):
        return []
    name: str = spec.parent_composite_pod_group_name  # type: ignore[attr-defined]
    problems = check(f"{path}.parentCompositePodGroupName", name, is_dns1123_subdomain)
    if not spec.HasField("workload_ref"):
        problems.append(
            required(f"{path}.workloadRef", "must be specified when `parentCompositePodGroupName` is")
        )
    return problems


def shown(message: Message, field_name: str) -> object:
    """A field's value as an error shows it: scalars bare, structs and lists as JSON, unset as null."""
    if message.DESCRIPTOR.fields_by_name[field_name].has_presence and not message.HasField(field_name):
        return "null"
    value = getattr(message, field_name)
    if isinstance(value, Message):
        return as_json(value)
    if isinstance(value, str | int):
        return value
    return "[" + ",".join(as_json(item) for item in value) + "]"


def changed(old: Message, new: Message, fields: Sequence[tuple[str, str]]) -> list[str]:
    """The immutable fields, as (proto name, path), that differ between two specs."""
    return [invalid(path, shown(new, field_name), IMMUTABLE) for field_name, path in fields
            if shown(old, field_name) != shown(new, field_name)]


def policy_kind_update(old: Message, new: Message, path: str) -> list[str]:
    """A group keeps the policy it was made with: basic stays as it was, gang may not be set or cleared
    (its counts may change, the workload scaling)."""
    problems = []
    if shown(old, "basic") != shown(new, "basic"):
        problems.append(invalid(f"{path}.basic", shown(new, "basic"), IMMUTABLE))
    if old.HasField("gang") and not new.HasField("gang"):
        problems.append(forbidden(f"{path}.gang", CANNOT_CLEAR))
    elif new.HasField("gang") and not old.HasField("gang"):
        problems.append(forbidden(f"{path}.gang", CANNOT_SET))
    return problems
