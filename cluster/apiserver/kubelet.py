"""What a kubelet would report for a pod bound to its node.

podsched has no kubelets, so the API server stands in for them: a pod that gets a node (through Bind,
or created with spec.nodeName already set) is at once reported Running, and a pod being deleted
gracefully is finished by the API server when its grace period ends (see graceful.py). Schedulers and
users then see the lifecycle they would see on a real cluster whose containers start instantly.
"""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import objects_pb2, timeutil
from cluster.api.quota import FINISHED_PHASES

POD_SCHEDULED = "PodScheduled"
RUNNING = "Running"


def mark_running(pod: objects_pb2.Pod, now: Timestamp) -> None:
    """Phase Running, a start time (kept when already set: simulation scenarios give one), the
    PodScheduled condition True, and no nominated node any more: the pod is where it was going (recent
    kube-apiservers clear status.nominatedNodeName on binding too). A pod that has finished keeps its
    phase: a kubelet does not start it again (and kube-apiserver's binding does not look at the phase)."""
    if pod.status.phase not in FINISHED_PHASES:
        pod.status.phase = RUNNING
    if not timeutil.is_set(pod.status.start_time):
        pod.status.start_time.CopyFrom(now)
    pod.status.nominated_node_name = ""
    set_condition(pod.status, POD_SCHEDULED, "True", now)


def set_condition(status: objects_pb2.PodStatus, type_: str, value: str, now: Timestamp) -> None:
    """Replace a pod condition (type and status; the reason and message of an earlier state, such as
    Unschedulable's, go), moving its lastTransitionTime only when its status changes, as Kubernetes'
    UpdatePodCondition does."""
    for condition in status.conditions:
        if condition.type == type_:
            if condition.status != value:
                condition.last_transition_time.CopyFrom(now)
            condition.status = value
            condition.reason = ""
            condition.message = ""
            return
    status.conditions.add(type=type_, status=value, last_transition_time=now)
