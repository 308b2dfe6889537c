"""A store that passes every call to another: the base of the wrappers that change or watch only some
calls (``ObservedStore`` watches writes, ``GroupCommitStore`` gathers them)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from store.base import (
    Guard,
    KeyValue,
    ListResult,
    ProgressMark,
    Store,
    TxnOp,
    TxnResult,
    WatchEvent,
    WriteResult,
    get_many,
)


class DelegatingStore:
    """Every Store call goes to ``store`` unchanged; subclasses override what they change."""

    def __init__(self, store: Store) -> None:
        self._store = store

    async def get(self, key: str) -> KeyValue | None:
        return await self._store.get(key)

    async def get_many(self, keys: Sequence[str]) -> list[KeyValue | None]:
        # Passed through, so that a Bind's reads stay one round trip on the store underneath.
        return await get_many(self._store, keys)

    async def list(
        self, prefix: str, limit: int = 0, continue_key: str | None = None, revision: int = 0
    ) -> ListResult:
        return await self._store.list(prefix, limit, continue_key, revision)

    async def create(self, key: str, value: bytes, guards: Sequence[Guard] = ()) -> WriteResult:
        return await self._store.create(key, value, guards)

    async def update(
        self, key: str, value: bytes, expected_revision: int | None, guards: Sequence[Guard] = ()
    ) -> WriteResult:
        return await self._store.update(key, value, expected_revision, guards)

    async def delete(
        self, key: str, expected_revision: int | None, guards: Sequence[Guard] = ()
    ) -> WriteResult:
        return await self._store.delete(key, expected_revision, guards)

    async def txn(self, ops: Sequence[TxnOp], guards: Sequence[Guard] = ()) -> TxnResult:
        return await self._store.txn(ops, guards)

    def watch(self, prefix: str, from_revision: int = 0) -> AsyncIterator[WatchEvent]:
        return self._store.watch(prefix, from_revision)

    def watch_progress(
        self, prefix: str, from_revision: int = 0
    ) -> AsyncIterator[WatchEvent | ProgressMark]:
        return self._store.watch_progress(prefix, from_revision)

    async def request_progress(self) -> None:
        await self._store.request_progress()

    async def compact(self, revision: int) -> None:
        await self._store.compact(revision)

    async def current_revision(self) -> int:
        return await self._store.current_revision()

    async def compacted_revision(self) -> int:
        return await self._store.compacted_revision()

    async def close(self) -> None:
        await self._store.close()
