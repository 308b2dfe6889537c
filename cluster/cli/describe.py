"""`podsched describe KIND NAME`: kubectl's human-readable report of one object and its events."""

from __future__ import annotations

import argparse
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import containers, errors, kinds, objects_pb2, podgroups, quantity, timeutil
from cluster.api.quota import format_requirements
from cluster.api.selectors import LabelSelector
from cluster.cli import tables
from cluster.cli.common import EXIT_OK, add_namespace_flag, add_server_flag, connect, parse_kind, run_async
from cluster.cli.leasehint import no_scheduler_hint, read_scheduler_lease
from cluster.client import FAIL_FAST_POLICY, Client
from scheduler.framework.explanation import group_attempt, last_attempt

NONE = "<none>"
#: How many pods a line naming several (a reason they share) lists by name.
NAMES_SHOWN = 3


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "describe", help="show one object in detail, with its events",
        description="Show one object as kubectl describe does, followed by the events about it.",
    )
    parser.add_argument(
        "kind",
        help="pod, node, priorityclass, poddisruptionbudget, resourcequota, podgroup, lease, leasecandidate, "
             "event",
    )
    parser.add_argument("name")
    add_namespace_flag(parser)
    add_server_flag(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return run_async(args, lambda: _describe(args))


async def _describe(args: argparse.Namespace) -> int:
    kind = parse_kind(args.kind)
    namespace = args.namespace if kind.namespaced else ""
    async with connect(args, retry_policy=FAIL_FAST_POLICY) as client:
        obj = await client.get(kind, args.name, namespace)
        text = _Text()
        await _DESCRIBERS[kind](client, obj, text)
        if kind is not kinds.EVENT:
            events = await _events_about(client, kind, obj)
            hint = None
            if kind is kinds.POD_GROUP:
                _group_attempt(text, events)
            if kind is kinds.POD:
                _scheduling_explanation(text, events)
                if not obj.spec.node_name and not events:
                    hint = await _no_scheduler_hint(client)
            _events(text, events, hint)
    print(text.render(), end="", flush=True)
    return EXIT_OK


# ---------------------------------------------------------------------------------------------- text


class _Text:
    """kubectl's describe layout: `Label:  value` lines whose values line up within each run of
    fields at one indent level, sections that nest by two spaces, and aligned sub-tables."""

    def __init__(self) -> None:
        # Each entry: (level, label or None for a plain line, value lines).
        self._entries: list[tuple[int, str | None, list[str]]] = []

    def field(self, label: str, value: object, level: int = 0) -> None:
        lines = str(value).split("\n") if str(value) != "" else [""]
        self._entries.append((level, label + ":", lines))

    def section(self, label: str, level: int = 0) -> None:
        self.line(label + ":", level)

    def line(self, text: str, level: int = 0) -> None:
        self._entries.append((level, None, [text]))

    def mapping(self, label: str, values: Mapping[str, str], level: int = 0, sep: str = "=") -> None:
        """A field whose value is one `key=value` line per item, sorted, or <none>."""
        lines = [f"{key}{sep}{values[key]}" for key in sorted(values)]
        self.field(label, "\n".join(lines) if lines else NONE, level)

    def table(self, header: Sequence[str], rows: Sequence[Sequence[str]], level: int = 1,
              underline: bool = False) -> None:
        lines = [header, *([["-" * len(cell) for cell in header]] if underline else []), *rows]
        widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
        for row in lines:
            cells = [cell.ljust(widths[i]) if i < len(row) - 1 else cell for i, cell in enumerate(row)]
            self.line("  ".join(cells).rstrip(), level)

    def render(self) -> str:
        out: list[str] = []
        i = 0
        while i < len(self._entries):
            level, label, value = self._entries[i]
            if label is None:
                out.append("  " * level + value[0])
                i += 1
                continue
            # A run of fields at this level, with anything nested deeper inside it, aligns its values.
            run_end = i
            width = 0
            while run_end < len(self._entries):
                lvl, lbl, _ = self._entries[run_end]
                if lvl < level or (lvl == level and lbl is None):
                    break
                if lvl == level:
                    width = max(width, len(lbl))
                run_end += 1
            for lvl, lbl, lines in self._entries[i:run_end]:
                indent = "  " * lvl
                if lbl is None:
                    out.append(indent + lines[0])
                    continue
                pad = (width if lvl == level else len(lbl)) + 2
                out.append((indent + lbl.ljust(pad) + lines[0]).rstrip())
                out.extend(indent + " " * pad + rest for rest in lines[1:])
            i = run_end
        return "\n".join(out) + "\n"


def _time(ts: Timestamp) -> str:
    """kubectl's RFC 1123 time: `Mon, 02 Jan 2006 15:04:05 +0000`."""
    if not timeutil.is_set(ts):
        return NONE
    return timeutil.to_datetime(ts).strftime("%a, %d %b %Y %H:%M:%S %z")


def _selector(selector: objects_pb2.LabelSelector, present: bool) -> str:
    if not present:
        return "<unset>"
    try:
        text = str(LabelSelector.from_proto(selector))
    except errors.Invalid as exc:
        return f"<invalid: {exc.message}>"
    return text or "<empty: every pod>"


def _meta(text: _Text, obj: Message, *, namespaced: bool) -> None:
    meta = obj.metadata
    text.field("Name", meta.name)
    if namespaced:
        text.field("Namespace", meta.namespace)


# ---------------------------------------------------------------------------------------------- Pod


def _ports(container: objects_pb2.Container) -> str:
    ports = [f"{p.container_port}/{p.protocol or 'TCP'}" for p in container.ports]
    return ", ".join(ports) if ports else NONE


def _container(text: _Text, container: objects_pb2.Container) -> None:
    text.section(container.name, 1)
    text.field("Image", container.image, 2)
    text.field("Port", _ports(container), 2)
    if container.HasField("restart_policy"):
        # Only an init container has one, and only Always: a sidecar, running beside the app containers.
        text.field("Restart Policy", container.restart_policy, 2)
    if container.command:
        text.field("Command", "\n".join(container.command), 2)
    if container.args:
        text.field("Args", "\n".join(container.args), 2)
    for label, values in (("Limits", container.resources.limits), ("Requests", container.resources.requests)):
        if values:
            text.section(label, 2)
            for key in sorted(values):
                text.field(key, values[key], 3)
    env = [f"{e.name}:  {e.value}" for e in container.env]
    text.field("Environment", "\n".join(env) if env else NONE, 2)


async def _describe_pod(client: Client, pod: objects_pb2.Pod, text: _Text) -> None:
    spec, status = pod.spec, pod.status
    _meta(text, pod, namespaced=True)
    text.field("Priority", spec.priority if spec.HasField("priority") else NONE)
    if spec.priority_class_name:
        text.field("Priority Class Name", spec.priority_class_name)
    if spec.HasField("preemption_policy"):
        text.field("Preemption Policy", spec.preemption_policy)
    text.field("Scheduler", spec.scheduler_name or NONE)
    node = spec.node_name + (f"/{status.host_ip}" if status.host_ip else "") if spec.node_name else NONE
    text.field("Node", node)
    text.field("Start Time", _time(status.start_time))
    text.mapping("Labels", pod.metadata.labels)
    text.mapping("Annotations", pod.metadata.annotations, sep=": ")
    if timeutil.is_set(pod.metadata.deletion_timestamp):
        # deletionTimestamp is when the grace period ends and the server removes the pod.
        text.field("Status", "Terminating")
        text.field("Termination Grace Period", f"{pod.metadata.deletion_grace_period_seconds}s")
        text.field("Deletion Time", _time(pod.metadata.deletion_timestamp))
    else:
        text.field("Status", status.phase or "Unknown")
    if status.reason:
        text.field("Reason", status.reason)
    if status.message:
        text.field("Message", status.message)
    text.field("IP", status.pod_ip)
    text.field("Nominated Node", status.nominated_node_name or NONE)
    if spec.init_containers:
        text.section("Init Containers")
        for container in spec.init_containers:
            _container(text, container)
    text.section("Containers")
    for container in spec.containers:
        _container(text, container)
    if status.conditions:
        text.section("Conditions")
        text.table(["Type", "Status"], [[c.type, c.status] for c in status.conditions])
    text.mapping("Node-Selectors", spec.node_selector)
    tolerations = [tables.toleration_text(t) for t in spec.tolerations]
    text.field("Tolerations", "\n".join(tolerations) if tolerations else NONE)
    if spec.scheduling_gates:
        text.field("Scheduling Gates", "\n".join(gate.name for gate in spec.scheduling_gates))


# --------------------------------------------------------------------------------------------- Node


def format_quantity(name: str, value: Fraction) -> str:
    """A sum of quantities written back as kubectl would: cpu in cores or millicores, memory in the
    largest binary unit that divides it."""
    if name == "cpu":
        milli = value * 1000
        if value.denominator == 1:
            return str(value.numerator)
        return f"{-(-milli.numerator // milli.denominator)}m"
    if value.denominator != 1:
        milli = value * 1000
        return f"{-(-milli.numerator // milli.denominator)}m"
    whole = value.numerator
    for suffix, unit in (
        ("Ei", 1 << 60), ("Pi", 1 << 50), ("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10),
        ("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3),
    ):
        if whole and whole % unit == 0:
            return f"{whole // unit}{suffix}"
    return str(whole)


def _share(name: str, value: Fraction, allocatable: Mapping[str, str]) -> str:
    total = allocatable.get(name)
    try:
        capacity = quantity.parse_quantity(total) if total else Fraction(0)
    except ValueError:
        capacity = Fraction(0)
    percent = int(value * 100 / capacity) if capacity else 0
    return f"{format_quantity(name, value)} ({percent}%)"


#: How many of a node's images ``describe node`` lists (largest first); the count and total cover all.
SHOWN_IMAGES = 5


def _node_images(images: Sequence[objects_pb2.ContainerImage], text: _Text) -> None:
    """The node's images briefly (kubectl shows none): how many and their total size, then the largest
    few by their first name."""
    if not images:
        text.field("Images", NONE)
        return
    total = sum(image.size_bytes for image in images)
    text.field("Images", f"{len(images)} ({format_quantity('memory', Fraction(total))})")
    largest = sorted(images, key=lambda image: (-image.size_bytes, image.names[0] if image.names else ""))
    for image in largest[:SHOWN_IMAGES]:
        text.field(image.names[0] if image.names else NONE,
                   format_quantity("memory", Fraction(image.size_bytes)), 1)
    if len(images) > SHOWN_IMAGES:
        text.line(f"... and {len(images) - SHOWN_IMAGES} more", 1)


async def _describe_node(client: Client, node: objects_pb2.Node, text: _Text) -> None:
    _meta(text, node, namespaced=False)
    text.field("Roles", tables.node_roles(node))
    text.mapping("Labels", node.metadata.labels)
    text.mapping("Annotations", node.metadata.annotations, sep=": ")
    text.field("CreationTimestamp", _time(node.metadata.creation_timestamp))
    taints = [tables.taint_text(t) for t in node.spec.taints]
    text.field("Taints", "\n".join(taints) if taints else NONE)
    text.field("Unschedulable", "true" if node.spec.unschedulable else "false")
    if node.status.conditions:
        text.section("Conditions")
        text.table(
            ["Type", "Status", "LastHeartbeatTime", "LastTransitionTime", "Reason", "Message"],
            [
                [c.type, c.status, _time(c.last_heartbeat_time), _time(c.last_transition_time),
                 c.reason, c.message]
                for c in node.status.conditions
            ],
            underline=True,
        )
    else:
        text.field("Conditions", NONE)
    for label, values in (("Capacity", node.status.capacity), ("Allocatable", node.status.allocatable)):
        text.section(label)
        for key in sorted(values):
            text.field(key, values[key], 1)
    _node_images(node.status.images, text)

    # The pods on the node, as the scheduler would count them: finished pods hold nothing.
    pods = await client.list_all(
        kinds.POD, "",
        field_selector=f"spec.nodeName={node.metadata.name},status.phase!=Succeeded,status.phase!=Failed",
    )
    allocatable = node.status.allocatable
    total_requests: dict[str, Fraction] = {"cpu": Fraction(0), "memory": Fraction(0)}
    total_limits: dict[str, Fraction] = {"cpu": Fraction(0), "memory": Fraction(0)}
    rows = []
    for pod in sorted(pods.items, key=lambda p: (p.metadata.namespace, p.metadata.name)):
        requests, limits = containers.requests_and_limits(pod)
        for totals, values in ((total_requests, requests), (total_limits, limits)):
            for name, value in values.items():
                totals[name] = totals.get(name, Fraction(0)) + value
        rows.append([
            pod.metadata.namespace,
            pod.metadata.name,
            _share("cpu", requests.get("cpu", Fraction(0)), allocatable),
            _share("cpu", limits.get("cpu", Fraction(0)), allocatable),
            _share("memory", requests.get("memory", Fraction(0)), allocatable),
            _share("memory", limits.get("memory", Fraction(0)), allocatable),
            timeutil.age(pod.metadata.creation_timestamp),
        ])
    text.field("Non-terminated Pods", f"({len(rows)} in total)")
    if rows:
        text.table(
            ["Namespace", "Name", "CPU Requests", "CPU Limits", "Memory Requests", "Memory Limits", "Age"],
            rows,
            underline=True,
        )
    text.section("Allocated resources")
    text.line("(Total limits may be over 100 percent, i.e., overcommitted.)", 1)
    names = ["cpu", "memory", *sorted(set(total_requests) - {"cpu", "memory"})]
    text.table(
        ["Resource", "Requests", "Limits"],
        [[name, _share(name, total_requests.get(name, Fraction(0)), allocatable),
          _share(name, total_limits.get(name, Fraction(0)), allocatable)] for name in names],
        underline=True,
    )


# ------------------------------------------------------------------------ PriorityClass, PDB, Lease


async def _describe_priority_class(
    client: Client, pc: objects_pb2.PriorityClass, text: _Text
) -> None:
    _meta(text, pc, namespaced=False)
    text.field("Value", pc.value)
    text.field("GlobalDefault", "true" if pc.global_default else "false")
    text.field("PreemptionPolicy", pc.preemption_policy if pc.HasField("preemption_policy") else NONE)
    text.field("Description", pc.description)
    text.mapping("Annotations", pc.metadata.annotations, sep=": ")


async def _describe_namespace(client: Client, namespace: objects_pb2.Namespace, text: _Text) -> None:
    _meta(text, namespace, namespaced=False)
    text.mapping("Labels", namespace.metadata.labels)
    text.mapping("Annotations", namespace.metadata.annotations, sep=": ")
    text.field("Status", namespace.status.phase or NONE)


async def _describe_runtime_class(
    client: Client, runtime_class: objects_pb2.RuntimeClass, text: _Text
) -> None:
    _meta(text, runtime_class, namespaced=False)
    text.mapping("Labels", runtime_class.metadata.labels)
    text.mapping("Annotations", runtime_class.metadata.annotations, sep=": ")
    text.field("Handler", runtime_class.handler)
    text.mapping("Overhead", runtime_class.overhead.pod_fixed, sep=": ")
    text.mapping("Node-Selectors", runtime_class.scheduling.node_selector)
    tolerations = [tables.toleration_text(t) for t in runtime_class.scheduling.tolerations]
    text.field("Tolerations", "\n".join(tolerations) if tolerations else NONE)


async def _describe_pdb(client: Client, pdb: objects_pb2.PodDisruptionBudget, text: _Text) -> None:
    spec, status = pdb.spec, pdb.status
    _meta(text, pdb, namespaced=True)
    if spec.HasField("min_available"):
        text.field("Min available", tables.int_or_string(spec.min_available))
    if spec.HasField("max_unavailable"):
        text.field("Max unavailable", tables.int_or_string(spec.max_unavailable))
    text.field("Selector", _selector(spec.selector, spec.HasField("selector")))
    text.section("Status")
    text.field("Allowed disruptions", status.disruptions_allowed, 2)
    text.field("Current", status.current_healthy, 2)
    text.field("Desired", status.desired_healthy, 2)
    text.field("Total", status.expected_pods, 2)


async def _describe_quota(client: Client, quota: objects_pb2.ResourceQuota, text: _Text) -> None:
    _meta(text, quota, namespaced=True)
    if quota.spec.scopes:
        text.field("Scopes", ", ".join(quota.spec.scopes))
    if quota.spec.scope_selector.match_expressions:
        text.field("Scope Selector", format_requirements(list(quota.spec.scope_selector.match_expressions)))
    hard, used = quota.status.hard, quota.status.used
    rows = [[name, used.get(name, "0"), hard[name]] for name in sorted(hard)]
    text.table(["Resource", "Used", "Hard"], rows, level=0, underline=True)


def _pod_group_policy(group: objects_pb2.PodGroup) -> list[tuple[str, object]]:
    """The spec fields of the group's own spelling, as describe's labels and values."""
    spec = group.spec
    if podgroups.is_coscheduling(group):
        fields: list[tuple[str, object]] = [("Min Member", spec.min_member)]
        if spec.min_resources:
            resources = spec.min_resources
            fields.append(("Min Resources", ", ".join(f"{k}={resources[k]}" for k in sorted(resources))))
        if spec.HasField("schedule_timeout_seconds"):
            fields.append(("Schedule Timeout", f"{spec.schedule_timeout_seconds}s"))
        return fields
    policy = spec.scheduling_policy
    shown = f"Gang (minCount {policy.gang.min_count})" if policy.HasField("gang") else "Basic"
    fields = [("Scheduling Policy", shown)]
    if spec.pod_group_template_ref.HasField("workload"):
        ref = spec.pod_group_template_ref.workload
        fields.append(("Template", f"{ref.workload_name}/{ref.pod_group_template_name}"))
    if spec.HasField("disruption_mode"):
        fields.append(("Disruption Mode", "All" if spec.disruption_mode.HasField("all") else "Single"))
    fields.append(("Priority", spec.priority if spec.HasField("priority") else NONE))
    if spec.priority_class_name:
        fields.append(("Priority Class Name", spec.priority_class_name))
    return fields


def _why_unbound(pod: objects_pb2.Pod) -> str:
    """Why an unbound pod waits: its PodScheduled=False message ("" without one)."""
    for condition in pod.status.conditions:
        if condition.type == "PodScheduled" and condition.status == "False":
            return condition.message or condition.reason
    return ""


def _pods_named(names: Sequence[str]) -> str:
    """``w-1`` for one pod; ``5 pods: w-1, w-2, w-3 and 2 more`` for several."""
    if len(names) == 1:
        return names[0]
    shown = ", ".join(names[:NAMES_SHOWN])
    more = f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else ""
    return f"{len(names)} pods: {shown}{more}"


def _by_text(rows: Iterable[tuple[str, str]]) -> list[tuple[list[str], str]]:
    """(names, text) rows grouped by text, in the order each text first appears: a gang's members
    usually wait for one reason, which is then printed once."""
    grouped: dict[str, list[str]] = {}
    for name, text in rows:
        grouped.setdefault(text, []).append(name)
    return [(names, text) for text, names in grouped.items()]


async def _describe_pod_group(client: Client, group: objects_pb2.PodGroup, text: _Text) -> None:
    status = group.status
    _meta(text, group, namespaced=True)
    text.field("API Version", group.api_version or kinds.POD_GROUP.api_version)
    text.mapping("Labels", group.metadata.labels)
    text.mapping("Annotations", group.metadata.annotations, sep=": ")
    for label, value in _pod_group_policy(group):
        text.field(label, value)
    text.section("Status")
    text.field("Phase", status.phase or NONE, 1)
    for label, value in (("Scheduled", status.scheduled), ("Running", status.running),
                         ("Succeeded", status.succeeded), ("Failed", status.failed)):
        text.field(label, value, 1)
    if status.occupied_by:
        text.field("Occupied By", status.occupied_by, 1)
    if timeutil.is_set(status.schedule_start_time):
        text.field("Schedule Start Time", _time(status.schedule_start_time), 1)
    if status.conditions:
        text.section("Conditions")
        rows = [[c.type, c.status, c.reason, c.message] for c in status.conditions]
        text.table(["Type", "Status", "Reason", "Message"], rows)
    pods = (await client.list_all(kinds.POD, group.metadata.namespace)).items
    members = sorted(
        (pod for pod in pods if podgroups.group_name_of(pod) == group.metadata.name),
        key=lambda pod: pod.metadata.name,
    )
    if not members:
        text.field("Pods", NONE)
        return
    text.section("Pods")
    text.table(["Name", "Node", "Status"], [
        [pod.metadata.name, pod.spec.node_name or NONE,
         pod.status.phase or ("Unknown" if pod.spec.node_name else "Pending")]
        for pod in members
    ])
    waiting = [(pod.metadata.name, why) for pod in members
               if not pod.spec.node_name and (why := _why_unbound(pod))]
    if waiting:
        text.section("Waiting")
        for names, why in _by_text(waiting):
            count = "1 pod: " if len(names) == 1 else ""
            text.line(f"{count}{_pods_named(names)}: {why}", 1)


async def _describe_lease(client: Client, lease: objects_pb2.Lease, text: _Text) -> None:
    spec = lease.spec
    _meta(text, lease, namespaced=True)
    text.mapping("Labels", lease.metadata.labels)
    text.mapping("Annotations", lease.metadata.annotations, sep=": ")
    text.section("Spec")
    text.field("Holder Identity", spec.holder_identity if spec.HasField("holder_identity") else NONE, 1)
    duration = spec.lease_duration_seconds if spec.HasField("lease_duration_seconds") else NONE
    text.field("Lease Duration Seconds", duration, 1)
    text.field("Acquire Time", _time(spec.acquire_time), 1)
    text.field("Renew Time", _time(spec.renew_time), 1)
    transitions = spec.lease_transitions if spec.HasField("lease_transitions") else 0
    text.field("Lease Transitions", transitions, 1)


async def _describe_lease_candidate(
    client: Client, candidate: objects_pb2.LeaseCandidate, text: _Text
) -> None:
    spec = candidate.spec
    _meta(text, candidate, namespaced=True)
    text.mapping("Labels", candidate.metadata.labels)
    text.mapping("Annotations", candidate.metadata.annotations, sep=": ")
    text.section("Spec")
    text.field("Lease Name", spec.lease_name, 1)
    text.field("Binary Version", spec.binary_version, 1)
    text.field("Emulation Version", spec.emulation_version or NONE, 1)
    text.field("Strategy", spec.strategy, 1)
    text.field("Renew Time", _time(spec.renew_time), 1)
    text.field("Ping Time", _time(spec.ping_time), 1)


async def _describe_event(client: Client, event: objects_pb2.Event, text: _Text) -> None:
    _meta(text, event, namespaced=True)
    text.field("Type", event.type)
    text.field("Reason", event.reason)
    text.field("Object", tables.involved_object(event))
    text.field("Message", event.message)
    text.field("Source", event.source.component or event.reporting_component or NONE)
    text.field("Count", event.count)
    text.field("First Timestamp", _time(event.first_timestamp))
    text.field("Last Timestamp", _time(event.last_timestamp))


async def _describe_service(client: Client, service: objects_pb2.Service, text: _Text) -> None:
    spec = service.spec
    _meta(text, service, namespaced=True)
    text.mapping("Labels", service.metadata.labels)
    text.mapping("Annotations", service.metadata.annotations, sep=": ")
    selector = tables.map_selector_text(spec.selector)
    text.field("Selector", selector or NONE)
    text.field("Type", spec.type)
    text.field("IP", spec.cluster_ip or NONE)
    for port in spec.ports:
        text.field("Port", f"{port.name or '<unset>'}  {port.port}/{port.protocol or 'TCP'}")
        if port.node_port:
            text.field("NodePort", f"{port.name or '<unset>'}  {port.node_port}/{port.protocol or 'TCP'}")
    # podsched runs no endpoints controller: the pods the selector picks are what the Service would serve.
    pods = await _selected_pods(client, service.metadata.namespace, selector) if selector else []
    text.field("Selected pods", ", ".join(p.metadata.name for p in pods) or NONE)


async def _selected_pods(client: Client, namespace: str, selector: str) -> list[Any]:
    pods = (await client.list_all(kinds.POD, namespace, label_selector=selector)).items
    return sorted(pods, key=lambda pod: pod.metadata.name)


async def _describe_controller(
    client: Client,
    controller: objects_pb2.ReplicaSet | objects_pb2.StatefulSet | objects_pb2.ReplicationController,
    text: _Text,
) -> None:
    spec = controller.spec
    _meta(text, controller, namespaced=True)
    if isinstance(spec.selector, objects_pb2.LabelSelector):
        selector = _selector(spec.selector, spec.HasField("selector"))
    else:
        selector = tables.map_selector_text(spec.selector) or NONE
    text.field("Selector", selector)
    text.mapping("Labels", controller.metadata.labels)
    text.mapping("Annotations", controller.metadata.annotations, sep=": ")
    # podsched creates no pods for it: the current replicas are the pods its selector picks.
    pods = await _selected_pods(client, controller.metadata.namespace, selector) if selector != NONE else []
    text.field("Replicas", f"{len(pods)} current / {spec.replicas} desired")
    phases = [p.status.phase for p in pods]
    text.field("Pods Status", " / ".join(
        f"{phases.count(phase)} {label}" for phase, label in
        (("Running", "Running"), ("Pending", "Waiting"), ("Succeeded", "Succeeded"), ("Failed", "Failed"))
    ))
    text.section("Pod Template")
    text.mapping("Labels", spec.template.metadata.labels, 1)
    for container in spec.template.spec.containers:
        text.section("Containers", 1)
        _container(text, container)


_DESCRIBERS: dict[kinds.Kind, Callable[[Client, Any, _Text], Awaitable[None]]] = {
    kinds.POD: _describe_pod,
    kinds.NODE: _describe_node,
    kinds.PRIORITY_CLASS: _describe_priority_class,
    kinds.POD_DISRUPTION_BUDGET: _describe_pdb,
    kinds.RESOURCE_QUOTA: _describe_quota,
    kinds.POD_GROUP: _describe_pod_group,
    kinds.LEASE: _describe_lease,
    kinds.LEASE_CANDIDATE: _describe_lease_candidate,
    kinds.EVENT: _describe_event,
    kinds.NAMESPACE: _describe_namespace,
    kinds.RUNTIME_CLASS: _describe_runtime_class,
    kinds.SERVICE: _describe_service,
    kinds.REPLICA_SET: _describe_controller,
    kinds.STATEFUL_SET: _describe_controller,
    kinds.REPLICATION_CONTROLLER: _describe_controller,
}


# ------------------------------------------------------------------------------------------- Events


async def _events_about(client: Client, kind: kinds.Kind, obj: Message) -> list[objects_pb2.Event]:
    """The events whose involvedObject is ``obj``: in its namespace, or anywhere for a cluster-scoped
    object (kubectl finds a node's events in whatever namespace their writer chose)."""
    selector = f"involvedObject.name={obj.metadata.name},involvedObject.kind={kind.name}"
    listed = await client.list_all(kinds.EVENT, obj.metadata.namespace, field_selector=selector)
    return sorted(listed.items, key=_event_time)


def _event_time(event: objects_pb2.Event) -> tuple[int, int]:
    ts = tables.event_time(event)
    return (ts.seconds, ts.nanos)


def _event_age(event: objects_pb2.Event) -> str:
    last = tables.event_last_seen(event)
    if event.count > 1 and timeutil.is_set(event.first_timestamp):
        return f"{last} (x{event.count} over {timeutil.age(event.first_timestamp)})"
    return last


def _scheduling_explanation(text: _Text, events: Iterable[objects_pb2.Event]) -> None:
    """The scheduler's account of its last attempt at the pod (per-plugin filter verdicts, the best
    nodes' per-plugin scores), from the newest scheduling event that carries one."""
    try:
        explanation = last_attempt(events)
    except ValueError as exc:
        text.field("Scheduling explanation (last attempt)", f"<unreadable: {exc}>")
        return
    if explanation is None:
        return
    text.section("Scheduling explanation (last attempt)")
    for line in explanation.render().split("\n"):
        text.line(line, 1)


def _group_attempt(text: _Text, events: Iterable[objects_pb2.Event]) -> None:
    """Per member, where the scheduler's last whole-group attempt could place it or why it could place it
    nowhere (nothing once the group was bound since)."""
    try:
        attempt = group_attempt(events)
    except ValueError as exc:
        text.field("Last scheduling attempt", f"<unreadable: {exc}>")
        return
    if attempt is None:
        return
    text.section("Last scheduling attempt")
    text.line(attempt.message, 1)
    text.table(["Pod", "Placement"], [[_pods_named(names), placement]
                                      for names, placement in _by_text(attempt.placements)])


async def _no_scheduler_hint(client: Client) -> str | None:
    """For an unbound pod no scheduler has written about: whether any scheduler holds the Lease (see
    leasehint). A pod with scheduling events was seen by a scheduler, and they say why it waits."""
    try:
        lease = await read_scheduler_lease(client)
    except errors.PermissionDenied:
        return None
    return no_scheduler_hint(lease, time.time())


def _events(text: _Text, events: Iterable[objects_pb2.Event], hint: str | None = None) -> None:
    rows = [
        [e.type, e.reason, _event_age(e), e.source.component or e.reporting_component, e.message]
        for e in events
    ]
    if not rows:
        text.field("Events", f"{NONE}  ({hint})" if hint else NONE)
        return
    text.section("Events")
    text.table(["Type", "Reason", "Age", "From", "Message"], rows, underline=True)
