"""How clients print scheduling.k8s.io Workload objects (the templates of a workload's groups): the
columns of `podsched get` and the sections of `podsched describe`."""

from __future__ import annotations

from google.protobuf.message import Message

from cluster.api import kinds, objects_pb2
from cluster.printers import groupfields
from cluster.printers.describe import DescribeText, Reader, name_fields
from cluster.printers.printer import Printer
from cluster.printers.table import AGE, NAME, Cell, Column, Columns
from cluster.printers.values import NONE, age


def _controller_text(spec: objects_pb2.WorkloadSpec) -> str:
    if not spec.HasField("controller_ref"):
        return NONE
    ref = spec.controller_ref
    kind = f"{ref.kind}.{ref.api_group}" if ref.api_group else ref.kind
    return f"{kind}/{ref.name}"


def _count_templates(owner: Message) -> tuple[int, int]:
    """The PodGroup and CompositePodGroup templates in the whole tree under ``owner``."""
    groups = len(owner.pod_group_templates)  # type: ignore[attr-defined]
    composites = 0
    for template in owner.composite_pod_group_templates:  # type: ignore[attr-defined]
        below = _count_templates(template)
        groups, composites = groups + below[0], composites + 1 + below[1]
    return groups, composites


def _workload_row(workload: objects_pb2.Workload, now: float) -> list[Cell]:
    groups, composites = _count_templates(workload.spec)
    return [workload.metadata.name, groups, composites, _controller_text(workload.spec),
            age(workload.metadata, now)]


def _templates(text: DescribeText, owner: Message, level: int) -> None:
    for template in owner.pod_group_templates:  # type: ignore[attr-defined]
        # A heading, not a field: the template's own fields below line up as one run.
        text.section(f"PodGroup Template {template.name}", level)
        groupfields.scheduling_fields(text, template, groupfields.policy_text(template.scheduling_policy),
                                      level + 1)
        if template.resource_claims:
            text.section("Resource Claims", level + 1)
            groupfields.claims_table(text, list(template.resource_claims), {}, level + 2)
    for composite in owner.composite_pod_group_templates:  # type: ignore[attr-defined]
        text.section(f"CompositePodGroup Template {composite.name}", level)
        groupfields.scheduling_fields(
            text, composite, groupfields.composite_policy_text(composite.scheduling_policy), level + 1)
        _templates(text, composite, level + 1)


async def _describe_workload(reader: Reader, workload: objects_pb2.Workload, text: DescribeText) -> None:
    name_fields(text, workload, namespaced=True)
    text.mapping("Labels", workload.metadata.labels)
    text.mapping("Annotations", workload.metadata.annotations, sep=": ")
    text.field("Controller", _controller_text(workload.spec))
    text.section("Templates")
    _templates(text, workload.spec, 1)


PRINTER = Printer(
    kinds.WORKLOAD,
    Columns((
        NAME,
        Column("PodGroup Templates", "The PodGroup templates in the whole tree.", "integer"),
        Column("Composite Templates", "The CompositePodGroup templates in the whole tree.", "integer"),
        Column("Controller", "The object that controls the workload."),
        AGE,
    ), _workload_row),
    _describe_workload,
)
