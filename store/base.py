"""The Store protocol: etcd's data model, which every backend provides exactly.

A store is a flat, ordered map of string keys to byte values with one global, strictly increasing
*revision* that every successful write (create, update, delete) advances by one. Each key remembers
the revision that created it (``create_revision``) and the revision of its last write
(``mod_revision``); the API server exposes ``mod_revision`` as an object's resourceVersion.

Rules every backend keeps (the contract suite in tests/contract checks them against each):

* Writes are compare-and-swap. ``create`` succeeds only if the key does not exist; ``update`` and
  ``delete`` only if it exists and, when ``expected_revision`` is given, its ``mod_revision`` still
  equals it; every ``Guard`` a write carries must hold in the same transaction. A failed comparison
  is *not* an exception: the call returns a ``WriteResult`` with ``succeeded=False`` and what it
  found, so callers can retry without try/except around every write (kine's Update returns the same
  triple).
* ``txn`` commits several creates, updates and deletes (each with its own comparison, as above) plus
  extra guards all together or not at all, as ONE new revision: every key it writes gets that
  mod_revision (as etcd's multi-op Txn does), and no read, list or watch ever sees some of its writes
  without the others. A watch delivers its events with that one revision, in key order.
* ``list`` reads one consistent revision. Paging passes back ``ListResult.continue_key`` together with
  ``ListResult.revision`` so that every page is read at the first page's revision.
* ``watch(prefix, from_revision)`` yields every event on the prefix whose revision is >= from_revision,
  in revision order (a revision's events in key order), exactly once, as etcd does
  (``from_revision=0``: only events after the call). When the backend loses its connection it resumes
  after the last event it yielded, inside a revision too.
* ``watch_progress(prefix, from_revision)`` is ``watch`` that also yields a ``ProgressMark(revision)``
  once every event on the prefix up to ``revision`` has been yielded, soon after ``request_progress()``
  (etcd may send marks of its own too): how a watcher learns that the store's revision moved on by
  writes outside its prefix, which no event tells it (etcd's watch progress notifications).
* ``compact(revision)`` forgets the history before ``revision``: afterwards reading, listing or watching
  from a revision below it raises ``TooOldRevision``. The newest value of every key is always kept.

Backends raise ``StoreUnavailable`` when the data cannot be reached, so callers can tell a retriable
outage from a broken request.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol, cast, runtime_checkable


@dataclass(frozen=True, slots=True)
class KeyValue:
    key: str
    value: bytes
    create_revision: int
    mod_revision: int


@dataclass(frozen=True, slots=True)
class Guard:
    """An extra comparison checked in the same transaction as a write: ``key``'s mod_revision must be
    exactly ``mod_revision`` (0 means the key must not exist). Fencing tokens are built from these."""

    key: str
    mod_revision: int


@dataclass(frozen=True, slots=True)
class WriteResult:
    """The outcome of a compare-and-swap write.

    On success ``revision`` is the new revision (the written key's mod_revision, or the deletion's
    revision) and ``current`` is the key as written (for a delete: the value it had). On failure
    ``revision`` is the store's revision when the comparison was made, ``current`` is the key as it is
    (None if absent), and ``failed_guards`` names the guards that did not hold, so a caller can tell a
    stale object (``failed_guards == ()``) from a failed fence.
    """

    succeeded: bool
    revision: int
    current: KeyValue | None
    failed_guards: tuple[Guard, ...] = ()


class OpType(enum.Enum):
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"


@dataclass(frozen=True, slots=True)
class TxnOp:
    """One write of a ``Store.txn``, with the comparison of the single-key write of the same name:
    CREATE only if ``key`` does not exist; UPDATE and DELETE only if it exists and, when
    ``expected_revision`` is given, its mod_revision equals it. Build them with ``create``, ``update``
    and ``delete``."""

    type: OpType
    key: str
    value: bytes = b""
    expected_revision: int | None = None

    @classmethod
    def create(cls, key: str, value: bytes) -> TxnOp:
        return cls(OpType.CREATE, key, value)

    @classmethod
    def update(cls, key: str, value: bytes, expected_revision: int | None) -> TxnOp:
        return cls(OpType.UPDATE, key, value, expected_revision)

    @classmethod
    def delete(cls, key: str, expected_revision: int | None) -> TxnOp:
        return cls(OpType.DELETE, key, b"", expected_revision)


@dataclass(frozen=True, slots=True)
class TxnResult:
    """The outcome of a ``Store.txn``.

    On success ``revision`` is the one new revision of every write, and ``current`` holds, per op in
    the order given, the key as written (for a delete: the value it had). On failure nothing was
    written: ``revision`` is the store's revision when the comparisons were made, ``current`` holds
    each op's key as it is (None if absent), ``failed_ops`` the indexes of the ops whose own
    comparison failed and ``failed_guards`` the guards that did not hold.
    """

    succeeded: bool
    revision: int
    current: tuple[KeyValue | None, ...]
    failed_ops: tuple[int, ...] = ()
    failed_guards: tuple[Guard, ...] = ()


def check_txn(ops: Sequence[TxnOp]) -> None:
    """Refuse a transaction no backend can commit, with the same words on every backend: none, an
    empty key, or one key written twice (etcd refuses a Txn that puts one key twice)."""
    if not ops:
        raise ValueError("a store transaction needs at least one write")
    seen: set[str] = set()
    for op in ops:
        if not op.key:
            raise ValueError("store key must not be empty")
        if op.key in seen:
            raise ValueError(f"store key {op.key!r} is written twice in one transaction")
        seen.add(op.key)


def op_holds(op: TxnOp, current: KeyValue | None) -> bool:
    """Whether ``op``'s comparison holds against its key as it is (``current``; None if absent)."""
    if op.type is OpType.CREATE:
        return current is None
    if current is None:
        return False
    return op.expected_revision is None or current.mod_revision == op.expected_revision


