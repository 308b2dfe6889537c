"""The controllers' WorkQueue: each key waits once, keys come out in order, a key added while it is
processed comes back, and failed keys come back after a per-key exponential backoff."""

from __future__ import annotations

import asyncio

import pytest

from cluster.controllers.workqueue import WorkQueue


async def drain(queue: WorkQueue) -> list[str]:
    """Every key ready now, in order (without waiting for delayed ones)."""
    keys = []
    while True:
        try:
            async with asyncio.timeout(0.001):
                keys.append(await queue.get())
        except TimeoutError:
            return keys


async def test_a_key_added_many_times_waits_once_in_first_added_order() -> None:
    queue = WorkQueue()
    for key in ["a", "b", "a", "c", "b", "a"]:
        queue.add(key)
    assert len(queue) == 3
    assert await drain(queue) == ["a", "b", "c"]
    assert len(queue) == 0


async def test_a_key_added_while_processed_comes_back() -> None:
    queue = WorkQueue()
    queue.add("a")
    assert await queue.get() == "a"
    queue.add("a")  # a change arrived during the sync of "a"
    assert await drain(queue) == ["a"]


async def test_get_waits_for_an_add() -> None:
    queue = WorkQueue()
    getting = asyncio.create_task(queue.get())
    await asyncio.sleep(0.01)
    assert not getting.done()
    queue.add("late")
    assert await asyncio.wait_for(getting, 1.0) == "late"


@pytest.mark.parametrize(
    ("failures", "delay"),
    [(1, 0.005), (2, 0.01), (3, 0.02), (10, 2.56), (15, 60.0), (100, 60.0)],
    ids=["first", "second", "third", "tenth", "capped", "far-beyond-cap"],
)
def test_retry_delay_doubles_up_to_the_cap(failures: int, delay: float) -> None:
    assert WorkQueue().retry_delay_s(failures) == pytest.approx(delay)


@pytest.mark.parametrize(
    ("base", "maximum"),
    [(0.0, 1.0), (-1.0, 1.0), (2.0, 1.0)],
    ids=["zero-base", "negative", "base-above-max"],
)
def test_retry_delays_are_checked(base: float, maximum: float) -> None:
    with pytest.raises(ValueError, match=r"retry delays must satisfy 0 < base"):
        WorkQueue(base_retry_delay_s=base, max_retry_delay_s=maximum)


async def test_a_failed_key_comes_back_after_its_backoff_and_forget_resets_it() -> None:
    queue = WorkQueue(base_retry_delay_s=0.05, max_retry_delay_s=1.0)
    loop = asyncio.get_running_loop()
    assert queue.retry("a") == pytest.approx(0.05)
    assert len(queue) == 1
    assert await drain(queue) == []  # not yet due
    started = loop.time()
    assert await asyncio.wait_for(queue.get(), 1.0) == "a"
    assert loop.time() - started >= 0.04
    assert queue.retry("a") == pytest.approx(0.1)  # second failure in a row
    queue.forget("a")
    assert queue.retry("a") == pytest.approx(0.05)  # after a success the backoff starts over


async def test_an_add_makes_a_delayed_key_ready_at_once_and_only_once() -> None:
    queue = WorkQueue(base_retry_delay_s=0.05, max_retry_delay_s=1.0)
    queue.retry("a")
    queue.add("a")
    assert await drain(queue) == ["a"]
    await asyncio.sleep(0.08)  # the stale retry entry falls due and must not bring "a" back
    assert await drain(queue) == []
    assert len(queue) == 0


async def test_a_retry_of_a_ready_key_leaves_it_ready() -> None:
    queue = WorkQueue(base_retry_delay_s=10.0, max_retry_delay_s=10.0)
    queue.add("a")
    queue.retry("a")
    assert await drain(queue) == ["a"]


async def test_add_after_makes_a_key_ready_later_unless_it_is_ready_already() -> None:
    queue = WorkQueue()
    loop = asyncio.get_running_loop()
    start = loop.time()
    queue.add_after("late", 0.05)
    queue.add("now")
    queue.add_after("now", 10.0)  # ready already: no second entry
    assert await queue.get() == "now"
    assert await queue.get() == "late"
    assert loop.time() - start >= 0.05
    assert len(queue) == 0
