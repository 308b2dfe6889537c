"""kubectl's tables: the columns `podsched get` prints for each kind, and the aligned layout.

Every column function reads one object and nothing else, so a table of 10,000 pods costs one pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic

from google.protobuf import struct_pb2
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import containers, kinds, objects_pb2, podgroups, timeutil
from cluster.api.kinds import M
from cluster.api.schedulinggates import SCHEDULING_GATED, is_reported_gated
from cluster.api.selectors import LabelSelector

NONE = "<none>"

# kubectl's tabwriter puts three spaces between columns.
_PADDING = 3


@dataclass(frozen=True, slots=True)
class Columns(Generic[M]):
    header: tuple[str, ...]
    row: Callable[[M], list[str]]
    wide_header: tuple[str, ...] = ()
    wide_row: Callable[[M], list[str]] | None = None

    def headers(self, wide: bool) -> list[str]:
        return [*self.header, *(self.wide_header if wide else ())]

    def cells(self, obj: M, wide: bool) -> list[str]:
        cells = self.row(obj)
        if wide and self.wide_row is not None:
            cells += self.wide_row(obj)
        return cells


class TableWriter:
    """Aligns rows as kubectl's tabwriter does. Rows printed later (by `get -w`) keep the widths
    already printed, growing a column only when a cell needs it."""

    def __init__(self, header: Sequence[str]) -> None:
        self._header = list(header)
        self._widths = [len(cell) for cell in header]

    def _fit(self, rows: Iterable[Sequence[str]]) -> None:
        for row in rows:
            for i, cell in enumerate(row):
                self._widths[i] = max(self._widths[i], len(cell))

    def _line(self, row: Sequence[str]) -> str:
        last = len(row) - 1
        return "".join(
            cell if i == last else cell.ljust(self._widths[i] + _PADDING) for i, cell in enumerate(row)
        )

    def table(self, rows: Sequence[Sequence[str]]) -> list[str]:
        """The header and the rows."""
        self._fit(rows)
        return [self._line(self._header), *(self._line(row) for row in rows)]

    def row(self, row: Sequence[str]) -> str:
        self._fit([row])
        return self._line(row)


def age(meta: objects_pb2.ObjectMeta) -> str:
    return timeutil.age(meta.creation_timestamp)


def or_none(text: str) -> str:
    return text or NONE


# ---------------------------------------------------------------------------------------------- Pod


def pod_status(pod: objects_pb2.Pod) -> str:
    """kubectl's STATUS: Terminating once deletion began, else SchedulingGated while the PodScheduled
    condition says so, else the reason if any, else the phase."""
    if timeutil.is_set(pod.metadata.deletion_timestamp):
        return "Terminating"
    if is_reported_gated(pod):
        return SCHEDULING_GATED
    return pod.status.reason or pod.status.phase or "Unknown"


def pod_ready(pod: objects_pb2.Pod) -> str:
    """READY: containers ready / containers, where the containers are the app containers and the
    sidecars, as kubectl counts them. podsched has no container statuses: the pod's Ready condition
    decides, and without one a Running pod counts as ready (the API server stands in for a kubelet
    whose containers start at once)."""
    total = sum(1 for _ in containers.long_running_containers(pod))
    condition = next((c for c in pod.status.conditions if c.type == "Ready"), None)
    ready = condition.status == "True" if condition is not None else pod.status.phase == "Running"
    return f"{total if ready else 0}/{total}"


def _pod_row(pod: objects_pb2.Pod) -> list[str]:
    return [pod.metadata.name, pod_ready(pod), pod_status(pod), "0", age(pod.metadata)]


def _pod_wide(pod: objects_pb2.Pod) -> list[str]:
    priority = str(pod.spec.priority) if pod.spec.HasField("priority") else NONE
    return [
        or_none(pod.status.pod_ip),
        or_none(pod.spec.node_name),
        or_none(pod.status.nominated_node_name),
        priority,
    ]


# --------------------------------------------------------------------------------------------- Node


def node_status(node: objects_pb2.Node) -> str:
    """Ready / NotReady / Unknown from the Ready condition, plus SchedulingDisabled when cordoned."""
    ready = next((c for c in node.status.conditions if c.type == "Ready"), None)
    if ready is None:
        status = "Unknown"
    else:
        status = "Ready" if ready.status == "True" else "NotReady"
    if node.spec.unschedulable:
        status += ",SchedulingDisabled"
    return status


def node_roles(node: objects_pb2.Node) -> str:
    """ROLES from the node-role.kubernetes.io/<role> labels (and the older kubernetes.io/role)."""
    roles = sorted(
        key.removeprefix("node-role.kubernetes.io/")
        for key in node.metadata.labels
        if key.startswith("node-role.kubernetes.io/") and key != "node-role.kubernetes.io/"
    )
    legacy = node.metadata.labels.get("kubernetes.io/role")
    if legacy and legacy not in roles:
        roles.append(legacy)
    return ",".join(roles) or NONE


def taint_text(taint: objects_pb2.Taint) -> str:
    """`key=value:Effect`, as kubectl prints a taint."""
    text = taint.key + (f"={taint.value}" if taint.value else "")
    return f"{text}:{taint.effect}" if taint.effect else text


def toleration_text(toleration: objects_pb2.Toleration) -> str:
    """A toleration as `podsched describe` prints it: `key=value:Effect`, with `op=Exists` for one that
    matches any value and the seconds it lasts."""
    text = toleration.key
    if toleration.value:
        text += f"={toleration.value}"
    if toleration.effect:
        text += f":{toleration.effect}"
    if toleration.operator == "Exists" and not toleration.value:
        text += " op=Exists" if toleration.key else "op=Exists"
    if toleration.HasField("toleration_seconds"):
        text += f" for {toleration.toleration_seconds}s"
    return text


def _node_row(node: objects_pb2.Node) -> list[str]:
    return [node.metadata.name, node_status(node), node_roles(node), age(node.metadata)]


def _node_wide(node: objects_pb2.Node) -> list[str]:
    allocatable = node.status.allocatable
    return [
        allocatable.get("cpu", NONE),
        allocatable.get("memory", NONE),
        allocatable.get("pods", NONE),
        ",".join(taint_text(t) for t in node.spec.taints) or NONE,
    ]


# ------------------------------------------------------------------------------------ PriorityClass


def _priority_class_row(pc: objects_pb2.PriorityClass) -> list[str]:
    return [
        pc.metadata.name,
        str(pc.value),
        "true" if pc.global_default else "false",
        age(pc.metadata),
        pc.preemption_policy if pc.HasField("preemption_policy") else NONE,
    ]


# ------------------------------------------------------------------------------ PodDisruptionBudget


def int_or_string(value: struct_pb2.Value) -> str:
    """An IntOrString carried as a protobuf Value: 2 prints "2", "50%" prints "50%"."""
    if value.WhichOneof("kind") == "number_value":
        number = value.number_value
        return str(int(number)) if number.is_integer() else str(number)
    if value.WhichOneof("kind") == "string_value":
        return value.string_value
    return "N/A"


def _pdb_row(pdb: objects_pb2.PodDisruptionBudget) -> list[str]:
    spec = pdb.spec
    return [
        pdb.metadata.name,
        int_or_string(spec.min_available) if spec.HasField("min_available") else "N/A",
        int_or_string(spec.max_unavailable) if spec.HasField("max_unavailable") else "N/A",
        str(pdb.status.disruptions_allowed),
        age(pdb.metadata),
    ]


# ---------------------------------------------------------------------------------------- ResourceQuota


def quota_usage(quota: objects_pb2.ResourceQuota) -> str:
    """kubectl's REQUEST column: ``pods: 1/10`` per limited resource, sorted by name."""
    hard, used = quota.status.hard, quota.status.used
    return ", ".join(f"{name}: {used.get(name, '0')}/{hard[name]}" for name in sorted(hard))


