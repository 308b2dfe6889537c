"""How clients print Node objects: the columns of `podsched get` and the sections of
`podsched describe`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

from cluster.api import containers, kinds, objects_pb2, quantity, timeutil
from cluster.printers.describe import DescribeText, Reader, name_fields, time_text
from cluster.printers.printer import Printer
from cluster.printers.table import AGE, NAME, Cell, Column, Columns, wide
from cluster.printers.values import NONE, UNKNOWN, age, format_quantity, taint_text

_ADDRESSES = "List of addresses reachable to the node."


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
    """ROLES from the node-role.kubernetes.io/<role> labels and the older kubernetes.io/role, sorted."""
    labels = node.metadata.labels
    roles = {
        key.removeprefix("node-role.kubernetes.io/")
        for key in labels
        if key.startswith("node-role.kubernetes.io/") and key != "node-role.kubernetes.io/"
    }
    if labels.get("kubernetes.io/role"):
        roles.add(labels["kubernetes.io/role"])
    return ",".join(sorted(roles)) or NONE


def _node_row(node: objects_pb2.Node, now: float) -> list[Cell]:
    # podsched models no node info or addresses: no version, and the wide columns are what kubectl shows
    # for a node that reports none.
    return [node.metadata.name, node_status(node), node_roles(node), age(node.metadata, now), "",
            NONE, NONE, UNKNOWN, UNKNOWN, UNKNOWN]


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


def _node_images(images: Sequence[objects_pb2.ContainerImage], text: DescribeText) -> None:
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


async def _describe_node(reader: Reader, node: objects_pb2.Node, text: DescribeText) -> None:
    name_fields(text, node, namespaced=False)
    text.field("Roles", node_roles(node))
    text.mapping("Labels", node.metadata.labels)
    text.mapping("Annotations", node.metadata.annotations, sep=": ")
    text.field("CreationTimestamp", time_text(node.metadata.creation_timestamp))
    taints = [taint_text(t) for t in node.spec.taints]
    text.field("Taints", "\n".join(taints) if taints else NONE)
    text.field("Unschedulable", "true" if node.spec.unschedulable else "false")
    if node.status.conditions:
        text.section("Conditions")
        text.table(
            ["Type", "Status", "LastHeartbeatTime", "LastTransitionTime", "Reason", "Message"],
            [
                [c.type, c.status, time_text(c.last_heartbeat_time), time_text(c.last_transition_time),
                 c.reason, c.message]
                for c in node.status.conditions
            ],
            underline=True,
        )
    else:
        text.field("Conditions", NONE)
    for label, listed in (("Capacity", node.status.capacity), ("Allocatable", node.status.allocatable)):
        text.section(label)
        for key in sorted(listed):
            text.field(key, listed[key], 1)
    _node_images(node.status.images, text)

    # The pods on the node, as the scheduler would count them: finished pods hold nothing.
    pods = await reader.list_all(
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


PRINTER = Printer(
    kinds.NODE,
    Columns((
        NAME,
        Column("Status", "The status of the node"),
        Column("Roles", "The roles of the node"),
        AGE,
        Column("Version", "Kubelet Version reported by the node."),
        wide(Column("Internal-IP", _ADDRESSES)),
        wide(Column("External-IP", _ADDRESSES)),
        wide(Column("OS-Image", "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 "
                                "(wheezy)).")),
        wide(Column("Kernel-Version", "Kernel Version reported by the node from 'uname -r' (e.g. "
                                      "3.16.0-0.bpo.4-amd64).")),
        wide(Column("Container-Runtime", "ContainerRuntime Version reported by the node through runtime "
                                         "remote API (e.g. containerd://1.4.2).")),
    ), _node_row),
    _describe_node,
)
