"""EtcdStore without an etcd: bad input is refused with a clear error, and failures are classified."""

from __future__ import annotations

import re
import socket
from collections.abc import Callable
from typing import Any

import grpc
import grpc.aio
import pytest

from store.base import StoreError, StoreUnavailable, TransactionTooLarge, TxnOp
from store.etcd import EtcdStore, EtcdTimeouts, _parse_endpoints, _resolve, _retriable


def _rpc_error(code: grpc.StatusCode, details: str) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details)


class FailingChannel:
    """Every unary call fails with ``error``; counts the attempts."""

    def __init__(self, error: grpc.aio.AioRpcError) -> None:
        self.error = error
        self.attempts = 0

    def unary_unary(self, *args: object, **kwargs: object) -> Callable[..., Any]:
        async def call(request: object, **_: object) -> None:
            self.attempts += 1
            raise self.error

        return call

    def stream_stream(self, *args: object, **kwargs: object) -> Callable[..., Any]:
        def open_stream(**_: object) -> None:
            raise AssertionError("no watch expected")

        return open_stream

    async def close(self) -> None:
        pass


def _store(channel: object = None, **timeouts: float) -> EtcdStore:
    channel = channel or FailingChannel(_rpc_error(grpc.StatusCode.INTERNAL, "unexpected call"))
    return EtcdStore(channel, key_prefix="/p", endpoints="127.0.0.1:1", timeouts=EtcdTimeouts(**timeouts))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("endpoints", "parsed"),
    [
        (["127.0.0.1:2379"], ["127.0.0.1:2379"]),
        ("a:1,b:2, c:3", ["a:1", "b:2", "c:3"]),
        ([" localhost:2379 ", "10.0.0.1:12379"], ["localhost:2379", "10.0.0.1:12379"]),
    ],
    ids=["one", "comma-separated", "padded"],
)
def test_endpoints_are_parsed(endpoints: list[str] | str, parsed: list[str]) -> None:
    assert _parse_endpoints(endpoints) == parsed


