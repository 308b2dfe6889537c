"""LeaseCandidate (coordination.k8s.io/v1beta1): a contender for a Lease; validation only."""

from __future__ import annotations

from cluster.api.kinds import LEASE_CANDIDATE
from cluster.api.validation import coordination
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import leasecandidates

STRATEGY = KindStrategy(
    kind=LEASE_CANDIDATE,
    printer=leasecandidates.PRINTER,
    validation=coordination.LEASE_CANDIDATE,
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
