"""CSIStorageCapacity (storage.k8s.io/v1): the capacity a CSI driver reports for a class in a
topology segment; the segment and the class are fixed once created."""

from __future__ import annotations

from cluster.api.kinds import CSI_STORAGE_CAPACITY
from cluster.api.validation import storage
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import csistoragecapacities

STRATEGY = KindStrategy(
    kind=CSI_STORAGE_CAPACITY,
    printer=csistoragecapacities.PRINTER,
    validation=storage.CSI_STORAGE_CAPACITY,
    defaults=None,
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
