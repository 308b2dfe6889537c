"""ResourceQuota (v1): its status (hard limits and usage) is set by the ResourceQuota admission
plugin (cluster/apiserver/admission/resourcequota.py) on every write of it."""

from __future__ import annotations

from cluster.api.kinds import RESOURCE_QUOTA
from cluster.api.validation import core
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import resourcequotas

STRATEGY = KindStrategy(
    kind=RESOURCE_QUOTA,
    printer=resourcequotas.PRINTER,
    validation=core.RESOURCE_QUOTA,
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
