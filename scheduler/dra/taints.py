"""Device taints: a NoSchedule or NoExecute taint keeps a device from being allocated to a request that
does not tolerate it (other effects, None among them, do not)."""

from __future__ import annotations

from scheduler.dra.pools import SliceDevice
from scheduler.dra.requests import Request
from scheduler.plugins.helpers import tolerates

_NO_SCHEDULE_EFFECTS = ("NoSchedule", "NoExecute")


def taint_prevents(device: SliceDevice, request: Request) -> bool:
    """Whether a NoSchedule or NoExecute taint of ``device`` is not tolerated by ``request``."""
    return any(
        taint.effect in _NO_SCHEDULE_EFFECTS
        and not any(tolerates(toleration, taint) for toleration in request.tolerations)
        for taint in device.proto.taints
    )
