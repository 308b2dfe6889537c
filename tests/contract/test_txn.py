"""Multi-key transactions: all writes or none, at one revision, seen whole by list and watch."""

from __future__ import annotations

import pytest

from store.base import Guard, KeyValue, Store, TxnOp, TxnResult
from tests.contract.conftest import Backend
from tests.contract.watching import close, summary, take, take_until_sentinel


async def _three(store: Store) -> dict[str, KeyValue]:
    """/pods/a and /pods/b (to update and delete), and a fence key; /pods/c does not exist."""
    written = {}
    for key in ("/pods/a", "/pods/b", "/fence"):
        result = await store.create(key, key.encode())
        assert result.succeeded and result.current is not None
        written[key] = result.current
    return written


def _ops(before: dict[str, KeyValue]) -> list[TxnOp]:
    return [
        TxnOp.update("/pods/a", b"a2", before["/pods/a"].mod_revision),
        TxnOp.delete("/pods/b", before["/pods/b"].mod_revision),
        TxnOp.create("/pods/c", b"c1"),
    ]


async def test_a_transaction_writes_every_key_at_one_new_revision(store: Store) -> None:
    before = await _three(store)
    at = await store.current_revision()

    result = await store.txn(_ops(before), [Guard("/fence", before["/fence"].mod_revision)])

    new = at + 1
    assert result == TxnResult(True, new, (
        KeyValue("/pods/a", b"a2", before["/pods/a"].create_revision, new),
        before["/pods/b"],
        KeyValue("/pods/c", b"c1", new, new),
    ))
    assert await store.current_revision() == new
    assert await store.get("/pods/a") == result.current[0]
    assert await store.get("/pods/b") is None
    assert await store.get("/pods/c") == result.current[2]


@pytest.mark.parametrize("failing", ["last-op", "guard"])
async def test_a_failing_comparison_writes_nothing_and_is_named(store: Store, failing: str) -> None:
    before = await _three(store)
    ops = _ops(before)
    guards = [Guard("/fence", before["/fence"].mod_revision)]
    if failing == "last-op":
        await store.create("/pods/c", b"taken")  # the last op's create now fails
    else:
        await store.update("/fence", b"moved", None)
    at = await store.current_revision()
    taken = await store.get("/pods/c")

    result = await store.txn(ops, guards)

    assert not result.succeeded
    assert result.revision == at
    assert result.current == (before["/pods/a"], before["/pods/b"], taken)
    assert result.failed_ops == ((2,) if failing == "last-op" else ())
    assert result.failed_guards == (() if failing == "last-op" else tuple(guards))
    assert await store.current_revision() == at
    assert [await store.get(key) for key in ("/pods/a", "/pods/b")] == [before["/pods/a"], before["/pods/b"]]


async def test_a_stale_expected_revision_is_named(store: Store) -> None:
    before = await _three(store)
    await store.update("/pods/b", b"b2", None)

    result = await store.txn(_ops(before))

    assert not result.succeeded and result.failed_ops == (1,) and result.failed_guards == ()
    assert await store.get("/pods/a") == before["/pods/a"]


async def test_list_sees_all_of_a_transaction_or_none(store: Store) -> None:
    before = await _three(store)
    result = await store.txn(_ops(before))

    at_before = await store.list("/pods/", revision=result.revision - 1)
    at_txn = await store.list("/pods/", revision=result.revision)

    assert [(kv.key, kv.value) for kv in at_before.items] == [
        ("/pods/a", b"/pods/a"), ("/pods/b", b"/pods/b"),
    ]
    assert [(kv.key, kv.value, kv.mod_revision) for kv in at_txn.items] == [
        ("/pods/a", b"a2", result.revision), ("/pods/c", b"c1", result.revision),
    ]


async def test_a_watch_delivers_every_event_of_a_transaction_with_its_revision_in_key_order(
    store: Store,
) -> None:
    before = await _three(store)
    live = store.watch("/pods/")
    try:
        # Written in reverse key order: the events still come in key order.
        ops = [TxnOp.create(f"/pods/n{index}", b"n") for index in range(5, 0, -1)]
        result = await store.txn([*ops, *_ops(before)])
        got = await take(live, 8)
    finally:
        await close(live)
    replayed = store.watch("/pods/", from_revision=result.revision)
    try:
        again = await take_until_sentinel(store, replayed, "/pods/~sentinel")
    finally:
        await close(replayed)

    expected = [
        ("PUT", "/pods/a", result.revision), ("DELETE", "/pods/b", result.revision),
        ("PUT", "/pods/c", result.revision),
        *(("PUT", f"/pods/n{index}", result.revision) for index in range(1, 6)),
    ]
    assert summary(got) == expected
    assert summary(again) == expected
    assert got[0].prev_value == b"/pods/a" and got[1].value == b"/pods/b" and got[2].prev_value is None


async def test_a_watch_resumed_inside_a_revision_neither_loses_nor_repeats(backend: Backend) -> None:
    store = await backend.open()
    ops = [TxnOp.create(f"/pods/{index:04d}", b"v") for index in range(600)]
    result = await store.txn(ops)
    assert result.succeeded
    events = store.watch("/pods/", from_revision=result.revision)
    try:
        first = await take(events, 300)
    finally:
        await close(events)
    # A new watch from the same revision replays the whole revision, in key order, once.
    again = store.watch("/pods/", from_revision=result.revision)
    try:
        rest = await take_until_sentinel(store, again, "/pods/~sentinel")
    finally:
        await close(again)

    assert [event.key for event in first] == [op.key for op in ops[:300]]
    assert [event.key for event in rest] == [op.key for op in ops]
    assert {event.revision for event in rest} == {result.revision}


async def test_compaction_around_a_transaction_keeps_it_whole(isolated_store: Store) -> None:
    store = isolated_store
    before = await _three(store)
    result = await store.txn(_ops(before))
    later = await store.update("/pods/a", b"a3", None)

    await store.compact(result.revision)

    listed = await store.list("/pods/", revision=result.revision)
    assert [(kv.key, kv.value) for kv in listed.items] == [("/pods/a", b"a2"), ("/pods/c", b"c1")]
    events = store.watch("/pods/", from_revision=result.revision)
    try:
        got = await take_until_sentinel(store, events, "/pods/~sentinel")
    finally:
        await close(events)
    assert summary(got) == [
        ("PUT", "/pods/a", result.revision), ("DELETE", "/pods/b", result.revision),
        ("PUT", "/pods/c", result.revision), ("PUT", "/pods/a", later.revision),
    ]
    assert got[0].prev_value == b"/pods/a" and got[1].value == b"/pods/b"

    await store.compact(later.revision)
    assert [(kv.key, kv.value) for kv in (await store.list("/pods/")).items] == [
        ("/pods/a", b"a3"), ("/pods/c", b"c1"), ("/pods/~sentinel", b"sentinel"),
    ]


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        ([], "at least one write"),
        ([TxnOp.create("", b"v")], "must not be empty"),
        ([TxnOp.create("/k", b"v"), TxnOp.delete("/k", None)], "written twice"),
    ],
    ids=["no-ops", "empty-key", "key-twice"],
)
async def test_a_transaction_no_store_can_commit_is_refused(
    store: Store, ops: list[TxnOp], message: str
) -> None:
    at = await store.current_revision()
    with pytest.raises(ValueError, match=message):
        await store.txn(ops)
    assert await store.current_revision() == at
