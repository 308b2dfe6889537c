"""Server-enforced leadership (``--enforce-leader-fencing``): the API server, not the schedulers' good
manners, decides who leads and which writes need the leader's fence.

Fencing alone (fencing.py) protects against honest schedulers that do not know they were deposed. A caller
with the scheduler's credentials could still bind with no fence at all, or rewrite the Lease's holder to
itself and bind under its own fence. With enforcement on:

* Writes only a leader makes need a fence when the caller is not an admin (not in system:masters):
  a Bind; a pod status update that changes ``status.nominatedNodeName``; a ResourceClaim status update
  that sets an allocation or adds a consumer to ``status.reservedFor``; and a pod delete by a caller
  allowed to bind pods (the scheduler's role), which is how preemption evicts its victims. Refused
  with PermissionDenied.
* The server arbitrates every Lease, whoever writes it: an update that changes ``spec.holderIdentity``
  lands only when the stored Lease is released (no holder) or has expired by this server's own clock.
  A holder releases its Lease (holder emptied) under the fence of its tenure, which the update carries;
  a release without it waits for the expiry like any takeover. Refused with FailedPrecondition.
* A fence must name a Lease the server takes fences of (``--fenced-lease``; by default the scheduler's,
  kube-system/kube-scheduler): anyone who may create a Lease holds it, so a fence that named one of the
  caller's own would hold against it. Refused with PermissionDenied, before any check of the fence.

Expiry follows client-go's rule of trusting only local observation: ``LeaseClock`` watches the Leases in
the store and notes, on this server's monotonic clock, when it first saw each version. A Lease expires
``leaseDurationSeconds`` after the server last saw it change, where the duration is the longest any version
of the current tenure asked for (a write that keeps the holder but shortens the duration cannot hasten a
takeover). A server that has just started has seen nothing change yet: it counts every Lease from its
first sight of it, so after a restart a held Lease expires no sooner than one full lease duration later.
Coordinated leader election (Kubernetes' KEP-4355) moves the same decision into the API server.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cluster.api import errors, objects_pb2
from cluster.api.fencing import SCHEDULER_LEASE, LeaseRef, observed_tenure_token
from cluster.api.kinds import LEASE, POD, Kind
from cluster.apiserver.auth.identity import RequestInfo, UserInfo
from cluster.apiserver.auth.roles import MASTERS_GROUP
from cluster.apiserver.fencing import LeaseFence
from cluster.apiserver.storage import Storage
from store.base import EventType, StoreUnavailable, TooOldRevision

log = logging.getLogger(__name__)

#: After the store fails, how long the lease watch waits before it lists and watches again.
RETRY_DELAY_S = 1.0
#: The flag that turns enforcement on, as refusals name it.
FLAG = "--enforce-leader-fencing"
#: The flag that names the Leases whose fences the server takes, as refusals name it.
FENCED_LEASE_FLAG = "--fenced-lease"


@dataclass(frozen=True, slots=True)
class _Seen:
    """A Lease as this server last saw it change."""

    revision: int
    holder: str
    token: int
    #: This server's monotonic time when it first saw this version.
    at: float
    #: The longest leaseDurationSeconds of the tenure seen so far.
    duration_s: int


def _address(lease: objects_pb2.Lease) -> str:
    return f"{lease.metadata.namespace}/{lease.metadata.name}"


class LeaseClock:
    """When, by this server's clock, each Lease last changed; so when it expires."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._seen: dict[str, _Seen] = {}

    def observe(self, lease: objects_pb2.Lease) -> None:
        """Take in a stored version of ``lease`` (read, written or watched); an older or already seen
        version changes nothing."""
        key = LEASE.key(lease.metadata.namespace, lease.metadata.name)
        revision = int(lease.metadata.resource_version)
        seen = self._seen.get(key)
        if seen is not None and revision <= seen.revision:
            return
        holder, token = lease.spec.holder_identity, observed_tenure_token(lease)
        duration = lease.spec.lease_duration_seconds
        if seen is not None and (seen.holder, seen.token) == (holder, token):
            duration = max(duration, seen.duration_s)
        self._seen[key] = _Seen(revision, holder, token, self._clock(), duration)

    def forget(self, key: str, revision: int) -> None:
        """The Lease at ``key`` was deleted at ``revision``."""
        seen = self._seen.get(key)
        if seen is not None and seen.revision < revision:
            del self._seen[key]

    def remaining(self, lease: objects_pb2.Lease) -> tuple[float, int]:
        """Seconds until ``lease`` (as stored now) expires by this server's clock (0 once it has), and the
        lease duration that counts."""
        self.observe(lease)
        seen = self._seen[LEASE.key(lease.metadata.namespace, lease.metadata.name)]
        return max(0.0, seen.at + seen.duration_s - self._clock()), seen.duration_s

    async def run(self, registry: Storage) -> None:
        """Follow every Lease in the store until cancelled."""
        prefix = LEASE.key_prefix()
        while True:
            try:
                listed = await registry.store.list(prefix)
                for kv in listed.items:
                    self.observe(registry.decode_kv(LEASE, kv))  # type: ignore[arg-type]
                async for event in registry.store.watch(prefix, listed.revision + 1):
                    if event.type is EventType.DELETE:
                        self.forget(event.key, event.revision)
                    else:
                        self.observe(registry.decode(LEASE, event.value, event.revision))  # type: ignore[arg-type]
                log.warning("the lease watch of leader fencing ended; listing again")
            except TooOldRevision:
                log.info("the lease watch of leader fencing fell behind compaction; listing again")
                continue
            except StoreUnavailable as exc:
                log.warning("leader fencing: store unavailable (%s); retrying in %gs", exc, RETRY_DELAY_S)
            await asyncio.sleep(RETRY_DELAY_S)


