"""How clients print PodGroup objects: the columns of `podsched get` and the sections of
`podsched describe`."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2, podgroups, timeutil
from cluster.printers import groupfields
from cluster.printers.describe import DescribeText, Reader, by_text, name_fields, pods_named, time_text
from cluster.printers.printer import Explained, Printer
from cluster.printers.table import AGE, NAME, Cell, Column, Columns, wide
from cluster.printers.values import NONE, age


def _pod_group_row(group: objects_pb2.PodGroup, now: float) -> list[Cell]:
    status = group.status
    return [
        group.metadata.name, podgroups.min_count(group), status.scheduled, status.running,
        status.phase or NONE, age(group.metadata, now), status.succeeded, status.failed,
        group.api_version or kinds.POD_GROUP.api_version, _workload_text(group.spec),
        groupfields.topology_text(group.spec),
    ]


def _workload_text(spec: objects_pb2.PodGroupSpec) -> str:
    """The Workload template a group was made from, as workload/template."""
    if not spec.HasField("workload_ref"):
        return NONE
    return f"{spec.workload_ref.workload_name}/{spec.workload_ref.template_name}"


def _pod_group_policy(group: objects_pb2.PodGroup) -> list[tuple[str, object]]:
    """The spec fields of the group's own spelling, as describe's labels and values."""
    spec = group.spec
    if podgroups.is_coscheduling(group):
        fields: list[tuple[str, object]] = [("Min Member", spec.min_member)]
        if spec.min_resources:
            resources = spec.min_resources
            fields.append(("Min Resources", ", ".join(f"{k}={resources[k]}" for k in sorted(resources))))
        if spec.HasField("schedule_timeout_seconds"):
            fields.append(("Schedule Timeout", f"{spec.schedule_timeout_seconds}s"))
        return fields
    fields = [("Scheduling Policy", groupfields.policy_text(spec.scheduling_policy)),
              ("Workload Template", _workload_text(spec))]
    if spec.HasField("parent_composite_pod_group_name"):
        fields.append(("Parent", spec.parent_composite_pod_group_name))
    fields += [("Topology Key", groupfields.topology_text(spec)),
               ("Disruption Mode", groupfields.disruption_text(spec)),
               ("Priority Class Name", spec.priority_class_name or NONE),
               ("Priority", groupfields.priority_text(spec))]
    if spec.HasField("preemption_policy"):
        fields.append(("Preemption Policy", spec.preemption_policy))
    return fields


def _why_unbound(pod: objects_pb2.Pod) -> str:
    """Why an unbound pod waits: its PodScheduled=False message ("" without one)."""
    for condition in pod.status.conditions:
        if condition.type == "PodScheduled" and condition.status == "False":
            return condition.message or condition.reason
    return ""


async def _describe_pod_group(reader: Reader, group: objects_pb2.PodGroup, text: DescribeText) -> None:
    status = group.status
    name_fields(text, group, namespaced=True)
    text.field("API Version", group.api_version or kinds.POD_GROUP.api_version)
    text.mapping("Labels", group.metadata.labels)
    text.mapping("Annotations", group.metadata.annotations, sep=": ")
    for label, value in _pod_group_policy(group):
        text.field(label, value)
    if group.spec.resource_claims:
        text.section("Resource Claims")
        generated = {s.name: s.resource_claim_name for s in status.resource_claim_statuses
                     if s.HasField("resource_claim_name")}
        groupfields.claims_table(text, list(group.spec.resource_claims), generated)
    text.section("Status")
    text.field("Phase", status.phase or NONE, 1)
    for label, value in (("Scheduled", status.scheduled), ("Running", status.running),
                         ("Succeeded", status.succeeded), ("Failed", status.failed)):
        text.field(label, value, 1)
    if status.occupied_by:
        text.field("Occupied By", status.occupied_by, 1)
    if timeutil.is_set(status.schedule_start_time):
        text.field("Schedule Start Time", time_text(status.schedule_start_time), 1)
    if status.conditions:
        text.section("Conditions")
        rows = [[c.type, c.status, c.reason, c.message] for c in status.conditions]
        text.table(["Type", "Status", "Reason", "Message"], rows)
    pods = (await reader.list_all(kinds.POD, group.metadata.namespace)).items
    members = sorted(
        (pod for pod in pods if podgroups.group_name_of(pod) == group.metadata.name),
        key=lambda pod: pod.metadata.name,
    )
    if not members:
        text.field("Pods", NONE)
        return
    text.section("Pods")
    text.table(["Name", "Node", "Status"], [
        [pod.metadata.name, pod.spec.node_name or NONE,
         pod.status.phase or ("Unknown" if pod.spec.node_name else "Pending")]
        for pod in members
    ])
    waiting = [(pod.metadata.name, why) for pod in members
               if not pod.spec.node_name and (why := _why_unbound(pod))]
    if waiting:
        text.section("Waiting")
        for names, why in by_text(waiting):
            count = "1 pod: " if len(names) == 1 else ""
            text.line(f"{count}{pods_named(names)}: {why}", 1)


PRINTER = Printer(
    kinds.POD_GROUP,
    Columns((
        NAME,
        Column("Min", "The fewest members the group schedules together.", "integer"),
        Column("Scheduled", "The members bound to a node.", "integer"),
        Column("Running", "The members running.", "integer"),
        Column("Phase", "The group's phase."),
        AGE,
        wide(Column("Succeeded", "The members that succeeded.", "integer")),
        wide(Column("Failed", "The members that failed.", "integer")),
        wide(Column("API Version", "The API version the group was written in.")),
        wide(Column("Workload", "The Workload and template the group was made from.")),
        wide(Column("Topology", "The node label key all members share a value of.")),
    ), _pod_group_row),
    _describe_pod_group,
    explained=Explained.GROUP_ATTEMPT,
)
