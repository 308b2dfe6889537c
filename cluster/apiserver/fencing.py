"""Fencing: a write that carries a Fence lands only while the Lease it names is held in the fence's tenure.

A tenure is one holder's unbroken hold of a Lease. Its token is the store revision of the write that began
it: the Create of the Lease, or the Update that changed holderIdentity. The server records it on the Lease
(strategy.py, and registry/leases.py on an Update): an Update that keeps the same non-empty holder stores
annotation ``podsched.io/fencing-token`` = the tenure's token; a Create or a change of holder removes it. So
for any stored Lease the tenure token is that annotation when present, else the Lease's own resourceVersion
(``tenure_token``).

``Fencing.of(fence)`` checks the request's Fence and gives a ``LeaseFence``; before each attempt of a write,
``LeaseFence.guard`` reads the Lease and either refuses (``errors.Fenced``, logged and counted) or returns a
``Guard`` on the Lease's key at the revision read. The write carries that guard in its own store
transaction, so a Lease that changed hands between the check and the write fails the write. A renewal in
between fails it too (the revision moved although the tenure did not): the writer reads the Lease again
and retries, and the next check tells a renewal from a loss.

This is what client-go's leader election lacks: a leader paused past its lease (GC, SIGSTOP, a partition)
wakes up still believing it leads; its writes are refused here, in the store's transaction, not by its
own clock.
"""

from __future__ import annotations

import logging

from google.protobuf.message import Message

from cluster.api import apiserver_pb2, errors, objects_pb2, validation
from cluster.api import fencing as leases
from cluster.api.fencing import (
    BOUND_UNDER_FENCE_ANNOTATION,
    FENCING_TOKEN_ANNOTATION,
    WRITTEN_UNDER_FENCE_ANNOTATION,
)
from cluster.api.kinds import LEASE, Kind, metadata_of
from cluster.apiserver.storage import Storage, revision_of
from store.base import Guard

log = logging.getLogger(__name__)

#: Annotations only the server writes: a client can neither set nor change them.
SERVER_ANNOTATIONS = (FENCING_TOKEN_ANNOTATION, BOUND_UNDER_FENCE_ANNOTATION, WRITTEN_UNDER_FENCE_ANNOTATION)


def tenure_token(lease: objects_pb2.Lease) -> int:
    """The store revision at which the Lease's current tenure began (cluster.api.fencing's rule);
    InternalError when the annotation was written behind the API's back."""
    try:
        return leases.tenure_token(lease)
    except ValueError as exc:
        raise errors.InternalError(str(exc)) from exc


def refusal(lease: objects_pb2.Lease | None, fence: apiserver_pb2.Fence) -> str | None:
    """Why ``fence`` does not hold against ``lease`` (the stored Lease it names, None if there is none);
    None when it holds."""
    where = f"lease {fence.lease_namespace}/{fence.lease_name}"
    names = f'the fence names holder "{fence.holder_identity}" with token {fence.token}'
    if lease is None:
        return f"{where} does not exist; {names}"
    holder = lease.spec.holder_identity
    if not holder:
        return f"{where} has no holder (released); {names}"
    token = tenure_token(lease)
    if holder != fence.holder_identity or token != fence.token:
        return f'{where} is held by "{holder}" with token {token}; {names}'
    return None


def stamp(fence: apiserver_pb2.Fence) -> str:
    """The value of BOUND_UNDER_FENCE_ANNOTATION for a write under ``fence``."""
    return leases.fence_stamp(fence.holder_identity, fence.token)


def fence_problems(fence: apiserver_pb2.Fence) -> list[str]:
    """What is wrong with a request's Fence, as field errors (empty when nothing is)."""
    problems = []
    if not fence.lease_namespace:
        problems.append(validation.required("fence.leaseNamespace"))
    else:
        problems += [
            validation.invalid("fence.leaseNamespace", fence.lease_namespace, problem)
            for problem in validation.is_dns1123_label(fence.lease_namespace)
        ]
    if not fence.lease_name:
        problems.append(validation.required("fence.leaseName"))
    else:
        problems += [
            validation.invalid("fence.leaseName", fence.lease_name, problem)
            for problem in validation.is_dns1123_subdomain(fence.lease_name)
        ]
    if not fence.holder_identity:
        # An empty holder would match a released Lease.
        problems.append(validation.required("fence.holderIdentity"))
    if fence.token <= 0:
        problems.append(validation.invalid("fence.token", fence.token, "must be greater than 0"))
    return problems


