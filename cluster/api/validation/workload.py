"""Validation of scheduling.k8s.io/v1alpha3 Workload: the templates a workload controller makes its
PodGroups (and CompositePodGroups) from, a tree of at most four levels, each list at most eight templates
keyed by a name unique in the whole Workload. Once created, a Workload's templates keep their names and
their fields (but a gang's counts, the workload scaling)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from google.protobuf.message import Message

from cluster.api import kinds, objects_pb2
from cluster.api.names import is_dns1123_label, is_dns1123_subdomain
from cluster.api.validation import groupfields
from cluster.api.validation.field import check, duplicate, forbidden, required, too_many
from cluster.api.validation.groupfields import CANNOT_ADD, CANNOT_REMOVE
from cluster.api.validation.rules import KindValidation

#: WorkloadMaxPodGroupTemplates: the most templates of each list.
MAX_TEMPLATES = 8
#: WorkloadMaxTreeDepth: the most levels of the tree of templates, the Workload's own lists the first.
MAX_TREE_DEPTH = 4

_PodGroupTemplates = Sequence[objects_pb2.PodGroupTemplate]
_CompositeTemplates = Sequence[objects_pb2.CompositePodGroupTemplate]
_Template = objects_pb2.PodGroupTemplate | objects_pb2.CompositePodGroupTemplate

_LISTS = (("pod_group_templates", "podGroupTemplates"),
          ("composite_pod_group_templates", "compositePodGroupTemplates"))


def _controller_ref(ref: objects_pb2.TypedLocalObjectReference, path: str) -> list[str]:
    problems = check(f"{path}.apiGroup", ref.api_group, is_dns1123_subdomain) if ref.api_group else []
    problems += groupfields.required_format(f"{path}.kind", ref.kind, groupfields.is_path_segment_name)
    problems += groupfields.required_format(f"{path}.name", ref.name, groupfields.is_path_segment_name)
    return problems


def _pod_group_template(template: objects_pb2.PodGroupTemplate, path: str) -> list[str]:
    problems = groupfields.required_format(f"{path}.name", template.name, is_dns1123_label)
    problems += groupfields.scheduling_policy(template.scheduling_policy, f"{path}.schedulingPolicy")
    problems += groupfields.constraints(template, path)
    problems += groupfields.resource_claims(template.resource_claims, f"{path}.resourceClaims")
    problems += groupfields.disruption_mode(template, path)
    problems += groupfields.priority_fields(template, path, bounded=True)
    return problems


def _composite_template(template: objects_pb2.CompositePodGroupTemplate, path: str, depth: int) -> list[str]:
    problems = groupfields.required_format(f"{path}.name", template.name, is_dns1123_label)
    problems += groupfields.composite_scheduling_policy(
        template.scheduling_policy, f"{path}.schedulingPolicy"
    )
    problems += groupfields.constraints(template, path)
    problems += groupfields.disruption_mode(template, path)
    problems += groupfields.priority_fields(template, path, bounded=True)
    if not template.pod_group_templates and not template.composite_pod_group_templates:
        problems.append(required(path, "must specify at least one of: `podGroupTemplates`, "
                                       "`compositePodGroupTemplates`"))
    problems += _template_lists(template, path, depth + 1)
    return problems


def _template_lists(owner: Message, path: str, depth: int) -> list[str]:
    """The two lists of templates of the Workload's spec or of a composite template, at ``depth``."""
    problems = []
    for field_name, json_name in _LISTS:
        templates = getattr(owner, field_name)
        where = f"{path}.{json_name}"
        if not templates:
            continue
        if depth > MAX_TREE_DEPTH:
            problems.append(forbidden(where, f"templates may nest at most {MAX_TREE_DEPTH} levels deep"))
            continue
        if len(templates) > MAX_TEMPLATES:
            problems.append(too_many(where, len(templates), MAX_TEMPLATES))
            continue
        problems += groupfields.unique_names(templates, where)
        for index, template in enumerate(templates):
            if field_name == "pod_group_templates":
                problems += _pod_group_template(template, f"{where}[{index}]")
            else:
                problems += _composite_template(template, f"{where}[{index}]", depth)
    return problems