@dataclass(frozen=True, slots=True)
class ListResult:
    items: list[KeyValue]
    #: The revision the list was read at; pass it back with ``continue_key`` for the next page.
    revision: int
    #: The first key of the next page, or None when this page is the last.
    continue_key: str | None


class EventType(enum.Enum):
    PUT = "PUT"
    DELETE = "DELETE"


@dataclass(frozen=True, slots=True)
class WatchEvent:
    type: EventType
    key: str
    #: PUT: the value written. DELETE: the value the key had just before it was deleted.
    value: bytes
    #: The revision of this event: the key's new mod_revision, or the revision of the deletion.
    revision: int
    create_revision: int
    #: The value before this event; None when the event created the key.
    prev_value: bytes | None


@dataclass(frozen=True, slots=True)
class ProgressMark:
    """Yielded by ``Store.watch_progress``: every event of the watch up to and including ``revision``
    has been yielded before it (later marks never go back)."""

    revision: int


class StoreError(Exception):
    """Base class of the store's errors."""


class TooOldRevision(StoreError):
    """The requested revision was compacted away (Kubernetes answers 410 Gone)."""

    def __init__(self, requested: int, compacted: int) -> None:
        super().__init__(f"revision {requested} has been compacted (oldest available: {compacted})")
        self.requested = requested
        self.compacted = compacted


class FutureRevision(StoreError):
    """A revision beyond the store's current revision was asked for."""

    def __init__(self, requested: int, current: int) -> None:
        super().__init__(f"revision {requested} is newer than the store's current revision {current}")
        self.requested = requested
        self.current = current


class TransactionTooLarge(StoreError):
    """The backend refuses a transaction this big (etcd's ``--max-txn-ops`` or ``--max-request-bytes``);
    the same request fails again, so the caller must write less at once."""


class StoreUnavailable(StoreError):
    """The backend cannot be reached right now; the operation may be retried."""


