"""The PodGroupWorkloadExists admission plugin, as kube-apiserver's: a PodGroup (or CompositePodGroup)
created with a workloadRef names a Workload that has that template (cluster/api/workloadrefs.py says
what it must name); else Forbidden. Create only: workloadRef is immutable."""

from __future__ import annotations

from typing import Any, cast

from cluster.api import objects_pb2, workloadrefs
from cluster.api.kinds import COMPOSITE_POD_GROUP, POD_GROUP, WORKLOAD, kind_of
from cluster.apiserver import messages
from cluster.apiserver.admission.plugin import AdmissionPlugin, Rollback
from cluster.apiserver.context import Context


class PodGroupWorkloadExists(AdmissionPlugin):
    name = "PodGroupWorkloadExists"
    handles = {"validate_create": frozenset({POD_GROUP, COMPOSITE_POD_GROUP})}

    async def validate_create(self, ctx: Context, obj: Any, dry_run: bool) -> Rollback | None:
        group = cast(workloadrefs.Group, obj)
        if not group.spec.HasField("workload_ref"):
            return None
        meta = group.metadata
        found = await ctx.cache.get(WORKLOAD, meta.namespace, group.spec.workload_ref.workload_name)
        refused = workloadrefs.refusal(group, cast(objects_pb2.Workload | None, found))
        if refused is not None:
            raise messages.forbidden(kind_of(group), meta.name, refused)
        return None
