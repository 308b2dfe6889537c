"""The engine's background tasks: the scheduler's work and the pod tracker run for exactly as long as the
simulation, a task that fails or ends stops it with a clear error, and the body's own errors come out
as they are."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from cluster.simulate import BackgroundTaskEnded, ScenarioError
from cluster.simulate.engine import _background


class Informer:
    def __init__(self) -> None:
        self.synced = asyncio.Event()
        self.cancelled = False

    async def wait_synced(self) -> None:
        await self.synced.wait()

    async def run(self) -> None:
        self.synced.set()
        try:
            await asyncio.Future()
        except asyncio.CancelledError:
            self.cancelled = True
            raise


async def forever() -> None:
    await asyncio.Future()


class FakeScheduler:
    """The part of Scheduler that ``_background`` uses: its background roots and its sync."""

    def __init__(self, queue_run: Any, closed: list[str]) -> None:
        self.informers = {"pods": Informer(), "nodes": Informer()}
        self.queue = SimpleNamespace(close=lambda: closed.append("queue"))
        self._queue_run = queue_run

    def background_roots(self) -> dict[str, Any]:
        roots = {f"informer {name}": informer.run() for name, informer in self.informers.items()}
        return roots | {"binder": forever(), "queue flushes": self._queue_run()}

    async def wait_synced(self) -> None:
        await asyncio.gather(*(informer.wait_synced() for informer in self.informers.values()))


def fake(queue_run: Any = forever) -> tuple[Any, Any, list[str]]:
    closed: list[str] = []
    scheduler = FakeScheduler(queue_run, closed)
    tracker = SimpleNamespace(informer=Informer())
    return scheduler, tracker, closed


async def test_body_runs_after_every_informer_synced_and_roots_stop_after_it() -> None:
    scheduler, tracker, closed = fake()
    async with _background(scheduler, tracker):
        assert all(inf.synced.is_set() for inf in [*scheduler.informers.values(), tracker.informer])
    assert all(inf.cancelled for inf in [*scheduler.informers.values(), tracker.informer])
    assert closed == ["queue"]


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
    scheduler, tracker, closed = fake(queue_run)
    with pytest.raises(BackgroundTaskEnded, match=message):
        async with _background(scheduler, tracker):
            await asyncio.sleep(10)
    assert closed == ["queue"]


async def test_the_body_error_comes_out_unwrapped() -> None:
    scheduler, tracker, _ = fake()
    with pytest.raises(ScenarioError, match="bad document"):
        async with _background(scheduler, tracker):
            raise ScenarioError(["bad document"])
