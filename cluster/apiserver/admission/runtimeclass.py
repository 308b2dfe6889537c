"""The RuntimeClass admission plugin: the RuntimeClass a pod names must exist (else Forbidden); its
overhead and scheduling constraints go into the pod (cluster/api/runtimeclass.py)."""

from __future__ import annotations

from typing import Any, cast

from cluster.api import objects_pb2, runtimeclass
from cluster.api.kinds import POD, RUNTIME_CLASS
from cluster.apiserver import messages
from cluster.apiserver.admission.plugin import AdmissionPlugin
from cluster.apiserver.context import Context


class RuntimeClass(AdmissionPlugin):
    name = "RuntimeClass"
    handles = {"mutate_create": frozenset({POD})}

    async def mutate_create(self, ctx: Context, obj: Any) -> None:
        pod: objects_pb2.Pod = obj
        spec = pod.spec
        runtime_class: objects_pb2.RuntimeClass | None = None
        if spec.HasField("runtime_class_name"):
            found = await ctx.cache.get(RUNTIME_CLASS, "", spec.runtime_class_name)
            runtime_class = cast(objects_pb2.RuntimeClass | None, found)
            if runtime_class is None:
                refusal = runtimeclass.not_found(spec.runtime_class_name)
                raise messages.forbidden(POD, pod.metadata.name, refusal.message)
        refused = runtimeclass.apply_runtime_class(pod, runtime_class)
        if refused is not None:
            raise messages.forbidden(POD, pod.metadata.name, refused.message)
