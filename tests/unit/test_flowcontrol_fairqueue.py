"""PriorityLevel: seats, per-flow queues served in turn, and refusals (queue full, waited too long),
with callers that give up while waiting or just as their seat arrives."""

from __future__ import annotations

import asyncio

import pytest

from cluster.api import errors
from cluster.apiserver.flowcontrol.fairqueue import PriorityLevel


def level(seats: int = 1, *, queue_length_limit: int = 10, queue_wait_s: float = 60.0) -> PriorityLevel:
    return PriorityLevel(
        "global-default", seats, queue_length_limit=queue_length_limit, queue_wait_s=queue_wait_s
    )


async def settle() -> None:
    """Let every ready task run until it waits again."""
    for _ in range(5):
        await asyncio.sleep(0)


async def test_requests_run_at_once_while_seats_are_free_then_wait_for_a_release() -> None:
    priority = level(seats=2)
    await priority.acquire("alice")
    await priority.acquire("alice")
    third = asyncio.create_task(priority.acquire("alice"))
    await settle()
    assert not third.done() and priority.executing == 2 and priority.waiting == 1

    priority.release()
    await settle()
    assert third.done() and third.exception() is None
    assert priority.executing == 2 and priority.waiting == 0


async def test_freed_seats_go_to_the_flows_in_turn_not_in_arrival_order() -> None:
    priority = level(seats=1)
    await priority.acquire("flooder")
    order: list[str] = []

    async def request(flow: str, tag: str) -> None:
        await priority.acquire(flow)
        order.append(tag)

    tasks = [asyncio.create_task(request("flooder", f"flooder-{i}")) for i in range(4)]
    await settle()
    tasks.append(asyncio.create_task(request("alice", "alice-0")))
    tasks.append(asyncio.create_task(request("bob", "bob-0")))
    await settle()
    for _ in tasks:
        priority.release()
        await settle()
    assert order == ["flooder-0", "alice-0", "bob-0", "flooder-1", "flooder-2", "flooder-3"]


async def test_a_flow_with_a_full_queue_is_refused_at_once_naming_the_level_user_and_limit() -> None:
    priority = level(seats=1, queue_length_limit=2)
    await priority.acquire("flooder")
    waiting = [asyncio.create_task(priority.acquire("flooder")) for _ in range(2)]
    await settle()

    with pytest.raises(errors.TooManyRequests) as refused:
        await priority.acquire("flooder")
    assert refused.value.message == (
        "Too many requests, please try again later: priority level 'global-default' is at its concurrency "
        "limit of 1 and user 'flooder' already has 2 requests queued (the queue length limit)"
    )
    assert refused.value.code.name == "RESOURCE_EXHAUSTED" and refused.value.reason == "TooManyRequests"
    # Another user's queue is their own.
    other = asyncio.create_task(priority.acquire("alice"))
    await settle()
    assert priority.waiting == 3
    for task in (*waiting, other):
        task.cancel()
    await settle()


async def test_queue_length_limit_zero_refuses_instead_of_queuing() -> None:
    priority = level(seats=1, queue_length_limit=0)
    await priority.acquire("alice")
    with pytest.raises(errors.TooManyRequests, match="already has 0 requests queued"):
        await priority.acquire("bob")


async def test_a_request_that_waits_too_long_is_refused_and_leaves_its_queue() -> None:
    priority = level(seats=1, queue_wait_s=0.05)
    await priority.acquire("alice")
    with pytest.raises(errors.TooManyRequests) as refused:
        await priority.acquire("bob")
    assert refused.value.message == (
        "Too many requests, please try again later: user 'bob' waited 0.05s in the queue of priority level "
        "'global-default' (concurrency limit 1)"
    )
    assert priority.waiting == 0
    priority.release()
    assert priority.executing == 0


