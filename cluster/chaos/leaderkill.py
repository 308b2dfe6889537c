"""One round of "kill the leader": read the scheduler Lease's holder through the API, find the container
the holder runs in, signal it through the Docker engine, and time how long the Lease takes to change
hands.

The holder identity is kube-scheduler's ``<hostname>_<uuid>``; inside a container the hostname is the
container's id prefix, or what compose's ``hostname:`` set, so the hostname part names the container
(`DockerEngine.find_by_hostname`).

The handover is measured from the moment the engine acknowledged the signal to the moment a watch on
the Lease delivers a record held by someone else (a release to the empty holder, as a SIGTERMed leader
makes, is not yet a handover). With SIGSTOP the frozen leader is sent SIGCONT once the Lease has moved
on (or the wait gave up, or the round was cancelled): a container left stopped would stay a zombie
replica, since a stopped process is not one that exited and nothing restarts it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from google.protobuf.message import Message

from cluster.api import errors, objects_pb2
from cluster.api.fencing import SCHEDULER_LEASE, LeaseRef
from cluster.chaos.docker import Container, DockerEngine, DockerError
from cluster.client import WatchEvent

#: kube-scheduler's lock: --leader-elect-resource-namespace / --leader-elect-resource-name defaults.
DEFAULT_LEASE = str(SCHEDULER_LEASE)
#: The signals a round may send, by the name the flag takes.
SIGNALS = ("KILL", "TERM", "STOP")
#: Pause before watching again after the watch broke (an API server restarting, failing over).
REWATCH_PAUSE_S = 0.2

T = TypeVar("T")


class LeaseApi(Protocol):
    """What a round needs of `cluster.client.Client`."""

    async def get(self, kind: str, name: str, namespace: str = "") -> Message: ...

    def watch(
        self, kind: str, namespace: str = "", *, resource_version: str = "", field_selector: str = ""
    ) -> AsyncIterator[WatchEvent]: ...


class Skipped(Exception):
    """A round that killed nothing; the message says why."""


@dataclass(frozen=True, slots=True)
class KillResult:
    container: Container
    #: The identity that held the Lease when the signal was sent.
    holder: str
    #: "SIGKILL", "SIGTERM" or "SIGSTOP".
    signal: str
    #: Who holds the Lease after the handover; None when nobody took it within the wait.
    new_holder: str | None
    #: Seconds from the signal to the new holder's record; None with ``new_holder``.
    handover_s: float | None
    #: For SIGSTOP: why the SIGCONT that should have thawed the container failed (None: it did, or
    #: the signal was not SIGSTOP).
    resume_error: str | None = None


def signal_name(text: str) -> str:
    """The engine's name of a --signal value: "kill", "KILL" and "SIGKILL" are all "SIGKILL"."""
    bare = text.strip().upper().removeprefix("SIG")
    if bare not in SIGNALS:
        raise ValueError(f"invalid signal {text!r}: choose one of {', '.join(SIGNALS)}")
    return f"SIG{bare}"


def holder_hostname(identity: str) -> str:
    """The hostname in a ``<hostname>_<uuid>`` identity (a uuid has no underscore; an identity without
    one is taken as a bare hostname)."""
    hostname, sep, _ = identity.rpartition("_")
    return hostname if sep and hostname else identity


class LeaderKiller:
    """Rounds against the leader of ``lease``: ``await killer.kill_once()`` returns a `KillResult` or
    raises `Skipped` (nothing was signalled) or `DockerError` (the signal could not be sent)."""

    def __init__(
        self,
        api: LeaseApi,
        docker: DockerEngine,
        *,
        lease: LeaseRef,
        signal: str,
        handover_timeout_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not handover_timeout_s > 0:
            raise ValueError(f"handover_timeout_s must be positive, got {handover_timeout_s}")
        self._api = api
        self._docker = docker
        self.lease = lease
        self.signal = signal_name(signal)
        self._handover_timeout_s = handover_timeout_s
        self._clock = clock

    async def kill_once(self) -> KillResult:
        holder, revision = await self._read_holder()
        if not holder:
            raise Skipped(f"the lease {self.lease} has no holder (released, or not taken yet)")
        hostname = holder_hostname(holder)
        try:
            container = await self._docker.find_by_hostname(hostname)
        except DockerError as exc:
            raise Skipped(
                f"{exc} (the leader is {holder}): does it run in a container of this Docker engine?"
            ) from exc
        resume_error = None
        try:
            # Inside the try: a round cancelled while the SIGSTOP request is in flight may have frozen
            # the container all the same.
            await self._docker.kill(container.id, self.signal)
            signalled_at = self._clock()
            new_holder = await self._wait_for_new_holder(holder, revision)
        finally:
            if self.signal == "SIGSTOP":
                resume_error = await _finish(self._resume(container))
        handover_s = self._clock() - signalled_at if new_holder is not None else None
        return KillResult(container, holder, self.signal, new_holder, handover_s, resume_error)

    async def _read_holder(self) -> tuple[str, str]:
        """The Lease's holder and resourceVersion; `Skipped` when there is no Lease or no answer."""
        try:
            lease = await self._api.get("leases", self.lease.name, self.lease.namespace)
        except errors.NotFound:
            raise Skipped(f"there is no lease {self.lease} yet: no scheduler has led") from None
        except errors.ApiError as exc:
            raise Skipped(f"cannot read the lease {self.lease}: {exc.message}") from exc
        assert isinstance(lease, objects_pb2.Lease)
        return lease.spec.holder_identity, lease.metadata.resource_version

    async def _wait_for_new_holder(self, old_holder: str, revision: str) -> str | None:
        """The first holder other than ``old_holder`` (and not empty) recorded after ``revision``, or
        None when none comes within the handover timeout. A broken watch is re-read and re-opened."""
        selector = f"metadata.name={self.lease.name}"
        try:
            async with asyncio.timeout(self._handover_timeout_s):
                while True:
                    try:
                        async for event in self._api.watch(
                            "leases", self.lease.namespace, resource_version=revision, field_selector=selector
                        ):
                            lease = event.object
                            assert isinstance(lease, objects_pb2.Lease)
                            holder = "" if event.type == "DELETED" else lease.spec.holder_identity
                            if holder and holder != old_holder:
                                return holder
                            revision = lease.metadata.resource_version
                    except (errors.Unavailable, errors.Expired):
                        pass
                    # The watch broke or was compacted away: the current record may already tell.
                    await asyncio.sleep(REWATCH_PAUSE_S)
                    try:
                        holder, revision = await self._read_holder()
                    except Skipped:
                        continue
                    if holder and holder != old_holder:
                        return holder
        except TimeoutError:
            return None

    async def _resume(self, container: Container) -> str | None:
        try:
            await self._docker.kill(container.id, "SIGCONT")
        except DockerError as exc:
            return str(exc)
        return None


async def _finish(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` to its end even if the caller is cancelled meanwhile (then re-raise the
    cancellation): thawing a container must not be left half-done by a Ctrl-C."""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await task
        raise
