"""TaskOwner: tasks started from synchronous code live and die with ``run``."""

from __future__ import annotations

import asyncio
import contextlib
import warnings

import pytest

from scheduler.background import TaskOwner


async def test_starting_a_task_while_nothing_runs_them_is_refused_without_leaking_the_coroutine() -> None:
    owner = TaskOwner("binder")

    async def work() -> None:
        raise AssertionError("never runs")

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "coroutine was never awaited" would be a RuntimeWarning
        with pytest.raises(RuntimeError, match="the binder is not running"):
            owner.start(work(), name="w")
    assert not owner.running


async def test_tasks_run_while_run_runs_and_are_cancelled_with_it() -> None:
    owner = TaskOwner("preemptions")
    done: list[str] = []
    forever = asyncio.Event()

    async def quick() -> None:
        done.append("quick")

    async def endless() -> None:
        try:
            await forever.wait()
        except asyncio.CancelledError:
            done.append("cancelled")
            raise

    running = asyncio.create_task(owner.run())
    await asyncio.sleep(0)
    assert owner.running
    owner.start(quick(), name="quick")
    owner.start(endless(), name="endless")
    await asyncio.sleep(0.01)
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running
    assert done == ["quick", "cancelled"]
    assert not owner.running


async def test_a_failing_task_ends_run_with_its_error() -> None:
    owner = TaskOwner("binder")

    async def broken() -> None:
        raise ValueError("a bug")

    running = asyncio.create_task(owner.run())
    await asyncio.sleep(0)
    owner.start(broken(), name="broken")
    with pytest.raises(ExceptionGroup) as raised:
        await running
    assert raised.group_contains(ValueError, match="a bug")
