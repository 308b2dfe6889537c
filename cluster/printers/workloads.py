"""How clients print the workload controllers (ReplicaSet, StatefulSet, ReplicationController), which
share their columns and describe sections."""

from __future__ import annotations

from typing import Any

from cluster.api import kinds, objects_pb2
from cluster.api.selectors import LabelSelector
from cluster.printers.describe import (
    DescribeText,
    Reader,
    container_section,
    name_fields,
    selected_pods,
    selector_text,
)
from cluster.printers.printer import Printer
from cluster.printers.table import Columns
from cluster.printers.values import NONE, age, map_selector_text


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


async def _describe_controller(
    reader: Reader,
    controller: objects_pb2.ReplicaSet | objects_pb2.StatefulSet | objects_pb2.ReplicationController,
    text: DescribeText,
) -> None:
    spec = controller.spec
    name_fields(text, controller, namespaced=True)
    if isinstance(spec.selector, objects_pb2.LabelSelector):
        selector = selector_text(spec.selector, spec.HasField("selector"))
    else:
        selector = map_selector_text(spec.selector) or NONE
    text.field("Selector", selector)
    text.mapping("Labels", controller.metadata.labels)
    text.mapping("Annotations", controller.metadata.annotations, sep=": ")
    # podsched creates no pods for it: the current replicas are the pods its selector picks.
    pods = await selected_pods(reader, controller.metadata.namespace, selector) if selector != NONE else []
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
        container_section(text, container)


REPLICA_SET = Printer(kinds.REPLICA_SET, _CONTROLLER_COLUMNS, _describe_controller)
STATEFUL_SET = Printer(kinds.STATEFUL_SET, _CONTROLLER_COLUMNS, _describe_controller)
REPLICATION_CONTROLLER = Printer(kinds.REPLICATION_CONTROLLER, _CONTROLLER_COLUMNS, _describe_controller)
