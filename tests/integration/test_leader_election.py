"""Leader election against the real `podsched apiserver` process, on each backend: three electors in this
process (each with its own client), short timings (lease 2 s, renew deadline 1.5 s, retry 0.5 s).

Exactly one leads; a graceful stop hands the lease over within 1.2 retry periods + 1 s; a leader that
stops renewing without releasing (a kill) is replaced within the lease + 1.2 retry periods + 1 s, and not
before its lease ran out; the stored Lease shows the holder, the transitions and an acquireTime kept
across renewals; each leader's fencing token is the revision of the write that gave it the lease (the
API server's tenure token), so successive leaders' tokens strictly increase, and only the current
leader's fence gets a bind through. A second Lease in the same namespace, renewed by someone else
throughout, must not disturb anybody (the watch's field selector keeps it out). A leader whose lease is
taken through the API stops at once."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import pytest

from cluster.api import objects_pb2
from cluster.api.kinds import LEASE
from cluster.client import Client, Fence, Fenced
from cluster.launcher.process import ApiServerProcess
from scheduler.leaderelection import (
    FENCING_TOKEN_ANNOTATION,
    JITTER_FACTOR,
    LeaderElectionRecord,
    LeaderElectionTimings,
    LeaderElector,
    LeaseLock,
    LeaseLost,
)
from scheduler.leaderelection.resourcelock import record_to_spec
from tests import builders

# Failover and lease timings are asserted: never run beside other tests.
pytestmark = pytest.mark.timing

LEASE_S, RENEW_S, RETRY_S = 2.0, 1.5, 0.5
TIMINGS = LeaderElectionTimings(LEASE_S, RENEW_S, RETRY_S)
LEASE_NAME = "kube-scheduler"
#: The failover bounds: one jittered retry period and a second after a release; after a kill, the lease
#: duration first.
GRACEFUL_BOUND_S = JITTER_FACTOR * RETRY_S + 1
KILL_BOUND_S = LEASE_S + JITTER_FACTOR * RETRY_S + 1


@dataclass
class Candidate:
    """One replica's elector, with a ``lead`` that records its fences."""

    client: Client
    elector: LeaderElector
    fences: list[Fence] = field(default_factory=list)
    task: asyncio.Task[None] | None = None

    async def lead(self, fence: Fence) -> None:
        self.fences.append(fence)
        await asyncio.Event().wait()

    def start(self) -> None:
        self.task = asyncio.create_task(self.elector.run(self.lead))

    async def stop(self, *, release: bool) -> None:
        assert self.task is not None
        self.elector.release_on_cancel = release
        self.task.cancel()
        await asyncio.wait((self.task,))
        assert self.task.cancelled(), f"run() ended otherwise: {self.task.exception()!r}"


@dataclass
class LeaseHistory:
    """Every stored version of the lease, from a watch started before anyone wrote it."""

    versions: list[objects_pb2.Lease] = field(default_factory=list)

    def holders(self) -> list[str]:
        return [lease.spec.holder_identity for lease in self.versions]

    def acquiring_revision(self, holder: str) -> int:
        """The revision of the first write naming ``holder``: where its tenure began."""
        return next(int(lease.metadata.resource_version) for lease in self.versions
                    if lease.spec.holder_identity == holder)


async def wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Poll ``condition`` every 5 ms until it holds; fail after ``timeout_s``."""
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout_s:
            raise AssertionError(f"{what}: not within {timeout_s}s")
        await asyncio.sleep(0.005)


def leaders(candidates: list[Candidate]) -> list[Candidate]:
    return [candidate for candidate in candidates if candidate.elector.is_leader]


@pytest.fixture
async def clients(apiserver: ApiServerProcess) -> AsyncIterator[list[Client]]:
    clients = [Client(apiserver.address, timeout_s=10.0) for _ in range(4)]
    try:
        yield clients
    finally:
        for client in clients:
            await client.close()


async def renew_decoy(client: Client, namespace: str) -> None:
    """Someone else's Lease beside ours, renewed every 100 ms."""
    decoy = objects_pb2.Lease(
        metadata=objects_pb2.ObjectMeta(name="decoy", namespace=namespace),
        spec=record_to_spec(LeaderElectionRecord("someone-else", 2)),
    )
    decoy = await client.create(decoy)
    while True:
        await asyncio.sleep(0.1)
        decoy.spec.lease_transitions += 1
        decoy = await client.update(decoy)