def _quota_row(quota: objects_pb2.ResourceQuota) -> list[str]:
    return [quota.metadata.name, age(quota.metadata), quota_usage(quota)]


# ------------------------------------------------------------------------------------------- PodGroup


def _pod_group_row(group: objects_pb2.PodGroup) -> list[str]:
    status = group.status
    return [
        group.metadata.name,
        str(podgroups.min_count(group)),
        str(status.scheduled),
        str(status.running),
        status.phase or NONE,
        age(group.metadata),
    ]


def _pod_group_wide(group: objects_pb2.PodGroup) -> list[str]:
    status = group.status
    return [str(status.succeeded), str(status.failed), group.api_version or kinds.POD_GROUP.api_version]


# -------------------------------------------------------------------------------------------- Lease


def _lease_row(lease: objects_pb2.Lease) -> list[str]:
    holder = lease.spec.holder_identity if lease.spec.HasField("holder_identity") else ""
    return [lease.metadata.name, holder, age(lease.metadata)]


def _lease_candidate_row(candidate: objects_pb2.LeaseCandidate) -> list[str]:
    spec = candidate.spec
    renewed = timeutil.age(spec.renew_time) if timeutil.is_set(spec.renew_time) else NONE
    return [candidate.metadata.name, spec.lease_name, spec.binary_version, renewed, age(candidate.metadata)]


