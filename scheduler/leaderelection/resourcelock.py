"""The lock a leader election runs on: the election record kept in a coordination.k8s.io/v1 Lease.

``LeaseLock`` reads, creates and updates the Lease through one cached object, so every update carries
the resourceVersion this lock last saw: of two candidates that read the same version, the API server's
compare-and-swap lets only one write. Every call returns a ``LeaseSnapshot`` of the Lease as stored,
which carries what the elector needs besides the record: the raw bytes it compares to notice a change,
the revision that orders observations, and the fencing token of the tenure the version belongs to.

``Lock`` is what the elector asks of a lock; unit tests give it an in-memory one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import NamedTuple, Protocol

from google.protobuf.message import Message

from cluster.api import objects_pb2
from cluster.api.fencing import observed_tenure_token
from cluster.api.kinds import LEASE
from cluster.client import Client, Fence, Informer

#: Written by the API server on a Lease whose tenure outlived the write that began it: the tenure's
#: fencing token. Absent, the token is the Lease's own resourceVersion (see `LeaseSnapshot.token`).


@dataclass(frozen=True, slots=True)
class LeaderElectionRecord:
    """client-go's LeaderElectionRecord: the election state a Lease's spec carries.

    The times are the writers' wall clocks. The elector never compares them with its own clock (they
    may come from a machine whose clock is off); it only notices that they changed."""

    #: Who holds the lease; empty when nobody does (a leader that stepped down released it).
    holder_identity: str = ""
    #: How long candidates wait, after they last saw the record change, before they may take over.
    lease_duration_seconds: int = 0
    #: When the current holder acquired the lease (kept while it renews).
    acquire_time: datetime | None = None
    #: When the holder last renewed the lease.
    renew_time: datetime | None = None
    #: How many times the lease changed hands (the Lease's leaseTransitions).
    leader_transitions: int = 0


class LeaseSnapshot(NamedTuple):
    """One stored version of the Lease, as the elector needs it."""

    record: LeaderElectionRecord
    #: The spec as stored, serialized deterministically: equal bytes mean an unchanged record.
    raw: bytes
    #: The Lease's resourceVersion: a larger one is a later version.
    revision: int
    #: The fencing token of the tenure this version belongs to: the revision of the write that gave the
    #: lease to its holder (the API server keeps it in FENCING_TOKEN_ANNOTATION once the tenure has been
    #: renewed; until then it is the version's own revision).
    token: int


class Lock(Protocol):
    """A lock the elector can hold: one record, read and written with compare-and-swap."""

    @property
    def identity(self) -> str:
        """Who this candidate is: the holder identity it writes."""
        ...

    @property
    def namespace(self) -> str: ...

    @property
    def name(self) -> str: ...

    def describe(self) -> str:
        """The lock's "namespace/name", for messages."""
        ...

    async def get(self) -> LeaseSnapshot:
        """The record as stored; `cluster.client.NotFound` when there is none."""
        ...

    async def create(self, record: LeaderElectionRecord) -> LeaseSnapshot:
        """Create the record; `cluster.client.AlreadyExists` when someone was first."""
        ...

    async def update(self, record: LeaderElectionRecord, *, fence: Fence | None = None) -> LeaseSnapshot:
        """Replace the record at the version this lock last read or wrote; `cluster.client.Conflict`
        when it changed since. Under ``fence`` when given (a holder's release of its tenure)."""
        ...

    async def watch(
        self, on_change: Callable[[LeaseSnapshot], None], on_delete: Callable[[int], None]
    ) -> None:
        """Report every change of the record (``on_change``) and its deletion (``on_delete`` with the
        revision of the deletion), in order, until cancelled. Raises only for a watch that can never
        work; transient failures are retried inside."""
        ...


def record_to_spec(record: LeaderElectionRecord) -> objects_pb2.LeaseSpec:
    """The LeaseSpec of a record: every field set, as client-go writes it."""
    spec = objects_pb2.LeaseSpec(
        holder_identity=record.holder_identity,
        lease_duration_seconds=record.lease_duration_seconds,
        lease_transitions=record.leader_transitions,
    )
    if record.acquire_time is not None:
        spec.acquire_time.FromDatetime(record.acquire_time)
    if record.renew_time is not None:
        spec.renew_time.FromDatetime(record.renew_time)
    return spec


