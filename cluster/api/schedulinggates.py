"""Pod scheduling readiness (spec.schedulingGates): the words the API server and the CLI share for a pod
the scheduler must not try yet."""

from __future__ import annotations

from cluster.api import objects_pb2

#: The reason of the PodScheduled=False condition the API server gives a pod created with gates; kubectl
#: shows it as the pod's STATUS.
SCHEDULING_GATED = "SchedulingGated"
SCHEDULING_GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"


def is_reported_gated(pod: objects_pb2.Pod) -> bool:
    """Whether the pod's PodScheduled condition says it is gated (what kubectl's STATUS column reads)."""
    return any(
        condition.type == "PodScheduled" and condition.reason == SCHEDULING_GATED
        for condition in pod.status.conditions
    )
