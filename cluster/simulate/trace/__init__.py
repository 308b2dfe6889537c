"""Placeholder of the trace model until the trace formats land (replaced at merge)."""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.message import Message

from cluster.api import objects_pb2


@dataclass(frozen=True, slots=True)
class TracePod:
    pod: objects_pb2.Pod
    arrival_s: float
    duration_s: float | None
    where: str


@dataclass(slots=True)
class Trace:
    nodes: list[objects_pb2.Node]
    pods: list[TracePod]
    objects: list[Message]
    format: str
