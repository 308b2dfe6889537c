"""Whether a pod is Ready, as podsched's pods can say it.

Kubernetes reads a pod's Ready condition, which its kubelet writes. podsched has no kubelet: a pod is
Ready when it is bound and Running (the API server reports a bound pod Running) and carries no Ready
condition other than True; a Ready condition someone wrote is honoured. The disruption controller counts
Ready pods as healthy and an eviction lets an unready pod go more easily than a Ready one, so both ask
this one question.
"""

from __future__ import annotations

from cluster.api import objects_pb2

RUNNING = "Running"
READY = "Ready"


def is_ready(pod: objects_pb2.Pod) -> bool:
    if not pod.spec.node_name or pod.status.phase != RUNNING:
        return False
    for condition in pod.status.conditions:
        if condition.type == READY:
            return condition.status == "True"
    return True
