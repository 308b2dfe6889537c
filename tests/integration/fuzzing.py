"""Hypothesis strategies over the API's real protobuf messages, and a raw gRPC caller, for the fuzz
modules (test_fuzz_*.py).

``messages(cls)`` builds any message from its descriptor: every field may be set, strings come from a
mix of names the server acts on (kinds, namespaces, selectors, resourceVersions) and hostile text
(NUL, unicode, path tricks, huge values), numbers span their whole wire range, Timestamps and
google.protobuf.Values include values no Kubernetes object has (negative nanos, NaN, nesting).
``mutated(obj)`` overlays a sparse random message of the same type on a valid object, so most of it
stays valid and the fuzzer reaches the checks that lie past the first field.

``RawApi`` calls the ApiServer service over one grpc.aio channel with raw bytes (the request is sent
as given, the answer is not decoded), so a test can send bytes that are no message at all.
"""

from __future__ import annotations

import asyncio
import functools
import math
import os
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.struct_pb2 import Struct, Value
from google.protobuf.timestamp_pb2 import Timestamp
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from cluster.api import apiserver_pb2, objects_pb2

SERVICE = "/podsched.v1.ApiServer/"
UNARY_METHODS = ("Create", "Get", "Update", "UpdateStatus", "Delete", "List", "Bind", "BindGroup")
REQUEST_TYPES: dict[str, type[Message]] = {
    "Create": apiserver_pb2.CreateRequest,
    "Get": apiserver_pb2.GetRequest,
    "Update": apiserver_pb2.UpdateRequest,
    "UpdateStatus": apiserver_pb2.UpdateRequest,
    "Delete": apiserver_pb2.DeleteRequest,
    "List": apiserver_pb2.ListRequest,
    "Bind": apiserver_pb2.BindRequest,
    "BindGroup": apiserver_pb2.BindGroupRequest,
    "Watch": apiserver_pb2.WatchRequest,
}

#: Every way a call may end on hostile input; anything else (INTERNAL, UNKNOWN, UNAVAILABLE, ...) is a
#: bug. DEADLINE_EXCEEDED counts only with the server's own message (a client-side timeout is a hang).
ALLOWED_CODES = frozenset({
    grpc.StatusCode.OK,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.OUT_OF_RANGE,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.DEADLINE_EXCEEDED,
})

#: Names the server acts on, so that random requests reach past "unknown kind" and "not found".
_MEANINGFUL = [
    "Pod", "pods", "po", "Node", "nodes", "PriorityClass", "PodDisruptionBudget", "pdb", "Lease", "Event",
    "default", "kube-system", "kube-scheduler", "fuzz", "web", "node-1", "system-node-critical",
    "", "0", "1", "2", "-1", "18446744073709551616", "999999999999",
    "app=web", "app in (a,b)", "!app", "app,app!=x", "metadata.name=web", "spec.nodeName=",
    "status.phase!=Succeeded", "metadata.namespace==default", "=", ",", "a=b=c", "x in (", "(",
    "Always", "Never", "PreemptLowerPriority", "NoSchedule", "Exists", "Equal", "In", "NotIn",
    "DoesNotExist", "Gt", "Lt", "100m", "1Gi", "-1", "1e3", "50%", "101%", "TCP", "Ready", "True",
    "v1", "policy/v1", "scheduling.k8s.io/v1", "kubernetes.io/hostname", "example.com/x",
]
#: Text that breaks naive code: separators of store keys, NUL, escapes, unicode, maximal lengths.
_HOSTILE = [
    "\x00", "a\x00b", "/", "a/b", "..", ".", "%", "%2F", "\\", "'", '"', "\n", "\t", " ", "é", "ß",
    "🙂", "\u202e", "\ufeff", "a" * 63, "a" * 64, "a" * 253, "a" * 254, "a." * 127, "-a", "a-",
    "A", "AbC", "1.5", "1e309", "nan", "inf", "-0", "0x10", "9" * 40,
]

T = TypeVar("T")

#: Set to a number of examples to explore further than the suite does, with fresh random examples:
#: ``PODSCHED_FUZZ_EXAMPLES=5000 pytest tests/integration/test_fuzz_rpc.py``.
EXPLORE_ENV = "PODSCHED_FUZZ_EXAMPLES"


def fuzz_settings(max_examples: int) -> settings:
    """Hypothesis settings of a fuzz property: the same ``max_examples`` examples on every run (the suite
    is repeatable and its time bounded), unless EXPLORE_ENV asks for a random exploration. No deadline:
    a call's time is the server's, and a hang is caught by the call timeout instead."""
    explore = int(os.environ.get(EXPLORE_ENV, "0"))
    return settings(
        max_examples=explore or max_examples,
        derandomize=not explore,
        deadline=None,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example,
        ],
    )


