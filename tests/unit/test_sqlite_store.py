"""SqliteStore: what the contract suite does not pin down or cannot reach from outside."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from store.base import FutureRevision, Guard, KeyValue, Store, WriteResult
from store.sqlite import SqliteStore
from store.sqlite.dialect import DuplicateSuccessor, Row
from store.sqlite.store import _create, _delete, _update


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await SqliteStore.open(tmp_path / "data")
    yield opened
    await opened.close()


async def test_it_is_a_store(store: SqliteStore) -> None:
    assert isinstance(store, Store)
    assert (Path(store.data_dir) / "podsched.db").is_file()


async def test_prefixes_match_literally_not_as_like_patterns(store: SqliteStore) -> None:
    for key in ["/a_b/1", "/axb/1", "/a%b/1", "/a%bc/1", "/a\\b/1", "/a_b"]:
        assert (await store.create(key, b"x")).succeeded
    assert [kv.key for kv in (await store.list("/a_b/")).items] == ["/a_b/1"]
    assert [kv.key for kv in (await store.list("/a%b/")).items] == ["/a%b/1"]
    assert [kv.key for kv in (await store.list("/a\\")).items] == ["/a\\b/1"]


async def test_pages_are_read_at_the_first_pages_revision(store: SqliteStore) -> None:
    for i in range(10):
        await store.create(f"/p/{i}", b"v0")
    first = await store.list("/p/", limit=4)
    assert [kv.key for kv in first.items] == ["/p/0", "/p/1", "/p/2", "/p/3"]
    assert first.continue_key == "/p/4"
    # Writes between pages: an update, a delete and a create that would all show at the newest revision.
    await store.update("/p/5", b"v1", None)
    await store.delete("/p/6", None)
    await store.create("/p/45", b"new")
    second = await store.list("/p/", limit=4, continue_key=first.continue_key, revision=first.revision)
    assert [(kv.key, kv.value) for kv in second.items] == [
        ("/p/4", b"v0"), ("/p/5", b"v0"), ("/p/6", b"v0"), ("/p/7", b"v0"),
    ]
    third = await store.list("/p/", limit=4, continue_key=second.continue_key, revision=first.revision)
    assert [kv.key for kv in third.items] == ["/p/8", "/p/9"]
    assert third.continue_key is None
    assert third.revision == second.revision == first.revision
    now = await store.list("/p/")
    assert [kv.key for kv in now.items] == [f"/p/{i}" for i in (0, 1, 2, 3, 4, 45, 5, 7, 8, 9)]
    assert now.revision == await store.current_revision()


async def test_a_page_ends_exactly_at_the_last_key(store: SqliteStore) -> None:
    for i in range(4):
        await store.create(f"/q/{i}", b"v")
    page = await store.list("/q/", limit=4)
    assert len(page.items) == 4
    assert page.continue_key is None


async def test_a_key_lives_again_after_deletion_with_a_new_create_revision(store: SqliteStore) -> None:
    first = await store.create("/k", b"1")
    deleted = await store.delete("/k", first.revision)
    assert deleted.succeeded and deleted.current == KeyValue("/k", b"1", first.revision, first.revision)
    again = await store.create("/k", b"2")
    assert again.succeeded
    assert again.current == KeyValue("/k", b"2", again.revision, again.revision)
    assert await store.get("/k") == again.current
    listed_before = await store.list("/k", revision=deleted.revision)
    assert listed_before.items == []


async def test_concurrent_read_modify_write_loses_no_update(store: SqliteStore) -> None:
    await store.create("/counter", b"0")

    async def increment() -> None:
        while True:
            kv = await store.get("/counter")
            assert kv is not None
            result = await store.update("/counter", b"%d" % (int(kv.value) + 1), kv.mod_revision)
            if result.succeeded:
                return

    await asyncio.gather(*(increment() for _ in range(50)))
    final = await store.get("/counter")
    assert final is not None and final.value == b"50"


async def test_concurrent_writers_get_distinct_consecutive_revisions(store: SqliteStore) -> None:
    results = await asyncio.gather(*(store.create(f"/w/{i}", b"v") for i in range(500)))
    assert all(result.succeeded for result in results)
    assert sorted(result.revision for result in results) == list(range(1, 501))


async def test_guards_are_checked_in_the_writes_transaction(store: SqliteStore) -> None:
    lease = await store.create("/lease", b"holder-a")
    pod = await store.create("/pod", b"unbound")
    # The fence moves on concurrently with a write that names the old fence: exactly one order holds.
    fenced, moved = await asyncio.gather(
        store.update("/pod", b"bound", pod.revision, [Guard("/lease", lease.revision)]),
        store.update("/lease", b"holder-b", lease.revision),
    )
    assert moved.succeeded
    if fenced.succeeded:
        assert fenced.revision < moved.revision
    else:
        assert fenced.failed_guards == (Guard("/lease", lease.revision),)
        assert fenced.current == pod.current


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.create("", b"x"), "key must not be empty"),
        (lambda s: s.update("", b"x", None), "key must not be empty"),
        (lambda s: s.delete("", None), "key must not be empty"),
        (lambda s: s.list("/", limit=-1), "limit must be >= 0"),
        (lambda s: s.list("/", revision=-1), "revision must be >= 0"),
        (lambda s: s.compact(0), "compact revision must be positive"),
    ],
    ids=["create-empty-key", "update-empty-key", "delete-empty-key", "negative-limit",
         "negative-revision", "compact-zero"],
)
async def test_bad_arguments_are_refused_with_a_clear_error(
    store: SqliteStore, call: Callable[[SqliteStore], Awaitable[object]], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        await call(store)
    assert await store.current_revision() == 0


async def test_a_negative_watch_revision_is_refused(store: SqliteStore) -> None:
    with pytest.raises(ValueError, match="from_revision must be >= 0"):
        store.watch("/", -1)


async def test_listing_a_future_revision_is_refused(store: SqliteStore) -> None:
    await store.create("/k", b"v")
    with pytest.raises(FutureRevision) as caught:
        await store.list("/", revision=2)
    assert (caught.value.requested, caught.value.current) == (2, 1)


class LosingTxn:
    """A transaction in which another writer of the key always lands first (the unique index fires)."""

    def __init__(self, winner: Row, before: Row | None) -> None:
        self._winner = winner
        self._before = before
        self._raced = False

    def current_revision(self) -> int:
        return self._winner.revision

    def latest(self, name: str) -> Row | None:
        return self._winner if self._raced else self._before

    def append(self, name: str, **fields: object) -> Row:
        self._raced = True
        raise DuplicateSuccessor("UNIQUE constraint failed: log.name, log.prev_revision")


_V1 = Row(1, "/k", True, False, 1, 0, b"v1", None)
_V2 = Row(2, "/k", False, False, 1, 1, b"v2", b"v1")


@pytest.mark.parametrize(
    ("write", "before"),
    [
        (lambda txn: _create(txn, "/k", b"mine", ()), None),
        (lambda txn: _update(txn, "/k", b"mine", 1, ()), _V1),
        (lambda txn: _delete(txn, "/k", 1, ()), _V1),
    ],
    ids=["create", "update", "delete"],
)
def test_losing_the_race_at_the_unique_index_is_a_failed_comparison(
    write: Callable[[LosingTxn], WriteResult], before: Row | None
) -> None:
    result = write(LosingTxn(_V2, before))
    assert result == WriteResult(False, 2, KeyValue("/k", b"v2", 1, 2))
