"""What a PodGroup's status should say, given its pods: the counts and scheduler-plugins' phase.

Counts: ``scheduled`` is the pods bound to a node, ``running``, ``succeeded`` and ``failed`` the pods in
those phases. The phase follows scheduler-plugins' PodGroup controller, where ``min`` is the group's
minCount (minMember), at least 1:
- no phase yet is Pending; Pending becomes Scheduling once ``min`` pods exist;
- past Pending, fewer than ``min`` pods sends the group back to Pending; else Scheduling becomes
  Scheduled once ``min`` pods are bound, and Scheduled becomes Running once ``min`` pods run or have
  succeeded; some failed with ``min`` running, succeeded or failed is Failed; ``min`` succeeded is
  Finished;
- Finished and Failed are final.
scheduler-plugins takes one step per reconcile and reconciles again on its own write; here the steps are
taken until the phase stops moving, which ends where those reconciles end. ``scheduleStartTime`` is set
when the group first enters Scheduling. Conditions (the scheduler's PodGroupInitiallyScheduled,
DisruptionTarget) and ``occupiedBy`` are kept as they are: this controller never writes them.
"""

from __future__ import annotations

from collections.abc import Iterable

from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import objects_pb2, podgroups, timeutil

_FINAL = (podgroups.FINISHED, podgroups.FAILED)


def _next_phase(phase: str, pods: int, status: objects_pb2.PodGroupStatus, minimum: int) -> str:
    if phase in _FINAL:
        return phase
    if phase == podgroups.PENDING:
        return podgroups.SCHEDULING if pods >= minimum else phase
    if pods < minimum:
        return podgroups.PENDING
    if phase == podgroups.SCHEDULING and status.scheduled >= minimum:
        phase = podgroups.SCHEDULED
    if phase == podgroups.SCHEDULED and status.running + status.succeeded >= minimum:
        phase = podgroups.RUNNING
    if status.failed and status.failed + status.running + status.succeeded >= minimum:
        phase = podgroups.FAILED
    if status.succeeded >= minimum:
        phase = podgroups.FINISHED
    return phase


def group_status(
    group: objects_pb2.PodGroup, pods: Iterable[objects_pb2.Pod], now: Timestamp
) -> objects_pb2.PodGroupStatus:
    """The status ``group`` should have with ``pods`` (its members), keeping what others wrote."""
    members = list(pods)
    status = objects_pb2.PodGroupStatus()
    status.CopyFrom(group.status)
    status.scheduled = sum(1 for pod in members if pod.spec.node_name)
    status.running = sum(1 for pod in members if pod.status.phase == "Running")
    status.succeeded = sum(1 for pod in members if pod.status.phase == "Succeeded")
    status.failed = sum(1 for pod in members if pod.status.phase == "Failed")
    minimum = max(podgroups.min_count(group), 1)
    phase = status.phase or podgroups.PENDING
    # Each step moves forward (or back to Pending, which moves only when more pods come), so this ends.
    for _ in range(len(podgroups.PHASES)):
        following = _next_phase(phase, len(members), status, minimum)
        if following == phase:
            break
        if following == podgroups.SCHEDULING and not timeutil.is_set(status.schedule_start_time):
            status.schedule_start_time.CopyFrom(now)
        phase = following
    status.phase = phase
    return status
