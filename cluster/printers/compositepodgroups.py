"""How clients print CompositePodGroup objects: the columns of `podsched get` and the sections of
`podsched describe` (its children: the PodGroups and CompositePodGroups that name it their parent)."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2
from cluster.printers import groupfields
from cluster.printers.describe import DescribeText, Reader, name_fields
from cluster.printers.printer import Printer
from cluster.printers.table import AGE, NAME, Cell, Column, Columns, wide
from cluster.printers.values import NONE, age


def _workload_text(spec: objects_pb2.CompositePodGroupSpec) -> str:
    if not spec.HasField("workload_ref"):
        return NONE
    return f"{spec.workload_ref.workload_name}/{spec.workload_ref.template_name}"


def _parent_text(spec: objects_pb2.CompositePodGroupSpec) -> str:
    return spec.parent_composite_pod_group_name if spec.HasField("parent_composite_pod_group_name") else NONE


def _composite_row(group: objects_pb2.CompositePodGroup, now: float) -> list[Cell]:
    spec = group.spec
    return [group.metadata.name, groupfields.composite_policy_text(spec.scheduling_policy),
            _parent_text(spec), age(group.metadata, now), _workload_text(spec),
            groupfields.topology_text(spec)]


async def _describe_composite(
    reader: Reader, group: objects_pb2.CompositePodGroup, text: DescribeText
) -> None:
    spec, namespace, name = group.spec, group.metadata.namespace, group.metadata.name
    name_fields(text, group, namespaced=True)
    text.mapping("Labels", group.metadata.labels)
    text.mapping("Annotations", group.metadata.annotations, sep=": ")
    text.field("Workload Template", _workload_text(spec))
    text.field("Parent", _parent_text(spec))
    groupfields.scheduling_fields(text, spec, groupfields.composite_policy_text(spec.scheduling_policy))
    children = [
        [child_kind.name, child.metadata.name]
        for child_kind in (kinds.COMPOSITE_POD_GROUP, kinds.POD_GROUP)
        for child in (await reader.list_all(child_kind, namespace)).items
        if child.spec.HasField("parent_composite_pod_group_name")
        and child.spec.parent_composite_pod_group_name == name
    ]
    if children:
        text.section("Children")
        text.table(["Kind", "Name"], sorted(children))
    else:
        text.field("Children", NONE)
    if group.status.conditions:
        text.section("Conditions")
        rows = [[c.type, c.status, c.reason, c.message] for c in group.status.conditions]
        text.table(["Type", "Status", "Reason", "Message"], rows)


PRINTER = Printer(
    kinds.COMPOSITE_POD_GROUP,
    Columns((
        NAME,
        Column("Policy", "The group's scheduling policy."),
        Column("Parent", "The CompositePodGroup the group belongs to."),
        AGE,
        wide(Column("Workload", "The Workload and template the group was made from.")),
        wide(Column("Topology", "The node label key all the group's pods share a value of.")),
    ), _composite_row),
    _describe_composite,
)
