"""The LeaseCandidate garbage collector's judgement and pace (cluster/controllers/leasecandidategc.py),
against an in-memory stand-in for the client and a fake clock."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from cluster.api import objects_pb2
from cluster.client import ObjectList
from cluster.controllers import LeaseCandidateGarbageCollector
from tests import builders

START = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)


class _Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


class _Candidates:
    """The client calls the collector makes: list the candidates, delete one by resourceVersion."""

    def __init__(self, *candidates: objects_pb2.LeaseCandidate) -> None:
        self.items = {c.metadata.name: c for c in candidates}
        self.lists = 0

    async def list_all(self, kind, namespace: str = "") -> ObjectList:
        self.lists += 1
        return ObjectList(items=list(self.items.values()), resource_version="1")

    async def delete(self, kind, name: str, namespace: str = "", *, resource_version: str = ""):
        return self.items.pop(name)


def _candidate(name: str, *, renewed: datetime | None, created: datetime = START,
               version: str = "1") -> objects_pb2.LeaseCandidate:
    return builders.lease_candidate(name, renewed=renewed, created=created, resource_version=version)


def _collector(client: _Candidates, clock: _Clock, **kwargs) -> LeaseCandidateGarbageCollector:
    return LeaseCandidateGarbageCollector(client, now=clock, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("name", "renewed", "expired"), [
    ("renewed-29m-ago", START - timedelta(minutes=29), False),
    ("renewed-31m-ago", START - timedelta(minutes=31), True),
    # As upstream: a candidate that never said when it renewed is not kept on the strength of that.
    ("never-renewed", None, True),
])
def test_a_candidate_expires_thirty_minutes_after_its_renewal_or_at_once_without_one(name, renewed, expired):
    clock = _Clock()
    collector = _collector(_Candidates(), clock)
    assert collector.expired(_candidate(name, renewed=renewed)) is expired


async def test_a_future_renew_time_counts_from_when_it_was_first_seen():
    clock = _Clock()
    future = _candidate("skewed", renewed=START + timedelta(days=1))
    client = _Candidates(future)
    collector = _collector(client, clock)
    assert await collector.collect() == []
    clock.now = START + timedelta(minutes=29)
    assert await collector.collect() == []
    clock.now = START + timedelta(minutes=31)
    assert await collector.collect() == ["kube-system/skewed"]


async def test_a_renewal_of_a_future_dated_candidate_starts_its_time_again():
    clock = _Clock()
    client = _Candidates(_candidate("skewed", renewed=START + timedelta(days=1)))
    collector = _collector(client, clock)
    await collector.collect()
    clock.now = START + timedelta(minutes=20)
    client.items["skewed"] = _candidate("skewed", renewed=START + timedelta(days=1, minutes=20), version="2")
    await collector.collect()
    clock.now = START + timedelta(minutes=31)
    assert await collector.collect() == []
    clock.now = START + timedelta(minutes=51)
    assert await collector.collect() == ["kube-system/skewed"]


async def test_the_first_check_is_at_the_start_not_a_period_later():
    clock = _Clock()
    client = _Candidates(_candidate("gone", renewed=START - timedelta(hours=2)))
    collector = _collector(client, clock, check_period_s=3600)
    task = asyncio.create_task(collector.run())
    try:
        for _ in range(20):
            await asyncio.sleep(0)
        assert client.lists == 1
        assert client.items == {}
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
