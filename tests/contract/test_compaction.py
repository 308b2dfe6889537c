"""compact: history before the target is gone (TooOldRevision), the newest state is kept.

These tests use ``isolated_store``: on etcd, compaction is global to the cluster, so each test gets its
own member rather than compacting the session's shared one.
"""

from __future__ import annotations

import pytest

from store.base import FutureRevision, KeyValue, Store, TooOldRevision
from tests.contract.watching import close, summary, take, take_until_sentinel


async def _history(store: Store) -> dict[str, int]:
    """A few writes; returns named revisions in them."""
    a = await store.create("/pods/a", b"a1")
    b = await store.create("/pods/b", b"b1")
    a2 = await store.update("/pods/a", b"a2", a.revision)
    gone = await store.delete("/pods/b", b.revision)
    c = await store.create("/pods/c", b"c1")
    return {"a": a.revision, "b": b.revision, "a2": a2.revision, "gone": gone.revision, "c": c.revision}


async def test_a_new_store_was_never_compacted(isolated_store: Store) -> None:
    assert await isolated_store.compacted_revision() == 0


async def test_compaction_is_recorded(isolated_store: Store) -> None:
    revisions = await _history(isolated_store)

    await isolated_store.compact(revisions["a2"])

    assert await isolated_store.compacted_revision() == revisions["a2"]


async def test_reading_below_the_compaction_raises_too_old(isolated_store: Store) -> None:
    revisions = await _history(isolated_store)
    await isolated_store.compact(revisions["a2"])

    with pytest.raises(TooOldRevision) as raised:
        await isolated_store.list("/pods/", revision=revisions["a2"] - 1)

    assert (raised.value.requested, raised.value.compacted) == (revisions["a2"] - 1, revisions["a2"])


async def test_the_compaction_revision_itself_stays_readable(isolated_store: Store) -> None:
    revisions = await _history(isolated_store)
    await isolated_store.compact(revisions["a2"])

    result = await isolated_store.list("/pods/", revision=revisions["a2"])

    assert result.items == [
        KeyValue("/pods/a", b"a2", revisions["a"], revisions["a2"]),
        KeyValue("/pods/b", b"b1", revisions["b"], revisions["b"]),
    ]


async def test_compaction_keeps_the_newest_state(isolated_store: Store) -> None:
    revisions = await _history(isolated_store)
    before = (await isolated_store.list("/pods/")).items

    await isolated_store.compact(revisions["c"])

    assert (await isolated_store.list("/pods/")).items == before
    assert await isolated_store.get("/pods/a") == KeyValue("/pods/a", b"a2", revisions["a"], revisions["a2"])
    assert await isolated_store.get("/pods/b") is None
    update = await isolated_store.update("/pods/a", b"a3", revisions["a2"])
    assert update.succeeded


async def test_a_paged_list_whose_revision_was_compacted_raises_too_old(isolated_store: Store) -> None:
    revisions = await _history(isolated_store)
    first = await isolated_store.list("/pods/", limit=1)
    assert first.continue_key is not None
    await isolated_store.create("/pods/d", b"d1")

    await isolated_store.compact(first.revision + 1)

    with pytest.raises(TooOldRevision) as raised:
        await isolated_store.list("/pods/", limit=1, continue_key=first.continue_key, revision=first.revision)
    assert raised.value.requested == revisions["c"]


async def test_watching_below_the_compaction_raises_too_old(isolated_store: Store) -> None:
    revisions = await _history(isolated_store)
    await isolated_store.compact(revisions["gone"])

    events = isolated_store.watch("/pods/", from_revision=revisions["a2"])
    try:
        with pytest.raises(TooOldRevision) as raised:
            await take(events, 1)
    finally:
        await close(events)

    assert (raised.value.requested, raised.value.compacted) == (revisions["a2"], revisions["gone"])


async def test_watching_from_the_compaction_revision_replays_from_there(isolated_store: Store) -> None:
    revisions = await _history(isolated_store)
    await isolated_store.compact(revisions["gone"])

    events = isolated_store.watch("/pods/", from_revision=revisions["gone"])
    try:
        got = await take_until_sentinel(isolated_store, events, "/pods/~sentinel")
    finally:
        await close(events)

    assert summary(got) == [("DELETE", "/pods/b", revisions["gone"]), ("PUT", "/pods/c", revisions["c"])]


async def test_a_live_watch_survives_a_compaction(isolated_store: Store) -> None:
    events = isolated_store.watch("/pods/")
    try:
        revisions = await _history(isolated_store)
        await isolated_store.compact(revisions["c"])
        after = await isolated_store.create("/pods/d", b"d1")

        got = await take_until_sentinel(isolated_store, events, "/pods/~sentinel")
    finally:
        await close(events)

    assert [event.revision for event in got] == [*sorted(revisions.values()), after.revision]


async def test_compacting_again_to_the_same_or_an_older_revision_raises_too_old(
    isolated_store: Store,
) -> None:
    revisions = await _history(isolated_store)
    await isolated_store.compact(revisions["gone"])

    for target in (revisions["gone"], revisions["a"]):
        with pytest.raises(TooOldRevision) as raised:
            await isolated_store.compact(target)
        assert (raised.value.requested, raised.value.compacted) == (target, revisions["gone"])
    assert await isolated_store.compacted_revision() == revisions["gone"]


async def test_compacting_to_a_future_revision_raises(isolated_store: Store) -> None:
    await _history(isolated_store)
    current = await isolated_store.current_revision()

    with pytest.raises(FutureRevision) as raised:
        await isolated_store.compact(current + 5)

    assert (raised.value.requested, raised.value.current) == (current + 5, current)
    assert await isolated_store.compacted_revision() == 0


@pytest.mark.parametrize("target", [0, -3], ids=["zero", "negative"])
async def test_compacting_to_a_non_positive_revision_is_refused(isolated_store: Store, target: int) -> None:
    with pytest.raises(ValueError, match="compact revision"):
        await isolated_store.compact(target)
