"""The ResourceQuota admission plugin (cluster/apiserver/quota.py does the counting): a pod create is
charged to the quotas of its namespace, and refused past a limit; a PodGroup of a limited class needs a
quota that opens its class; a ResourceQuota's own status (its hard limits and usage) is the server's on
every write of it."""

from __future__ import annotations

from typing import Any

from cluster.api import objects_pb2
from cluster.api.kinds import COMPOSITE_POD_GROUP, POD, POD_GROUP, RESOURCE_QUOTA, WORKLOAD
from cluster.apiserver import quota
from cluster.apiserver.admission.plugin import AdmissionPlugin, Rollback
from cluster.apiserver.context import Context


class ResourceQuota(AdmissionPlugin):
    name = "ResourceQuota"
    handles = {
        "mutate_create": frozenset({RESOURCE_QUOTA}),
        "mutate_update": frozenset({RESOURCE_QUOTA}),
        "validate_create": frozenset({POD, POD_GROUP, COMPOSITE_POD_GROUP, WORKLOAD}),
    }

    async def mutate_create(self, ctx: Context, obj: Any) -> None:
        if isinstance(obj, objects_pb2.ResourceQuota):
            await quota.status_for_create(ctx.storage, obj)

    async def mutate_update(self, ctx: Context, new: Any, old: Any) -> None:
        if isinstance(new, objects_pb2.ResourceQuota):
            await quota.status_for_update(ctx.storage, new)

    async def validate_create(self, ctx: Context, obj: Any, dry_run: bool) -> Rollback | None:
        if isinstance(obj, objects_pb2.PodGroup):
            await quota.admit_pod_group(ctx.cache, obj)
            return None
        if isinstance(obj, objects_pb2.CompositePodGroup):
            await quota.admit_composite_pod_group(ctx.cache, obj)
            return None
        if isinstance(obj, objects_pb2.Workload):
            await quota.admit_workload(ctx.cache, obj)
            return None
        if not isinstance(obj, objects_pb2.Pod):
            return None
        charged = await quota.charge(ctx.storage, obj, dry_run=dry_run, cache=ctx.cache)
        if not charged:
            return None
        namespace = obj.metadata.namespace

        async def refund() -> None:
            await quota.refund(ctx.storage, namespace, charged)

        return refund
