"""API objects as the web view's JSON (docs/ui.md, the wire contract): one function per kind, each reading
one object and nothing else. Quantities become numbers in base units (cpu in millicores, memory and
ephemeral-storage in bytes, everything else in units), times ISO 8601 UTC strings or None.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import containers, objects_pb2, podgroups, timeutil
from cluster.api.quantity import parse_quantity
from cluster.printers.values import event_time, int_or_string, taint_text, toleration_text

#: An amount of resources as the view carries it: resource name -> number.
Amounts = dict[str, int | float]
#: A JSON object.
Json = dict[str, Any]

CPU = "cpu"
#: The phases of a pod that holds nothing any more.
TERMINAL_PHASES = ("Succeeded", "Failed")


# ------------------------------------------------------------------------------------------ values


def amount(name: str, text: str) -> int | float:
    """One quantity in its base unit: millicores for cpu, else the number of bytes or units (a whole
    number as an int, a fraction of a unit as a float)."""
    return _base_unit(name, parse_quantity(text))


def amounts(quantities: Mapping[str, str]) -> Amounts:
    """A resource list ({"cpu": "500m", "memory": "1Gi"}) in base units."""
    return {name: amount(name, text) for name, text in quantities.items()}


def add_into(total: Amounts, more: Mapping[str, int | float], sign: int = 1) -> None:
    """Add (``sign`` 1) or take away (-1) ``more`` from ``total`` in place; a resource that reaches zero
    is dropped, so sums stay as small as what they sum."""
    for name, value in more.items():
        left = total.get(name, 0) + sign * value
        if left:
            total[name] = left
        else:
            total.pop(name, None)


def pod_requests(pod: objects_pb2.Pod) -> Amounts:
    """What the pod holds on its node, as the scheduler counts it (``containers.requests_and_limits``:
    init containers one at a time, sidecars beside everything after them, plus the overhead)."""
    requests, _limits = containers.requests_and_limits(pod)
    return {name: _base_unit(name, value) for name, value in requests.items()}


def _base_unit(name: str, value: Fraction) -> int | float:
    """An exact quantity in its base unit; a fraction of a millicore is rounded up, as Kubernetes'
    MilliValue does, a fraction of any other unit kept."""
    if name == CPU:
        milli = value * 1000
        return -(-milli.numerator // milli.denominator)
    return int(value) if value.denominator == 1 else float(value)


def iso_time(ts: Timestamp) -> str | None:
    """An API timestamp as "2026-11-27T05:01:02Z" (None when unset)."""
    if not timeutil.is_set(ts):
        return None
    return timeutil.to_datetime(ts).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_datetime(moment: datetime) -> str:
    """A local or aware datetime as an ISO 8601 UTC string."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------------------------- kinds


