"""Lease (coordination.k8s.io/v1). The server records a Lease's tenure (fencing.py): an update that keeps
the same non-empty holderIdentity stores the tenure's token (the old Lease's, which is its annotation or
else its resourceVersion); any other update, and every create, starts a tenure whose token is the write's
own revision, so the annotation goes. A leader releases its Lease under its tenure's fence; under
server-enforced leadership (leadership.py) only a released or expired Lease changes holder, and the server's
clock follows every Lease it writes."""

from __future__ import annotations

from cluster.api import objects_pb2
from cluster.api.kinds import LEASE
from cluster.api.validation import coordination
from cluster.apiserver import fencing
from cluster.apiserver.context import Context
from cluster.apiserver.fencing import LeaseFence
from cluster.apiserver.registry.kind import UPDATE, KindStrategy
from cluster.printers import leases


def _track_tenure(new: objects_pb2.Lease, old: objects_pb2.Lease) -> None:
    holder = new.spec.holder_identity
    annotations = new.metadata.annotations
    if holder and holder == old.spec.holder_identity:
        annotations[fencing.FENCING_TOKEN_ANNOTATION] = str(fencing.tenure_token(old))
    elif fencing.FENCING_TOKEN_ANNOTATION in annotations:
        # A new tenure (or none, when released): its token is this write's revision.
        del annotations[fencing.FENCING_TOKEN_ANNOTATION]


def _check_update(
    ctx: Context, old: objects_pb2.Lease, new: objects_pb2.Lease, fence: LeaseFence | None
) -> None:
    ctx.leadership.check_lease_update(old, new, fence)


def _observe(ctx: Context, lease: objects_pb2.Lease) -> None:
    ctx.leadership.clock.observe(lease)


STRATEGY = KindStrategy(
    kind=LEASE,
    printer=leases.PRINTER,
    validation=coordination.LEASE,
    defaults=None,
    prepare_for_create=None,
    prepare_for_update=_track_tenure,
    prepare_for_status_update=None,
    server_validation=None,
    fenced_verbs=frozenset({UPDATE}),
    record_fence=None,
    check_update=_check_update,
    nominates=False,
    graceful_delete=None,
    check_delete=None,
    after_write=_observe,
    after_status_update=None,
    after_delete=None,
)
