"""A store wrapper that remembers the revision of the last write under each kind's prefix.

The simulation runs to quiescence, and "quiet" includes: every informer has seen every write to its
kind. Informers report the resourceVersion of the last event they applied; the store's current revision
is no yardstick for that (Events the scheduler writes move it too), but the revision of the last write
under ``/registry/pods/`` is. Every write of the simulated cluster goes through the API server into this
one store, so the wrapper sees them all, including the graceful-deletion finisher's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Sequence

from cluster.api.kinds import Kind
from store.base import Guard, KeyValue, ListResult, Store, TxnOp, TxnResult, WatchEvent, WriteResult, get_many


class WriteTrackingStore:
    """Delegates to ``store``; ``last_write(kind)`` is the revision of the newest successful write of
    that kind (0 if none), and ``writes_in_flight`` counts writes not yet answered."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._last: dict[str, int] = {}
        self.writes_in_flight = 0

    def last_write(self, kind: Kind) -> int:
        return self._last.get(kind.key_prefix(), 0)

    async def _write(self, key: str, pending: Awaitable[WriteResult]) -> WriteResult:
        self.writes_in_flight += 1
        try:
            result = await pending
        finally:
            self.writes_in_flight -= 1
        if result.succeeded:
            self._record(key, result.revision)
        return result

    def _record(self, key: str, revision: int) -> None:
        prefix = key[: key.index("/", len("/registry/")) + 1] if key.startswith("/registry/") else key
        self._last[prefix] = max(self._last.get(prefix, 0), revision)

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
        return await self._write(key, self._store.create(key, value, guards))

    async def update(
        self, key: str, value: bytes, expected_revision: int | None, guards: Sequence[Guard] = ()
    ) -> WriteResult:
        return await self._write(key, self._store.update(key, value, expected_revision, guards))

    async def delete(
        self, key: str, expected_revision: int | None, guards: Sequence[Guard] = ()
    ) -> WriteResult:
        return await self._write(key, self._store.delete(key, expected_revision, guards))

    async def txn(self, ops: Sequence[TxnOp], guards: Sequence[Guard] = ()) -> TxnResult:
        self.writes_in_flight += 1
        try:
            result = await self._store.txn(ops, guards)
        finally:
            self.writes_in_flight -= 1
        if result.succeeded:
            for op in ops:
                self._record(op.key, result.revision)
        return result

    def watch(self, prefix: str, from_revision: int = 0) -> AsyncIterator[WatchEvent]:
        return self._store.watch(prefix, from_revision)

    async def compact(self, revision: int) -> None:
        await self._store.compact(revision)

    async def current_revision(self) -> int:
        return await self._store.current_revision()

    async def compacted_revision(self) -> int:
        return await self._store.compacted_revision()

    async def close(self) -> None:
        await self._store.close()
