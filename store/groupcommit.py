"""Group commit: concurrent single-key writes committed together, in one store transaction.

Every write request costs the store a round of its own: for etcd one gRPC call, one raft entry and one
fsync, each answered separately. An API server under load has many independent writes in flight at once
(pod creates, Binds, events), so this wrapper sends at most one write request at a time: a write that
arrives while nothing is in flight goes at once (no timer ever holds it back), and the writes that arrive
while one is in flight wait for it and then go together as ONE ``Store.txn``.

Nothing a writer sees changes, except that writes committed together share one revision (as any etcd
multi-op transaction does):

* Each write keeps its own compare-and-swap and its own guards; the transaction checks them all.
* When the transaction fails, the writes whose comparison or guard failed are tried again one by one,
  each for its own answer (AlreadyExists, Conflict, a failed fence), and the others together once more;
  a failure to build or send the transaction (too large, a bad value) sends every write alone. An outage
  (``StoreUnavailable``) reaches every writer of the batch, as it would each of them alone: a write that
  may have been applied is never sent twice.
* A batch never holds two writes of one key, nor a write of a key another write of the batch guards,
  nor two different guards of one key: such a write waits for the next batch, so each key's writes stay
  in arrival order and no comparison depends on the order of writes inside the transaction.
* A batch stays within what etcd accepts by default (``--max-txn-ops`` 128, requests of 1.5 MiB); a
  single write is never split or refused here, it just goes alone.

The wrapper sits in the store layer, under every user of the store, because batching is about store
requests and nothing else: the API server's verbs keep their single-key writes and their answers, and the
same code serves etcd and the SQLite log (whose writer thread already shares a commit between concurrent
writes, but still gives each its own revision).

The store's current revision (``current_revision``, which the API server's consistent reads ask for
before every pod create's admission) rides on the writes too: asked while a write is in flight, it is the
revision the store answers the next write request with, a request sent after it was asked, so it is
never older than a write acknowledged before the question (what a consistent read needs); only when no
write follows does the store get a request of its own. Under a steady stream of writes the question costs
no store round trip.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from store.base import (
    Guard,
    OpType,
    Store,
    StoreUnavailable,
    TxnOp,
    WriteResult,
)
from store.delegating import DelegatingStore

#: etcd's default --max-txn-ops, the most entries of each list of a Txn (comparisons: one per write, two
#: for one without an expected revision, one per guard; writes: one per write, plus a read per update).
#: Batches of this size already spread a request's cost thin.
MAX_BATCH_OPS = 128
#: Keys and values of a batch, in bytes: room below etcd's default request limit of 1.5 MiB for the
#: comparisons and the framing.
MAX_BATCH_BYTES = 1024 * 1024


@dataclass(slots=True)
class _Write:
    op: TxnOp
    guards: tuple[Guard, ...]
    answer: asyncio.Future[WriteResult]

    def etcd_ops(self) -> int:
        """What this write adds to the longest list of an etcd Txn (its comparisons, or its write and
        the read of an update's create_revision)."""
        unconditional = self.op.type is not OpType.CREATE and not self.op.expected_revision
        comparisons = (2 if unconditional else 1) + len(self.guards)
        return max(comparisons, 2 if self.op.type is OpType.UPDATE else 1)

    def size(self) -> int:
        return len(self.op.key) + len(self.op.value)


class GroupCommitStore(DelegatingStore):
    """Delegates to ``store``; creates, updates and deletes that arrive while another write is in flight
    are committed together in one transaction of ``store`` (see the module's docstring)."""

    def __init__(
        self, store: Store, *, max_batch_ops: int = MAX_BATCH_OPS, max_batch_bytes: int = MAX_BATCH_BYTES
    ) -> None:
        super().__init__(store)
        self._max_ops = max_batch_ops
        self._max_bytes = max_batch_bytes
        self._waiting: deque[_Write] = deque()
        self._committer: asyncio.Task[None] | None = None
        #: Callers of ``current_revision`` waiting for the next write request to be sent and answered.
        self._asking: list[asyncio.Future[int]] = []

    # -- writes --------------------------------------------------------------------------------

    async def create(self, key: str, value: bytes, guards: Sequence[Guard] = ()) -> WriteResult:
        return await self._submit(TxnOp.create(key, value), guards)

    async def update(
        self, key: str, value: bytes, expected_revision: int | None, guards: Sequence[Guard] = ()
    ) -> WriteResult:
        return await self._submit(TxnOp.update(key, value, expected_revision), guards)

    async def delete(
        self, key: str, expected_revision: int | None, guards: Sequence[Guard] = ()
    ) -> WriteResult:
        return await self._submit(TxnOp.delete(key, expected_revision), guards)

    def _submit(self, op: TxnOp, guards: Sequence[Guard]) -> asyncio.Future[WriteResult]:
        loop = asyncio.get_running_loop()
        write = _Write(op, tuple(guards), loop.create_future())
        self._waiting.append(write)
        if self._committer is None:
            self._committer = loop.create_task(self._commit_waiting())
        return write.answer

    # -- the current revision -----------------------------------------------------------------

    async def current_revision(self) -> int:
        if self._committer is None:
            return await self._store.current_revision()
        # A write is in flight, and the committer sends the next request once it is answered.
        answer: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._asking.append(answer)
        return await answer

    async def _answer(self, asking: list[asyncio.Future[int]], revision: int | None) -> None:
        """Answer ``asking``, who asked before the request that gave ``revision`` was sent (None: no
        request answered since they asked: ask the store)."""
        if revision is None:
            try:
                revision = await self._store.current_revision()
            except Exception as exc:
                for answer in asking:
                    if not answer.done():
                        answer.set_exception(exc)
                return
        for answer in asking:
            if not answer.done():
                answer.set_result(revision)

    # -- committing ----------------------------------------------------------------------------

    async def _commit_waiting(self) -> None:
        try:
            while self._waiting or self._asking:
                # Whoever asked for the revision by now asked before this batch is sent.
                asking, self._asking = self._asking, []
                batch = self._next_batch()
                revision = await self._commit(batch) if batch else None
                if asking:
                    await self._answer(asking, revision)
        finally:
            self._committer = None
            for answer in self._asking:  # the committer was cancelled (the loop is closing): so are they
                if not answer.done():
                    answer.cancel()
            self._asking = []

    def _next_batch(self) -> list[_Write]:
        """The waiting writes that go together next, in arrival order; writes that may not join this
        batch keep their place at the head of the queue."""
        batch: list[_Write] = []
        keys: set[str] = set()
        guarded: dict[str, int] = {}
        ops = size = 0
        deferred: list[_Write] = []
        held_back: set[str] = set()
        while self._waiting:
            write = self._waiting.popleft()
            if write.answer.done():  # the writer gave up before its write was sent
                continue
            if batch and (
                ops + write.etcd_ops() > self._max_ops or size + write.size() > self._max_bytes
            ):
                self._waiting.appendleft(write)
                break
            if write.op.key in held_back or _collides(write, keys, guarded):
                deferred.append(write)
                held_back.add(write.op.key)  # a later write of this key must not overtake it
                if len(deferred) >= self._max_ops:  # a long run of writes to a few keys: scan no further
                    break
                continue
            batch.append(write)
            keys.add(write.op.key)
            guarded.update((guard.key, guard.mod_revision) for guard in write.guards)
            ops += write.etcd_ops()
            size += write.size()
        self._waiting.extendleft(reversed(deferred))
        return batch

    async def _commit(self, batch: list[_Write]) -> int | None:
        """Send ``batch`` and settle each write; the revision of the store's first answer (None when the
        first request got none)."""
        if len(batch) == 1:
            return await self._commit_alone(batch[0])
        guards = list({guard: None for write in batch for guard in write.guards})
        try:
            result = await self._store.txn([write.op for write in batch], guards)
        except StoreUnavailable as exc:
            for write in batch:
                _settle(write, exc)
            return None
        except asyncio.CancelledError:
            raise
        except Exception:
            # Refused as a whole (too large, a bad key or value): every write for its own answer.
            return await self._commit_each_alone(batch)
        if result.succeeded:
            for write, current in zip(batch, result.current, strict=True):
                _settle(write, WriteResult(True, result.revision, current))
            return result.revision
        failed_ops = set(result.failed_ops)
        failed_guards = set(result.failed_guards)
        suspects = [
            write
            for index, write in enumerate(batch)
            if index in failed_ops or failed_guards.intersection(write.guards)
        ]
        if not suspects:
            suspects = batch
        chosen = {id(write) for write in suspects}
        rest = [write for write in batch if id(write) not in chosen]
        await asyncio.gather(self._commit_each_alone(suspects), *([self._commit(rest)] if rest else []))
        return result.revision

    async def _commit_each_alone(self, writes: Sequence[_Write]) -> int | None:
        revisions = await asyncio.gather(*(self._commit_alone(write) for write in writes))
        return next((revision for revision in revisions if revision is not None), None)

    async def _commit_alone(self, write: _Write) -> int | None:
        op, guards = write.op, write.guards
        try:
            if op.type is OpType.CREATE:
                result = await self._store.create(op.key, op.value, guards)
            elif op.type is OpType.UPDATE:
                result = await self._store.update(op.key, op.value, op.expected_revision, guards)
            else:
                result = await self._store.delete(op.key, op.expected_revision, guards)
        except Exception as exc:
            _settle(write, exc)
            return None
        _settle(write, result)
        return result.revision

    # -- everything else passes through (DelegatingStore) ---------------------------------------

    async def close(self) -> None:
        # The store underneath refuses what is still waiting once closed; each writer gets that answer.
        await self._store.close()
        if self._committer is not None:
            await asyncio.shield(self._committer)


def _collides(write: _Write, keys: set[str], guarded: dict[str, int]) -> bool:
    key = write.op.key
    if key in keys or key in guarded:
        return True
    return any(guard.key in keys or guarded.get(guard.key, guard.mod_revision) != guard.mod_revision
               for guard in write.guards)


def _settle(write: _Write, outcome: WriteResult | BaseException) -> None:
    if write.answer.done():  # the writer was cancelled meanwhile; its write may have gone all the same
        return
    if isinstance(outcome, BaseException):
        write.answer.set_exception(outcome)
    else:
        write.answer.set_result(outcome)

