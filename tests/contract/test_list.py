"""list: key order, prefixes, paging at one consistent revision, past and future revisions."""

from __future__ import annotations

import asyncio
import random

import pytest

from store.base import FutureRevision, KeyValue, Store


async def _list_all(store: Store, prefix: str, page: int) -> tuple[list[KeyValue], int, int]:
    """Every page of a paged list; returns the items, the revision and the number of pages."""
    first = await store.list(prefix, limit=page)
    items, pages, result = list(first.items), 1, first
    while result.continue_key is not None:
        result = await store.list(
            prefix, limit=page, continue_key=result.continue_key, revision=first.revision
        )
        assert result.revision == first.revision
        items.extend(result.items)
        pages += 1
    return items, first.revision, pages


async def test_list_returns_the_prefix_in_key_order(store: Store) -> None:
    for key in ["/pods/ns/c", "/pods/ns/a", "/pods/ns2/x", "/pods/ns/b", "/nodes/n1", "/pods/n"]:
        await store.create(key, key.encode())

    result = await store.list("/pods/ns/")

    assert [kv.key for kv in result.items] == ["/pods/ns/a", "/pods/ns/b", "/pods/ns/c"]
    assert all(kv.value == kv.key.encode() for kv in result.items)
    assert result.revision == await store.current_revision()
    assert result.continue_key is None


async def test_list_of_an_empty_prefix_is_empty_at_the_current_revision(store: Store) -> None:
    await store.create("/pods/a", b"a")

    result = await store.list("/nothing/")

    assert result.items == [] and result.continue_key is None
    assert result.revision == await store.current_revision()


async def test_list_reports_each_keys_revisions(store: Store) -> None:
    a = await store.create("/pods/a", b"1")
    await store.create("/pods/b", b"1")
    a2 = await store.update("/pods/a", b"2", a.revision)
    await store.delete("/pods/b", None)

    result = await store.list("/pods/")

    assert result.items == [KeyValue("/pods/a", b"2", a.revision, a2.revision)]


@pytest.mark.parametrize("page", [1, 3, 7, 10, 11], ids=lambda p: f"page{p}")
async def test_paging_visits_every_key_once(store: Store, page: int) -> None:
    keys = [f"/pods/p{i:02d}" for i in range(10)]
    for key in keys:
        await store.create(key, b"x")

    items, _, pages = await _list_all(store, "/pods/", page)

    assert [kv.key for kv in items] == keys
    assert pages == max(1, -(-len(keys) // page))


async def test_continue_key_is_the_first_key_of_the_next_page(store: Store) -> None:
    for key in ["/pods/a", "/pods/b", "/pods/c"]:
        await store.create(key, b"x")

    first = await store.list("/pods/", limit=2)

    assert [kv.key for kv in first.items] == ["/pods/a", "/pods/b"]
    assert first.continue_key == "/pods/c"


async def test_a_list_at_a_past_revision_shows_the_past(store: Store) -> None:
    a = await store.create("/pods/a", b"1")
    b = await store.create("/pods/b", b"1")
    past = b.revision
    await store.update("/pods/a", b"2", a.revision)
    await store.delete("/pods/b", None)
    await store.create("/pods/c", b"1")

    result = await store.list("/pods/", revision=past)

    assert result.revision == past
    assert result.items == [KeyValue("/pods/a", b"1", a.revision, a.revision), b.current]


async def test_pages_stay_at_the_first_pages_revision_under_concurrent_writes(store: Store) -> None:
    keys = [f"/pods/k{i:03d}" for i in range(60)]
    for key in keys:
        await store.create(key, b"0")
    stop = asyncio.Event()
    rng = random.Random(7)

    async def writer() -> None:
        while not stop.is_set():
            key = rng.choice(keys)
            if rng.random() < 0.2:
                await store.delete(key, None)
                await store.create(key, b"recreated")
            else:
                await store.update(key, str(rng.random()).encode(), None)
            await asyncio.sleep(0)

    writers = [asyncio.create_task(writer()) for _ in range(3)]
    try:
        await asyncio.sleep(0.05)
        paged, revision, pages = await _list_all(store, "/pods/", 7)
        await asyncio.sleep(0.05)
    finally:
        stop.set()
        await asyncio.gather(*writers)

    assert pages > 1
    assert await store.current_revision() > revision, "no write landed after the first page"
    snapshot = await store.list("/pods/", revision=revision)
    assert paged == snapshot.items
    assert all(kv.mod_revision <= revision for kv in paged)


async def test_a_list_at_a_future_revision_raises(store: Store) -> None:
    await store.create("/pods/a", b"1")
    current = await store.current_revision()

    with pytest.raises(FutureRevision) as raised:
        await store.list("/pods/", revision=current + 10)

    assert raised.value.requested == current + 10
    assert raised.value.current == current


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"limit": -1}, "limit must be >= 0"),
        ({"revision": -1}, "revision must be >= 0"),
        ({"continue_key": "/nodes/a"}, "is not under the prefix '/pods/'"),
    ],
    ids=["negative-limit", "negative-revision", "continue-key-outside-the-prefix"],
)
async def test_bad_list_arguments_are_refused(
    store: Store, kwargs: dict[str, int | str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        await store.list("/pods/", **kwargs)