def strings() -> st.SearchStrategy[str]:
    small = st.sampled_from(_MEANINGFUL) | st.sampled_from(_HOSTILE) | st.text(max_size=20)
    # Rare (one string in 40) and large: a value that outgrows its field, an error message's trailer,
    # or, several together, the object size limit.
    large = st.sampled_from([300, 5_000, 70_000, 400_000]).map(lambda n: "x" * n)
    return st.integers(0, 39).flatmap(lambda n: large if n == 0 else small)


def _int_range(bits: int, signed: bool) -> st.SearchStrategy[int]:
    low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    return st.one_of(st.sampled_from([0, 1, -1 if signed else 2, low, high]), st.integers(low, high))


_SCALARS: dict[int, Callable[[], st.SearchStrategy[Any]]] = {
    FieldDescriptor.TYPE_STRING: strings,
    FieldDescriptor.TYPE_BYTES: lambda: st.binary(max_size=64),
    FieldDescriptor.TYPE_BOOL: st.booleans,
    FieldDescriptor.TYPE_INT32: lambda: _int_range(32, True),
    FieldDescriptor.TYPE_SINT32: lambda: _int_range(32, True),
    FieldDescriptor.TYPE_SFIXED32: lambda: _int_range(32, True),
    FieldDescriptor.TYPE_INT64: lambda: _int_range(64, True),
    FieldDescriptor.TYPE_SINT64: lambda: _int_range(64, True),
    FieldDescriptor.TYPE_SFIXED64: lambda: _int_range(64, True),
    FieldDescriptor.TYPE_UINT32: lambda: _int_range(32, False),
    FieldDescriptor.TYPE_FIXED32: lambda: _int_range(32, False),
    FieldDescriptor.TYPE_UINT64: lambda: _int_range(64, False),
    FieldDescriptor.TYPE_FIXED64: lambda: _int_range(64, False),
    FieldDescriptor.TYPE_DOUBLE: lambda: st.floats(allow_nan=True, allow_infinity=True),
    FieldDescriptor.TYPE_FLOAT: lambda: st.floats(width=32, allow_nan=True, allow_infinity=True),
}


def timestamps() -> st.SearchStrategy[Timestamp]:
    """Valid times, and what no clock gives: negative or overflowing nanos, years past 9999."""
    return st.builds(
        Timestamp,
        seconds=st.one_of(st.integers(-62135596800, 253402300799), _int_range(64, True)),
        nanos=st.one_of(st.integers(0, 999_999_999), _int_range(32, True)),
    )


def values() -> st.SearchStrategy[Value]:
    """google.protobuf.Value (a PDB's IntOrString): numbers incl. NaN and huge, strings, and the kinds
    no IntOrString has (null, bool, lists, structs, nested)."""
    leaves = st.one_of(
        st.floats(allow_nan=True, allow_infinity=True).map(lambda x: Value(number_value=x)),
        st.sampled_from([0.0, 1.0, 2.0**31, 2.0**31 - 1, -1.0, 0.5, 1e300, math.nan]).map(
            lambda x: Value(number_value=x)
        ),
        strings().map(lambda s: Value(string_value=s)),
        st.booleans().map(lambda b: Value(bool_value=b)),
        st.just(Value(null_value=0)),
        st.just(Value()),
    )

    def nest(children: st.SearchStrategy[Value]) -> st.SearchStrategy[Value]:
        def as_list(items: list[Value]) -> Value:
            value = Value()
            value.list_value.values.extend(items)
            return value

        def as_struct(fields: dict[str, Value]) -> Value:
            value = Value()
            for key, item in fields.items():
                value.struct_value.fields[key].CopyFrom(item)
            return value

        return st.lists(children, max_size=3).map(as_list) | st.dictionaries(
            st.text(max_size=5), children, max_size=3
        ).map(as_struct)

    return st.recursive(leaves, nest, max_leaves=6)


def structs() -> st.SearchStrategy[Struct]:
    """google.protobuf.Struct (a managedFields entry's fieldsV1): objects of any values, nested."""

    def as_struct(fields: dict[str, Value]) -> Struct:
        struct = Struct()
        for key, item in fields.items():
            struct.fields[key].CopyFrom(item)
        return struct

    return st.dictionaries(st.text(max_size=8), values(), max_size=3).map(as_struct)


_WELL_KNOWN: dict[str, Callable[[], st.SearchStrategy[Message]]] = {
    Timestamp.DESCRIPTOR.full_name: timestamps,
    Value.DESCRIPTOR.full_name: values,
    Struct.DESCRIPTOR.full_name: structs,
}