def pod_key(pod: objects_pb2.Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


def is_terminal(pod: objects_pb2.Pod) -> bool:
    return pod.status.phase in TERMINAL_PHASES


def node_view(node: objects_pb2.Node) -> Json:
    """A node's own fields; the model adds what its pods request and their keys."""
    ready = next((c for c in node.status.conditions if c.type == "Ready"), None)
    readiness = "Unknown" if ready is None else "Ready" if ready.status == "True" else "NotReady"
    return {
        "name": node.metadata.name,
        "labels": dict(node.metadata.labels),
        "taints": [taint_text(t) for t in node.spec.taints],
        "unschedulable": node.spec.unschedulable,
        "ready": readiness == "Ready",
        # As `podsched get nodes` says it; the scheduler does not look at it (a node without the
        # condition, having no kubelet, still takes pods).
        "readiness": readiness,
        "allocatable": amounts(node.status.allocatable),
    }


def pod_view(pod: objects_pb2.Pod) -> Json:
    scheduled = next((c for c in pod.status.conditions if c.type == "PodScheduled"), None)
    unschedulable = scheduled is not None and scheduled.status == "False"
    group = podgroups.group_name_of(pod)
    return {
        "key": pod_key(pod),
        "namespace": pod.metadata.namespace,
        "name": pod.metadata.name,
        "node": pod.spec.node_name,
        "phase": pod.status.phase,
        "priority": pod.spec.priority,
        "priorityClassName": pod.spec.priority_class_name,
        "requests": pod_requests(pod),
        "pending": not pod.spec.node_name and not is_terminal(pod),
        "reason": scheduled.reason if unschedulable and scheduled is not None else "",
        "message": scheduled.message if unschedulable and scheduled is not None else "",
        "nominatedNode": pod.status.nominated_node_name,
        "podGroup": f"{pod.metadata.namespace}/{group}" if group else "",
        "terminating": timeutil.is_set(pod.metadata.deletion_timestamp),
    }


def pdb_view(pdb: objects_pb2.PodDisruptionBudget) -> Json:
    spec, status = pdb.spec, pdb.status
    return {
        "key": f"{pdb.metadata.namespace}/{pdb.metadata.name}",
        "minAvailable": int_or_string(spec.min_available) if spec.HasField("min_available") else None,
        "maxUnavailable": int_or_string(spec.max_unavailable) if spec.HasField("max_unavailable") else None,
        "currentHealthy": status.current_healthy,
        "desiredHealthy": status.desired_healthy,
        "expectedPods": status.expected_pods,
        "disruptionsAllowed": status.disruptions_allowed,
    }


def group_view(group: objects_pb2.PodGroup, members: int, scheduled: int, running: int) -> Json:
    """A PodGroup, with the counts of its member pods the model keeps."""
    condition = next(
        (c for c in group.status.conditions if c.type == podgroups.POD_GROUP_INITIALLY_SCHEDULED), None
    )
    if podgroups.is_coscheduling(group):
        phase = group.status.phase
    else:
        phase = condition.reason if condition is not None else ""
    return {
        "key": f"{group.metadata.namespace}/{group.metadata.name}",
        "apiVersion": group.api_version or podgroups.UPSTREAM_API_VERSION,
        "minCount": podgroups.min_count(group),
        "members": members,
        "scheduled": scheduled,
        "running": running,
        "phase": phase,
        "message": condition.message if condition is not None else "",
        # Whether the message tells of a success (True: the group was bound) or of why it waits.
        "scheduledCondition": condition.status if condition is not None else "",
    }


def event_view(event: objects_pb2.Event) -> Json:
    ref = event.involved_object
    where = f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name
    return {
        "key": f"{event.metadata.namespace}/{event.metadata.name}",
        "time": iso_time(event_time(event)),
        "type": event.type,
        "reason": event.reason,
        "object": f"{ref.kind} {where}".strip(),
        "message": event.message,
        "component": event.source.component or event.reporting_component,
        "count": event.count or 1,
    }


def lease_view(lease: objects_pb2.Lease | None, token: int) -> Json:
    """The Lease's own fields of the leadership object ("" and None while there is no Lease)."""
    if lease is None:
        return {"holder": "", "token": 0, "renewTime": None, "acquireTime": None,
                "leaseDurationSeconds": None, "transitions": 0}
    spec = lease.spec
    holder = spec.holder_identity if spec.HasField("holder_identity") else ""
    return {
        "holder": holder,
        "token": token if holder else 0,
        "renewTime": iso_time(spec.renew_time),
        "acquireTime": iso_time(spec.acquire_time),
        "leaseDurationSeconds": (
            spec.lease_duration_seconds if spec.HasField("lease_duration_seconds") else None
        ),
        "transitions": spec.lease_transitions if spec.HasField("lease_transitions") else 0,
    }


def candidate_view(candidate: objects_pb2.LeaseCandidate, *, live: bool, renewing: bool) -> Json:
    """One replica's LeaseCandidate: named by the replica's identity (docs/ha-and-fencing.md)."""
    return {
        "name": candidate.metadata.name,
        "identity": candidate.metadata.name,
        "renewTime": iso_time(candidate.spec.renew_time),
        "live": live,
        "renewing": renewing,
    }


def pod_spec_details(pod: objects_pb2.Pod) -> Json:
    """The parts of a pod the details panel shows beside its POD object."""
    return {
        "labels": dict(pod.metadata.labels),
        "tolerations": [toleration_text(t) for t in pod.spec.tolerations],
        "nodeSelector": dict(pod.spec.node_selector),
        "containers": [
            {"name": c.name, "image": c.image, "requests": amounts(c.resources.requests),
             "limits": amounts(c.resources.limits)}
            for c in (*pod.spec.init_containers, *pod.spec.containers)
        ],
    }
