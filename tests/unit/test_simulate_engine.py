"""The engine's background tasks: the scheduler's work, the disruption controller and the pod tracker
run for exactly as long as the simulation (and the body waits for all of them to sync), a task that
fails or ends stops it with a clear error, and the body's own errors come out as they are."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from cluster.simulate import BackgroundTaskEnded, ScenarioError
from cluster.simulate.engine import background


class Informer:
    """Also stands for the disruption controller: both run until cancelled and sync first."""

    def __init__(self, fail: str | None = None) -> None:
        self.synced = asyncio.Event()
        self.cancelled = False
        self.fail = fail

    async def wait_synced(self) -> None:
        await self.synced.wait()

    async def run(self) -> None:
        if self.fail is not None:
            await asyncio.sleep(0)
            raise RuntimeError(self.fail)
        self.synced.set()
        try:
            await asyncio.Future()
        except asyncio.CancelledError:
            self.cancelled = True
            raise


async def forever() -> None:
    await asyncio.Future()


class FakeScheduler:
    """The part of Scheduler that ``background`` uses: its background roots and its sync."""

    def __init__(self, queue_run: Any, closed: list[str]) -> None:
        self.informers = {"pods": Informer(), "nodes": Informer()}
        self.queue = SimpleNamespace(close=lambda: closed.append("queue"))
        self._queue_run = queue_run

    def background_roots(self) -> dict[str, Any]:
        roots = {f"informer {name}": informer.run() for name, informer in self.informers.items()}
        return roots | {"binder": forever(), "queue flushes": self._queue_run()}

    async def wait_synced(self) -> None:
        await asyncio.gather(*(informer.wait_synced() for informer in self.informers.values()))


def fake(queue_run: Any = forever, disruption_fails: str | None = None) -> tuple[Any, Any, Any, list[str]]:
    closed: list[str] = []
    scheduler = FakeScheduler(queue_run, closed)
    tracker = SimpleNamespace(informer=Informer())
    return scheduler, Informer(disruption_fails), tracker, closed


async def test_body_runs_after_every_informer_synced_and_roots_stop_after_it() -> None:
    scheduler, disruption, tracker, closed = fake()
    synced = [*scheduler.informers.values(), disruption, tracker.informer]
    async with background(scheduler.background_roots(), scheduler, disruption, tracker):
        assert all(inf.synced.is_set() for inf in synced)
    assert all(inf.cancelled for inf in synced)
    assert closed == ["queue"]


async def test_a_failing_disruption_controller_ends_the_simulation() -> None:
    scheduler, disruption, tracker, closed = fake(disruption_fails="watch broke")
    with pytest.raises(BackgroundTaskEnded, match="disruption controller failed: RuntimeError: watch broke"):
        async with background(scheduler.background_roots(), scheduler, disruption, tracker):
            await asyncio.sleep(10)
    assert closed == ["queue"]


class Named(Informer):
    """A controller besides the disruption controller (the resourceclaim controller): named, synced first."""

    name = "resourceclaim"


async def test_the_other_controllers_sync_before_the_body_and_a_failing_one_ends_the_simulation() -> None:
    scheduler, disruption, tracker, _ = fake()
    claims = Named()
    async with background(scheduler.background_roots(), scheduler, disruption, tracker, [claims]):
        assert claims.synced.is_set()
    assert claims.cancelled
    scheduler, disruption, tracker, _ = fake()
    failed = "resourceclaim controller failed: RuntimeError: list broke"
    with pytest.raises(BackgroundTaskEnded, match=failed):
        async with background(scheduler.background_roots(), scheduler, disruption, tracker,
                              [Named("list broke")]):
            await asyncio.sleep(10)


async def boom() -> None:
    await asyncio.sleep(0)
    raise RuntimeError("flush failed")


async def returns() -> None:
    await asyncio.sleep(0)


@pytest.mark.parametrize(
    ("queue_run", "message"),
    [(boom, "scheduler queue flushes failed: RuntimeError: flush failed"),
     (returns, "scheduler queue flushes ended unexpectedly")],
    ids=["fails", "returns"],
)
async def test_a_root_that_stops_ends_the_simulation(queue_run: Any, message: str) -> None:
    scheduler, disruption, tracker, closed = fake(queue_run)
    with pytest.raises(BackgroundTaskEnded, match=message):
        async with background(scheduler.background_roots(), scheduler, disruption, tracker):
            await asyncio.sleep(10)
    assert closed == ["queue"]


async def test_the_body_error_comes_out_unwrapped() -> None:
    scheduler, disruption, tracker, _ = fake()
    with pytest.raises(ScenarioError, match="bad document"):
        async with background(scheduler.background_roots(), scheduler, disruption, tracker):
            raise ScenarioError(["bad document"])