def _field_strategy(field: FieldDescriptor, depth: int) -> st.SearchStrategy[Any] | None:
    if field.type == FieldDescriptor.TYPE_ENUM:
        # Open enums: values the schema does not name must be survivable too.
        return _int_range(32, True)
    if field.type != FieldDescriptor.TYPE_MESSAGE:
        return _SCALARS[field.type]()
    message_type = field.message_type
    if message_type.GetOptions().map_entry:
        key = _field_strategy(message_type.fields_by_name["key"], depth)
        value = _field_strategy(message_type.fields_by_name["value"], depth)
        if key is None or value is None:
            return None
        return st.dictionaries(key, value, max_size=4)
    if depth <= 0:
        return None
    return _descriptor_messages(message_type, depth - 1)


def _descriptor_messages(descriptor: Descriptor, depth: int) -> st.SearchStrategy[Message]:
    well_known = _WELL_KNOWN.get(descriptor.full_name)
    if well_known is not None:
        return well_known()
    return _messages_of(descriptor, depth)


@functools.cache
def _messages_of(descriptor: Descriptor, depth: int) -> st.SearchStrategy[Message]:
    cls = _message_class(descriptor)
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for field in descriptor.fields:
        strategy = _field_strategy(field, depth)
        if strategy is None:
            continue
        if field.is_repeated and not _is_map(field):
            strategy = st.lists(strategy, max_size=3)
        optional[field.name] = strategy
    return st.fixed_dictionaries({}, optional=optional).map(lambda fields: _build(cls, fields))


def _is_map(field: FieldDescriptor) -> bool:
    return field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.GetOptions().map_entry


def _message_class(descriptor: Descriptor) -> type[Message]:
    for module in (objects_pb2, apiserver_pb2):
        cls = getattr(module, descriptor.name, None)
        if cls is not None and cls.DESCRIPTOR is descriptor:
            return cls  # type: ignore[no-any-return]
    raise LookupError(f"no message class for {descriptor.full_name}")


def _build(cls: type[Message], fields: dict[str, Any]) -> Message:
    msg = cls()
    for name, value in fields.items():
        field = cls.DESCRIPTOR.fields_by_name[name]
        target = getattr(msg, name)
        if _is_map(field):
            for key, item in value.items():
                if isinstance(item, Message):
                    target[key].CopyFrom(item)
                else:
                    target[key] = item
        elif field.is_repeated:
            target.extend(value)
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            target.CopyFrom(value)
        else:
            setattr(msg, name, value)
    return msg


def messages(cls: type[T], depth: int = 4) -> st.SearchStrategy[T]:
    """Random instances of the protobuf message class ``cls``, nested ``depth`` levels deep."""
    return _descriptor_messages(cls.DESCRIPTOR, depth)  # type: ignore[attr-defined,return-value]


def mutated(obj: Message) -> st.SearchStrategy[Message]:
    """``obj`` with random fields overwritten (a sparse random overlay) and some top-level fields
    cleared: mostly valid objects, each wrong in a few places."""
    cls = type(obj)
    top_fields = [field.name for field in cls.DESCRIPTOR.fields]

    def mutate(overlay: Message, cleared: list[str]) -> Message:
        result = cls()
        result.CopyFrom(obj)
        for name in cleared:
            result.ClearField(name)
        result.MergeFrom(overlay)
        return result

    return st.builds(mutate, messages(cls, depth=5), st.lists(st.sampled_from(top_fields), max_size=2))


# ------------------------------------------------------------------------------------ the caller

Metadata = Sequence[tuple[str, str]]


def bearer(token: str) -> Metadata:
    """Call metadata presenting ``token`` as kubectl does. Written out rather than ClientCredentials'
    because the fuzz sends tokens (spaces, empty) a client refuses to send."""
    return (("authorization", f"Bearer {token}"),)


@dataclass(frozen=True, slots=True)
class Outcome:
    code: grpc.StatusCode
    message: str

    @property
    def rejected(self) -> bool:
        return self.code is not grpc.StatusCode.OK