def check_list_arguments(prefix: str, limit: int, continue_key: str | None, revision: int) -> None:
    """Refuse list arguments that no backend can honour, with the same words on every backend."""
    if limit < 0:
        raise ValueError(f"list limit must be >= 0, got {limit}")
    if revision < 0:
        raise ValueError(f"list revision must be >= 0, got {revision}")
    if continue_key is not None and not continue_key.startswith(prefix):
        raise ValueError(f"continue key {continue_key!r} is not under the prefix {prefix!r}")


@runtime_checkable
class Store(Protocol):
    async def get(self, key: str) -> KeyValue | None:
        """The key's current value, or None."""
        ...

    async def list(
        self, prefix: str, limit: int = 0, continue_key: str | None = None, revision: int = 0
    ) -> ListResult:
        """Keys starting with ``prefix`` in key order, at most ``limit`` of them (0: all), from
        ``continue_key`` on, read at ``revision`` (0: the current revision)."""
        ...

    async def create(self, key: str, value: bytes, guards: Sequence[Guard] = ()) -> WriteResult:
        """Write ``key`` only if it does not exist (and every guard holds)."""
        ...

    async def update(
        self, key: str, value: bytes, expected_revision: int | None, guards: Sequence[Guard] = ()
    ) -> WriteResult:
        """Overwrite an existing ``key``; ``expected_revision=None`` skips the revision comparison."""
        ...

    async def delete(
        self, key: str, expected_revision: int | None, guards: Sequence[Guard] = ()
    ) -> WriteResult:
        """Delete an existing ``key``; ``expected_revision=None`` skips the revision comparison."""
        ...

    async def txn(self, ops: Sequence[TxnOp], guards: Sequence[Guard] = ()) -> TxnResult:
        """Commit every op of ``ops`` (distinct keys) and check every guard in one transaction, at one
        new revision, or write nothing; see ``TxnResult``."""
        ...

    def watch(self, prefix: str, from_revision: int = 0) -> AsyncIterator[WatchEvent]:
        """Every event on ``prefix`` at revision >= ``from_revision``, in order, exactly once."""
        ...

    def watch_progress(
        self, prefix: str, from_revision: int = 0
    ) -> AsyncIterator[WatchEvent | ProgressMark]:
        """``watch``'s events, with a ``ProgressMark`` between them soon after each ``request_progress``."""
        ...

    async def request_progress(self) -> None:
        """Ask every ``watch_progress`` of this store to yield a mark of the store's current revision as
        soon as it has yielded every event up to it (several requests may share one mark)."""
        ...

    async def compact(self, revision: int) -> None:
        """Forget history before ``revision`` (which must not exceed the current revision)."""
        ...

    async def current_revision(self) -> int:
        """The store's newest revision (0 for an empty, never-written store)."""
        ...

    async def compacted_revision(self) -> int:
        """The revision of the last compaction (0 if none)."""
        ...

    async def close(self) -> None:
        """Release connections, files and watchers; pending watch iterators end."""
        ...


@runtime_checkable
class BatchReader(Protocol):
    """A store that reads several keys in one round trip (both backends do; a wrapper may not)."""

    async def get_many(self, keys: Sequence[str]) -> list[KeyValue | None]:
        """The current value of each key (None for an absent one), in order, all read at one revision."""
        ...


async def get_many(store: Store, keys: Sequence[str]) -> list[KeyValue | None]:
    """The current value of each of ``keys``: one round trip on a ``BatchReader``, else one ``get`` per
    key, concurrently (then not necessarily at one revision).

    Only a class that defines ``get_many`` itself counts: a wrapper that forwards unknown attributes to
    the store it wraps and overrides ``get`` must see its ``get`` called, not bypassed."""
    if callable(getattr(type(store), "get_many", None)):
        return await cast(BatchReader, store).get_many(keys)
    return list(await asyncio.gather(*(store.get(key) for key in keys)))
