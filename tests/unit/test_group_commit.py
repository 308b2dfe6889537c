"""Group commit (store.groupcommit) where the store underneath fails or a writer gives up: an outage reaches
every writer of the batch and nothing is sent twice; a write given up before it was sent is not sent."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from store.base import Guard, StoreUnavailable, TxnOp, TxnResult
from store.groupcommit import GroupCommitStore
from store.sqlite import SqliteStore


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
