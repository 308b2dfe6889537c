"""An in-memory ApiServer servicer on a real grpc.aio server, for the client's unit tests (no tests here).

It keeps objects and a revision log like the real API server (resourceVersion = revision of the last
write, watch from any retained revision, compaction), and lets a test inject faults: a status for the
next calls of an RPC, a hang, a gate that holds new watches, and a switch that breaks open watches.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import grpc
from google.protobuf.message import Message

from cluster.api import apiserver_pb2, apiserver_pb2_grpc, errors, objects_pb2
from cluster.api.fencing import BOUND_UNDER_FENCE_ANNOTATION, fence_stamp
from cluster.api.kinds import Kind, envelope_kind, kind_by_name, unwrap, wrap
from cluster.client.retry import RetryPolicy
from tests import builders

#: Retries that do not slow tests down (the defaults back off for seconds).
FAST_RETRIES = RetryPolicy(initial_s=0.01, max_s=0.05)


def closed_port() -> int:
    """A loopback port nothing listens on (connections to it are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class _LogEntry:
    revision: int
    type: int
    envelope: apiserver_pb2.Object


@dataclass
class _Fault:
    code: grpc.StatusCode
    details: str
    times: int
    reason: str


@dataclass
class FakeApiServer(apiserver_pb2_grpc.ApiServerServicer):
    revision: int = 0
    compacted: int = 0
    objects: dict[str, apiserver_pb2.Object] = field(default_factory=dict)
    history: list[_LogEntry] = field(default_factory=list)
    #: (method, request) of every RPC received, in order.
    calls: list[tuple[str, Message]] = field(default_factory=list)
    faults: dict[str, _Fault] = field(default_factory=dict)
    hangs: dict[str, float] = field(default_factory=dict)
    #: Called with each List request before it is served (to change the store between pages).
    before_list: Callable[[apiserver_pb2.ListRequest], Awaitable[None]] | None = None
    #: When set, the next watch stream to send this many events ends UNAVAILABLE right after them (once).
    cut_watch_after: int = 0
    #: Per method, how many of the next calls are applied and then answered UNAVAILABLE (a server that
    #: committed the write and went away before answering).
    lost_replies: dict[str, int] = field(default_factory=dict)
    #: Pods whose bind in a Batch is refused as Fenced.
    fenced_binds: set[str] = field(default_factory=set)
    port: int = 0

    def __post_init__(self) -> None:
        self._changed = asyncio.Condition()
        self._generation = 0
        self.watch_gate = asyncio.Event()
        self.watch_gate.set()
        self.open_watches = 0
        self._server: grpc.aio.Server | None = None
        self._snapshots: dict[int, list[apiserver_pb2.Object]] = {}

    # ----------------------------------------------------------------------------------- test controls

    async def start(self) -> int:
        self._server = grpc.aio.server()
        apiserver_pb2_grpc.add_ApiServerServicer_to_server(self, self._server)
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        await self._server.start()
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(0)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def fail(
        self, method: str, code: grpc.StatusCode, details: str = "injected", times: int = 1, reason: str = ""
    ) -> None:
        """The next ``times`` calls of ``method`` end with ``code``, and ``reason`` in the trailing metadata
        as the real server sends it."""
        self.faults[method] = _Fault(code, details, times, reason)

    def calls_of(self, method: str) -> list[Message]:
        return [request for name, request in self.calls if name == method]

    async def put(self, obj: Message) -> Message:
        """Create or replace an object directly (as another client would), returning it as stored."""
        envelope = wrap(obj)
        kind = envelope_kind(envelope)
        meta = unwrap(envelope).metadata  # type: ignore[attr-defined]
        key = kind.key(meta.namespace, meta.name)
        event = apiserver_pb2.WatchEvent.MODIFIED if key in self.objects else apiserver_pb2.WatchEvent.ADDED
        return await self._write(key, envelope, event)

    async def remove(self, kind: Kind, namespace: str, name: str) -> Message:
        key = kind.key(namespace, name)
        envelope = apiserver_pb2.Object()
        envelope.CopyFrom(self.objects.pop(key))
        return await self._write(key, envelope, apiserver_pb2.WatchEvent.DELETED)

    async def put_together(self, *objs: Message) -> list[Message]:
        """Create or replace several objects at ONE new revision, as a multi-key store transaction does."""
        async with self._changed:
            self.revision += 1
            stored = []
            for obj in objs:
                envelope = wrap(obj)
                meta = unwrap(envelope).metadata  # type: ignore[attr-defined]
                key = envelope_kind(envelope).key(meta.namespace, meta.name)
                event = (apiserver_pb2.WatchEvent.MODIFIED if key in self.objects
                         else apiserver_pb2.WatchEvent.ADDED)
                meta.resource_version = str(self.revision)
                self.objects[key] = envelope
                self.history.append(_LogEntry(self.revision, event, envelope))
                stored.append(unwrap(envelope))
            self._changed.notify_all()
        return stored

    def compact(self) -> None:
        """Forget all history up to the current revision."""
        self.compacted = self.revision
        self.history = [entry for entry in self.history if entry.revision > self.compacted]

    async def break_watches(self) -> None:
        """End every open watch with UNAVAILABLE, as a server going away would."""
        async with self._changed:
            self._generation += 1
            self._changed.notify_all()

    # -------------------------------------------------------------------------------------------- RPCs

    async def Create(self, request, context):
        await self._enter("Create", request, context)
        kind = envelope_kind(request.object)
        meta = unwrap(request.object).metadata
        key = kind.key(meta.namespace, meta.name)
        if key in self.objects:
            await context.abort(grpc.StatusCode.ALREADY_EXISTS, f'{kind.plural} "{meta.name}" already exists')
        return await self._write(key, request.object, apiserver_pb2.WatchEvent.ADDED, envelope_out=True)

    async def Get(self, request, context):
        await self._enter("Get", request, context)
        kind = kind_by_name(request.kind)
        envelope = self.objects.get(kind.key(request.namespace, request.name))
        if envelope is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f'{kind.plural} "{request.name}" not found')
        return envelope

    async def Update(self, request, context):
        return await self._update("Update", request, context)

    async def UpdateStatus(self, request, context):
        return await self._update("UpdateStatus", request, context)

    async def Delete(self, request, context):
        await self._enter("Delete", request, context)
        kind = kind_by_name(request.kind)
        key = kind.key(request.namespace, request.name)
        if key not in self.objects:
            await context.abort(grpc.StatusCode.NOT_FOUND, f'{kind.plural} "{request.name}" not found')
        stored = unwrap(self.objects[key]).metadata.resource_version
        if request.resource_version and request.resource_version != stored:
            await context.abort(grpc.StatusCode.ABORTED, errors.CONFLICT_MESSAGE)
        envelope = self.objects.pop(key)
        return await self._write(key, envelope, apiserver_pb2.WatchEvent.DELETED, envelope_out=True)

    async def List(self, request, context):
        await self._enter("List", request, context)
        if self.before_list is not None:
            await self.before_list(request)
        if request.continue_token:
            revision, _, offset_text = request.continue_token.partition(":")
            if int(revision) <= self.compacted or int(revision) not in self._snapshots:
                await context.abort(grpc.StatusCode.OUT_OF_RANGE, "the continue token is too old")
            revision_number, offset = int(revision), int(offset_text)
        else:
            revision_number, offset = self.revision, 0
            self._snapshots[revision_number] = self._select(kind_by_name(request.kind), request.namespace)
        items = self._snapshots[revision_number]
        end = len(items) if request.limit == 0 else min(len(items), offset + request.limit)
        token = f"{revision_number}:{end}" if end < len(items) else ""
        return apiserver_pb2.ListResponse(
            items=items[offset:end], resource_version=str(revision_number), continue_token=token
        )

    async def Watch(self, request, context):
        await self._enter("Watch", request, context)
        await self.watch_gate.wait()
        kind = kind_by_name(request.kind)
        generation = self._generation
        if request.resource_version:
            after = int(request.resource_version)
            if after < self.compacted:
                await context.abort(
                    grpc.StatusCode.OUT_OF_RANGE, f"too old resource version: {after} ({self.compacted})"
                )
        else:
            after = self.revision
            for envelope in self._select(kind, request.namespace):
                yield apiserver_pb2.WatchEvent(type=apiserver_pb2.WatchEvent.ADDED, object=envelope)
        prefix = kind.key_prefix(request.namespace)
        self.open_watches += 1
        sent = 0
        try:
            while True:
                seen = after
                async with self._changed:
                    await self._changed.wait_for(
                        lambda seen=seen: self._generation != generation or self.revision > seen
                    )
                if self._generation != generation:
                    await context.abort(grpc.StatusCode.UNAVAILABLE, "watch broken by the test")
                for entry in [entry for entry in self.history if entry.revision > after]:
                    after = entry.revision
                    if _key_of(entry.envelope).startswith(prefix):
                        if self.cut_watch_after and sent == self.cut_watch_after:
                            self.cut_watch_after = 0
                            await context.abort(grpc.StatusCode.UNAVAILABLE, "watch cut by the test")
                        yield apiserver_pb2.WatchEvent(type=entry.type, object=entry.envelope)
                        sent += 1
        finally:
            self.open_watches -= 1

    async def Bind(self, request, context):
        await self._enter("Bind", request, context)
        binding = request.binding
        key = kind_by_name("Pod").key(binding.metadata.namespace, binding.metadata.name)
        if key not in self.objects:
            await context.abort(grpc.StatusCode.NOT_FOUND, f'pods "{binding.metadata.name}" not found')
        pod = objects_pb2.Pod()
        pod.CopyFrom(self.objects[key].pod)
        if pod.spec.node_name:
            await context.abort(grpc.StatusCode.ABORTED, f'pod {pod.metadata.name} is already assigned')
        pod.spec.node_name = binding.target.name
        return (await self._write(key, wrap(pod), apiserver_pb2.WatchEvent.MODIFIED, envelope_out=True)).pod

    async def BindGroup(self, request, context):
        await self._enter("BindGroup", request, context)
        pods = []
        for binding in request.bindings:
            key = kind_by_name("Pod").key(binding.metadata.namespace, binding.metadata.name)
            if key not in self.objects:
                await context.abort(grpc.StatusCode.NOT_FOUND, f'pods "{binding.metadata.name}" not found')
            pod = objects_pb2.Pod()
            pod.CopyFrom(self.objects[key].pod)
            if pod.spec.node_name:
                await context.abort(grpc.StatusCode.ABORTED, f"pod {pod.metadata.name} is already assigned")
            pod.spec.node_name = binding.target.name
            if request.HasField("fence"):
                pod.metadata.annotations[BOUND_UNDER_FENCE_ANNOTATION] = fence_stamp(
                    request.fence.holder_identity, request.fence.token
                )
            pods.append(pod)
        bound = await self.put_together(*pods)
        if self.lost_replies.get("BindGroup", 0) > 0:
            self.lost_replies["BindGroup"] -= 1
            await context.abort(grpc.StatusCode.UNAVAILABLE, "the server went away before answering")
        return apiserver_pb2.BindGroupResponse(pods=bound)

    # ------------------------------------------------------------------------------------------ helpers

    async def Batch(self, request, context):
        """Each create or bind item as Create and Bind answer it, its refusal as its status."""
        await self._enter("Batch", request, context)
        results = []
        for item in request.items:
            if item.WhichOneof("write") == "create":
                kind = envelope_kind(item.create.object)
                meta = unwrap(item.create.object).metadata
                key = kind.key(meta.namespace, meta.name)
                if key in self.objects:
                    results.append(_refusal(grpc.StatusCode.ALREADY_EXISTS, "AlreadyExists",
                                            f'{kind.plural} "{meta.name}" already exists'))
                    continue
                stored = await self._write(key, item.create.object, apiserver_pb2.WatchEvent.ADDED,
                                           envelope_out=True)
                results.append(apiserver_pb2.BatchResult(object=stored))
                continue
            binding = item.bind.binding
            key = kind_by_name("Pod").key(binding.metadata.namespace, binding.metadata.name)
            if binding.metadata.name in self.fenced_binds:
                results.append(_refusal(grpc.StatusCode.FAILED_PRECONDITION, "Fenced", "the lease moved on"))
            elif key not in self.objects:
                results.append(_refusal(grpc.StatusCode.NOT_FOUND, "NotFound",
                                        f'pods "{binding.metadata.name}" not found'))
            elif self.objects[key].pod.spec.node_name:
                results.append(_refusal(grpc.StatusCode.ABORTED, "Conflict",
                                        f"pod {binding.metadata.name} is already assigned"))
            else:
                pod = objects_pb2.Pod()
                pod.CopyFrom(self.objects[key].pod)
                pod.spec.node_name = binding.target.name
                stored = await self._write(key, wrap(pod), apiserver_pb2.WatchEvent.MODIFIED,
                                           envelope_out=True)
                results.append(apiserver_pb2.BatchResult(object=stored))
        return apiserver_pb2.BatchResponse(results=results)

    async def _enter(self, method: str, request: Message, context: grpc.aio.ServicerContext) -> None:
        self.calls.append((method, request))
        if method in self.hangs:
            await asyncio.sleep(self.hangs[method])
        fault = self.faults.get(method)
        if fault is not None and fault.times > 0:
            fault.times -= 1
            trailer = ((errors.REASON_KEY, fault.reason),) if fault.reason else ()
            await context.abort(fault.code, fault.details, trailing_metadata=trailer)

    async def _update(self, method: str, request, context):
        await self._enter(method, request, context)
        kind = envelope_kind(request.object)
        meta = unwrap(request.object).metadata
        key = kind.key(meta.namespace, meta.name)
        if key not in self.objects:
            await context.abort(grpc.StatusCode.NOT_FOUND, f'{kind.plural} "{meta.name}" not found')
        stored = unwrap(self.objects[key]).metadata.resource_version
        if meta.resource_version and meta.resource_version != stored:
            await context.abort(
                grpc.StatusCode.ABORTED,
                f'Operation cannot be fulfilled on {kind.plural} "{meta.name}": {errors.CONFLICT_MESSAGE}',
            )
        return await self._write(key, request.object, apiserver_pb2.WatchEvent.MODIFIED, envelope_out=True)

    async def _write(self, key: str, envelope: apiserver_pb2.Object, event_type: int, *,
                     envelope_out: bool = False):
        stored = apiserver_pb2.Object()
        stored.CopyFrom(envelope)
        async with self._changed:
            self.revision += 1
            unwrap(stored).metadata.resource_version = str(self.revision)  # type: ignore[attr-defined]
            if event_type != apiserver_pb2.WatchEvent.DELETED:
                self.objects[key] = stored
            self.history.append(_LogEntry(self.revision, event_type, stored))
            self._changed.notify_all()
        return stored if envelope_out else unwrap(stored)

    def _select(self, kind: Kind, namespace: str) -> list[apiserver_pb2.Object]:
        prefix = kind.key_prefix(namespace)
        return [self.objects[key] for key in sorted(self.objects) if key.startswith(prefix)]


def _refusal(code: grpc.StatusCode, reason: str, message: str) -> apiserver_pb2.BatchResult:
    return apiserver_pb2.BatchResult(
        error=apiserver_pb2.Status(code=code.value[0], message=message, reason=reason))


def _key_of(envelope: apiserver_pb2.Object) -> str:
    meta = unwrap(envelope).metadata  # type: ignore[attr-defined]
    return envelope_kind(envelope).key(meta.namespace, meta.name)


def pod(name: str, namespace: str = "default", node: str = "", **labels: str) -> objects_pb2.Pod:
    return builders.pod(name, namespace, labels=labels, node_name=node, image="busybox")


@contextlib.asynccontextmanager
async def running_fake() -> AsyncIterator[FakeApiServer]:
    server = FakeApiServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def until(predicate: Callable[[], bool], timeout_s: float = 10.0) -> None:
    """Wait (polling the event loop) until ``predicate()`` holds; fail the test after ``timeout_s``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {timeout_s}s")
        await asyncio.sleep(0.005)
