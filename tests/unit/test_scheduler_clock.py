"""FakeClock: sleepers wake in order exactly when virtual time reaches them."""

import asyncio

import pytest

from scheduler.clock import FakeClock


async def test_sleepers_wake_in_time_order_only_when_time_reaches_them() -> None:
    clock = FakeClock()
    woke: list[str] = []

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append(name)

    tasks = [asyncio.create_task(sleeper("late", 5)), asyncio.create_task(sleeper("early", 1))]
    await asyncio.sleep(0)
    assert clock.next_wakeup() == 1
    clock.advance(0.5)
    await asyncio.sleep(0)
    assert woke == []
    clock.advance_to(1)
    await asyncio.sleep(0)
    assert woke == ["early"]
    assert clock.next_wakeup() == 5
    clock.advance(10)
    await asyncio.gather(*tasks)
    assert woke == ["early", "late"]
    assert clock.now() == 11


async def test_cancelled_sleepers_are_forgotten_and_time_never_goes_back() -> None:
    clock = FakeClock(start=100)
    task = asyncio.create_task(clock.sleep(3))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert clock.next_wakeup() is None
    with pytest.raises(ValueError, match="backwards"):
        clock.advance_to(99)
