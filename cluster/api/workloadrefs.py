"""What a PodGroup's (or CompositePodGroup's) spec.workloadRef must name, as kube-apiserver's
PodGroupWorkloadExists admission plugin has it: a Workload of the group's namespace, not being deleted,
with a template of that name of the group's kind anywhere in its tree. The group's spec need not match
the template (its controller copies it; the scheduler reads the group). The API server checks it at
create (the field is immutable); `podsched simulate` checks a scenario's groups against its Workloads."""

from __future__ import annotations

from collections.abc import Iterator

from google.protobuf.message import Message

from cluster.api import objects_pb2, timeutil

Group = objects_pb2.PodGroup | objects_pb2.CompositePodGroup


def template_names(owner: Message, composite: bool) -> Iterator[str]:
    """The names of ``owner``'s (a WorkloadSpec's or a composite template's) templates of one kind, in
    its whole tree."""
    if not composite:
        yield from (t.name for t in owner.pod_group_templates)  # type: ignore[attr-defined]
    for template in owner.composite_pod_group_templates:  # type: ignore[attr-defined]
        if composite:
            yield template.name
        yield from template_names(template, composite)


def refusal(group: Group, workload: objects_pb2.Workload | None) -> str | None:
    """Why ``group``'s workloadRef is refused given the Workload it names (None: there is none); None
    when the group is admitted."""
    ref = group.spec.workload_ref
    kind = "CompositePodGroup" if isinstance(group, objects_pb2.CompositePodGroup) else "PodGroup"
    if workload is None:
        return f'{kind} rejected: Workload "{ref.workload_name}" not found'
    if timeutil.is_set(workload.metadata.deletion_timestamp):
        return f'{kind} rejected: Workload "{ref.workload_name}" is being deleted'
    composite = isinstance(group, objects_pb2.CompositePodGroup)
    if ref.template_name in template_names(workload.spec, composite):
        return None
    template_kind = "CompositePodGroupTemplate" if composite else "PodGroupTemplate"
    return (f'{kind} rejected: {template_kind} "{ref.template_name}" not found in Workload '
            f'"{ref.workload_name}"')