# -------------------------------------------------------------------------------------------- Event


def event_time(event: objects_pb2.Event) -> Timestamp:
    """When the event last happened: its lastTimestamp, else its first, else its creation (unset when
    it has none of them)."""
    for ts in (event.last_timestamp, event.first_timestamp, event.metadata.creation_timestamp):
        if timeutil.is_set(ts):
            return ts
    return event.last_timestamp


def event_last_seen(event: objects_pb2.Event) -> str:
    ts = event_time(event)
    return timeutil.age(ts) if timeutil.is_set(ts) else "<unknown>"


def involved_object(event: objects_pb2.Event) -> str:
    ref = event.involved_object
    return f"{ref.kind.lower()}/{ref.name}" if ref.kind else ref.name


def _event_row(event: objects_pb2.Event) -> list[str]:
    return [event_last_seen(event), event.type, event.reason, involved_object(event), event.message]


# ---------------------------------------------------------------------------------------- Namespace


def _namespace_row(namespace: objects_pb2.Namespace) -> list[str]:
    return [namespace.metadata.name, namespace.status.phase, age(namespace.metadata)]


# ------------------------------------------------------------------------------------- RuntimeClass


def _runtime_class_row(runtime_class: objects_pb2.RuntimeClass) -> list[str]:
    return [runtime_class.metadata.name, runtime_class.handler, age(runtime_class.metadata)]


# ------------------------------------------------------------- Service and the workload controllers


def _service_ports(service: objects_pb2.Service) -> str:
    ports = [
        f"{p.port}:{p.node_port}/{p.protocol or 'TCP'}" if p.node_port else f"{p.port}/{p.protocol or 'TCP'}"
        for p in service.spec.ports
    ]
    return ",".join(ports) if ports else NONE


def _service_row(service: objects_pb2.Service) -> list[str]:
    spec = service.spec
    # podsched provisions no load balancer: one asked for stays pending, as kubectl shows it.
    external = "<pending>" if spec.type == "LoadBalancer" else NONE
    return [service.metadata.name, spec.type, spec.cluster_ip or NONE, external, _service_ports(service),
            age(service.metadata)]


def map_selector_text(selector: Mapping[str, str]) -> str:
    """A label map as a selector (a Service's, a ReplicationController's): ``k=v`` pairs by key, joined
    by commas; empty for an empty map."""
    return ",".join(f"{key}={selector[key]}" for key in sorted(selector))


