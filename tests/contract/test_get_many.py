"""get_many: several keys' current values in one read, and the fallback for stores without it."""

from __future__ import annotations

from store.base import BatchReader, KeyValue, Store, get_many


async def test_get_many_reads_each_key_in_order_with_none_for_absent_and_deleted(store: Store) -> None:
    assert isinstance(store, BatchReader)
    a = await store.create("/pods/a", b"a1")
    updated = await store.update("/pods/a", b"a2", a.revision)
    b = await store.create("/pods/b", b"b1")
    gone = await store.create("/pods/gone", b"x")
    await store.delete("/pods/gone", gone.revision)

    values = await store.get_many(["/pods/b", "/pods/missing", "/pods/a", "/pods/gone"])

    assert values == [
        b.current,
        None,
        KeyValue("/pods/a", b"a2", a.revision, updated.revision),
        None,
    ]
    assert values == [await store.get(key) for key in ("/pods/b", "/pods/missing", "/pods/a", "/pods/gone")]


class _GetOnly:
    """A store wrapper that offers only the Store protocol's ``get``."""

    def __init__(self, store: Store) -> None:
        self._store = store

    async def get(self, key: str) -> KeyValue | None:
        return await self._store.get(key)


async def test_get_many_falls_back_to_one_get_per_key(store: Store) -> None:
    created = await store.create("/pods/a", b"a1")
    wrapper = _GetOnly(store)
    assert not isinstance(wrapper, BatchReader)

    values = await get_many(wrapper, ["/pods/missing", "/pods/a"])  # type: ignore[arg-type]

    assert values == [None, created.current]