class Leadership:
    """The rules above, for one API server; ``enforced`` False leaves every write as it was."""

    def __init__(
        self,
        *,
        enforced: bool,
        may: Callable[[UserInfo, RequestInfo], bool],
        clock: LeaseClock | None = None,
        fenced_leases: tuple[LeaseRef, ...] = (SCHEDULER_LEASE,),
    ) -> None:
        if enforced and not fenced_leases:
            raise ValueError(f"{FLAG} needs at least one lease to take fences of ({FENCED_LEASE_FLAG})")
        self.enforced = enforced
        #: Whether a caller is allowed a request (the authorizer's answer).
        self._may = may
        self.clock = clock or LeaseClock()
        #: The Leases whose fences the server takes (under enforcement; any Lease's without it).
        self.fenced_leases = frozenset(fenced_leases)

    # ----------------------------------------------------------------------------- the fence's lease

    def check_fence(self, user: UserInfo, fence: LeaseFence) -> None:
        """A fence must name a Lease the server takes fences of."""
        named = LeaseRef(fence.fence.lease_namespace, fence.fence.lease_name)
        if not self.enforced or named in self.fenced_leases:
            return
        taken = ", ".join(str(lease) for lease in sorted(self.fenced_leases))
        which = f"the lease {taken}" if len(self.fenced_leases) == 1 else f"the leases {taken}"
        raise errors.PermissionDenied(
            f'user "{user.name}" cannot write under a fence of lease {named}: this API server enforces '
            f"leader fencing ({FLAG}) and takes fences only of {which} ({FENCED_LEASE_FLAG})"
        )

    # ------------------------------------------------------------------------------ unfenced writes

    def _needs_fence(self, user: UserInfo, fence: LeaseFence | None) -> bool:
        return self.enforced and fence is None and MASTERS_GROUP not in user.groups

    def check_bind(self, user: UserInfo, namespace: str, name: str, fence: LeaseFence | None) -> None:
        if self._needs_fence(user, fence):
            raise _unfenced(user, f"bind pod {namespace}/{name}")

    def check_delete(
        self, user: UserInfo, kind: Kind, namespace: str, name: str, fence: LeaseFence | None
    ) -> None:
        """A pod delete by a caller that may bind pods (a scheduler evicting a preemption victim); ``kind``
        as the request pipeline resolved it, whatever name the caller gave it."""
        if kind is not POD or not self._needs_fence(user, fence):
            return
        if self._may(user, RequestInfo("create", "pods", "binding", namespace, name)):
            raise _unfenced(user, f"delete pod {namespace}/{name} (a caller that may bind pods deletes "
                                  f"only preemption victims, and only as the leader)")

    def nomination_check(
        self, user: UserInfo, fence: LeaseFence | None
    ) -> Callable[[Any, Any], None] | None:
        """What a status update of a kind whose status holds the leader's decisions must pass, given the
        stored object and the updated one: None when nothing (an admin's, a fenced one, or enforcement
        off)."""
        if not self._needs_fence(user, fence):
            return None

        def check(current: Any, updated: Any) -> None:
            meta = current.metadata
            if isinstance(current, objects_pb2.ResourceClaim):
                change = _claim_decision(current, updated)
                if change:
                    raise _unfenced(user, f"{change} of resourceclaim {meta.namespace}/{meta.name}")
            elif updated.status.nominated_node_name != current.status.nominated_node_name:
                raise _unfenced(user, f"change status.nominatedNodeName of pod {meta.namespace}/{meta.name}")

        return check

    # ----------------------------------------------------------------------------------- the lease

    def check_lease_update(
        self, current: objects_pb2.Lease, updated: objects_pb2.Lease, fence: LeaseFence | None
    ) -> None:
        """An update of ``current`` (the stored Lease it replaces) into ``updated``: a change of holder
        only when released or expired; a release also by the holder, under its tenure's fence."""
        if not self.enforced:
            return
        old, new = current.spec.holder_identity, updated.spec.holder_identity
        if old == new or not old:
            self.clock.observe(current)
            return
        if not new and fence is not None and fence.lease_address == (
            LEASE, current.metadata.namespace, current.metadata.name
        ) and fence.fence.holder_identity == old:
            # The fence was checked against this very version (the write carries its guard).
            return
        left, duration = self.clock.remaining(current)
        if left <= 0:
            return
        change = "released" if not new else f'taken over by "{new}"'
        hint = "; its holder releases it under the fence of its tenure" if not new else ""
        raise errors.Forbidden(
            f'lease {_address(current)} is held by "{old}" and cannot be {change}: it expires by this API '
            f"server's clock only in {left:.1f}s ({duration}s after the server last saw it renewed); only a "
            f"released or expired lease changes holder ({FLAG}){hint}"
        )


def _claim_decision(current: objects_pb2.ResourceClaim, updated: objects_pb2.ResourceClaim) -> str:
    """What a claim status update decides that only the scheduler decides ("" for nothing): an
    allocation set, or a consumer added. Clearing them is the resourceclaim controller's part."""
    if updated.status.HasField("allocation") and updated.status.allocation != current.status.allocation:
        return "set status.allocation"
    reserved = {consumer.uid for consumer in current.status.reserved_for}
    if any(consumer.uid not in reserved for consumer in updated.status.reserved_for):
        return "add to status.reservedFor"
    return ""


def _unfenced(user: UserInfo, what: str) -> errors.PermissionDenied:
    return errors.PermissionDenied(
        f'user "{user.name}" cannot {what} without a fence: this API server enforces leader fencing '
        f"({FLAG}): only the holder of the scheduler lease writes this, under the fence of its tenure"
    )
