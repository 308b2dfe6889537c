"""Group commit (store.groupcommit) on every backend: concurrent writes share store transactions, and every
writer gets the answer it would have had alone."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from store.base import EventType, Guard, KeyValue, Store, TxnOp, TxnResult, WriteResult
from store.groupcommit import GroupCommitStore
from store.observed import ObservedStore, WriteOutcome
from tests.contract.watching import close, take


class Requests:
    """Records the write requests that reach the store under the group commit."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, int]] = []

    def write_started(self) -> None:
        pass

    def write_ended(self, operation: str, keys: Sequence[str], result: WriteOutcome) -> None:
        self.sent.append((operation, len(keys)))


def grouped(store: Store, **limits: int) -> tuple[GroupCommitStore, Requests]:
    requests = Requests()
    return GroupCommitStore(ObservedStore(store, requests), **limits), requests


async def _created(store: Store, count: int) -> list[KeyValue]:
    written = []
    for index in range(count):
        result = await store.create(f"/pods/p{index:02d}", b"v1")
        assert result.current is not None
        written.append(result.current)
    return written


async def test_concurrent_creates_share_one_transaction_with_single_creates_answers(store: Store) -> None:
    grouping, requests = grouped(store)
    keys = [f"/pods/p{index:02d}" for index in range(20)]

    results = await asyncio.gather(*(grouping.create(key, key.encode()) for key in keys))

    assert requests.sent == [("txn", 20)]
    revision = results[0].revision
    assert revision == await store.current_revision()
    for key, result in zip(keys, results, strict=True):
        assert result == WriteResult(True, revision, KeyValue(key, key.encode(), revision, revision))
        assert await store.get(key) == result.current


async def test_concurrent_compare_and_swap_updates_and_deletes_share_one_transaction(store: Store) -> None:
    before = await _created(store, 6)
    grouping, requests = grouped(store)

    results = await asyncio.gather(
        *(grouping.update(kv.key, b"bound", kv.mod_revision) for kv in before[:3]),
        grouping.update(before[3].key, b"unconditional", None),
        *(grouping.delete(kv.key, kv.mod_revision) for kv in before[4:]),
    )

    assert requests.sent == [("txn", 6)]
    revision = results[0].revision
    for kv, result in zip(before[:3], results[:3], strict=True):
        assert result == WriteResult(True, revision, KeyValue(kv.key, b"bound", kv.create_revision, revision))
    assert results[3] == WriteResult(
        True, revision, KeyValue(before[3].key, b"unconditional", before[3].create_revision, revision)
    )
    assert results[4:] == [WriteResult(True, revision, kv) for kv in before[4:]]
    assert [await store.get(kv.key) for kv in before[4:]] == [None, None]


async def test_a_lone_write_goes_at_once_as_a_single_write(store: Store) -> None:
    grouping, requests = grouped(store)

    first = await grouping.create("/pods/a", b"a")
    second = await grouping.update("/pods/a", b"b", first.revision)

    assert requests.sent == [("create", 1), ("update", 1)]
    assert second.succeeded and second.revision > first.revision


async def test_a_conflicting_write_gets_its_own_answer_and_the_others_succeed(store: Store) -> None:
    before = await _created(store, 4)
    moved = await store.update(before[0].key, b"moved", None)  # before[0]'s revision is stale now
    grouping, requests = grouped(store)

    stale, taken, *fine = await asyncio.gather(
        grouping.update(before[0].key, b"late", before[0].mod_revision),
        grouping.create(before[1].key, b"again"),
        *(grouping.update(kv.key, b"bound", kv.mod_revision) for kv in before[2:]),
        grouping.create("/pods/new", b"new"),
    )

    # What a single write answers: not written, the key as it is, no guard to blame.
    assert not stale.succeeded and stale.current == moved.current and stale.failed_guards == ()
    assert not taken.succeeded and taken.current == before[1] and taken.failed_guards == ()
    assert all(result.succeeded for result in fine)
    assert len({result.revision for result in fine}) == 1, "the writes that held still went together"
    assert await store.get(before[0].key) == moved.current
    assert await store.get("/pods/new") == fine[-1].current
    assert requests.sent[0] == ("txn", 5) and ("txn", 3) in requests.sent


async def test_a_write_under_a_failed_guard_is_refused_alone(store: Store) -> None:
    fence = await store.create("/leases/fence", b"holder-1")
    assert fence.current is not None
    renewed = await store.update("/leases/fence", b"holder-2", None)  # the guard below is stale
    before = await _created(store, 3)
    grouping, _ = grouped(store)
    stale_guard = Guard("/leases/fence", fence.current.mod_revision)
    fresh_guard = Guard("/leases/fence", renewed.revision)

    fenced, *fine = await asyncio.gather(
        grouping.update(before[0].key, b"fenced", before[0].mod_revision, [stale_guard]),
        *(grouping.update(kv.key, b"bound", kv.mod_revision, [fresh_guard]) for kv in before[1:]),
    )

    assert fenced == WriteResult(False, fenced.revision, before[0], (stale_guard,))
    assert await store.get(before[0].key) == before[0]
    assert all(result.succeeded for result in fine)


