"""StatefulSet (apps/v1), kept for its selector (PodTopologySpread's system default spreading)."""

from __future__ import annotations

from cluster.api import objects_pb2
from cluster.api.kinds import STATEFUL_SET
from cluster.api.validation import apps
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import workloads


def _defaults(sts: objects_pb2.StatefulSet) -> None:
    if not sts.spec.HasField("replicas"):
        sts.spec.replicas = 1


STRATEGY = KindStrategy(
    kind=STATEFUL_SET,
    printer=workloads.STATEFUL_SET,
    validation=apps.STATEFUL_SET,
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
