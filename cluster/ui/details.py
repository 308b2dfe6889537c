"""One pod in detail, for the web view's details panel: its spec's parts, the scheduler's explanation of
its last attempt and its group's (as `podsched describe` shows them) and its events."""

from __future__ import annotations

from collections.abc import Iterable

from cluster.api import objects_pb2
from cluster.printers.values import event_time
from cluster.ui import serialize
from cluster.ui.serialize import Json
from scheduler.framework.explanation import group_attempt, last_attempt


def pod_details(
    pod: objects_pb2.Pod,
    view: Json,
    pod_events: Iterable[objects_pb2.Event],
    group_events: Iterable[objects_pb2.Event] = (),
) -> Json:
    """``view`` is the pod's POD object; ``pod_events`` the events about the pod, ``group_events`` those
    about its PodGroup (none when it has no group)."""
    events = sorted(pod_events, key=_when)
    try:
        explanation = last_attempt(events)
        explained = explanation.render() if explanation is not None else ""
    except ValueError as exc:
        explained = f"<unreadable: {exc}>"
    try:
        attempt = group_attempt(group_events)
        placements = [] if attempt is None else [
            {"pod": name, "placement": placement} for name, placement in attempt.placements
        ]
    except ValueError as exc:
        placements = [{"pod": "", "placement": f"<unreadable: {exc}>"}]
    return {
        "pod": view,
        **serialize.pod_spec_details(pod),
        "explanation": explained,
        "groupAttempt": placements,
        "events": [serialize.event_view(event) for event in events],
    }


def _when(event: objects_pb2.Event) -> tuple[int, int, int]:
    ts = event_time(event)
    return ts.seconds, ts.nanos, int(event.metadata.resource_version or 0)
