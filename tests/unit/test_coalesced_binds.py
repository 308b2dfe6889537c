"""The plugins' client with coalesced binds: the binds filed together go out in one Batch call, those filed
while it is in flight in the next, and each caller hears its own answer or error."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from cluster.api import errors, objects_pb2
from cluster.client import Fence
from scheduler.coalescedbinds import CoalescingClient

FENCE = Fence("kube-system", "kube-scheduler", "me", 7)
NEXT_TERM = Fence("kube-system", "kube-scheduler", "me", 9)


class FakeBinds:
    """Stands in for the client's bind_many; ``gate`` holds calls until set; ``refuse`` answers a pod with
    an error; ``fail_with`` fails the whole call."""

    def __init__(self) -> None:
        self.fence: Fence | None = FENCE
        self.calls: list[tuple[list[str], Fence | None]] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.refuse: dict[str, errors.ApiError] = {}
        self.fail_with: Exception | None = None

    async def bind_many(
        self, bindings: Sequence[tuple[str, str, str]], *, fence: Fence | None = None
    ) -> list[objects_pb2.Pod | errors.ApiError]:
        self.calls.append(([name for _, name, _ in bindings], fence))
        await self.gate.wait()
        if self.fail_with is not None:
            raise self.fail_with
        return [self.refuse.get(name) or objects_pb2.Pod(
            metadata=objects_pb2.ObjectMeta(name=name, namespace=namespace),
            spec=objects_pb2.PodSpec(node_name=node)) for namespace, name, node in bindings]


@pytest.fixture
def api() -> FakeBinds:
    return FakeBinds()


@pytest.fixture
def binds(api: FakeBinds) -> CoalescingClient:
    return CoalescingClient(api)  # type: ignore[arg-type]


async def test_binds_filed_in_one_turn_go_out_in_one_call_each_answered_with_its_pod(
    api: FakeBinds, binds: CoalescingClient
) -> None:
    pods = await asyncio.gather(*(binds.bind("default", f"p-{i}", f"n{i}") for i in range(3)))
    assert api.calls == [(["p-0", "p-1", "p-2"], FENCE)]
    assert [(p.metadata.name, p.spec.node_name) for p in pods] == [
        ("p-0", "n0"), ("p-1", "n1"), ("p-2", "n2")]


async def test_binds_filed_while_the_call_is_in_flight_go_out_together_in_the_next(
    api: FakeBinds, binds: CoalescingClient
) -> None:
    api.gate.clear()
    first = asyncio.create_task(binds.bind("default", "p-0", "n1"))
    await asyncio.sleep(0.01)
    later = [asyncio.create_task(binds.bind("default", f"p-{i}", "n1")) for i in (1, 2, 3)]
    await asyncio.sleep(0.01)
    assert api.calls == [(["p-0"], FENCE)]
    api.gate.set()
    await asyncio.gather(first, *later)
    assert api.calls == [(["p-0"], FENCE), (["p-1", "p-2", "p-3"], FENCE)]
    assert binds.batches_sent == 2


async def test_with_two_in_flight_a_second_batch_goes_out_while_the_first_is_out_then_the_rest_wait(
    api: FakeBinds,
) -> None:
    binds = CoalescingClient(api, max_in_flight=2)  # type: ignore[arg-type]
    api.gate.clear()
    tasks = [asyncio.create_task(binds.bind("default", "p-0", "n1"))]
    await asyncio.sleep(0.01)
    tasks += [asyncio.create_task(binds.bind("default", f"p-{i}", "n1")) for i in (1, 2)]
    await asyncio.sleep(0.01)
    tasks += [asyncio.create_task(binds.bind("default", f"p-{i}", "n1")) for i in (3, 4)]
    await asyncio.sleep(0.01)
    assert api.calls == [(["p-0"], FENCE), (["p-1", "p-2"], FENCE)]
    api.gate.set()
    await asyncio.gather(*tasks)
    assert api.calls == [(["p-0"], FENCE), (["p-1", "p-2"], FENCE), (["p-3", "p-4"], FENCE)]


async def test_each_caller_hears_its_own_error_and_the_others_their_pods(
    api: FakeBinds, binds: CoalescingClient
) -> None:
    api.refuse["taken"] = errors.Conflict("pod taken is already assigned")
    api.refuse["fenced"] = errors.Fenced("the lease moved on")
    results = await asyncio.gather(
        binds.bind("default", "ok", "n1"), binds.bind("default", "taken", "n1"),
        binds.bind("default", "fenced", "n1"), return_exceptions=True)
    assert isinstance(results[0], objects_pb2.Pod) and results[0].metadata.name == "ok"
    assert results[1] is api.refuse["taken"]
    assert results[2] is api.refuse["fenced"]
    assert len(api.calls) == 1


async def test_a_failed_call_is_every_bindings_error(api: FakeBinds, binds: CoalescingClient) -> None:
    api.fail_with = errors.Unavailable("no answer from the API server")
    results = await asyncio.gather(binds.bind("default", "a", "n1"), binds.bind("default", "b", "n1"),
                                   return_exceptions=True)
    assert results == [api.fail_with, api.fail_with]


async def test_each_bind_keeps_the_fence_it_was_filed_under(api: FakeBinds, binds: CoalescingClient) -> None:
    """A bind of the last term still pending when the next begins goes out under its own, stale, fence."""
    api.gate.clear()
    first = asyncio.create_task(binds.bind("default", "p-0", "n1"))
    await asyncio.sleep(0.01)
    old = asyncio.create_task(binds.bind("default", "old-term", "n1"))
    await asyncio.sleep(0)
    api.fence = NEXT_TERM
    new = asyncio.create_task(binds.bind("default", "new-term", "n1"))
    await asyncio.sleep(0)
    api.gate.set()
    await asyncio.gather(first, old, new)
    assert api.calls == [(["p-0"], FENCE), (["old-term"], FENCE), (["new-term"], NEXT_TERM)]


async def test_a_caller_that_gave_up_is_not_sent(api: FakeBinds, binds: CoalescingClient) -> None:
    api.gate.clear()
    first = asyncio.create_task(binds.bind("default", "p-0", "n1"))
    await asyncio.sleep(0.01)
    abandoned = asyncio.create_task(binds.bind("default", "abandoned", "n1"))
    kept = asyncio.create_task(binds.bind("default", "kept", "n1"))
    await asyncio.sleep(0)
    abandoned.cancel()
    api.gate.set()
    await asyncio.gather(first, kept)
    assert api.calls == [(["p-0"], FENCE), (["kept"], FENCE)]


async def test_a_batch_never_exceeds_its_size(api: FakeBinds) -> None:
    binds = CoalescingClient(api, max_batch=2)  # type: ignore[arg-type]
    await asyncio.gather(*(binds.bind("default", f"p-{i}", "n1") for i in range(5)))
    assert [names for names, _ in api.calls] == [["p-0", "p-1"], ["p-2", "p-3"], ["p-4"]]


async def test_a_bind_filed_as_the_last_batch_returns_goes_out_in_a_call_of_its_own(
    api: FakeBinds, binds: CoalescingClient
) -> None:
    # The first caller resumes before the finished sender's task is done: a bind it files then must not
    # wait for that sender, which has nothing left to send.
    first = await binds.bind("default", "p-0", "n0")
    async with asyncio.timeout(5):  # filed from this task, as a binding cycle files it, not from a new one
        second = await binds.bind("default", "p-1", "n1")
    assert (first.metadata.name, second.metadata.name) == ("p-0", "p-1")
    assert api.calls == [(["p-0"], FENCE), (["p-1"], FENCE)]
