"""ReplicaSet (apps/v1), kept for its selector (PodTopologySpread's system default spreading)."""

from __future__ import annotations

from cluster.api import objects_pb2
from cluster.api.kinds import REPLICA_SET
from cluster.api.validation import apps
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import workloads


def _defaults(rs: objects_pb2.ReplicaSet) -> None:
    if not rs.spec.HasField("replicas"):
        rs.spec.replicas = 1


STRATEGY = KindStrategy(
    kind=REPLICA_SET,
    printer=workloads.REPLICA_SET,
    validation=apps.REPLICA_SET,
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
