"""The replay's books (cluster/simulate/replay/ledger.py): what a bound pod takes of its node's GPUs and of
the cluster's GPU allocation, a share of one device counted as its part of a GPU."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.api import objects_pb2
from cluster.simulate.replay.ledger import NodeTable, PodLedger
from tests.builders import container, node, pod


class Pods:
    """The handlers a PodLedger registers on its informer, called as the informer would."""

    def __init__(self) -> None:
        self.handlers: dict[str, Any] = {}

    def add_handler(self, **handlers: Any) -> None:
        self.handlers = handlers

    @staticmethod
    def key(obj: objects_pb2.Pod) -> str:
        return f"{obj.metadata.namespace}/{obj.metadata.name}"


def gpu_pod(name: str, share: str | None = None) -> objects_pb2.Pod:
    """A pod as --gpus devices creates it: no GPU in its containers, its share (if any) annotated."""
    annotations = {"replay.podsched.io/gpu-milli": share} if share else None
    return pod(name, spec={"containers": [container({"cpu": "1"})]}, annotations=annotations)


def ledger(devices: dict[str, int]) -> tuple[PodLedger, Pods]:
    informer = Pods()
    nodes = NodeTable([node("n1", allocatable={"cpu": "8", "memory": "8Gi", "nvidia.com/gpu": "2"})])
    books = PodLedger(informer, nodes, lambda: 0.0, on_bound=lambda key, when: None,  # type: ignore[arg-type]
                      devices=devices)
    return books, informer


def bind(books: PodLedger, informer: Pods, unbound: objects_pb2.Pod) -> objects_pb2.Pod:
    books.arrived(informer.key(unbound))
    informer.handlers["on_add"](unbound)
    bound = objects_pb2.Pod()
    bound.CopyFrom(unbound)
    bound.spec.node_name = "n1"
    informer.handlers["on_update"](unbound, bound)
    return bound


def test_a_share_of_a_device_counts_as_its_part_of_a_gpu_while_the_device_counts_as_taken() -> None:
    books, informer = ledger({"default/half": 1, "default/quarter": 1, "default/whole": 1})
    half = bind(books, informer, gpu_pod("half", "500"))
    bind(books, informer, gpu_pod("quarter", "250"))
    assert books.nodes.allocation()[2] == pytest.approx(0.375)
    # The fragmentation measure still sees the two devices as taken: neither is free for a whole GPU.
    assert books.nodes.free()[0][2] == 0
    informer.handlers["on_delete"](half)
    assert books.nodes.allocation()[2] == pytest.approx(0.125)
    bind(books, informer, gpu_pod("whole"))
    assert books.nodes.allocation()[2] == pytest.approx(0.625)


def test_a_share_given_as_the_extended_resource_takes_the_whole_gpu() -> None:
    books, informer = ledger({})
    extended = gpu_pod("half", "500")
    extended.spec.containers[0].resources.requests["nvidia.com/gpu"] = "1"
    bind(books, informer, extended)
    assert books.nodes.allocation()[2] == 0.5