def tenure_token(lease: objects_pb2.Lease) -> int:
    recorded = lease.metadata.annotations.get(FENCING_TOKEN_ANNOTATION)
    return int(recorded) if recorded is not None else int(lease.metadata.resource_version)


async def bind_under(client: Client, namespace: str, node: str, fence: Fence) -> None:
    """Create a pod and bind it under ``fence`` (the pod stays unbound when the fence is refused)."""
    name = f"p-{uuid.uuid4().hex[:8]}"
    await client.create(builders.pod(name, namespace, image=builders.IMAGE))
    bound = await client.bind(namespace, name, node, fence=fence)
    assert bound.spec.node_name == node


async def record_history(client: Client, namespace: str, history: LeaseHistory, ready: asyncio.Event) -> None:
    listed = await client.list(LEASE, namespace, field_selector=f"metadata.name={LEASE_NAME}")
    assert not listed.items
    ready.set()
    events = client.watch(LEASE, namespace, resource_version=listed.resource_version,
                          field_selector=f"metadata.name={LEASE_NAME}")
    async for event in events:
        history.versions.append(event.object)  # type: ignore[arg-type]


async def test_one_leader_graceful_and_killed_handovers_and_the_stored_lease(
    apiserver: ApiServerProcess, clients: list[Client]
) -> None:
    namespace = f"le-{uuid.uuid4().hex[:8]}"
    observer, *replica_clients = clients
    history, ready = LeaseHistory(), asyncio.Event()
    recorder = asyncio.create_task(record_history(observer, namespace, history, ready))
    decoy = asyncio.create_task(renew_decoy(observer, namespace))
    await ready.wait()
    node = f"node-{uuid.uuid4().hex[:8]}"
    await observer.create(objects_pb2.Node(metadata=objects_pb2.ObjectMeta(name=node)))
    candidates = [
        Candidate(client, LeaderElector(LeaseLock(client, namespace, LEASE_NAME, f"replica-{i}"), TIMINGS))
        for i, client in enumerate(replica_clients)
    ]
    try:
        for candidate in candidates:
            candidate.start()

        # Exactly one leads, and keeps leading through several renewals.
        await wait_for(lambda: len(leaders(candidates)) == 1, 10, "a first leader")
        first = leaders(candidates)[0]
        stored = await observer.get(LEASE, LEASE_NAME, namespace)
        assert stored.spec.holder_identity == first.elector.identity
        assert stored.spec.lease_duration_seconds == 2 and stored.spec.lease_transitions == 0
        acquired = stored.spec.acquire_time.ToDatetime()
        renewed = [stored.spec.renew_time.ToDatetime()]
        for _ in range(3):
            await asyncio.sleep(RETRY_S * 1.5)
            assert leaders(candidates) == [first]
            stored = await observer.get(LEASE, LEASE_NAME, namespace)
            assert stored.spec.holder_identity == first.elector.identity
            assert stored.spec.acquire_time.ToDatetime() == acquired
            assert stored.spec.lease_transitions == 0
            renewed.append(stored.spec.renew_time.ToDatetime())
        assert renewed == sorted(renewed) and len(set(renewed)) == len(renewed)
        # The API server keeps the tenure's token across the renewals: the leader's fence holds.
        assert first.fences[0].token == tenure_token(stored) < int(stored.metadata.resource_version)
        await bind_under(observer, namespace, node, first.fences[0])
        for candidate in candidates:
            assert candidate.elector.observed_holder == first.elector.identity

        # Graceful stop: the lease is released and a standby takes it at once.
        standbys = [c for c in candidates if c is not first]
        started = time.monotonic()
        await first.stop(release=True)
        assert first.elector.released
        stopped_s = time.monotonic() - started
        await wait_for(lambda: len(leaders(standbys)) == 1, GRACEFUL_BOUND_S, "a leader after the stop")
        graceful_s = time.monotonic() - started  # the stop included
        assert graceful_s <= GRACEFUL_BOUND_S
        second = leaders(standbys)[0]
        stored = await observer.get(LEASE, LEASE_NAME, namespace)
        assert stored.spec.holder_identity == second.elector.identity
        assert stored.spec.lease_transitions == 1

        # A kill: the leader stops renewing and does not release. Nobody takes over before the lease
        # has run out since its last renewal, and somebody does within the bound.
        await asyncio.sleep(RETRY_S * 2)
        last = standbys[0] if standbys[1] is second else standbys[1]
        started = time.monotonic()
        await second.stop(release=False)
        assert not second.elector.released
        await wait_for(lambda: last.elector.is_leader, KILL_BOUND_S, "a leader after the kill")
        killed_s = time.monotonic() - started
        assert killed_s <= KILL_BOUND_S
        assert killed_s >= LEASE_S - RETRY_S - 0.1, f"took over {killed_s:.3f}s after the kill"
        stored = await observer.get(LEASE, LEASE_NAME, namespace)
        assert stored.spec.holder_identity == last.elector.identity
        assert stored.spec.lease_transitions == 2

        # Only the current leader's fence is good for writes.
        await asyncio.sleep(RETRY_S * 2)
        await bind_under(observer, namespace, node, last.fences[0])
        for deposed in (first, second):
            with pytest.raises(Fenced):
                await bind_under(observer, namespace, node, deposed.fences[0])

        # Each leader's fence carries the revision of the write that gave it the lease.
        terms = [first, second, last]
        tokens = [candidate.fences[0].token for candidate in terms]
        assert tokens == [history.acquiring_revision(c.elector.identity) for c in terms]
        assert tokens[0] < tokens[1] < tokens[2]
        assert [candidate.fences for candidate in terms] == [
            [Fence(namespace, LEASE_NAME, c.elector.identity, token)]
            for c, token in zip(terms, tokens, strict=True)
        ]
        # The history: first's tenure, its release (no holder, 1 s), second's, then last's.
        holders = [holder for i, holder in enumerate(history.holders())
                   if i == 0 or holder != history.holders()[i - 1]]
        assert holders == [first.elector.identity, "", second.elector.identity, last.elector.identity]
        released = next(lease for lease in history.versions if not lease.spec.holder_identity)
        assert released.spec.lease_duration_seconds == 1 and released.spec.lease_transitions == 0
        print(f"\nfailover: graceful {graceful_s * 1000:.0f} ms (the stop {stopped_s * 1000:.0f} ms; "
              f"bound {GRACEFUL_BOUND_S:g} s), "
              f"kill {killed_s * 1000:.0f} ms (bound {KILL_BOUND_S:g} s)")
    finally:
        for task in [recorder, decoy, *(c.task for c in candidates if c.task is not None)]:
            task.cancel()
        await asyncio.wait([recorder, decoy, *(c.task for c in candidates if c.task is not None)])


