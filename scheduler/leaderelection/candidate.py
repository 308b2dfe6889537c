"""A replica's LeaseCandidate (coordination.k8s.io/v1beta1): the object that says "I contend for this
Lease", kept by every replica, leader or standby, so that standbys that never led are visible.

As client-go's leaderelection.NewCandidate keeps it: created when the replica starts contending, its
renewTime rewritten every ``interval_s`` (and at once when someone writes a pingTime newer than it),
deleted when the replica stops on purpose. podsched does not run coordinated leader election: nothing
elects from these objects, they are for people and tools watching the replicas (the web view).

The candidate is named by the replica's identity ("<host>_<uuid>", a valid LeaseCandidate name: upstream
names them as ConfigMap keys) and lives in the Lease's namespace with ``spec.leaseName`` the Lease's name.

Writing it never stands in the way of the election: it runs as its own task, each failure is logged and
retried at the next interval, and it goes through a client of its own, so that the leader's fence (which
the scheduler's client attaches to its deletes) never rides on it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime
from typing import NoReturn

from cluster.api import objects_pb2, timeutil
from cluster.api.kinds import LEASE_CANDIDATE
from cluster.client import AlreadyExists, ApiError, Client, Conflict, Informer, NotFound
from scheduler.clock import Clock, SystemClock

log = logging.getLogger(__name__)

#: The one strategy Kubernetes defines; podsched runs no coordinated election, so it is only declared.
OLDEST_EMULATION_VERSION = "OldestEmulationVersion"
#: How long a graceful stop waits for the delete of the candidate.
DELETE_TIMEOUT_S = 2.0


def pinged(candidate: objects_pb2.LeaseCandidate) -> bool:
    """Whether someone asked ``candidate`` to renew: a pingTime newer than its renewTime."""
    spec = candidate.spec
    if not spec.HasField("ping_time"):
        return False
    return (spec.ping_time.seconds, spec.ping_time.nanos) > (spec.renew_time.seconds, spec.renew_time.nanos)


class Candidacy:
    """The LeaseCandidate of one replica for the Lease ``namespace/lease_name``; ``run`` keeps it."""

    def __init__(
        self,
        client: Client,
        namespace: str,
        lease_name: str,
        identity: str,
        *,
        interval_s: float,
        binary_version: str,
        emulation_version: str = "",
        clock: Clock | None = None,
        wall_clock: Callable[[], datetime] = timeutil.utc_now,
    ) -> None:
        if interval_s <= 0:
            raise ValueError(f"a lease candidate's renew interval must be positive, not {interval_s}")
        self._client = client
        self.namespace = namespace
        self.lease_name = lease_name
        self.name = identity
        self.interval_s = interval_s
        self._binary_version = binary_version
        self._emulation_version = emulation_version or binary_version
        self._clock: Clock = clock or SystemClock()
        self._wall_clock = wall_clock
        #: The candidate as last written or read: updates are compare-and-swap against it.
        self._current: objects_pb2.LeaseCandidate | None = None
        self._ping = asyncio.Event()

    def describe(self) -> str:
        return f"{self.namespace}/{self.name} (for lease {self.lease_name})"

    async def run(self) -> NoReturn:
        """Write the candidate now and every interval (or on a ping) until cancelled; then delete it."""
        watch = asyncio.create_task(self._watch(), name=f"watch lease candidate {self.name}")
        try:
            while True:
                self._ping.clear()
                await self.renew()
                await self._next_renewal()
        finally:
            watch.cancel()
            await asyncio.wait((watch,))
            await self._delete()

    async def renew(self) -> bool:
        """One write of the candidate (created when missing) with renewTime now; False when it failed
        (logged)."""
        try:
            await self._write()
            return True
        except ApiError as err:
            log.warning("failed to write lease candidate %s: %s; retrying in %gs",
                        self.describe(), err, self.interval_s)
        return False

    async def _write(self) -> None:
        if self._current is None:
            try:
                self._current = await self._client.create(self._desired())
                return
            except AlreadyExists:
                # Left by an earlier run under the same identity, or created by a write that was
                # answered too late: take it over.
                self._current = await self._read()
        try:
            self._current = await self._client.update(self._renewed(self._current))
        except Conflict:
            # Written by someone else since (a ping the watch has not brought yet): once more on top.
            self._current = await self._client.update(self._renewed(await self._read()))
        except NotFound:
            # Deleted by someone else (a garbage collector): created again next time.
            self._current = None
            raise

    def _renewed(self, current: objects_pb2.LeaseCandidate) -> objects_pb2.LeaseCandidate:
        renewed = objects_pb2.LeaseCandidate()
        renewed.CopyFrom(current)
        renewed.spec.CopyFrom(self._desired().spec)
        return renewed

    def _desired(self) -> objects_pb2.LeaseCandidate:
        candidate = objects_pb2.LeaseCandidate(
            api_version=LEASE_CANDIDATE.api_version,
            kind=LEASE_CANDIDATE.name,
            metadata=objects_pb2.ObjectMeta(name=self.name, namespace=self.namespace),
            spec=objects_pb2.LeaseCandidateSpec(
                lease_name=self.lease_name, binary_version=self._binary_version,
                emulation_version=self._emulation_version, strategy=OLDEST_EMULATION_VERSION,
            ),
        )
        candidate.spec.renew_time.FromDatetime(self._wall_clock())
        return candidate

    async def _read(self) -> objects_pb2.LeaseCandidate:
        read = await self._client.get(LEASE_CANDIDATE, self.name, self.namespace)
        assert isinstance(read, objects_pb2.LeaseCandidate)
        return read

    async def _next_renewal(self) -> None:
        timer = asyncio.ensure_future(self._clock.sleep(self.interval_s))
        ping = asyncio.ensure_future(self._ping.wait())
        try:
            await asyncio.wait((timer, ping), return_when=asyncio.FIRST_COMPLETED)
        finally:
            timer.cancel()
            ping.cancel()
            await asyncio.wait((timer, ping))

    async def _watch(self) -> None:
        informer = Informer(self._client, LEASE_CANDIDATE, namespace=self.namespace,
                            field_selector=f"metadata.name={self.name}")

        def changed(*objs: objects_pb2.LeaseCandidate) -> None:
            seen = objs[-1]
            current = self._current
            if current is not None and int(seen.metadata.resource_version) > int(
                current.metadata.resource_version
            ):
                self._current = seen
            if pinged(seen):
                self._ping.set()

        informer.add_handler(on_add=changed, on_update=changed)
        try:
            await informer.run()
        except ApiError as err:
            log.warning("watching lease candidate %s failed (%s); pings are answered at the next renewal",
                        self.describe(), err)

    async def _delete(self) -> None:
        try:
            async with asyncio.timeout(DELETE_TIMEOUT_S):
                await self._client.delete(LEASE_CANDIDATE, self.name, self.namespace)
        except NotFound:
            pass
        except (ApiError, TimeoutError) as err:
            log.warning("failed to delete lease candidate %s: %s", self.describe(), err)
        else:
            log.info("deleted lease candidate %s", self.describe())
