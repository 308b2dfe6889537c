"""DeviceClass (resource.k8s.io/v1): validation only; the allocator reads its selectors and config."""

from __future__ import annotations

from cluster.api.kinds import DEVICE_CLASS
from cluster.api.validation import resource
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import deviceclasses

STRATEGY = KindStrategy(
    kind=DEVICE_CLASS,
    printer=deviceclasses.PRINTER,
    validation=resource.DEVICE_CLASS,
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