async def test_a_leader_whose_lease_is_taken_stops_at_once(
    apiserver: ApiServerProcess, clients: list[Client]
) -> None:
    """Someone takes the lease through the API while the leader binds pods under its fence (as a paused
    leader's successor would): the leader's term ends at once, from the watch or from the server refusing
    a bind (the client tells the elector, as a scheduler wires it), not after a renew deadline."""
    namespace = f"le-{uuid.uuid4().hex[:8]}"
    observer, client, *_ = clients
    elector = LeaderElector(LeaseLock(client, namespace, LEASE_NAME, "victim"), TIMINGS)
    client.on_fenced = lambda err: elector.step_down(f"a write was refused: {err.message}")
    node = f"node-{uuid.uuid4().hex[:8]}"
    await observer.create(objects_pb2.Node(metadata=objects_pb2.ObjectMeta(name=node)))
    bound: list[Fence] = []

    async def lead(fence: Fence) -> None:
        while True:
            await bind_under(client, namespace, node, fence)
            bound.append(fence)

    task = asyncio.create_task(elector.run(lead))
    try:
        await wait_for(lambda: len(bound) >= 5, 10, "binds under the leader's fence")
        lease = await observer.get(LEASE, LEASE_NAME, namespace)
        lease.spec.holder_identity = "successor"
        lease.spec.lease_transitions += 1
        taken = await observer.update(lease)
        started = time.monotonic()
        await wait_for(task.done, RETRY_S, "the leader stopping")
        print(f"\nthe leader stopped {(time.monotonic() - started) * 1000:.0f} ms after the lease was taken")
        with pytest.raises(LeaseLost):
            task.result()
        assert not elector.is_leader and elector.fence is None and not elector.released
        assert (await observer.get(LEASE, LEASE_NAME, namespace)) == taken
        with pytest.raises(Fenced):
            await bind_under(observer, namespace, node, bound[0])
    finally:
        task.cancel()
        await asyncio.wait((task,))