@pytest.mark.parametrize(
    ("endpoints", "message"),
    [
        ([], "at least one"),
        ("", "at least one"),
        (["etcd"], "'etcd': expected host:port"),
        (["etcd:client"], "'etcd:client': expected host:port"),
        ([":2379"], "':2379': expected host:port"),
        (["etcd:0"], "'etcd:0': expected host:port"),
        (["etcd:70000"], "'etcd:70000': expected host:port"),
    ],
    ids=["empty-list", "empty-string", "no-port", "named-port", "no-host", "port-zero", "port-too-big"],
)
def test_bad_endpoints_are_named(endpoints: list[str] | str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _parse_endpoints(endpoints)


@pytest.mark.parametrize(
    "field", ["retry_budget_s", "request_timeout_s", "watch_reconnect_budget_s"], ids=lambda f: f
)
def test_timeouts_must_be_positive(field: str) -> None:
    with pytest.raises(ValueError, match=f"EtcdTimeouts.{field} must be positive"):
        EtcdTimeouts(**{field: 0})


@pytest.mark.parametrize(
    ("code", "details", "idempotent", "retriable"),
    [
        (grpc.StatusCode.UNAVAILABLE, "etcdserver: no leader", False, True),
        (grpc.StatusCode.UNAVAILABLE, "failed to connect to all addresses", False, True),
        (grpc.StatusCode.UNAVAILABLE, "ipv4:127.0.0.1:1: Connection refused", False, True),
        (grpc.StatusCode.UNAVAILABLE, "etcdserver: request timed out", False, False),
        (grpc.StatusCode.UNAVAILABLE, "etcdserver: leader changed", False, False),
        (grpc.StatusCode.UNAVAILABLE, "Socket closed", False, False),
        (grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded", False, False),
        (grpc.StatusCode.UNAVAILABLE, "Socket closed", True, True),
        (grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded", True, True),
        (grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: request is too large", True, False),
        (grpc.StatusCode.OUT_OF_RANGE, "etcdserver: mvcc: required revision has been compacted", True, False),
    ],
    ids=[
        "write-no-leader",
        "write-not-connected",
        "write-refused",
        "write-timed-out-maybe-applied",
        "write-leader-changed-maybe-applied",
        "write-socket-closed-maybe-applied",
        "write-deadline",
        "read-socket-closed",
        "read-deadline",
        "too-large",
        "compacted",
    ],
)
def test_only_failures_that_provably_did_not_apply_a_write_are_retried(
    code: grpc.StatusCode, details: str, idempotent: bool, retriable: bool
) -> None:
    assert _retriable(_rpc_error(code, details), idempotent=idempotent) is retriable


async def test_an_ambiguous_write_failure_is_not_retried_and_is_unavailable() -> None:
    channel = FailingChannel(_rpc_error(grpc.StatusCode.UNAVAILABLE, "etcdserver: request timed out"))

    with pytest.raises(
        StoreUnavailable,
        match=re.escape("127.0.0.1:1 is unavailable: UNAVAILABLE: etcdserver: request timed out"),
    ):
        await _store(channel).create("/a", b"v")

    assert channel.attempts == 1


async def test_a_read_is_retried_within_the_budget_then_unavailable() -> None:
    channel = FailingChannel(_rpc_error(grpc.StatusCode.UNAVAILABLE, "Socket closed"))

    with pytest.raises(StoreUnavailable) as raised:
        await _store(channel, retry_budget_s=0.3).get("/a")

    assert channel.attempts > 1
    assert isinstance(raised.value.__cause__, grpc.aio.AioRpcError)


async def test_a_rejected_request_is_a_store_error_with_etcds_words() -> None:
    channel = FailingChannel(_rpc_error(grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: key is not provided"))

    with pytest.raises(
        StoreError, match="rejected the request: INVALID_ARGUMENT: etcdserver: key is not provided"
    ):
        await _store(channel).update("/a", b"v" * 10, None)


@pytest.mark.parametrize(
    "details", ["etcdserver: too many operations in txn request", "etcdserver: request is too large"]
)
async def test_a_transaction_too_large_for_etcd_says_which_limits_to_raise(details: str) -> None:
    channel = FailingChannel(_rpc_error(grpc.StatusCode.INVALID_ARGUMENT, details))

    limits = rf"too large \({details}\): .*--max-txn-ops.*--max-request-bytes"
    with pytest.raises(TransactionTooLarge, match=limits):
        await _store(channel).txn([TxnOp.create(f"/k{i}", b"v") for i in range(3)])
    assert channel.attempts == 1


async def test_a_closed_store_refuses_requests() -> None:
    store = _store()
    await store.close()

    with pytest.raises(StoreError, match="closed"):
        await store.get("/a")


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda s: s.list("/pods/", continue_key="/nodes/n1"), ValueError, "not under the prefix '/pods/'"),
        (lambda s: s.create("/a", "text"), TypeError, "values must be bytes, got str"),
        (lambda s: s.update("/a", None, 1), TypeError, "values must be bytes, got NoneType"),
        (lambda s: s.get(""), ValueError, "must not be empty"),
        (lambda s: s.compact(0), ValueError, "compact revision must be >= 1"),
    ],
    ids=["continue-key-outside-prefix", "str-value", "none-value", "empty-key", "compact-zero"],
)
async def test_bad_arguments_are_refused_before_any_request(
    call: Callable[[EtcdStore], Any], error: type[Exception], message: str
) -> None:
    channel = FailingChannel(_rpc_error(grpc.StatusCode.INTERNAL, "no request expected"))

    with pytest.raises(error, match=message):
        await call(_store(channel))

    assert channel.attempts == 0


async def test_a_negative_watch_revision_is_refused_at_the_call() -> None:
    with pytest.raises(ValueError, match="from_revision must be >= 0"):
        _store().watch("/pods/", from_revision=-1)


@pytest.fixture
def fake_dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Host names the resolver knows, instead of the system's resolver."""
    names = {"etcd-a": "10.0.0.1", "etcd-b": "10.0.0.2"}

    def getaddrinfo(host: str, port: int, family: int = 0, type: int = 0, *args: object) -> list[Any]:
        if host not in names:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (names[host], port))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return names


@pytest.mark.parametrize(
    ("endpoints", "addresses", "name"),
    [
        (["127.0.0.1:2379", "10.1.2.3:2380"], ["127.0.0.1:2379", "10.1.2.3:2380"], None),
        (["etcd-a:2379", "etcd-b:2379"], ["10.0.0.1:2379", "10.0.0.2:2379"], "etcd-a"),
        (["127.0.0.1:1", "etcd-b:2"], ["127.0.0.1:1", "10.0.0.2:2"], "etcd-b"),
    ],
    ids=["addresses", "names", "mixed"],
)
async def test_host_names_are_resolved_to_addresses(
    fake_dns: dict[str, str], endpoints: list[str], addresses: list[str], name: str | None
) -> None:
    assert await _resolve(endpoints) == (addresses, name)


@pytest.mark.parametrize(
    ("endpoint", "error", "message"),
    [
        ("nowhere:2379", StoreUnavailable, "'nowhere:2379': cannot resolve 'nowhere'"),
        ("[::1]:2379", ValueError, r"'\[::1\]:2379': IPv6 is not supported"),
    ],
    ids=["unknown-name", "ipv6"],
)
async def test_unusable_hosts_are_named(
    fake_dns: dict[str, str], endpoint: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        await _resolve([endpoint])
