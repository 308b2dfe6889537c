"""The Compactor's rule and loop, on a real SqliteStore, driven by a fake clock (nothing sleeps)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from store.base import StoreUnavailable, TooOldRevision
from store.compactor import Compactor
from store.sqlite import SqliteStore


class FakeClock:
    """Monotonic time that moves only when a test says so; ``sleep`` waits for ``advance``."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []
        self._sleeping = asyncio.Event()

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        wake = asyncio.get_running_loop().create_future()
        entry = (self.now + seconds, wake)
        self._sleepers.append(entry)
        self._sleeping.set()
        try:
            await wake
        finally:
            if entry in self._sleepers:
                self._sleepers.remove(entry)

    async def advance(self, seconds: float) -> None:
        self.now += seconds
        due = [entry for entry in self._sleepers if entry[0] <= self.now]
        self._sleepers = [entry for entry in self._sleepers if entry[0] > self.now]
        if not self._sleepers:
            self._sleeping.clear()
        for _, wake in due:
            if not wake.done():
                wake.set_result(None)
        await asyncio.sleep(0)

    async def until_sleeping(self) -> None:
        """Until some task sleeps on this clock (e.g. the compactor finished its tick)."""
        async with asyncio.timeout(30):
            await self._sleeping.wait()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await SqliteStore.open(tmp_path)
    yield opened
    await opened.close()


async def _write(store: SqliteStore, count: int) -> None:
    base = await store.current_revision()
    await asyncio.gather(*(store.create(f"/k/{base + i}", b"v") for i in range(count)))


async def _tick(clock: FakeClock, interval: float) -> None:
    await clock.advance(interval)
    await clock.until_sleeping()


@pytest.mark.parametrize(
    ("writes_before_ticks", "compacted_after_ticks"),
    [
        ([50], [0]),
        ([50, 50], [0, 50]),
        ([50, 5], [0, 45]),
        ([50, 50, 0, 0], [0, 50, 90, 90]),
        ([5, 3], [0, 0]),
        ([50, 0, 50, 0], [0, 40, 50, 90]),
    ],
    ids=[
        "first-tick-only-observes",
        "previous-tick-revision",
        "min-retained-caps-the-target",
        "no-new-writes-no-compaction",
        "small-store-never-compacted",
        "quiet-then-busy",
    ],
)
async def test_each_tick_compacts_to_the_previous_ticks_revision_keeping_the_newest(
    store: SqliteStore, writes_before_ticks: list[int], compacted_after_ticks: list[int]
) -> None:
    clock = FakeClock()
    compactor = Compactor(store, interval_s=60.0, min_retained_revisions=10, clock=clock)
    running = asyncio.create_task(compactor.run())
    try:
        await clock.until_sleeping()
        compacted = []
        for writes in writes_before_ticks:
            await _write(store, writes)
            await _tick(clock, 60.0)
            compacted.append(await store.compacted_revision())
        assert compacted == compacted_after_ticks
        assert clock.sleeps == [60.0] * (len(writes_before_ticks) + 1)
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
    assert running.cancelled()


async def test_nothing_happens_between_ticks(store: SqliteStore) -> None:
    clock = FakeClock()
    compactor = Compactor(store, interval_s=60.0, min_retained_revisions=0, clock=clock)
    running = asyncio.create_task(compactor.run())
    try:
        await clock.until_sleeping()
        await _write(store, 20)
        await _tick(clock, 60.0)
        await _write(store, 20)
        await clock.advance(59.0)
        assert await store.compacted_revision() == 0
        await clock.advance(1.0)
        await clock.until_sleeping()
        assert await store.compacted_revision() == 20
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


class FlakyStore:
    """A SqliteStore that is unreachable while ``down`` is set, or whose compaction someone else
    always finishes first."""

    def __init__(self, store: SqliteStore) -> None:
        self._store = store
        self.down = False
        self.compacted_elsewhere = False

    async def current_revision(self) -> int:
        if self.down:
            raise StoreUnavailable("connection refused")
        return await self._store.current_revision()

    async def compacted_revision(self) -> int:
        return await self._store.compacted_revision()

    async def compact(self, revision: int) -> None:
        if self.compacted_elsewhere:
            await self._store.compact(revision)
        await self._store.compact(revision)


async def test_an_unreachable_store_is_logged_and_retried_at_the_next_tick(
    store: SqliteStore, caplog: pytest.LogCaptureFixture
) -> None:
    flaky = FlakyStore(store)
    clock = FakeClock()
    compactor = Compactor(flaky, interval_s=60.0, min_retained_revisions=10, clock=clock)  # type: ignore[arg-type]
    running = asyncio.create_task(compactor.run())
    try:
        await clock.until_sleeping()
        await _write(store, 50)
        await _tick(clock, 60.0)  # observes 50
        flaky.down = True
        with caplog.at_level(logging.WARNING, logger="store.compactor"):
            await _tick(clock, 60.0)
        assert "compaction failed" in caplog.text and "connection refused" in caplog.text
        assert not running.done()
        flaky.down = False
        await _write(store, 50)
        await _tick(clock, 60.0)
        assert await store.compacted_revision() == 50
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


async def test_a_compaction_someone_else_did_first_is_not_an_error(store: SqliteStore) -> None:
    flaky = FlakyStore(store)
    flaky.compacted_elsewhere = True
    compactor = Compactor(flaky, interval_s=60.0, min_retained_revisions=0, clock=FakeClock())  # type: ignore[arg-type]
    await _write(store, 30)
    assert await compactor.compact_once() is None
    await _write(store, 30)
    assert await compactor.compact_once() is None  # TooOldRevision from the second compact(30)
    assert await store.compacted_revision() == 30
    with pytest.raises(TooOldRevision):
        await store.compact(30)


async def test_a_bug_in_the_store_ends_the_loop(store: SqliteStore) -> None:
    class Broken(FlakyStore):
        async def current_revision(self) -> int:
            raise RuntimeError("bug")

    clock = FakeClock()
    compactor = Compactor(Broken(store), interval_s=60.0, clock=clock)  # type: ignore[arg-type]
    running = asyncio.create_task(compactor.run())
    await clock.until_sleeping()
    await clock.advance(60.0)
    with pytest.raises(RuntimeError, match="bug"):
        await asyncio.wait_for(running, timeout=30)


async def test_ticks_overrun_by_a_slow_compaction_are_skipped(store: SqliteStore) -> None:
    clock = FakeClock()

    class Slow(FlakyStore):
        async def current_revision(self) -> int:
            clock.now += 250.0  # this tick takes four intervals and more
            return await super().current_revision()

    compactor = Compactor(Slow(store), interval_s=60.0, clock=clock)  # type: ignore[arg-type]
    running = asyncio.create_task(compactor.run())
    try:
        await clock.until_sleeping()
        await _tick(clock, 60.0)
        # Not four back-to-back ticks: the next one is a whole interval after the slow one ended.
        assert clock.sleeps == [60.0, 60.0]
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"interval_s": 0.0}, "interval must be positive"),
        ({"interval_s": -5.0}, "interval must be positive"),
        ({"min_retained_revisions": -1}, "min_retained_revisions must be >= 0"),
    ],
    ids=["zero-interval", "negative-interval", "negative-retention"],
)
async def test_nonsense_settings_are_refused(store: SqliteStore, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Compactor(store, **kwargs)


async def test_defaults_are_kube_apiservers_and_kines(store: SqliteStore) -> None:
    compactor = Compactor(store)
    assert (compactor.interval_s, compactor.min_retained_revisions) == (300.0, 1000)