class Fencing:
    """The API server's fence checker; ``refused`` counts the fenced writes it has refused."""

    def __init__(self, registry: Storage) -> None:
        self._registry = registry
        self.refused = 0

    def of(self, fence: apiserver_pb2.Fence) -> LeaseFence:
        """The checker of one request's fence; ``errors.Invalid`` naming each bad field."""
        problems = fence_problems(fence)
        if problems:
            detail = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
            raise errors.Invalid(f"the fence is invalid: {detail}")
        return LeaseFence(self, fence)

    async def guard(
        self, fence: apiserver_pb2.Fence, verb: str, kind: Kind, namespace: str, name: str
    ) -> Guard:
        """Read the Lease ``fence`` names and ``check`` it."""
        lease = await self._registry.get(LEASE, fence.lease_namespace, fence.lease_name)
        return self.check(fence, lease, verb, kind, namespace, name)

    def check(
        self,
        fence: apiserver_pb2.Fence,
        lease: objects_pb2.Lease | None,
        verb: str,
        kind: Kind,
        namespace: str,
        name: str,
    ) -> Guard:
        """The Guard that keeps ``lease`` (the Lease ``fence`` names, as just read; None if absent) as
        read, or ``errors.Fenced`` (logged and counted) naming the ``verb`` of ``kind`` ``namespace/name``
        refused, the Lease, its holder and the tokens."""
        why = refusal(lease, fence)
        if why is not None:
            self.refused += 1
            target = f"{namespace}/{name}" if namespace else name
            message = f"refused a fenced {verb} of {kind.name} {target}: {why}"
            log.warning("%s (%d fenced writes refused so far)", message, self.refused)
            raise errors.Fenced(message)
        assert lease is not None
        return Guard(LEASE.key(fence.lease_namespace, fence.lease_name), revision_of(lease))


def record_written_under_fence(obj: Message, fence: LeaseFence | None) -> None:
    """Stamp an object with the fence of the write that stores this version of it; an unfenced write
    drops the stamp, so nobody can forge one. A kind's ``record_fence`` for the kinds that keep no other
    record of their fence."""
    meta = metadata_of(obj)
    if fence is not None:
        meta.annotations[WRITTEN_UNDER_FENCE_ANNOTATION] = fence.stamp
    elif WRITTEN_UNDER_FENCE_ANNOTATION in meta.annotations:
        del meta.annotations[WRITTEN_UNDER_FENCE_ANNOTATION]


class LeaseFence:
    """One request's fence, checked: ``guard`` before each attempt of the write, ``stamp`` for audit."""

    def __init__(self, fencing: Fencing, fence: apiserver_pb2.Fence) -> None:
        self._fencing = fencing
        self.fence = fence

    @property
    def stamp(self) -> str:
        return stamp(self.fence)

    @property
    def lease_address(self) -> tuple[Kind, str, str]:
        """The Lease this fence names, as (kind, namespace, name), for a caller that reads it itself."""
        return LEASE, self.fence.lease_namespace, self.fence.lease_name

    def check(
        self, lease: objects_pb2.Lease | None, verb: str, kind: Kind, namespace: str, name: str
    ) -> Guard:
        """``Fencing.check`` for this fence, given the Lease read at ``lease_address``."""
        return self._fencing.check(self.fence, lease, verb, kind, namespace, name)

    async def guard(self, verb: str, kind: Kind, namespace: str, name: str) -> Guard:
        """``Fencing.guard`` for this fence: call it before each attempt of the write."""
        return await self._fencing.guard(self.fence, verb, kind, namespace, name)
