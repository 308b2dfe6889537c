"""RuntimeClass (node.k8s.io/v1): validation only; what it does to pods is the RuntimeClass admission
plugin's."""

from __future__ import annotations

from cluster.api.kinds import RUNTIME_CLASS
from cluster.api.validation import node
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import runtimeclasses

STRATEGY = KindStrategy(
    kind=RUNTIME_CLASS,
    printer=runtimeclasses.PRINTER,
    validation=node.RUNTIME_CLASS,
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
