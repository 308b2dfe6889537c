"""The Store protocol on a real etcd cluster, through etcd3aio's generated gRPC stubs.

Every write is one etcd transaction, so a compare-and-swap and the reads that explain its failure
(the key's current value, the guard keys' revisions) happen at one revision in one round trip.

Three things etcd does not give directly:

* **Which revision was compacted.** etcd keeps no readable record of it, so, as kube-apiserver does,
  ``compact()`` first records the target in the key ``compact_rev_key`` with a transaction on that key's
  *version*: of several API servers compacting the same etcd, only the one whose version still matches
  writes (and compacts); the others learn the newer target and stop or retry. The key lives outside
  every ``key_prefix`` because compaction is global to the etcd cluster. etcd's own compaction to N
  also drops the deletions made at N, which the store must keep, so etcd is compacted one revision
  short and list and watch refuse that revision by the record.
* **Resuming a watch without gaps.** A response's header revision may be ahead of its last event (a
  watcher more than 1000 revisions behind gets its events in batches, each stamped with the current
  revision), so a watch resumes from the last event it yielded plus one, never from a header. A
  multi-key ``txn`` gives its events one revision; etcd never splits a revision's events over two
  responses (without ``fragment``), and a broken stream is noticed only at the next read, after the
  whole response was yielded, so a resume never starts in the middle of a revision.
* **Knowing whether a failed write was applied.** Transient failures are retried with backoff only when
  the request provably did not take effect (no connection, or a member without a leader, which every
  request here asks etcd to report through the ``hasleader`` metadata); any other outage surfaces as
  ``StoreUnavailable`` so that the caller can re-read before retrying.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import ipaddress
import logging
import random
import socket
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar, cast

import grpc
import grpc.aio
from etcd3aio._protobuf import (
    CompactionRequest,
    Compare,
    DeleteRangeRequest,
    KVStub,
    MaintenanceStub,
    PutRequest,
    RangeRequest,
    RequestOp,
    StatusRequest,
    TxnRequest,
    TxnResponse,
    WatchCreateRequest,
    WatchRequest,
    WatchResponse,
    WatchStub,
)
from etcd3aio.connections import ConnectionManager
from etcd3aio.kv import prefix_range_end
from tenacity import AsyncRetrying, retry_if_exception, stop_after_delay, wait_exponential, wait_random

from store.base import (
    EventType,
    FutureRevision,
    Guard,
    KeyValue,
    ListResult,
    OpType,
    ProgressMark,
    StoreError,
    StoreUnavailable,
    TooOldRevision,
    TransactionTooLarge,
    TxnOp,
    TxnResult,
    WatchEvent,
    WriteResult,
    check_list_arguments,
    check_txn,
    op_holds,
)

log = logging.getLogger(__name__)

#: The key (outside any key_prefix) whose value is the last compaction target and whose version
#: orders concurrent compactors; kube-apiserver uses the same name.
COMPACT_REV_KEY = b"compact_rev_key"
#: Metadata asking etcd to refuse a request (with "no leader") on a member that has lost its leader,
#: instead of letting it hang or time out ambiguously; watches on such a member are ended, so they
#: reconnect to a healthy one.
_REQUIRE_LEADER = (("hasleader", "true"),)
#: Channel options on top of etcd3aio's (round robin, keepalives): responses as large as etcd sends,
#: and a quick reconnect after a member restarts (gRPC's default backoff grows to minutes).
_CHANNEL_OPTIONS: list[tuple[str, int]] = [
    ("grpc.max_receive_message_length", -1),
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2000),
]
#: UNAVAILABLE details that prove a request never reached etcd's state machine, so that even a
#: write may be sent again.
_NOT_APPLIED_MARKERS = ("etcdserver: no leader", "failed to connect", "connection refused")
_COMPACTED = "required revision has been compacted"
#: etcd's refusals of a request beyond its --max-txn-ops or --max-request-bytes.
_TOO_LARGE = ("too many operations in txn request", "request is too large")
#: How long the compacted-revision probe (a watch etcd refuses) may take.
PROBE_TIMEOUT_S = 2.0
_FUTURE = "is a future revision"
_TRANSIENT_CODES = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
#: The first etcd releases whose requested progress notifications follow the watch's events: before them
#: a notification may overtake events of its revision, so a mark from it could hide a write (the
#: versions kube-apiserver requires for its consistent reads from cache).
_ORDERED_PROGRESS_SINCE = {(3, 4): 31, (3, 5): 13}

T = TypeVar("T")
_WatchCall: TypeAlias = "grpc.aio.StreamStreamCall[WatchRequest, WatchResponse]"


@dataclass(frozen=True)
class EtcdTimeouts:
    """How long the store waits and retries before giving up with ``StoreUnavailable``."""

    #: Seconds a retriable failure (a member without a leader, a refused connection) is retried.
    #: Default 5 s: covers a leader election (about one election timeout, 1 s by default).
    retry_budget_s: float = 5.0
    #: Seconds one unary request may take. Default 30 s, generous: a list of 10,000 Pods is ~15 MB.
    request_timeout_s: float = 30.0
    #: Seconds a broken watch keeps trying to reconnect. Default 30 s: longer than the unary budget,
    #: as a single-member etcd being restarted needs a few seconds and a watch is costly to restart.
    watch_reconnect_budget_s: float = 30.0

    def __post_init__(self) -> None:
        for name in ("retry_budget_s", "request_timeout_s", "watch_reconnect_budget_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"EtcdTimeouts.{name} must be positive, got {getattr(self, name)}")


def _retriable(exc: BaseException, *, idempotent: bool) -> bool:
    if not isinstance(exc, grpc.aio.AioRpcError) or exc.code() not in _TRANSIENT_CODES:
        return False
    if idempotent:
        return True
    details = (exc.details() or "").lower()
    return exc.code() == grpc.StatusCode.UNAVAILABLE and any(m in details for m in _NOT_APPLIED_MARKERS)


def _transient(exc: BaseException) -> bool:
    return isinstance(exc, grpc.aio.AioRpcError) and exc.code() in _TRANSIENT_CODES


def _compare(key: bytes, target: Any, result: Any = Compare.EQUAL, **operand: int) -> Compare:
    return Compare(key=key, target=target, result=result, **operand)


def _range_op(key: bytes, *, keys_only: bool = False) -> RequestOp:
    return RequestOp(request_range=RangeRequest(key=key, keys_only=keys_only))


def _parse_endpoints(endpoints: Sequence[str] | str) -> list[str]:
    items = endpoints.split(",") if isinstance(endpoints, str) else list(endpoints)
    items = [item.strip() for item in items if item.strip()]
    if not items:
        raise ValueError("etcd endpoints: at least one host:port is required")
    for item in items:
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"etcd endpoint {item!r}: expected host:port, e.g. 127.0.0.1:2379")
    return items


async def _resolve(endpoints: list[str]) -> tuple[list[str], str | None]:
    """IPv4 "address:port" for each endpoint, and the first host name among them (None if all are
    addresses). etcd3aio balances over an ``ipv4:`` target, which takes addresses only; host names
    (a compose service, say) are resolved once, here."""
    loop = asyncio.get_running_loop()
    addresses, first_name = [], None
    for endpoint in endpoints:
        host, _, port = endpoint.rpartition(":")
        with contextlib.suppress(ValueError):
            addresses.append(f"{ipaddress.IPv4Address(host)}:{port}")
            continue
        if host.startswith("["):
            raise ValueError(
                f"etcd endpoint {endpoint!r}: IPv6 is not supported, use an IPv4 address or a name"
            )
        try:
            infos = await loop.getaddrinfo(host, int(port), family=socket.AF_INET, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise StoreUnavailable(f"etcd endpoint {endpoint!r}: cannot resolve {host!r}: {exc}") from exc
        addresses.append(f"{infos[0][4][0]}:{port}")
        first_name = first_name or host
    return addresses, first_name


class EtcdStore:
    """A ``store.base.Store`` on etcd. Create it with ``await EtcdStore.connect(endpoints)``.

    ``key_prefix`` is prepended to every key on the wire and stripped from every key returned, so
    several users (tests, deployments) can share one etcd without seeing each other's keys.
    """

    def __init__(
        self,
        channel: grpc.aio.Channel,
        *,
        key_prefix: str = "",
        endpoints: str = "",
        timeouts: EtcdTimeouts = EtcdTimeouts(),
    ) -> None:
        self._channel = channel
        self._timeouts = timeouts
        self._kv = KVStub(channel)
        self._watch_stub = WatchStub(channel)
        self._key_prefix = key_prefix
        self._wire_prefix = key_prefix.encode()
        self._endpoints = endpoints
        self._closed = asyncio.Event()
        #: The newest revision any etcd response has shown this store; "now" for watch(from_revision=0).
        self._revision_seen = 0
        self._watch_calls: set[_WatchCall] = set()
        #: The streams of the progress watches, and whether etcd orders a requested notification after
        #: the events before it (learned at connect; if not, marks come only on etcd's own schedule).
        self._progress_calls: set[_WatchCall] = set()
        self._progress_requests_ordered = False
        self._progress_writing = asyncio.Lock()
        #: Watches being registered with etcd; requests made after watch() wait for them.
        self._registering: set[asyncio.Task[tuple[_WatchCall | None, int]]] = set()

    @classmethod
    async def connect(
        cls,
        endpoints: Sequence[str] | str,
        *,
        ca_cert: bytes | None = None,
        cert_key: bytes | None = None,
        cert_chain: bytes | None = None,
        key_prefix: str = "",
        timeouts: EtcdTimeouts = EtcdTimeouts(),
    ) -> EtcdStore:
        """Connect to the etcd members at ``endpoints`` ("host:port" each, or one comma-separated
        string); requests are spread over them round-robin. Fails with ``StoreUnavailable`` when none
        answers. TLS: ``ca_cert`` (PEM) enables it, ``cert_key`` + ``cert_chain`` add a client cert;
        certificates are checked against the first host name given, else the first address (gRPC derives
        no name from a target of several addresses, so every member's certificate must carry it)."""
        named = _parse_endpoints(endpoints)
        addresses, host_name = await _resolve(named)
        if host_name is None and ca_cert is not None:
            host_name = named[0].rpartition(":")[0]
        manager = ConnectionManager(addresses)
        manager.grpc_options = [*manager.grpc_options, *_CHANNEL_OPTIONS]
        channel = manager.get_channel(
            ca_cert=ca_cert, cert_key=cert_key, cert_chain=cert_chain, tls_server_name=host_name
        )
        store = cls(channel, key_prefix=key_prefix, endpoints=",".join(named), timeouts=timeouts)
        try:
            await store.current_revision()
            status = await store._unary(MaintenanceStub(channel).Status, StatusRequest(), idempotent=True)
            store._progress_requests_ordered = _orders_requested_progress(status.version)
        except BaseException:
            await store.close()
            raise
        return store

    # -- reads ---------------------------------------------------------------------------------

    async def get(self, key: str) -> KeyValue | None:
        response = await self._unary(self._kv.Range, RangeRequest(key=self._wire(key)), idempotent=True)
        return self._key_value(response.kvs[0]) if response.kvs else None

    async def get_many(self, keys: Sequence[str]) -> list[KeyValue | None]:
        # A transaction without comparisons runs its reads at one revision, in one round trip.
        request = TxnRequest(success=[_range_op(self._wire(key)) for key in keys])
        response = await self._unary(self._kv.Txn, request, idempotent=True)
        return [self._first(response, index) for index in range(len(keys))]

    async def list(
        self, prefix: str, limit: int = 0, continue_key: str | None = None, revision: int = 0
    ) -> ListResult:
        check_list_arguments(prefix, limit, continue_key, revision)
        start, range_end = self._key_range(prefix)
        if continue_key is not None:
            start = self._wire(continue_key)
        # One extra key tells whether there is a next page and which key starts it.
        page = RangeRequest(
            key=start, range_end=range_end, revision=revision, limit=limit + 1 if limit else 0
        )
        if revision:
            # A past revision is checked against the compaction record, read in the same read-only
            # transaction: etcd keeps one revision more than the store promises (see compact()).
            response = await self._unary(
                self._kv.Txn,
                TxnRequest(success=[_range_op(COMPACT_REV_KEY), RequestOp(request_range=page)]),
                idempotent=True,
                revision=revision,
            )
            _, compacted = _compact_record(response.responses[0].response_range.kvs)
            if revision < compacted:
                raise TooOldRevision(revision, compacted)
            kvs = list(response.responses[1].response_range.kvs)
        else:
            ranged = await self._unary(self._kv.Range, page, idempotent=True)
            revision, kvs = int(ranged.header.revision), list(ranged.kvs)
        kvs = [kv for kv in kvs if kv.key != COMPACT_REV_KEY]
        next_key = None
        if limit and len(kvs) > limit:
            next_key = self._unwire(kvs[limit].key)
            kvs = kvs[:limit]
        return ListResult([self._key_value(kv) for kv in kvs], revision, next_key)

    async def current_revision(self) -> int:
        """etcd's revision; note that a new etcd starts at 1, not 0."""
        response = await self._unary(
            self._kv.Range, RangeRequest(key=COMPACT_REV_KEY, count_only=True), idempotent=True
        )
        return int(response.header.revision)

    async def compacted_revision(self) -> int:
        """The last compaction target recorded by ``compact()`` (0 if none). A compaction done behind
        podsched's back (etcdctl, etcd's auto-compaction) is not recorded; ``TooOldRevision`` from
        list and watch then reports etcd's own value."""
        return await self._recorded_compaction()

    async def _recorded_compaction(self, *, after_watches: bool = True) -> int:
        response = await self._unary(
            self._kv.Range, RangeRequest(key=COMPACT_REV_KEY), idempotent=True, after_watches=after_watches
        )
        return _compact_record(response.kvs)[1]

    # -- writes --------------------------------------------------------------------------------

    async def create(self, key: str, value: bytes, guards: Sequence[Guard] = ()) -> WriteResult:
        wire = self._wire(key)
        _check_value(value)
        response = await self._txn(
            compare=[_compare(wire, Compare.CREATE, create_revision=0), *self._guard_compares(guards)],
            success=[RequestOp(request_put=PutRequest(key=wire, value=value))],
            failure=self._failure_reads(wire, guards),
        )
        revision = int(response.header.revision)
        if response.succeeded:
            return WriteResult(True, revision, KeyValue(key, value, revision, revision))
        return self._failed(response, guards)

    async def update(
        self, key: str, value: bytes, expected_revision: int | None, guards: Sequence[Guard] = ()
    ) -> WriteResult:
        wire = self._wire(key)
        _check_value(value)
        response = await self._txn(
            compare=self._preconditions(wire, expected_revision, guards),
            # The keys-only read returns the create_revision without sending the value back.
            success=[
                RequestOp(request_put=PutRequest(key=wire, value=value)),
                _range_op(wire, keys_only=True),
            ],
            failure=self._failure_reads(wire, guards),
        )
        if not response.succeeded:
            return self._failed(response, guards)
        written = response.responses[1].response_range.kvs[0]
        return WriteResult(
            True,
            int(response.header.revision),
            KeyValue(key, value, written.create_revision, written.mod_revision),
        )

    async def delete(
        self, key: str, expected_revision: int | None, guards: Sequence[Guard] = ()
    ) -> WriteResult:
        wire = self._wire(key)
        response = await self._txn(
            compare=self._preconditions(wire, expected_revision, guards),
            success=[RequestOp(request_delete_range=DeleteRangeRequest(key=wire, prev_kv=True))],
            failure=self._failure_reads(wire, guards),
        )
        if not response.succeeded:
            return self._failed(response, guards)
        previous = response.responses[0].response_delete_range.prev_kvs[0]
        return WriteResult(True, int(response.header.revision), self._key_value(previous))

    async def txn(self, ops: Sequence[TxnOp], guards: Sequence[Guard] = ()) -> TxnResult:
        """One etcd Txn: every op's comparison and every guard, then the writes in key order (etcd
        numbers a revision's events in the order of its ops, so watchers get them in key order), a
        delete returning the value it deleted and an update followed by a keys-only read of its key (its
        create_revision, without sending the previous value back); on failure, a read of each op's key
        and a keys-only read of each guard's, which say which comparison failed.

        etcd caps each of a Txn's lists at ``--max-txn-ops`` (128 by default): one comparison per op
        (an expected revision implies the key exists), one per guard, one write per op and, after an
        update's write, a keys-only read of its create_revision."""
        check_txn(ops)
        ordered = sorted(range(len(ops)), key=lambda i: ops[i].key)
        compare: builtins.list[Compare] = []
        success: builtins.list[RequestOp] = []
        for index in ordered:
            op = ops[index]
            wire = self._wire(op.key)
            if op.type is OpType.CREATE:
                compare.append(_compare(wire, Compare.CREATE, create_revision=0))
            elif op.expected_revision:
                compare.append(_compare(wire, Compare.MOD, mod_revision=op.expected_revision))
            else:
                compare += self._preconditions(wire, op.expected_revision, ())
            if op.type is OpType.DELETE:
                success.append(RequestOp(request_delete_range=DeleteRangeRequest(key=wire, prev_kv=True)))
            else:
                _check_value(op.value)
                success.append(RequestOp(request_put=PutRequest(key=wire, value=op.value)))
                if op.type is OpType.UPDATE:
                    # The key's create_revision without sending the previous value back (as update does).
                    success.append(_range_op(wire, keys_only=True))
        compare += self._guard_compares(guards)
        failure = [
            *(_range_op(self._wire(op.key)) for op in ops),
            *(_range_op(self._wire(guard.key), keys_only=True) for guard in guards),
        ]
        response = await self._txn(compare=compare, success=success, failure=failure)
        revision = int(response.header.revision)
        if not response.succeeded:
            current = tuple(self._first(response, index) for index in range(len(ops)))
            failed_ops = tuple(index for index, op in enumerate(ops) if not op_holds(op, current[index]))
            failed_guards = []
            for guard, read in zip(guards, response.responses[len(ops):], strict=True):
                kvs = read.response_range.kvs
                if (kvs[0].mod_revision if kvs else 0) != guard.mod_revision:
                    failed_guards.append(guard)
            return TxnResult(False, revision, current, failed_ops, tuple(failed_guards))
        written: builtins.list[KeyValue | None] = [None] * len(ops)
        replies = iter(response.responses)
        for index in ordered:
            op, reply = ops[index], next(replies)
            if op.type is OpType.DELETE:
                written[index] = self._key_value(reply.response_delete_range.prev_kvs[0])
            elif op.type is OpType.UPDATE:
                created = int(next(replies).response_range.kvs[0].create_revision)
                written[index] = KeyValue(op.key, op.value, created, revision)
            else:
                written[index] = KeyValue(op.key, op.value, revision, revision)
        return TxnResult(True, revision, tuple(written))

    async def compact(self, revision: int) -> None:
        """Compact etcd to ``revision``; ``TooOldRevision`` if it is already compacted that far."""
        if revision < 1:
            raise ValueError(f"compact revision must be >= 1, got {revision}")
        response = await self._unary(self._kv.Range, RangeRequest(key=COMPACT_REV_KEY), idempotent=True)
        if revision > response.header.revision:
            raise FutureRevision(revision, int(response.header.revision))
        version, recorded = _compact_record(response.kvs)
        while revision > recorded:
            claim = await self._txn(
                compare=[_compare(COMPACT_REV_KEY, Compare.VERSION, version=version)],
                success=[
                    RequestOp(request_put=PutRequest(key=COMPACT_REV_KEY, value=str(revision).encode()))
                ],
                failure=[_range_op(COMPACT_REV_KEY)],
            )
            if claim.succeeded:
                # Recorded first, compacted second (as kube-apiserver does): if this process dies in
                # between, the next compaction to a higher revision covers this one. etcd's
                # Compact(N) also drops deletions made *at* N, which the store keeps (only history
                # before N is forgotten), so etcd is compacted to N-1 and list and watch refuse N-1
                # by the record.
                if revision > 1:
                    with contextlib.suppress(TooOldRevision):  # etcd was compacted further by hand
                        request = CompactionRequest(revision=revision - 1)
                        await self._unary(self._kv.Compact, request, idempotent=True, revision=revision - 1)
                return
            version, recorded = _compact_record(claim.responses[0].response_range.kvs)
        raise TooOldRevision(revision, recorded)

    # -- watch ---------------------------------------------------------------------------------

    def watch(self, prefix: str, from_revision: int = 0) -> AsyncIterator[WatchEvent]:
        """Every event on ``prefix`` from ``from_revision`` on. ``from_revision=0`` means after the
        newest revision this store has seen when ``watch`` is called: every write acknowledged to
        this store before the call is excluded and every later write included (writes by others
        in between may be included too; etcd has no notion of "now" that a call could pin).

        The stream is registered with etcd right away, not at the first iteration, and requests
        made through this store after the call wait until it is. Iterate the result or
        ``aclose()`` it; ``close()`` of the store ends it too."""
        # Without progress_notify etcd sends no notification, so it yields events only.
        return cast(AsyncIterator[WatchEvent], self._watch(prefix, from_revision, marks=False))

    def watch_progress(
        self, prefix: str, from_revision: int = 0
    ) -> AsyncIterator[WatchEvent | ProgressMark]:
        """``watch`` with etcd's progress notifications as marks: those etcd sends on its own schedule
        (``--experimental-watch-progress-notify-interval``, to a watch with no events in that time, always
        after the events they cover) and, from etcd 3.4.31 and 3.5.13 on, those ``request_progress`` asks
        for (an older etcd may send a requested one ahead of events, so none is asked of it)."""
        return self._watch(prefix, from_revision, marks=True)

    async def request_progress(self) -> None:
        if not self._progress_requests_ordered:
            return
        request = WatchRequest()
        request.progress_request.SetInParent()
        async with self._progress_writing:  # one write at a time per stream
            for call in list(self._progress_calls):
                # A broken stream is its watch's to notice and reopen; this request is then moot.
                with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
                    await call.write(request)

    def _watch(
        self, prefix: str, from_revision: int, *, marks: bool
    ) -> AsyncIterator[WatchEvent | ProgressMark]:
        if from_revision < 0:
            raise ValueError(f"watch from_revision must be >= 0, got {from_revision}")
        start, range_end = self._key_range(prefix)
        from_now = from_revision == 0
        first = from_revision or self._revision_seen + 1
        opening = asyncio.get_running_loop().create_task(
            self._open_watch(start, range_end, first, from_now, marks)
        )
        self._registering.add(opening)
        opening.add_done_callback(self._registering.discard)
        return _Watch(opening, self._follow(prefix, start, range_end, opening, from_now, marks))

    async def _follow(
        self,
        prefix: str,
        start: bytes,
        range_end: bytes,
        opening: asyncio.Task[tuple[_WatchCall | None, int]] | None,
        from_now: bool,
        marks: bool,
    ) -> AsyncGenerator[WatchEvent | ProgressMark, None]:
        # What a reconnection asks for: one past the last event yielded.
        next_revision = 0
        while True:
            try:
                if opening is not None:
                    call, next_revision = await opening
                    opening = None
                else:
                    call, next_revision = await self._open_watch(
                        start, range_end, next_revision, from_now, marks
                    )
            except asyncio.CancelledError:
                if self._closed_under_us():
                    return
                raise
            except grpc.aio.AioRpcError as exc:
                raise await self._translate(exc, next_revision) from exc
            except Exception:
                if self._closed.is_set():  # closed while (re)connecting: end quietly
                    return
                raise
            if call is None:
                return
            if marks:
                self._progress_calls.add(call)
            try:
                while True:
                    try:
                        response = await _next_response(call)
                    except asyncio.CancelledError:
                        if self._closed_under_us():
                            return
                        raise
                    except grpc.aio.AioRpcError as exc:
                        if not _transient(exc):
                            raise await self._translate(exc, next_revision) from exc
                        log.info(
                            "etcd watch on %r broke (%s); resuming at %d",
                            prefix,
                            exc.code().name,
                            next_revision,
                        )
                        break
                    if response is None:
                        break
                    if response.canceled:
                        canceled = self._watch_canceled(response, next_revision, prefix)
                        if from_now and isinstance(canceled, TooOldRevision):
                            break  # compacted between the check and the registration: check again
                        raise canceled
                    # Events of one revision always arrive in one response; skip anything older
                    # than the resume point so that a replayed event is never yielded twice.
                    floor = next_revision
                    for raw in response.events:
                        if raw.kv.mod_revision < floor or raw.kv.key == COMPACT_REV_KEY:
                            continue
                        yield self._event(raw)
                        next_revision, from_now = int(raw.kv.mod_revision) + 1, False
                    if marks and not response.events and not response.created:
                        # A progress notification: its header is the revision every event before it covers.
                        yield ProgressMark(int(response.header.revision))
            finally:
                self._progress_calls.discard(call)
                call.cancel()

    async def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        for call in list(self._watch_calls):
            call.cancel()
        await self._channel.close()

    # -- internals -----------------------------------------------------------------------------

    def _wire(self, key: str) -> bytes:
        if not key:
            raise ValueError("store keys must not be empty")
        return (self._key_prefix + key).encode()

    def _unwire(self, wire: bytes) -> str:
        return wire[len(self._wire_prefix) :].decode()

    def _key_range(self, prefix: str) -> tuple[bytes, bytes]:
        wire = (self._key_prefix + prefix).encode()
        if not wire:
            return b"\0", b"\0"  # etcd's notation for "every key"
        return wire, prefix_range_end(wire)

    def _key_value(self, kv: Any) -> KeyValue:
        return KeyValue(self._unwire(kv.key), bytes(kv.value), int(kv.create_revision), int(kv.mod_revision))

    def _event(self, raw: Any) -> WatchEvent:
        previous = raw.prev_kv if raw.HasField("prev_kv") else None
        key = self._unwire(raw.kv.key)
        if raw.type == raw.DELETE:
            value = bytes(previous.value) if previous is not None else b""
            created = int(previous.create_revision) if previous is not None else 0
            return WatchEvent(EventType.DELETE, key, value, int(raw.kv.mod_revision), created, value)
        return WatchEvent(
            EventType.PUT,
            key,
            bytes(raw.kv.value),
            int(raw.kv.mod_revision),
            int(raw.kv.create_revision),
            bytes(previous.value) if previous is not None else None,
        )

    def _preconditions(
        self, wire: bytes, expected_revision: int | None, guards: Sequence[Guard]
    ) -> builtins.list[Compare]:
        compares = [_compare(wire, Compare.CREATE, Compare.GREATER, create_revision=0)]  # the key exists
        if expected_revision is not None:
            compares.append(_compare(wire, Compare.MOD, mod_revision=expected_revision))
        return compares + self._guard_compares(guards)

    def _guard_compares(self, guards: Sequence[Guard]) -> builtins.list[Compare]:
        compares = []
        for guard in guards:
            if guard.mod_revision == 0:
                compares.append(_compare(self._wire(guard.key), Compare.CREATE, create_revision=0))
            else:
                compares.append(_compare(self._wire(guard.key), Compare.MOD, mod_revision=guard.mod_revision))
        return compares

    def _failure_reads(self, wire: bytes, guards: Sequence[Guard]) -> builtins.list[RequestOp]:
        return [_range_op(wire), *(_range_op(self._wire(guard.key), keys_only=True) for guard in guards)]

    def _first(self, response: TxnResponse, index: int) -> KeyValue | None:
        kvs = response.responses[index].response_range.kvs
        return self._key_value(kvs[0]) if kvs else None

    def _failed(self, response: TxnResponse, guards: Sequence[Guard]) -> WriteResult:
        failed = []
        for guard, read in zip(guards, response.responses[1:], strict=True):
            kvs = read.response_range.kvs
            if (kvs[0].mod_revision if kvs else 0) != guard.mod_revision:
                failed.append(guard)
        return WriteResult(False, int(response.header.revision), self._first(response, 0), tuple(failed))

    async def _txn(
        self,
        *,
        compare: builtins.list[Compare],
        success: builtins.list[RequestOp],
        failure: builtins.list[RequestOp],
    ) -> TxnResponse:
        request = TxnRequest(compare=compare, success=success, failure=failure)
        return await self._unary(self._kv.Txn, request, idempotent=False)

    async def _unary(
        self,
        method: Callable[..., Awaitable[T]],
        request: Any,
        *,
        idempotent: bool,
        revision: int = 0,
        after_watches: bool = True,
    ) -> T:
        """Call ``method``, retrying what may safely be retried, and translate every failure.

        ``after_watches``: first let the watches created before this call finish registering (for
        at most the retry budget), so that whatever a caller does after ``watch()`` happens after
        the watch is in place, as an in-process store's subscription would be."""
        if self._closed.is_set():
            raise StoreError("the etcd store is closed")
        if after_watches and self._registering:
            await asyncio.wait(set(self._registering), timeout=self._timeouts.retry_budget_s)
            if self._closed.is_set():
                raise StoreError("the etcd store is closed")
        # A plain loop rather than tenacity, whose per-call setup showed in profiles at thousands of
        # calls per second; the policy is the same: retry what _retriable allows, with jittered exponential
        # backoff (50 ms doubling up to 1 s), until retry_budget_s has passed since the first attempt.
        loop = asyncio.get_running_loop()
        started, attempt = loop.time(), 0
        try:
            while True:
                attempt += 1
                try:
                    response = await method(
                        request, timeout=self._timeouts.request_timeout_s, metadata=_REQUIRE_LEADER
                    )
                except grpc.aio.AioRpcError as exc:
                    if not _retriable(exc, idempotent=idempotent):
                        raise
                    if loop.time() - started >= self._timeouts.retry_budget_s:
                        raise
                    await asyncio.sleep(min(1.0, 0.05 * 2 ** (attempt - 1)) + random.uniform(0, 0.05))
                    continue
                self._saw(response)
                return response
        except grpc.aio.AioRpcError as exc:
            raise await self._translate(exc, revision) from exc
        except asyncio.CancelledError:
            if self._closed_under_us():  # close() cancelled the call, not our caller
                raise StoreError("the etcd store was closed during the request") from None
            raise

    def _saw(self, response: Any) -> None:
        self._revision_seen = max(self._revision_seen, int(response.header.revision))

    async def _translate(self, exc: grpc.aio.AioRpcError, revision: int) -> StoreError:
        """The one place where etcd's and gRPC's errors become the store's."""
        code, details = exc.code(), exc.details() or ""
        if code in _TRANSIENT_CODES:
            return StoreUnavailable(f"etcd at {self._endpoints} is unavailable: {code.name}: {details}")
        if _COMPACTED in details:
            return TooOldRevision(revision, await self._compacted_since(revision))
        if any(marker in details for marker in _TOO_LARGE):
            return TransactionTooLarge(
                f"etcd at {self._endpoints} refused the request as too large ({details}): it takes at "
                "most --max-txn-ops comparisons or writes per transaction (128 by default) and "
                "--max-request-bytes per request (1.5 MiB by default)"
            )
        if _FUTURE in details:
            current = 0
            with contextlib.suppress(StoreError):
                current = await self.current_revision()
            return FutureRevision(revision, current)
        return StoreError(f"etcd at {self._endpoints} rejected the request: {code.name}: {details}")

    async def _compacted_since(self, revision: int) -> int:
        """The oldest revision the store still has, known to be above ``revision``: after etcd's own
        compacted revision (a watch from ``revision`` is refused with it), and not below the record."""
        recorded = 0
        with contextlib.suppress(StoreError):
            recorded = await self._recorded_compaction(after_watches=False)
        with contextlib.suppress(grpc.aio.AioRpcError, TimeoutError):
            call = self._watch_stub.Watch(metadata=_REQUIRE_LEADER)
            try:
                # etcd cancels a compacted watch within its 100 ms sync period; a registration
                # that stands means the revision is not compacted after all.
                async with asyncio.timeout(PROBE_TIMEOUT_S):
                    create = WatchCreateRequest(key=COMPACT_REV_KEY, start_revision=revision)
                    await call.write(WatchRequest(create_request=create))
                    while (response := await call.read()) is not grpc.aio.EOF:
                        if response.compact_revision:
                            return max(recorded, int(response.compact_revision) + 1)
                        if not response.created:
                            break  # an event: the revision is still there
            finally:
                call.cancel()
        return recorded

    async def _open_watch(
        self, start: bytes, range_end: bytes, revision: int, from_now: bool, progress_notify: bool
    ) -> tuple[_WatchCall | None, int]:
        """A watch stream that etcd has registered from ``revision``, and that revision; reconnects
        with backoff for up to ``watch_reconnect_budget_s``. (None, revision) once the store is closed.

        A revision beyond the next one raises FutureRevision. A revision below the recorded
        compaction raises TooOldRevision, except for a watch "from
        now" whose newest seen revision was compacted while the store was idle: everything up to a
        compaction target happened before the call (compactors target revisions minutes old), so
        such a watch starts at the compaction."""
        retrying = AsyncRetrying(
            retry=retry_if_exception(lambda exc: _transient(exc) or isinstance(exc, StoreUnavailable)),
            stop=stop_after_delay(self._timeouts.watch_reconnect_budget_s),
            wait=wait_exponential(multiplier=0.05, max=2.0) + wait_random(0, 0.05),
            sleep=self._sleep_unless_closed,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                if self._closed.is_set():
                    return None, revision
                record = await self._unary(
                    self._kv.Range, RangeRequest(key=COMPACT_REV_KEY), idempotent=True, after_watches=False
                )
                compacted, current = _compact_record(record.kvs)[1], int(record.header.revision)
                if revision < compacted:
                    if not from_now:
                        raise TooOldRevision(revision, compacted)
                    revision = compacted
                if revision > current + 1:
                    # etcd would wait for it; refused instead, like the SQLite store, so that a
                    # resourceVersion from nowhere is an error rather than a silent stall.
                    raise FutureRevision(revision, current)
                call: _WatchCall = self._watch_stub.Watch(metadata=_REQUIRE_LEADER)
                self._watch_calls.add(call)
                call.add_done_callback(self._watch_calls.discard)
                try:
                    create = WatchCreateRequest(
                        key=start, range_end=range_end, start_revision=revision, prev_kv=True,
                        progress_notify=progress_notify,
                    )
                    await call.write(WatchRequest(create_request=create))
                    created = await _next_response(call)
                    if created is None:
                        raise grpc.aio.AioRpcError(
                            grpc.StatusCode.UNAVAILABLE,
                            grpc.aio.Metadata(),
                            grpc.aio.Metadata(),
                            details="the watch stream ended before etcd registered it",
                        )
                    if created.canceled:
                        raise self._watch_canceled(created, revision, start.decode(errors="replace"))
                except BaseException:
                    call.cancel()
                    raise
                self._saw(created)
                return call, revision
        raise AssertionError("unreachable: tenacity either returns or re-raises")

    def _watch_canceled(self, response: WatchResponse, revision: int, prefix: str) -> StoreError:
        if response.compact_revision:
            # etcd may have dropped deletions at its compact revision; the store's history starts after.
            return TooOldRevision(revision, int(response.compact_revision) + 1)
        return StoreError(
            f"etcd canceled the watch on {prefix!r}: {response.cancel_reason or 'no reason given'}"
        )

    async def _sleep_unless_closed(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._closed.wait(), seconds)

    def _closed_under_us(self) -> bool:
        """Whether a CancelledError came from ``close()`` cancelling our call, not from our task being
        cancelled."""
        task = asyncio.current_task()
        return self._closed.is_set() and (task is None or task.cancelling() == 0)


def _check_value(value: bytes) -> None:
    if not isinstance(value, bytes):
        raise TypeError(f"store values must be bytes, got {type(value).__name__}")


def _orders_requested_progress(version: str) -> bool:
    """Whether etcd ``version`` ("3.5.17") sends a requested progress notification after the events
    before it."""
    try:
        major, minor, patch = (int(part) for part in version.split("-")[0].split(".")[:3])
    except ValueError:
        return False
    if (major, minor) in _ORDERED_PROGRESS_SINCE:
        return patch >= _ORDERED_PROGRESS_SINCE[(major, minor)]
    return (major, minor) > max(_ORDERED_PROGRESS_SINCE)


def _compact_record(kvs: Sequence[Any]) -> tuple[int, int]:
    """(version, recorded target) of compact_rev_key; (0, 0) before the first compaction."""
    return (int(kvs[0].version), int(kvs[0].value)) if kvs else (0, 0)


class _Watch:
    """What ``EtcdStore.watch`` returns: the event iterator, plus the registration already under way,
    which ``aclose()`` undoes even if iteration never started."""

    def __init__(
        self,
        opening: asyncio.Task[tuple[_WatchCall | None, int]],
        events: AsyncGenerator[WatchEvent | ProgressMark, None],
    ) -> None:
        self._opening = opening
        self._events = events

    def __aiter__(self) -> _Watch:
        return self

    async def __anext__(self) -> WatchEvent | ProgressMark:
        return await anext(self._events)

    async def aclose(self) -> None:
        self._opening.cancel()
        if self._opening.done() and not self._opening.cancelled() and self._opening.exception() is None:
            call, _ = self._opening.result()
            if call is not None:
                call.cancel()
        await self._events.aclose()


async def _next_response(call: _WatchCall) -> WatchResponse | None:
    """The next response of a watch stream; None once the stream has ended (``grpc.aio.EOF``)."""
    response = await call.read()
    return None if response is grpc.aio.EOF else response
