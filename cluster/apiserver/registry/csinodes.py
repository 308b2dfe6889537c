"""CSINode (storage.k8s.io/v1): the CSI drivers a node's kubelet registered, their node IDs, topology
keys and attach limits; a registered driver's entry changes only in its allocatable count."""

from __future__ import annotations

from cluster.api.kinds import CSI_NODE
from cluster.api.validation import storage
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import csinodes

STRATEGY = KindStrategy(
    kind=CSI_NODE,
    printer=csinodes.PRINTER,
    validation=storage.CSI_NODE,
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
