"""DefaultBinder: binds the pod through the API (the pods/binding subresource).

A Conflict (the pod is already bound, or was replaced) or NotFound (deleted meanwhile) comes back as an
ERROR status: the scheduler forgets the assumed pod and the queue decides what happens next."""

from __future__ import annotations

from cluster.api import errors
from scheduler.framework import CycleState, Handle, PodInfo, Status

NAME = "DefaultBinder"


class DefaultBinder:
    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        meta = pod.pod.metadata
        try:
            await self._handle.client.bind(meta.namespace, meta.name, node_name)
        except errors.ApiError as exc:
            return Status.as_error(exc)
        return None


def new(args: None, handle: Handle) -> DefaultBinder:
    return DefaultBinder(handle)
