"""StorageClass (storage.k8s.io/v1): defaulted as upstream's SetDefaults_StorageClass (reclaim policy
Delete, binding mode Immediate); provisioner, parameters, reclaim policy and binding mode are fixed once
created."""

from __future__ import annotations

from cluster.api import objects_pb2
from cluster.api.kinds import STORAGE_CLASS
from cluster.api.validation import storage
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import storageclasses


def _defaults(sc: objects_pb2.StorageClass) -> None:
    if not sc.HasField("reclaim_policy"):
        sc.reclaim_policy = "Delete"
    if not sc.HasField("volume_binding_mode"):
        sc.volume_binding_mode = "Immediate"


STRATEGY = KindStrategy(
    kind=STORAGE_CLASS,
    printer=storageclasses.PRINTER,
    validation=storage.STORAGE_CLASS,
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
