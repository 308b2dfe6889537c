"""The controllers' WorkQueue: each key waits once, keys come out in order, a key added while it is
processed comes back, failed keys come back after a per-key exponential backoff, and `process` runs one
sync with that policy, logging each kind of failure as the controllers need."""

from __future__ import annotations

import asyncio
import logging

import pytest

from cluster.api import errors
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


async def _fails_with(error: BaseException | None) -> None:
    if error is not None:
        raise error


@pytest.mark.parametrize(
    ("error", "level", "logged"),
    [
        (errors.Conflict("the object has been modified"), logging.DEBUG,
         "ResourceQuota ns/q changed meanwhile"),
        (errors.Unavailable("no server"), logging.WARNING,
         "cannot sync ResourceQuota ns/q (Unavailable: no server)"),
        (RuntimeError("bug"), logging.ERROR, "syncing ResourceQuota ns/q failed"),
    ],
    ids=["conflict", "api-error", "unexpected"],
)
async def test_process_backs_off_a_failed_sync_and_logs_it_by_kind(
    error: BaseException, level: int, logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    queue = WorkQueue(base_retry_delay_s=10.0, max_retry_delay_s=10.0)
    log = logging.getLogger("test.workqueue")
    with caplog.at_level(logging.DEBUG, logger="test.workqueue"):
        await queue.process("ns/q", lambda _: _fails_with(error), "ResourceQuota ns/q", log)
    assert [(r.levelno, r.getMessage().split(";")[0]) for r in caplog.records] == [(level, logged)]
    assert len(queue) == 1 and await drain(queue) == []  # back, but only after its backoff
    assert queue.retry("ns/q") == pytest.approx(10.0)


async def test_process_resets_the_backoff_after_a_sync_that_succeeds() -> None:
    queue = WorkQueue(base_retry_delay_s=0.05, max_retry_delay_s=1.0)
    queue.retry("k")
    queue.retry("k")
    await queue.process("k", lambda _: _fails_with(None), "k", logging.getLogger("test.workqueue"))
    assert queue.retry("k") == pytest.approx(0.05)  # the first failure after a success
