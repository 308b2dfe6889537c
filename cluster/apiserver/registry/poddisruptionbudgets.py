"""PodDisruptionBudget (policy/v1): validation only; its status is the disruption controller's."""

from __future__ import annotations

from cluster.api.kinds import POD_DISRUPTION_BUDGET
from cluster.api.validation import policy
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import poddisruptionbudgets

STRATEGY = KindStrategy(
    kind=POD_DISRUPTION_BUDGET,
    printer=poddisruptionbudgets.PRINTER,
    validation=policy.POD_DISRUPTION_BUDGET,
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
