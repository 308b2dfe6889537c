"""Who leads the scheduler replicas, as seen from outside: an informer on the scheduler's Lease that
reports every change of holder, with the holder's fencing token and how long there was no leader.

The token of a tenure is the store revision of the write that acquired it: the API server keeps it in
the ``podsched.io/fencing-token`` annotation once the holder has renewed, and until then it is the
Lease's own resourceVersion.

"Without a leader" is measured on this process's monotonic clock, from the moment the lease was seen
released, or the moment the owner of the watch said the holder's process was gone (``holder_gone``:
`podsched up` knows when a replica exits), or the watch's start, to the moment the next holder's write
was seen. A holder deposed while still running (paused past its lease) is replaced without any of
those, so its successor's change carries no such figure.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from cluster.api import kinds, objects_pb2
from cluster.api.fencing import SCHEDULER_LEASE, observed_tenure_token
from cluster.client.client import Client
from cluster.client.informer import Informer


@dataclass(frozen=True)
class LeaderChange:
    """The lease changed hands (``holder`` "" when it was released)."""

    holder: str
    #: The tenure's fencing token (0 when released).
    token: int
    #: The Lease's resourceVersion at the change.
    revision: int
    lease_transitions: int
    #: When this process saw the change: monotonic seconds, and the wall clock for display.
    seen_at: float
    seen_wall: datetime
    #: The holder before this change ("" when there was none).
    previous: str
    #: For a new holder: seconds since the lease was last known to have no live leader (see the module
    #: docstring); None when that moment is unknown.
    leaderless_s: float | None


class LeadershipWatch:
    """Follows one Lease with an informer; ``on_change`` hears every change of holder, in order."""

    def __init__(
        self,
        client: Client,
        *,
        namespace: str = SCHEDULER_LEASE.namespace,
        name: str = SCHEDULER_LEASE.name,
        on_change: Callable[[LeaderChange], None] | None = None,
        on_lease: Callable[[objects_pb2.Lease | None], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``on_lease`` hears the Lease itself after every write seen (renewals too; None once deleted)."""
        self.namespace = namespace
        self.name = name
        self._on_change = on_change
        self._on_lease = on_lease
        self._clock = clock
        #: The holder now ("" when nobody holds the lease, or before it exists).
        self.holder = ""
        #: Every change seen so far.
        self.changes: list[LeaderChange] = []
        #: Since when nobody has been leading, as far as we know (None: unknown, or someone leads).
        self._leaderless_since: float | None = clock()
        self._informer = Informer(
            client, kinds.LEASE, namespace=namespace, field_selector=f"metadata.name={name}"
        )
        self._informer.add_handler(on_add=self._seen, on_update=lambda _old, new: self._seen(new),
                                   on_delete=self._deleted)

    async def run(self) -> None:
        """Follow the lease until cancelled."""
        await self._informer.run()

    async def wait_synced(self) -> None:
        await self._informer.wait_synced()

    def holder_gone(self, identity: str) -> None:
        """The process of ``identity`` has ended: if it holds the lease, nobody leads from now on."""
        if identity and identity == self.holder and self._leaderless_since is None:
            self._leaderless_since = self._clock()

    def _seen(self, lease: objects_pb2.Lease) -> None:
        holder = lease.spec.holder_identity
        if holder != self.holder:
            token = observed_tenure_token(lease) if holder else 0
            self._change(holder, token, int(lease.metadata.resource_version), lease.spec.lease_transitions)
        if self._on_lease is not None:
            self._on_lease(lease)

    def _deleted(self, _lease: objects_pb2.Lease) -> None:
        self._change("", 0, 0, 0)
        if self._on_lease is not None:
            self._on_lease(None)

    def _change(self, holder: str, token: int, revision: int, transitions: int) -> None:
        if holder == self.holder:
            return
        now = self._clock()
        leaderless_s = None
        if holder:
            if self._leaderless_since is not None:
                leaderless_s = now - self._leaderless_since
            self._leaderless_since = None
        elif self._leaderless_since is None:
            self._leaderless_since = now
        change = LeaderChange(
            holder=holder, token=token, revision=revision, lease_transitions=transitions, seen_at=now,
            seen_wall=datetime.now(), previous=self.holder, leaderless_s=leaderless_s,
        )
        self.holder = holder
        self.changes.append(change)
        if self._on_change is not None:
            self._on_change(change)
