"""The DefaultStorageClass admission plugin, as kube-apiserver's (plugin/pkg/admission/storage/
storageclass/setdefault): a PersistentVolumeClaim created with no class (no spec.storageClassName, not
even "", and no beta class annotation) gets the default StorageClass, the one annotated
storageclass.kubernetes.io/is-default-class "true" (of several, the newest); with none, it stays without.
Create only: a claim's class is immutable."""

from __future__ import annotations

from typing import Any, cast

from cluster.api import objects_pb2
from cluster.api.kinds import PERSISTENT_VOLUME_CLAIM, STORAGE_CLASS
from cluster.api.volumes import BETA_STORAGE_CLASS_ANNOTATION, default_class
from cluster.apiserver.admission.plugin import AdmissionPlugin
from cluster.apiserver.context import Context
from cluster.apiserver.selection import Selection

_EVERY_CLASS = Selection.parse(STORAGE_CLASS)


class DefaultStorageClass(AdmissionPlugin):
    name = "DefaultStorageClass"
    handles = {"mutate_create": frozenset({PERSISTENT_VOLUME_CLAIM})}

    async def mutate_create(self, ctx: Context, obj: Any) -> None:
        claim: objects_pb2.PersistentVolumeClaim = obj
        has_class = BETA_STORAGE_CLASS_ANNOTATION in claim.metadata.annotations
        if claim.spec.HasField("storage_class_name") or has_class:
            return
        page = await ctx.cache.list(_EVERY_CLASS)
        chosen = default_class(cast(list[objects_pb2.StorageClass], page.items))
        if chosen is not None:
            claim.spec.storage_class_name = chosen.metadata.name
