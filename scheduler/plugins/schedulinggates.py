"""SchedulingGates: a pod with scheduling gates (spec.schedulingGates) waits at the queue's door
(PreEnqueue) until an update removes the last one, as kube-scheduler's plugin of that name (Pod
Scheduling Readiness, GA in Kubernetes 1.30).

The gated pod is never attempted: it waits in the queue's gated set (scheduler_pending_pods
{queue="gated"}), and no FailedScheduling event or attempt is recorded for it. The queue asks PreEnqueue
again whenever the pod itself is updated (a gate removed is a spec change), so the plugin registers no
cluster event of its own.
"""

from __future__ import annotations

from scheduler.framework import Handle, PodInfo, Status

NAME = "SchedulingGates"


class SchedulingGates:
    @property
    def name(self) -> str:
        return NAME

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        gates = pod.pod.spec.scheduling_gates
        if not gates:
            return None
        # Go's %v of the gate names, as kube-scheduler words it.
        return Status.unresolvable(f"waiting for scheduling gates: [{' '.join(gate.name for gate in gates)}]")


def new(args: None, handle: Handle) -> SchedulingGates:
    return SchedulingGates()
