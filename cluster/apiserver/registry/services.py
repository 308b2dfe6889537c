"""Service (v1), kept for its selector (PodTopologySpread's system default spreading)."""

from __future__ import annotations

from cluster.api import objects_pb2
from cluster.api.kinds import SERVICE
from cluster.api.validation import core
from cluster.apiserver.defaults import DEFAULT_PROTOCOL
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import services

DEFAULT_SERVICE_TYPE = "ClusterIP"


def _defaults(service: objects_pb2.Service) -> None:
    if not service.spec.type:
        service.spec.type = DEFAULT_SERVICE_TYPE
    for port in service.spec.ports:
        if not port.protocol:
            port.protocol = DEFAULT_PROTOCOL


STRATEGY = KindStrategy(
    kind=SERVICE,
    printer=services.PRINTER,
    validation=core.SERVICE,
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
