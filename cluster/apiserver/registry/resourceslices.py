"""ResourceSlice (resource.k8s.io/v1): the devices a driver publishes, validation only."""

from __future__ import annotations

from cluster.api.kinds import RESOURCE_SLICE
from cluster.api.validation import resource
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import resourceslices

STRATEGY = KindStrategy(
    kind=RESOURCE_SLICE,
    printer=resourceslices.PRINTER,
    validation=resource.RESOURCE_SLICE,
    defaults=None,
    prepare_for_create=None,
    prepare_for_update=None,
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
