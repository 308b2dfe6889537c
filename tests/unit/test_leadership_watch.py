"""LeadershipWatch against the in-memory ApiServer: one change per change of holder, the tenure's fencing
token, and "without a leader" measured from a release, from a holder's process ending, or from the start."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from cluster.api import objects_pb2
from cluster.api.fencing import FENCING_TOKEN_ANNOTATION, observed_tenure_token
from cluster.api.kinds import LEASE
from cluster.client import Client, LeaderChange, LeadershipWatch
from tests.unit.test_client_fake_apiserver import FAST_RETRIES, FakeApiServer, until


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def lease(holder: str, *, transitions: int = 0, token: str = "") -> objects_pb2.Lease:
    result = objects_pb2.Lease(api_version="coordination.k8s.io/v1", kind="Lease")
    result.metadata.name = "kube-scheduler"
    result.metadata.namespace = "kube-system"
    if token:
        result.metadata.annotations[FENCING_TOKEN_ANNOTATION] = token
    result.spec.holder_identity = holder
    result.spec.lease_duration_seconds = 15
    result.spec.lease_transitions = transitions
    return result


@contextlib.asynccontextmanager
async def watching(
    fake: FakeApiServer, clock: Clock
) -> AsyncIterator[tuple[LeadershipWatch, list[LeaderChange]]]:
    heard: list[LeaderChange] = []
    async with Client(fake.address, timeout_s=5.0, retry_policy=FAST_RETRIES) as client:
        watch = LeadershipWatch(client, on_change=heard.append, clock=clock)
        task = asyncio.create_task(watch.run())
        try:
            await watch.wait_synced()
            yield watch, heard
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


def test_fencing_token_is_the_annotation_else_the_resource_version() -> None:
    plain = lease("a")
    plain.metadata.resource_version = "42"
    assert observed_tenure_token(plain) == 42
    renewed = lease("a", token="17")
    renewed.metadata.resource_version = "42"
    assert observed_tenure_token(renewed) == 17


async def test_changes_of_holder_and_time_without_a_leader(fake: FakeApiServer) -> None:
    clock = Clock()
    async with watching(fake, clock) as (watch, heard):
        assert watch.holder == "" and heard == []
        clock.now = 102.5
        first = await fake.put(lease("a"))
        await until(lambda: len(heard) == 1)
        assert (heard[0].holder, heard[0].previous) == ("a", "")
        assert heard[0].token == int(first.metadata.resource_version)
        # Nobody led from the start of the watch until a's acquiring write was seen.
        assert heard[0].leaderless_s == pytest.approx(2.5)

        # Renewals by the same holder are not changes (the annotation now keeps the tenure's token).
        await fake.put(lease("a", token=first.metadata.resource_version))
        await fake.put(lease("a", token=first.metadata.resource_version))

        # a's process ends (SIGKILL): the clock starts then, not when b's write arrives.
        clock.now = 110.0
        watch.holder_gone("someone-else")  # not the holder: nothing starts
        watch.holder_gone("a")
        clock.now = 113.25
        second = await fake.put(lease("b", transitions=1))
        await until(lambda: len(heard) == 2)
        assert heard[1].holder == "b" and heard[1].previous == "a"
        assert heard[1].token == int(second.metadata.resource_version) and heard[1].lease_transitions == 1
        assert heard[1].leaderless_s == pytest.approx(3.25)

        # A release (SIGTERM) is a change to nobody; the next holder's figure counts from it.
        clock.now = 120.0
        await fake.put(lease("", transitions=1))
        await until(lambda: len(heard) == 3)
        assert heard[2].holder == "" and heard[2].previous == "b" and heard[2].token == 0
        assert watch.holder == ""
        clock.now = 120.4
        await fake.put(lease("c", transitions=2))
        await until(lambda: len(heard) == 4)
        assert heard[3].leaderless_s == pytest.approx(0.4)

        # A holder replaced while its process still runs (deposed): no figure to give.
        await fake.put(lease("d", transitions=3))
        await until(lambda: len(heard) == 5)
        assert heard[4].previous == "c" and heard[4].leaderless_s is None
    assert watch.changes == heard


async def test_a_deleted_lease_means_nobody_leads(fake: FakeApiServer) -> None:
    async with watching(fake, Clock()) as (watch, heard):
        await fake.put(lease("a"))
        await until(lambda: watch.holder == "a")
        await fake.remove(LEASE, "kube-system", "kube-scheduler")
        await until(lambda: len(heard) == 2)
        assert heard[1].holder == "" and heard[1].previous == "a"


async def test_a_lease_held_before_the_watch_starts_is_its_first_change(fake: FakeApiServer) -> None:
    await fake.put(lease("early"))
    async with watching(fake, Clock()) as (watch, heard):
        assert watch.holder == "early"
        assert [change.holder for change in heard] == ["early"]
