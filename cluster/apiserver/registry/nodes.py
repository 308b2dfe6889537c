"""Node (v1): a node that reports no allocatable offers its whole capacity."""

from __future__ import annotations

from cluster.api import objects_pb2
from cluster.api.kinds import NODE
from cluster.api.validation import core
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import nodes


def _defaults(node: objects_pb2.Node) -> None:
    status = node.status
    if not status.allocatable:
        for resource, quantity in status.capacity.items():
            status.allocatable[resource] = quantity


STRATEGY = KindStrategy(
    kind=NODE,
    printer=nodes.PRINTER,
    validation=core.NODE,
    defaults=_defaults,
    prepare_for_create=None,
    prepare_for_update=None,
    prepare_for_status_update=None,
    server_validation=None,
    fenced_verbs=frozenset(),
    record_fence=None,
    check_update=None,
    nominates=False,
    graceful_delete=None,
    check_delete=None,
    after_write=None,
    after_status_update=None,
    after_delete=None,
)
