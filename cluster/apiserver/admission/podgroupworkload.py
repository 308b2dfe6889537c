"""The PodGroupWorkloadExists admission plugin, as kube-apiserver's: a PodGroup (or CompositePodGroup)
created with a workloadRef names a Workload of its namespace that exists, is not being deleted, and has
a template of that name of the group's kind anywhere in its tree. The group's spec need not match the
template (its controller copies it; the scheduler reads the group). Checked on create only: workloadRef
is immutable."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from google.protobuf.message import Message

from cluster.api import objects_pb2, timeutil
from cluster.api.kinds import COMPOSITE_POD_GROUP, POD_GROUP, WORKLOAD, kind_of, metadata_of
from cluster.apiserver import messages
from cluster.apiserver.admission.plugin import AdmissionPlugin, Rollback
from cluster.apiserver.context import Context

_Group = objects_pb2.PodGroup | objects_pb2.CompositePodGroup


def _templates(owner: Message, composite: bool) -> Iterator[str]:
    """The names of ``owner``'s templates of one kind, in its whole tree."""
    if not composite:
        yield from (t.name for t in owner.pod_group_templates)  # type: ignore[attr-defined]
    for template in owner.composite_pod_group_templates:  # type: ignore[attr-defined]
        if composite:
            yield template.name
        yield from _templates(template, composite)


def refusal(group: _Group, workload: objects_pb2.Workload | None) -> str | None:
    """Why ``group``'s workloadRef is refused given the Workload it names (None: not found); None when
    it is admitted."""
    ref = group.spec.workload_ref
    kind = kind_of(group).name
    if workload is None:
        return f'{kind} rejected: Workload "{ref.workload_name}" not found'
    if timeutil.is_set(workload.metadata.deletion_timestamp):
        return f'{kind} rejected: Workload "{ref.workload_name}" is being deleted'
    composite = isinstance(group, objects_pb2.CompositePodGroup)
    if ref.template_name in _templates(workload.spec, composite):
        return None
    template_kind = "CompositePodGroupTemplate" if composite else "PodGroupTemplate"
    return (f'{kind} rejected: {template_kind} "{ref.template_name}" not found in Workload '
            f'"{ref.workload_name}"')


class PodGroupWorkloadExists(AdmissionPlugin):
    name = "PodGroupWorkloadExists"
    handles = {"validate_create": frozenset({POD_GROUP, COMPOSITE_POD_GROUP})}

    async def validate_create(self, ctx: Context, obj: Any, dry_run: bool) -> Rollback | None:
        group = cast(_Group, obj)
        if not group.spec.HasField("workload_ref"):
            return None
        meta = metadata_of(group)
        found = await ctx.cache.get(WORKLOAD, meta.namespace, group.spec.workload_ref.workload_name)
        refused = refusal(group, cast(objects_pb2.Workload | None, found))
        if refused is not None:
            raise messages.forbidden(kind_of(group), meta.name, refused)
        return None
