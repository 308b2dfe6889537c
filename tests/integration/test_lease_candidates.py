"""Each scheduler replica's LeaseCandidate against the real `podsched apiserver`: a real `podsched
scheduler` process creates its candidate (named by its identity) when it starts contending, leader or
standby, renews its renewTime every lease duration, and deletes it on SIGTERM; a SIGKILLed replica's
stays behind, no longer renewed. In process: a pingTime newer than the renewTime is answered at once
rather than at the next interval, and a candidate the caller may not write is logged, never raised."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

import pytest

from cluster.api import objects_pb2
from cluster.api.kinds import LEASE_CANDIDATE
from cluster.client import Client, NotFound
from cluster.controllers import LeaseCandidateGarbageCollector
from cluster.launcher.process import ApiServerProcess, SchedulerProcess, cli_env
from scheduler.leaderelection import Candidacy
from tests.integration.helpers import REPO, settle

LEASE_NAME = "kube-scheduler"
#: The replicas' election timings; the candidate is renewed every lease duration.
LEASE_S, RENEW_S, RETRY_S = 2, 1.5, 0.5


async def _candidate(client: Client, namespace: str, name: str) -> objects_pb2.LeaseCandidate | None:
    try:
        found = await client.get(LEASE_CANDIDATE, name, namespace)
    except NotFound:
        return None
    assert isinstance(found, objects_pb2.LeaseCandidate)
    return found


def _renewal(candidate: objects_pb2.LeaseCandidate) -> datetime:
    return candidate.spec.renew_time.ToDatetime(tzinfo=UTC)


def _scheduler(server: ApiServerProcess, namespace: str) -> SchedulerProcess:
    return SchedulerProcess(
        ["--server", server.address, "--metrics-addr", "127.0.0.1:0",
         "--leader-elect-resource-namespace", namespace,
         "--leader-elect-lease-duration", f"{LEASE_S}s", "--leader-elect-renew-deadline", f"{RENEW_S}s",
         "--leader-elect-retry-period", f"{RETRY_S}s"],
        env=cli_env(""), cwd=REPO,
    )


async def test_every_replica_keeps_its_candidate_and_deletes_it_on_sigterm(
    apiserver: ApiServerProcess, client: Client, namespace: str
) -> None:
    leader, standby = _scheduler(apiserver, namespace), _scheduler(apiserver, namespace)
    try:
        leader.start()
        standby.start()
        seen: dict[str, objects_pb2.LeaseCandidate] = {}

        async def both_written() -> bool:
            for replica in (leader, standby):
                found = await _candidate(client, namespace, replica.identity)
                if found is not None:
                    seen.setdefault(replica.identity, found)
            return len(seen) == 2

        await settle("both replicas' candidates", both_written)
        for replica in (leader, standby):
            first = seen[replica.identity]
            assert first.api_version == "coordination.k8s.io/v1beta1"
            assert first.spec.lease_name == LEASE_NAME
            assert first.spec.binary_version == first.spec.emulation_version == "0.1.0"
            assert first.spec.strategy == "OldestEmulationVersion"

            async def renewed(
                replica: SchedulerProcess = replica, first: objects_pb2.LeaseCandidate = first
            ) -> bool:
                now = await _candidate(client, namespace, replica.identity)
                return now is not None and _renewal(now) > _renewal(first)

            await settle(f"a renewal of {replica.identity}'s candidate", renewed)

        assert standby.stop() == 0
        assert await _candidate(client, namespace, standby.identity) is None
        leader.kill()
        left = await _candidate(client, namespace, leader.identity)
        assert left is not None and left.spec.lease_name == LEASE_NAME
    finally:
        leader.stop()
        standby.stop()


async def test_a_ping_is_answered_at_once_and_the_candidate_deleted_on_cancel(
    apiserver: ApiServerProcess, client: Client, namespace: str
) -> None:
    # An interval far beyond the test: only the ping can bring the renewal that the test waits for.
    candidacy = Candidacy(client, namespace, LEASE_NAME, "vm_pinged", interval_s=3600, binary_version="0.1.0")
    keeping = asyncio.create_task(candidacy.run())
    try:
        await settle("the candidate", lambda: _exists(client, namespace, "vm_pinged"))
        created = await _candidate(client, namespace, "vm_pinged")
        assert created is not None
        ping = datetime.now(UTC) + timedelta(seconds=1)
        created.spec.ping_time.FromDatetime(ping)
        await client.update(created)

        async def answered() -> bool:
            now = await _candidate(client, namespace, "vm_pinged")
            return now is not None and _renewal(now) >= ping - timedelta(seconds=1)

        await settle("the answer to the ping", answered)
    finally:
        keeping.cancel()
        await asyncio.wait((keeping,))
    assert await _candidate(client, namespace, "vm_pinged") is None


async def _exists(client: Client, namespace: str, name: str) -> bool:
    return await _candidate(client, namespace, name) is not None


async def test_a_failed_write_is_logged_not_raised(
    apiserver: ApiServerProcess, client: Client, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    candidacy = Candidacy(client, namespace, LEASE_NAME, "vm bad name", interval_s=3600,
                          binary_version="0.1.0")
    with caplog.at_level(logging.WARNING, logger="scheduler.leaderelection.candidate"):
        assert await candidacy.renew() is False
    assert f"failed to write lease candidate {namespace}/vm bad name (for lease {LEASE_NAME})" in caplog.text
    assert "a valid config key must consist of alphanumeric characters" in caplog.text


async def test_the_garbage_collector_deletes_only_candidates_unrenewed_for_thirty_minutes(
    apiserver: ApiServerProcess, client: Client, namespace: str
) -> None:
    now = datetime.now(UTC)
    for name, renewed in (("vm_gone", now - timedelta(minutes=31)), ("vm_here", now - timedelta(minutes=29))):
        candidate = objects_pb2.LeaseCandidate(
            metadata=objects_pb2.ObjectMeta(name=name, namespace=namespace),
            spec=objects_pb2.LeaseCandidateSpec(lease_name=LEASE_NAME, binary_version="0.1.0",
                                                strategy="OldestEmulationVersion", emulation_version="0.1.0"),
        )
        candidate.spec.renew_time.FromDatetime(renewed)
        await client.create(candidate)
    collector = LeaseCandidateGarbageCollector(client, now=lambda: now)

    async def both_listed() -> bool:
        listed = await client.list(LEASE_CANDIDATE, namespace)
        return len(listed.items) == 2

    await settle("both candidates listed", both_listed)
    deleted = await collector.collect()
    assert f"{namespace}/vm_gone" in deleted and f"{namespace}/vm_here" not in deleted
    assert await _candidate(client, namespace, "vm_gone") is None
    assert await _candidate(client, namespace, "vm_here") is not None