def _service_wide(service: objects_pb2.Service) -> list[str]:
    return [map_selector_text(service.spec.selector) or NONE]


def _controller_row(
    controller: objects_pb2.ReplicaSet | objects_pb2.StatefulSet | objects_pb2.ReplicationController,
) -> list[str]:
    """podsched runs no controller, so there are no current or ready replicas to show: only the desired."""
    return [controller.metadata.name, str(controller.spec.replicas), age(controller.metadata)]


def _controller_wide(
    controller: objects_pb2.ReplicaSet | objects_pb2.StatefulSet | objects_pb2.ReplicationController,
) -> list[str]:
    containers = controller.spec.template.spec.containers
    selector = controller.spec.selector
    if isinstance(selector, objects_pb2.LabelSelector):
        text = str(LabelSelector.from_proto(selector))
    else:
        text = map_selector_text(selector)
    return [",".join(c.name for c in containers) or NONE, ",".join(c.image for c in containers) or NONE,
            text or NONE]


_CONTROLLER_COLUMNS: Columns[Any] = Columns(
    ("NAME", "DESIRED", "AGE"), _controller_row, ("CONTAINERS", "IMAGES", "SELECTOR"), _controller_wide
)


#: By kind, the columns of that kind's objects.
COLUMNS: dict[kinds.Kind[Any], Columns[Any]] = {
    kinds.POD: Columns(
        ("NAME", "READY", "STATUS", "RESTARTS", "AGE"),
        _pod_row,
        ("IP", "NODE", "NOMINATED NODE", "PRIORITY"),
        _pod_wide,
    ),
    kinds.NODE: Columns(
        ("NAME", "STATUS", "ROLES", "AGE"), _node_row, ("CPU", "MEMORY", "PODS", "TAINTS"), _node_wide
    ),
    kinds.PRIORITY_CLASS: Columns(
        ("NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"), _priority_class_row
    ),
    kinds.POD_DISRUPTION_BUDGET: Columns(
        ("NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"), _pdb_row
    ),
    kinds.RESOURCE_QUOTA: Columns(("NAME", "AGE", "REQUEST"), _quota_row),
    kinds.POD_GROUP: Columns(
        ("NAME", "MIN", "SCHEDULED", "RUNNING", "PHASE", "AGE"),
        _pod_group_row,
        ("SUCCEEDED", "FAILED", "API VERSION"),
        _pod_group_wide,
    ),
    kinds.LEASE: Columns(("NAME", "HOLDER", "AGE"), _lease_row),
    kinds.LEASE_CANDIDATE: Columns(("NAME", "LEASENAME", "BINARYVERSION", "RENEWTIME", "AGE"),
                                   _lease_candidate_row),
    kinds.EVENT: Columns(("LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"), _event_row),
    kinds.NAMESPACE: Columns(("NAME", "STATUS", "AGE"), _namespace_row),
    kinds.RUNTIME_CLASS: Columns(("NAME", "HANDLER", "AGE"), _runtime_class_row),
    kinds.SERVICE: Columns(
        ("NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"), _service_row,
        ("SELECTOR",), _service_wide,
    ),
    kinds.REPLICA_SET: _CONTROLLER_COLUMNS,
    kinds.STATEFUL_SET: _CONTROLLER_COLUMNS,
    kinds.REPLICATION_CONTROLLER: _CONTROLLER_COLUMNS,
}


def header(kind: kinds.Kind, *, wide: bool, all_namespaces: bool) -> list[str]:
    cells = COLUMNS[kind].headers(wide)
    return ["NAMESPACE", *cells] if all_namespaces else cells


def row(kind: kinds.Kind, obj: Message, *, wide: bool, all_namespaces: bool) -> list[str]:
    cells = COLUMNS[kind].cells(obj, wide)
    return [kinds.metadata_of(obj).namespace, *cells] if all_namespaces else cells