class RawApi:
    """The ApiServer service over one grpc.aio channel on a private event loop, called synchronously
    (hypothesis drives plain functions). Calls send raw bytes; ``timeout_s`` bounds each, so a hang
    shows up as a client-side DEADLINE_EXCEEDED that the allowed-outcome check refuses. Calls carry
    ``token`` as a bearer token unless given metadata of their own."""

    def __init__(self, address: str, timeout_s: float, *, token: str | None = None) -> None:
        self.address = address
        self.timeout_s = timeout_s
        self._metadata: Metadata = bearer(token) if token is not None else ()
        self._loop = asyncio.new_event_loop()
        self._channel = self._run(self._open(address))

    @staticmethod
    async def _open(address: str) -> grpc.aio.Channel:
        return grpc.aio.insecure_channel(
            address, options=[("grpc.max_send_message_length", 64 * 1024 * 1024)]
        )

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self._loop.run_until_complete(coroutine)

    def close(self) -> None:
        self._run(self._channel.close())
        self._loop.close()

    def unary(self, method: str, body: bytes, metadata: Metadata | None = None) -> Outcome:
        return self._run(self._unary(method, body, self._metadata if metadata is None else metadata))

    async def _unary(self, method: str, body: bytes, metadata: Metadata) -> Outcome:
        call = self._channel.unary_unary(SERVICE + method)
        try:
            await call(body, timeout=self.timeout_s, metadata=metadata)
        except grpc.aio.AioRpcError as exc:
            return Outcome(exc.code(), exc.details() or "")
        return Outcome(grpc.StatusCode.OK, "")

    def watch(self, body: bytes, listen_s: float, metadata: Metadata | None = None) -> Outcome:
        """Open a watch and read for up to ``listen_s``: OK when it streams (events or silence) that
        long, else how it ended. The watch is cancelled either way."""
        return self._run(self._watch(body, listen_s, self._metadata if metadata is None else metadata))

    async def _watch(self, body: bytes, listen_s: float, metadata: Metadata) -> Outcome:
        call = self._channel.unary_stream(SERVICE + "Watch")(body, timeout=self.timeout_s, metadata=metadata)
        try:
            async with asyncio.timeout(listen_s):
                async for _ in call:
                    pass
        except TimeoutError:
            return Outcome(grpc.StatusCode.OK, "")
        except grpc.aio.AioRpcError as exc:
            return Outcome(exc.code(), exc.details() or "")
        finally:
            call.cancel()
        # The server ended the stream on its own with OK: only a stopping server does that.
        return Outcome(grpc.StatusCode.UNAVAILABLE, "the watch ended without an error")

    def revision(self) -> int:
        """The store's current revision: a List's resourceVersion is the revision it was read at, the
        store's latest (listing.py), whatever the kind listed."""
        body = apiserver_pb2.ListRequest(kind="PriorityClass", limit=1).SerializeToString()
        return self._run(self._revision(body))

    async def _revision(self, body: bytes) -> int:
        call = self._channel.unary_unary(
            SERVICE + "List", response_deserializer=apiserver_pb2.ListResponse.FromString
        )
        response = await call(body, timeout=self.timeout_s, metadata=self._metadata)
        return int(response.resource_version)


# ---------------------------------------------------------------------------------- the checks

#: How long a watch is read before it counts as accepted (it streams until cancelled).
WATCH_LISTEN_S = 0.1


def check_outcome(outcome: Outcome) -> None:
    """The outcome is one a caller can act on: an allowed status, with a message when refused."""
    assert outcome.code in ALLOWED_CODES, outcome
    if outcome.rejected:
        assert outcome.message, outcome
        # The client's gRPC refusing a status trailer too big for it hides the server's error. (The
        # server's gRPC refusing request headers too big, an 8 KiB token, is a fine answer.)
        assert not ("Stream removed" in outcome.message and "metadata size exceeds" in outcome.message), (
            outcome
        )
    if outcome.code is grpc.StatusCode.DEADLINE_EXCEEDED:
        assert "request timeout" in outcome.message, f"the call hung: {outcome}"


def call_checked(api: RawApi, method: str, body: bytes, metadata: Metadata | None = None) -> Outcome:
    """Send ``body`` to ``method``; check the outcome, and that a rejection changed nothing (the store's
    revision before and after: so nothing else may write meanwhile). An accepted delete that only
    marked a pod is finished at once, so that the server's graceful deletion never writes later."""
    before = api.revision()
    if method == "Watch":
        outcome = api.watch(body, WATCH_LISTEN_S, metadata)
    else:
        outcome = api.unary(method, body, metadata)
    check_outcome(outcome)
    if outcome.rejected:
        assert api.revision() == before, f"{method} was rejected but the store changed: {outcome}"
    elif method == "Delete":
        _finish_deletion(api, body)
    return outcome


def _finish_deletion(api: RawApi, body: bytes) -> None:
    """A delete that only marked a pod: delete it now, or the server will, during a later example."""
    request = apiserver_pb2.DeleteRequest.FromString(body)
    if not request.HasField("grace_period_seconds") or request.grace_period_seconds != 0:
        request.grace_period_seconds = 0
        request.ClearField("resource_version")
        request.ClearField("fence")
        request.dry_run = False
        forced = api.unary("Delete", request.SerializeToString())
        assert forced.code in (grpc.StatusCode.OK, grpc.StatusCode.NOT_FOUND), forced
