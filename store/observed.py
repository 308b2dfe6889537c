"""A store that delegates every call to another and tells an observer about each write request.

Several parts of the system want to see writes go by without changing them: the simulation waits until
every write has reached the informers, and the API server counts the write requests its store serves.
Each is an observer of one ``ObservedStore`` instead of a wrapper of its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Protocol, TypeVar

from store.base import Guard, Store, TxnOp, TxnResult, WriteResult
from store.delegating import DelegatingStore

R = TypeVar("R", WriteResult, TxnResult)
#: How a write request ended: its result, or None when it raised.
WriteOutcome = WriteResult | TxnResult | None


class WriteObserver(Protocol):
    def write_started(self) -> None:
        """A write request is about to go to the store."""

    def write_ended(self, operation: str, keys: Sequence[str], result: WriteOutcome) -> None:
        """The request ``operation`` (create, update, delete or txn) on ``keys`` ended with ``result``
        (None: it raised)."""


class ObservedStore(DelegatingStore):
    """Delegates to ``store``; ``observer`` sees each write request start and end."""

    def __init__(self, store: Store, observer: WriteObserver) -> None:
        super().__init__(store)
        self._observer = observer

    async def _write(self, operation: str, keys: Sequence[str], pending: Awaitable[R]) -> R:
        self._observer.write_started()
        result: R | None = None
        try:
            result = await pending
            return result
        finally:
            self._observer.write_ended(operation, keys, result)

    async def create(self, key: str, value: bytes, guards: Sequence[Guard] = ()) -> WriteResult:
        return await self._write("create", (key,), self._store.create(key, value, guards))

    async def update(
        self, key: str, value: bytes, expected_revision: int | None, guards: Sequence[Guard] = ()
    ) -> WriteResult:
        return await self._write("update", (key,), self._store.update(key, value, expected_revision, guards))

    async def delete(
        self, key: str, expected_revision: int | None, guards: Sequence[Guard] = ()
    ) -> WriteResult:
        return await self._write("delete", (key,), self._store.delete(key, expected_revision, guards))

    async def txn(self, ops: Sequence[TxnOp], guards: Sequence[Guard] = ()) -> TxnResult:
        return await self._write("txn", [op.key for op in ops], self._store.txn(ops, guards))
