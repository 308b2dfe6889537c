"""Device taints: a NoSchedule or NoExecute taint keeps a device from being allocated to a request that
does not tolerate it (other effects, None among them, do not)."""

from __future__ import annotations

from cluster.api import objects_pb2
from scheduler.dra.pools import SliceDevice
from scheduler.dra.requests import Request

_NO_SCHEDULE_EFFECTS = ("NoSchedule", "NoExecute")


def _tolerates(toleration: objects_pb2.DeviceToleration, taint: objects_pb2.DeviceTaint) -> bool:
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return toleration.operator == "Exists"


def taint_prevents(device: SliceDevice, request: Request) -> bool:
    """Whether a NoSchedule or NoExecute taint of ``device`` is not tolerated by ``request``."""
    return any(
        taint.effect in _NO_SCHEDULE_EFFECTS
        and not any(_tolerates(toleration, taint) for toleration in request.tolerations)
        for taint in device.proto.taints
    )