def spec_to_record(spec: objects_pb2.LeaseSpec) -> LeaderElectionRecord:
    """The record a LeaseSpec carries (unset fields read as their zero value)."""
    return LeaderElectionRecord(
        holder_identity=spec.holder_identity,
        lease_duration_seconds=spec.lease_duration_seconds,
        acquire_time=spec.acquire_time.ToDatetime(tzinfo=UTC) if spec.HasField("acquire_time") else None,
        renew_time=spec.renew_time.ToDatetime(tzinfo=UTC) if spec.HasField("renew_time") else None,
        leader_transitions=spec.lease_transitions,
    )


def snapshot_of(lease: objects_pb2.Lease) -> LeaseSnapshot:
    return LeaseSnapshot(
        record=spec_to_record(lease.spec),
        raw=lease.spec.SerializeToString(deterministic=True),
        revision=int(lease.metadata.resource_version),
        token=observed_tenure_token(lease),
    )


class LeaseLock:
    """The election record in the Lease ``namespace/name``, read and written through ``client``."""

    def __init__(self, client: Client, namespace: str, name: str, identity: str) -> None:
        for what, value in (("namespace", namespace), ("name", name), ("identity", identity)):
            if not value:
                raise ValueError(f"a lease lock needs a non-empty {what}")
        self._client = client
        self._namespace = namespace
        self._name = name
        self._identity = identity
        #: The Lease as this lock last read or wrote it: updates are compare-and-swap against it.
        self._lease: objects_pb2.Lease | None = None

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def namespace(self) -> str:
        return self._namespace

    @property
    def name(self) -> str:
        return self._name

    def describe(self) -> str:
        return f"{self._namespace}/{self._name}"

    def __repr__(self) -> str:
        return f"<LeaseLock {self.describe()} as {self._identity}>"

    async def get(self) -> LeaseSnapshot:
        return self._remember(await self._client.get(LEASE, self._name, self._namespace))

    async def create(self, record: LeaderElectionRecord) -> LeaseSnapshot:
        lease = objects_pb2.Lease(
            api_version=LEASE.api_version,
            kind=LEASE.name,
            metadata=objects_pb2.ObjectMeta(name=self._name, namespace=self._namespace),
            spec=record_to_spec(record),
        )
        return self._remember(await self._client.create(lease))

    async def update(self, record: LeaderElectionRecord, *, fence: Fence | None = None) -> LeaseSnapshot:
        if self._lease is None:
            raise RuntimeError(f"lease {self.describe()} not initialized: call get or create first")
        lease = objects_pb2.Lease()
        lease.CopyFrom(self._lease)
        lease.spec.CopyFrom(record_to_spec(record))
        # A failed update leaves the cached Lease as it was: the next update fails its CAS again
        # until a get refreshes it, exactly as client-go's lock behaves.
        return self._remember(await self._client.update(lease, fence=fence))

    async def watch(
        self, on_change: Callable[[LeaseSnapshot], None], on_delete: Callable[[int], None]
    ) -> None:
        # The field selector narrows the namespace's leases to ours on the server (leases support
        # metadata.name, as every kind does in Kubernetes).
        informer = Informer(
            self._client, LEASE, namespace=self._namespace, field_selector=f"metadata.name={self._name}"
        )

        def changed(*objs: objects_pb2.Lease) -> None:
            on_change(snapshot_of(objs[-1]))

        def deleted(obj: objects_pb2.Lease) -> None:
            # A watched deletion carries the deletion's revision. One found by a relist carries the
            # object's last revision, which the elector already knows and ignores: its next read finds
            # the lease gone.
            on_delete(int(obj.metadata.resource_version))

        informer.add_handler(on_add=changed, on_update=changed, on_delete=deleted)
        await informer.run()

    def _remember(self, lease: Message) -> LeaseSnapshot:
        assert isinstance(lease, objects_pb2.Lease)
        self._lease = lease
        return snapshot_of(lease)
