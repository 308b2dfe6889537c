"""Group commit (store.groupcommit) where the store underneath fails or a writer gives up: an outage reaches
every writer of the batch and nothing is sent twice; a write given up before it was sent is not sent. And
the current revision it answers from the writes: never older than what the question must cover."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from store.base import Guard, Store, StoreUnavailable, TxnOp, TxnResult, WriteResult
from store.delegating import DelegatingStore
from store.groupcommit import GroupCommitStore
from store.memory import MemoryStore
from store.sqlite import SqliteStore

T = TypeVar("T")


class Outage(SqliteStore):
    """A SQLite store whose transactions fail as an unreachable etcd's may, after the fact unknown."""

    txns = 0

    async def txn(self, ops: Sequence[TxnOp], guards: Sequence[Guard] = ()) -> TxnResult:
        self.txns += 1
        raise StoreUnavailable("etcd is unavailable: UNAVAILABLE: connection reset")


async def test_an_outage_reaches_every_writer_of_the_batch_and_nothing_is_sent_again(tmp_path: Path) -> None:
    store = await Outage.open(tmp_path)
    try:
        grouping = GroupCommitStore(store)
        results = await asyncio.gather(
            *(grouping.create(f"/pods/p{index}", b"v") for index in range(5)), return_exceptions=True
        )
        assert store.txns == 1
        assert all(isinstance(result, StoreUnavailable) for result in results), results
        assert (await store.list("/pods/")).items == []  # none of them went alone afterwards
    finally:
        await store.close()


async def test_a_write_given_up_before_it_was_sent_is_not_sent(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path)
    try:
        grouping = GroupCommitStore(store)
        first = asyncio.ensure_future(grouping.create("/pods/first", b"v"))
        abandoned = asyncio.ensure_future(grouping.create("/pods/abandoned", b"v"))
        await asyncio.sleep(0)  # both are queued; the commit has not started
        abandoned.cancel()
        assert (await first).succeeded
        with pytest.raises(asyncio.CancelledError):
            await abandoned
        assert await store.get("/pods/abandoned") is None
    finally:
        await store.close()


class SlowAnswers(DelegatingStore):
    """A memory store whose answers to writes take a few turns of the event loop to arrive, as a remote
    store's do: other writes may land in the store meanwhile."""

    def __init__(self, store: Store, turns: int) -> None:
        super().__init__(store)
        self._turns = turns

    async def _later(self, result: T) -> T:
        for _ in range(self._turns):
            await asyncio.sleep(0)
        return result

    async def update(
        self, key: str, value: bytes, expected_revision: int | None, guards: Sequence[Guard] = ()
    ) -> WriteResult:
        return await self._later(await self._store.update(key, value, expected_revision, guards))

    async def txn(self, ops: Sequence[TxnOp], guards: Sequence[Guard] = ()) -> TxnResult:
        return await self._later(await self._store.txn(ops, guards))


# Steps of a schedule: our write of a key, another server's write, a question for the revision, a pause of
# some turns of the event loop.
_STEP = st.one_of(
    st.tuples(st.just("write"), st.integers(0, 3)),
    st.tuples(st.just("elsewhere"), st.integers(0, 3)),
    st.tuples(st.just("ask"), st.just(0)),
    st.tuples(st.just("pause"), st.integers(1, 4)),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_STEP, min_size=1, max_size=24), st.integers(0, 4))
# Our write done in the store, another server's landing while its answer is on the way, then the question.
@example([("write", 0), ("pause", 1), ("elsewhere", 1), ("pause", 2), ("ask", 0)], 3)
def test_every_revision_answer_covers_the_writes_acknowledged_before_it_was_asked(
    steps: list[tuple[str, int]], turns: int
) -> None:
    """Whatever the interleaving of writes and questions, the group commit's answer is a revision the
    store had reached after the question: at least every write acknowledged before it (ours or another
    server's), at most the store's revision when it is answered, as the store's own answer is."""

    async def run() -> None:
        store = MemoryStore()
        for index in range(4):
            await store.create(f"/pods/p{index}", b"v")
        grouping = GroupCommitStore(SlowAnswers(store, turns))
        acknowledged = 0
        checks: list[asyncio.Task[None]] = []

        async def write(key: str, through: Store) -> None:
            nonlocal acknowledged
            result = await through.update(key, b"v", None)
            assert result.succeeded
            acknowledged = max(acknowledged, result.revision)

        async def ask() -> None:
            floor = acknowledged
            answer = await grouping.current_revision()
            assert floor <= answer <= await store.current_revision()

        for kind, value in steps:
            if kind == "write":
                checks.append(asyncio.ensure_future(write(f"/pods/p{value}", grouping)))
            elif kind == "elsewhere":
                checks.append(asyncio.ensure_future(write(f"/pods/p{value}", store)))
            elif kind == "ask":
                checks.append(asyncio.ensure_future(ask()))
            else:
                for _ in range(value):
                    await asyncio.sleep(0)
        await asyncio.gather(*checks)
        await store.close()

    asyncio.run(run())
