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
from cluster.printers.table import AGE, NAME, Cell, Column, Columns, wide
from cluster.printers.values import NONE, age, map_selector_text

_Replicated = objects_pb2.ReplicaSet | objects_pb2.ReplicationController
_Controller = _Replicated | objects_pb2.StatefulSet


def _template_cells(controller: _Controller) -> list[Cell]:
    """The CONTAINERS and IMAGES of the pod template."""
    containers = controller.spec.template.spec.containers
    return [",".join(c.name for c in containers) or NONE, ",".join(c.image for c in containers) or NONE]


def _selector_text(controller: _Replicated) -> str:
    selector = controller.spec.selector
    if isinstance(selector, objects_pb2.LabelSelector):
        text = str(LabelSelector.from_proto(selector))
    else:
        text = map_selector_text(selector)
    return text or NONE


def _replicas_row(controller: _Replicated, now: float) -> list[Cell]:
    """podsched runs no controller, so no replicas are current or ready: only the desired."""
    return [controller.metadata.name, controller.spec.replicas, 0, 0, age(controller.metadata, now),
            *_template_cells(controller), _selector_text(controller)]


def _stateful_set_row(stateful_set: objects_pb2.StatefulSet, now: float) -> list[Cell]:
    return [stateful_set.metadata.name, f"0/{stateful_set.spec.replicas}", age(stateful_set.metadata, now),
            *_template_cells(stateful_set)]


_CONTAINERS = wide(Column("Containers", "Names of each container in the template."))
_IMAGES = wide(Column("Images", "Images referenced by each container in the template."))

_REPLICAS_COLUMNS: Columns[Any] = Columns((
    NAME,
    Column("Desired", "Replicas is the number of desired pods.", "integer"),
    Column("Current", "Replicas is the most recently observed number of replicas.", "integer"),
    Column("Ready", "The number of pods targeted by this controller with a Ready Condition.", "integer"),
    AGE,
    _CONTAINERS,
    _IMAGES,
    wide(Column("Selector", "Selector is a label query over pods that should match the replica count.")),
), _replicas_row)

_STATEFUL_SET_COLUMNS: Columns[Any] = Columns((
    NAME, Column("Ready", "Number of the pod with ready state"), AGE, _CONTAINERS, _IMAGES,
), _stateful_set_row)


async def _describe_controller(reader: Reader, controller: _Controller, text: DescribeText) -> None:
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


REPLICA_SET = Printer(kinds.REPLICA_SET, _REPLICAS_COLUMNS, _describe_controller)
STATEFUL_SET = Printer(kinds.STATEFUL_SET, _STATEFUL_SET_COLUMNS, _describe_controller)
REPLICATION_CONTROLLER = Printer(kinds.REPLICATION_CONTROLLER, _REPLICAS_COLUMNS, _describe_controller)