async def test_a_caller_that_gives_up_while_waiting_leaves_and_the_seat_goes_to_the_next() -> None:
    priority = level(seats=1)
    await priority.acquire("alice")
    quitter = asyncio.create_task(priority.acquire("bob"))
    stayer = asyncio.create_task(priority.acquire("carol"))
    await settle()
    quitter.cancel()
    await settle()
    assert quitter.cancelled() and priority.waiting == 1

    priority.release()
    await settle()
    assert stayer.done() and priority.executing == 1


async def test_a_seat_that_arrives_as_its_caller_gives_up_is_handed_on_not_lost() -> None:
    priority = level(seats=1)
    await priority.acquire("alice")
    quitter = asyncio.create_task(priority.acquire("bob"))
    stayer = asyncio.create_task(priority.acquire("carol"))
    await settle()
    priority.release()  # the seat goes to bob's waiter...
    quitter.cancel()  # ...whose task is cancelled before it runs again
    await settle()
    assert quitter.cancelled()
    assert stayer.done() and stayer.exception() is None
    assert priority.executing == 1 and priority.waiting == 0


def test_a_level_needs_a_seat() -> None:
    with pytest.raises(ValueError, match="priority level 'x' needs at least one seat, got 0"):
        PriorityLevel("x", 0, queue_length_limit=1, queue_wait_s=1.0)


def test_a_client_maps_the_refusal_back_by_its_reason_only() -> None:
    code = errors.TooManyRequests.code
    refused = errors.from_status(code, "Too many requests", "TooManyRequests")
    assert isinstance(refused, errors.TooManyRequests)
    # gRPC's own RESOURCE_EXHAUSTED (a message over the size limit) is not flow control's.
    assert type(errors.from_status(code, "Received message larger than max")) is errors.InternalError


async def test_a_wide_request_takes_its_width_in_seats_and_waits_until_that_many_are_free() -> None:
    priority = level(seats=4)
    await priority.acquire("alice")
    await priority.acquire("alice", 3)
    assert (priority.executing, priority.seats_in_use) == (2, 4)
    wide = asyncio.create_task(priority.acquire("bob", 2))
    await settle()
    priority.release()  # one seat free: not enough
    await settle()
    assert not wide.done() and priority.seats_in_use == 3

    priority.release(3)
    await settle()
    assert wide.done() and wide.exception() is None
    assert (priority.executing, priority.seats_in_use, priority.waiting) == (1, 2, 0)


async def test_a_waiting_wide_request_is_not_passed_by_narrower_ones_that_arrive_after_it() -> None:
    priority = level(seats=2)
    await priority.acquire("alice", 2)
    order: list[str] = []

    async def request(flow: str, width: int) -> None:
        await priority.acquire(flow, width)
        order.append(f"{flow}-{width}")

    wide = asyncio.create_task(request("bob", 2))
    await settle()
    narrow = asyncio.create_task(request("carol", 1))
    await settle()
    priority.release(1)  # one seat free: carol would fit, but bob waits first
    await settle()
    assert order == []
    priority.release(1)
    await settle()
    assert order == ["bob-2"]
    priority.release(2)
    await settle()
    assert order == ["bob-2", "carol-1"]
    await asyncio.gather(wide, narrow)


async def test_a_wide_waiter_that_gives_up_lets_the_narrower_ones_behind_it_run() -> None:
    priority = level(seats=2)
    await priority.acquire("alice")
    wide = asyncio.create_task(priority.acquire("bob", 2))
    await settle()
    narrow = asyncio.create_task(priority.acquire("carol"))
    await settle()
    assert not narrow.done()
    wide.cancel()
    await settle()
    assert narrow.done() and narrow.exception() is None
    assert (priority.executing, priority.seats_in_use, priority.waiting) == (2, 2, 0)


def test_a_request_is_never_wider_than_its_level() -> None:
    assert [level(seats=4).width_of(width) for width in (0, 1, 3, 4, 100)] == [1, 1, 3, 4, 4]
