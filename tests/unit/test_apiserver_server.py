"""The API server as a whole: start, health, reflection, system objects, stop and restart.

Also home of ``Harness``, which the other test_apiserver_* modules use: a real ``ApiServer`` on a real
``SqliteStore`` in a temp dir, reached through a real grpc.aio channel, whose calls raise the
``cluster.api.errors`` classes (mapped from the gRPC status as the client maps them).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import time
from collections.abc import AsyncIterator
from pathlib import Path
from types import TracebackType
from typing import Any

import grpc
import pytest
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from cluster.api import apiserver_pb2, apiserver_pb2_grpc, errors, kinds, objects_pb2
from cluster.apiserver import ApiServer, ApiServerOptions
from store.sqlite import SqliteStore
from tests import builders

# ------------------------------------------------------------------------------------ object makers


def make_pod(name: str = "web", namespace: str = "", **spec: Any) -> objects_pb2.Pod:
    pod = builders.pod(name, namespace, image="nginx:1.25")
    for field, value in spec.items():
        setattr(pod.spec, field, value)
    return pod


def make_node(name: str = "n1", **labels: str) -> objects_pb2.Node:
    return builders.node(name, labels=labels, capacity={"cpu": "4", "memory": "8Gi"})


# ------------------------------------------------------------------------------------------ harness


class Harness:
    def __init__(self, data_dir: Path, **options: Any) -> None:
        self.data_dir = data_dir
        self.options = ApiServerOptions(listen="127.0.0.1:0", **options)
        self.store: SqliteStore | None = None
        self.server: ApiServer | None = None
        self.channel: grpc.aio.Channel | None = None
        self.stub: apiserver_pb2_grpc.ApiServerStub

    async def __aenter__(self) -> Harness:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        self.store = await SqliteStore.open(self.data_dir)
        self.server = ApiServer(self.store, self.options)
        port = await self.server.start()
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        self.stub = apiserver_pb2_grpc.ApiServerStub(self.channel)

    async def stop(self) -> None:
        if self.channel is not None:
            await self.channel.close()
            self.channel = None
        if self.server is not None:
            await self.server.stop(0)
            self.server = None
        if self.store is not None:
            await self.store.close()
            self.store = None

    async def restart(self) -> None:
        await self.stop()
        await self.start()

    # ------------------------------------------------------------------------------------- calls

    async def call(self, method: str, request: Message) -> Any:
        try:
            return await getattr(self.stub, method)(request)
        except grpc.aio.AioRpcError as exc:
            raise errors.from_status(exc.code(), exc.details()) from exc

    async def create(self, obj: Message, *, dry_run: bool = False) -> Any:
        request = apiserver_pb2.CreateRequest(object=kinds.wrap(obj), dry_run=dry_run)
        return kinds.unwrap(await self.call("Create", request))

    async def get(self, kind: str, name: str, namespace: str = "") -> Any:
        got = await self.call("Get", apiserver_pb2.GetRequest(kind=kind, name=name, namespace=namespace))
        return kinds.unwrap(got)

    async def update(self, obj: Message, *, dry_run: bool = False) -> Any:
        request = apiserver_pb2.UpdateRequest(object=kinds.wrap(obj), dry_run=dry_run)
        return kinds.unwrap(await self.call("Update", request))

    async def update_status(self, obj: Message, *, dry_run: bool = False) -> Any:
        request = apiserver_pb2.UpdateRequest(object=kinds.wrap(obj), dry_run=dry_run)
        return kinds.unwrap(await self.call("UpdateStatus", request))

    async def delete(
        self,
        kind: str,
        name: str,
        namespace: str = "",
        *,
        grace: int | None = None,
        resource_version: str = "",
        dry_run: bool = False,
    ) -> Any:
        request = apiserver_pb2.DeleteRequest(
            kind=kind, name=name, namespace=namespace, resource_version=resource_version, dry_run=dry_run
        )
        if grace is not None:
            request.grace_period_seconds = grace
        return kinds.unwrap(await self.call("Delete", request))

    async def list(self, kind: str, namespace: str = "", **fields: Any) -> apiserver_pb2.ListResponse:
        return await self.call("List", apiserver_pb2.ListRequest(kind=kind, namespace=namespace, **fields))

    async def names(self, kind: str, namespace: str = "", **fields: Any) -> list[str]:
        listed = await self.list(kind, namespace, **fields)
        return [kinds.unwrap(item).metadata.name for item in listed.items]

    async def bind(self, name: str, node: str, namespace: str = "", **meta: Any) -> objects_pb2.Pod:
        binding = objects_pb2.Binding(
            metadata=objects_pb2.ObjectMeta(name=name, namespace=namespace, **meta),
            target=objects_pb2.ObjectReference(kind="Node", name=node),
        )
        return await self.call("Bind", apiserver_pb2.BindRequest(binding=binding))

    def watch(self, kind: str, namespace: str = "", **fields: Any) -> Any:
        """The raw stream call (iterate it, ``cancel()`` it)."""
        return self.stub.Watch(apiserver_pb2.WatchRequest(kind=kind, namespace=namespace, **fields))

    async def next_events(self, stream: Any, count: int, wait_s: float = 5.0) -> list[tuple[str, Message]]:
        """The next ``count`` events of a watch stream as (type name, object)."""
        events: list[tuple[str, Message]] = []
        async with asyncio.timeout(wait_s):
            while len(events) < count:
                try:
                    event = await stream.read()
                except grpc.aio.AioRpcError as exc:
                    raise errors.from_status(exc.code(), exc.details()) from exc
                assert event is not grpc.aio.EOF, f"the watch ended after {events}"
                events.append((apiserver_pb2.WatchEvent.Type.Name(event.type), kinds.unwrap(event.object)))
        return events


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Harness]:
    async with Harness(tmp_path) as harness:
        yield harness


# ------------------------------------------------------------------------------------------- tests


async def test_health_reports_serving_for_the_server_and_the_api(api: Harness) -> None:
    assert api.channel is not None
    health = health_pb2_grpc.HealthStub(api.channel)
    for service in ("", "podsched.v1.ApiServer"):
        response = await health.Check(health_pb2.HealthCheckRequest(service=service))
        assert response.status == health_pb2.HealthCheckResponse.SERVING


async def test_reflection_lists_the_services(api: Harness) -> None:
    assert api.channel is not None
    reflection = reflection_pb2_grpc.ServerReflectionStub(api.channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    responses = reflection.ServerReflectionInfo(iter([request]))
    services = set()
    async for response in responses:
        services = {service.name for service in response.list_services_response.service}
        break
    assert {"podsched.v1.ApiServer", "grpc.health.v1.Health"} <= services


async def test_system_priority_classes_exist_from_start(api: Harness) -> None:
    classes = {pc.metadata.name: pc for pc in map(kinds.unwrap, (await api.list("PriorityClass")).items)}
    assert classes["system-cluster-critical"].value == 2_000_000_000
    assert classes["system-node-critical"].value == 2_000_001_000
    assert all(not pc.global_default for pc in classes.values())
    assert classes["system-node-critical"].preemption_policy == "PreemptLowerPriority"


async def test_restart_keeps_objects_and_resource_versions(api: Harness) -> None:
    created = await api.create(make_pod("web"))
    system_class = await api.get("PriorityClass", "system-node-critical")
    await api.restart()
    again = await api.get("Pod", "web")
    assert again == created
    # Starting again does not recreate the system classes.
    assert await api.get("PriorityClass", "system-node-critical") == system_class


@pytest.mark.timing
async def test_stop_ends_open_watches_cleanly(api: Harness) -> None:
    stream = api.watch("Pod")
    await api.create(make_pod("web"))
    assert [t for t, _ in await api.next_events(stream, 1)] == ["ADDED"]
    assert api.server is not None
    started = time.monotonic()
    await api.server.stop(5.0)
    # The watch is not what the stop waited for: it ended at once, with an OK status.
    assert time.monotonic() - started < 2.0
    assert await stream.read() is grpc.aio.EOF
    assert await stream.code() == grpc.StatusCode.OK


async def test_pods_marked_before_a_restart_are_finished_after_it(api: Harness) -> None:
    await api.create(make_node("n1"))
    await api.create(make_pod("web", node_name="n1"))
    marked = await api.delete("Pod", "web", grace=1)
    assert marked.metadata.HasField("deletion_timestamp")
    assert api.server is not None and api.store is not None
    await api.server.stop(0)
    await asyncio.sleep(1.5)  # the deadline passes while no server runs
    assert await api.store.get("/registry/pods/default/web") is not None
    await api.restart()
    stream = api.watch("Pod", resource_version=marked.metadata.resource_version)
    events = await api.next_events(stream, 1)
    assert events[0][0] == "DELETED"
    with pytest.raises(errors.NotFound, match=r'pods "web" not found'):
        await api.get("Pod", "web")


async def test_a_second_server_on_the_same_address_fails_clearly(api: Harness, tmp_path: Path) -> None:
    assert api.server is not None and api.store is not None
    other = ApiServer(api.store, ApiServerOptions(listen=api.server.address))
    with pytest.raises(OSError, match=rf"cannot listen on {api.server.address}"):
        await other.start()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"listen": "7443"}, "listen address must be host:port"),
        ({"compaction_interval_s": 0}, "compaction interval must be positive"),
        ({"min_retained_revisions": -1}, "min retained revisions must not be negative"),
        ({"max_object_bytes": 0}, "max object size must be positive"),
    ],
    ids=["listen-without-port", "zero-interval", "negative-retained", "zero-size"],
)
def test_options_refuse_nonsense(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ApiServerOptions(**options)


async def test_version_tells_the_release(api: Harness) -> None:
    info = await api.stub.Version(apiserver_pb2.VersionRequest())
    assert info.version == importlib.metadata.version("podsched")