def _every_template(owner: Message, path: str) -> Iterator[tuple[str, _Template]]:
    """Every template under ``owner`` with its path, depth first."""
    for field_name, json_name in _LISTS:
        for index, template in enumerate(getattr(owner, field_name)):
            where = f"{path}.{json_name}[{index}]"
            yield where, template
            if field_name == "composite_pod_group_templates":
                yield from _every_template(template, where)


def _names_unique_in_workload(spec: objects_pb2.WorkloadSpec) -> list[str]:
    """A PodGroup names its template by name alone, so a name is the Workload's once; a repeat in the
    same list is that list's Duplicate already."""
    first_list: dict[str, str] = {}
    problems = []
    for where, template in _every_template(spec, "spec"):
        if not template.name:
            continue
        owner_list = where.rpartition("[")[0]
        seen_in = first_list.setdefault(template.name, owner_list)
        if seen_in != owner_list:
            problems.append(duplicate(f"{where}.name", template.name))
    return problems


def validate_workload(workload: objects_pb2.Workload) -> list[str]:
    spec = workload.spec
    problems = []
    if spec.HasField("controller_ref"):
        problems += _controller_ref(spec.controller_ref, "spec.controllerRef")
    fields, json_names = zip(*_LISTS, strict=True)
    problems += groupfields.union(spec, "spec", fields, json_names)
    problems += _template_lists(spec, "spec", 1)
    problems += _names_unique_in_workload(spec)
    return problems


#: A template's fields that never change (name is the key; policy's rule is its own).
_IMMUTABLE_TEMPLATE_FIELDS = (
    ("scheduling_constraints", "schedulingConstraints"),
    ("resource_claims", "resourceClaims"),
    ("disruption_mode", "disruptionMode"),
    ("priority_class_name", "priorityClassName"),
    ("priority", "priority"),
    ("preemption_policy", "preemptionPolicy"),
)


def _template_update(old: _Template, new: _Template, path: str) -> list[str]:
    fields = [(field_name, f"{path}.{json_name}") for field_name, json_name in _IMMUTABLE_TEMPLATE_FIELDS
              if field_name in new.DESCRIPTOR.fields_by_name]
    problems = groupfields.policy_kind_update(
        old.scheduling_policy, new.scheduling_policy, f"{path}.schedulingPolicy"
    )
    problems += groupfields.changed(old, new, fields)
    if isinstance(new, objects_pb2.CompositePodGroupTemplate):
        problems += _lists_update(old, new, path)
    return problems


def _lists_update(old: Message, new: Message, path: str) -> list[str]:
    """NoAddItem, NoRemoveItem: a list keeps its templates, by name; each keeps its fixed fields."""
    problems = []
    for field_name, json_name in _LISTS:
        where = f"{path}.{json_name}"
        before = {template.name: template for template in getattr(old, field_name)}
        after = list(getattr(new, field_name))
        kept = {template.name for template in after}
        for index, template in enumerate(after):
            if template.name not in before:
                problems.append(forbidden(f"{where}[{index}]", CANNOT_ADD))
            elif template != before[template.name]:
                problems += _template_update(before[template.name], template, f"{where}[{index}]")
        if any(name not in kept for name in before):
            problems.append(forbidden(where, CANNOT_REMOVE))
    return problems


def validate_workload_update(old: objects_pb2.Workload, new: objects_pb2.Workload) -> list[str]:
    problems = groupfields.changed(old.spec, new.spec, (("controller_ref", "spec.controllerRef"),))
    problems += _lists_update(old.spec, new.spec, "spec")
    return problems


WORKLOAD = KindValidation(kinds.WORKLOAD, validate_workload, validate_workload_update)