async def test_two_writes_of_one_key_go_in_turn_as_single_writes_would(store: Store) -> None:
    (kv,) = await _created(store, 1)
    grouping, requests = grouped(store)

    first, second = await asyncio.gather(
        grouping.update(kv.key, b"first", kv.mod_revision),
        grouping.update(kv.key, b"second", kv.mod_revision),
    )

    assert first.succeeded and first.current is not None
    assert not second.succeeded and second.current == first.current
    assert requests.sent == [("update", 1), ("update", 1)]


async def test_batches_stay_within_the_transaction_bound(store: Store) -> None:
    grouping, requests = grouped(store, max_batch_ops=4)

    results = await asyncio.gather(*(grouping.create(f"/pods/p{index:02d}", b"v") for index in range(10)))

    assert all(result.succeeded for result in results)
    assert [size for _, size in requests.sent] == [4, 4, 2]


async def test_watchers_see_a_batch_at_one_revision_in_key_order(store: Store) -> None:
    grouping, _ = grouped(store)
    events = store.watch("/pods/")
    try:
        results = await asyncio.gather(*(grouping.create(f"/pods/{name}", b"v") for name in "cab"))

        seen = await take(events, 3)
    finally:
        await close(events)
    assert [(event.type, event.key, event.revision) for event in seen] == [
        (EventType.PUT, f"/pods/{name}", results[0].revision) for name in "abc"
    ]


async def test_a_write_held_back_for_the_next_batch_is_not_overtaken_on_its_key(store: Store) -> None:
    fence = await store.create("/leases/fence", b"holder")
    (kv,) = await _created(store, 1)
    assert fence.current is not None
    grouping, requests = grouped(store)

    renewal, held, later = await asyncio.gather(
        grouping.update("/leases/fence", b"renewed", fence.revision),
        # Guarded on the key the renewal writes: it waits for the next batch...
        grouping.update(kv.key, b"held", kv.mod_revision, [Guard("/leases/fence", fence.revision)]),
        # ...and so does this write of the same key, which would otherwise go first.
        grouping.update(kv.key, b"later", None),
    )

    assert renewal.succeeded
    assert not held.succeeded and held.failed_guards == (Guard("/leases/fence", fence.revision),)
    assert later.succeeded and (await store.get(kv.key)) == later.current
    assert requests.sent == [("update", 1), ("update", 1), ("update", 1)]


class RevisionQuestions:
    """The store with its own answers to ``current_revision`` counted, and the answers to its writes held
    back while ``gate`` is clear (a write in flight: done in the store, its answer on the way)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.asked = 0
        self.gate = asyncio.Event()
        self.gate.set()
        #: Set when a write is done in the store (its answer maybe still held back).
        self.written = asyncio.Event()

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)

    async def current_revision(self) -> int:
        self.asked += 1
        return await self._store.current_revision()

    async def create(self, key: str, value: bytes, guards: Sequence[Guard] = ()) -> WriteResult:
        result = await self._store.create(key, value, guards)
        self.written.set()
        await self.gate.wait()
        return result

    async def txn(self, ops: Sequence[TxnOp], guards: Sequence[Guard] = ()) -> TxnResult:
        result = await self._store.txn(ops, guards)
        self.written.set()
        await self.gate.wait()
        return result


async def _in_flight(
    grouping: GroupCommitStore, questions: RevisionQuestions, key: str
) -> asyncio.Future[WriteResult]:
    """A create done in the store, its answer held back until ``questions.gate`` is set."""
    questions.gate.clear()
    questions.written.clear()
    write = asyncio.ensure_future(grouping.create(key, b"v"))
    await asyncio.wait_for(questions.written.wait(), 5)
    return write


async def test_the_revision_asked_while_a_write_is_in_flight_comes_with_the_next_write(store: Store) -> None:
    questions = RevisionQuestions(store)
    grouping = GroupCommitStore(questions)  # type: ignore[arg-type]
    first = await _in_flight(grouping, questions, "/pods/first")
    asked = asyncio.ensure_future(grouping.current_revision())
    second = asyncio.ensure_future(grouping.create("/pods/second", b"v"))
    questions.gate.set()
    revision = await asked
    # The second write went after the question: its revision answers it, and the store was not asked.
    assert revision == (await second).revision > (await first).revision
    assert questions.asked == 0


async def test_the_revision_is_never_older_than_a_write_acknowledged_before_asking(store: Store) -> None:
    questions = RevisionQuestions(store)
    grouping = GroupCommitStore(questions)  # type: ignore[arg-type]
    first = await _in_flight(grouping, questions, "/pods/first")
    # Another server's write lands while our write's answer is on its way: the question comes after it,
    # so its answer must cover it (the answer on its way does not).
    elsewhere = await store.create("/pods/elsewhere", b"v")
    asked = asyncio.ensure_future(grouping.current_revision())
    questions.gate.set()
    assert (await first).succeeded
    # No write followed the question: the store answered it, with a revision that covers both writes.
    assert await asked == await store.current_revision() >= elsewhere.revision
    assert questions.asked == 1
    # With nothing in flight, the store answers at once.
    assert await grouping.current_revision() == await store.current_revision()
    assert questions.asked == 2
