"""The informer against the real `podsched apiserver` process, on each backend: it stays equal to the
server through creates, updates, binds and (graceful) deletions, hands over from list to watch without
a gap under concurrent writes, re-watches after a cut connection without repeating or missing an event,
and relists after the history it needed was compacted while it was cut off."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from google.protobuf.message import Message

from cluster.api import objects_pb2
from cluster.api.kinds import POD
from cluster.client import Client, Expired, Informer
from cluster.client.retry import RetryPolicy
from cluster.launcher.process import ApiServerProcess
from tests import builders
from tests.integration.conftest import own_apiserver

#: Re-watch quickly once a cut connection is restored (the default backoff reaches 10 s).
QUICK_REWATCH = RetryPolicy(initial_s=0.05, max_s=0.5)
#: How long the informer may take to catch up with the server after the last write.
CATCH_UP_S = 30.0


class EventLog:
    """Handlers that replay every event into a dict, and check each key's resourceVersions only grow."""

    def __init__(self) -> None:
        self.state: dict[str, Message] = {}
        self.events: list[tuple[str, str, str]] = []
        self.problems: list[str] = []
        self._last_rv: dict[str, int] = {}

    def register(self, informer: Informer) -> EventLog:
        def key(obj: Message) -> str:
            return f"{obj.metadata.namespace}/{obj.metadata.name}"

        def seen(kind: str, obj: Message) -> None:
            rv = int(obj.metadata.resource_version)
            if kind != "delete" and rv <= self._last_rv.get(key(obj), 0):
                self.problems.append(f"{kind} of {key(obj)} at {rv} after {self._last_rv[key(obj)]}")
            self._last_rv[key(obj)] = rv
            self.events.append((kind, key(obj), obj.metadata.resource_version))

        def on_add(obj: Message) -> None:
            if key(obj) in self.state:
                self.problems.append(f"add of {key(obj)}, which is already there")
            seen("add", obj)
            self.state[key(obj)] = obj

        def on_update(old: Message, new: Message) -> None:
            if self.state.get(key(new)) is not old:
                self.problems.append(f"update of {key(new)} from an object the informer did not hold")
            seen("update", new)
            self.state[key(new)] = new

        def on_delete(obj: Message) -> None:
            if self.state.pop(key(obj), None) is None:
                self.problems.append(f"delete of {key(obj)}, which was not there")
            seen("delete", obj)

        informer.add_handler(on_add=on_add, on_update=on_update, on_delete=on_delete)
        return self


@contextlib.asynccontextmanager
async def running(informer: Informer) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(informer.wait_synced(), CATCH_UP_S)
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def versions(objects: list[Message] | dict[str, Message]) -> dict[str, str]:
    """key -> resourceVersion of a list of objects (or of a key -> object dict)."""
    if isinstance(objects, dict):
        return {key: obj.metadata.resource_version for key, obj in objects.items()}
    return {f"{obj.metadata.namespace}/{obj.metadata.name}": obj.metadata.resource_version for obj in objects}


async def assert_matches_server(client: Client, informer: Informer, namespace: str) -> dict[str, str]:
    """Wait until the informer holds exactly what the server lists (key and resourceVersion), and
    return that state. Graceful deletions finish on the server's own schedule, hence the polling."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CATCH_UP_S
    while True:
        listed = versions((await client.list_all(POD, namespace)).items)
        held = versions(dict(informer.items()))
        if listed == held:
            return listed
        if loop.time() > deadline:
            missing = sorted(set(listed.items()) - set(held.items()))
            extra = sorted(set(held.items()) - set(listed.items()))
            raise AssertionError(f"informer differs from the server: missing {missing[:5]} extra {extra[:5]}")
        await asyncio.sleep(0.05)


def pod(name: str, namespace: str, **labels: str) -> objects_pb2.Pod:
    return builders.pod(name, namespace, spec={"terminationGracePeriodSeconds": 0}, labels=labels,
                        image=builders.IMAGE)


def node(name: str) -> objects_pb2.Node:
    return builders.node(name, allocatable=builders.ROOMY)


def by_node(obj: Message) -> list[str]:
    return [obj.spec.node_name] if obj.spec.node_name else []


async def churn(client: Client, namespace: str, node_name: str, prefix: str, count: int) -> None:
    """Create ``count`` pods, then label, bind and delete (at once or gracefully) some of them."""
    created = await asyncio.gather(*(client.create(pod(f"{prefix}-{i}", namespace)) for i in range(count)))
    for index, obj in enumerate(created):
        if index % 3 == 0:
            obj.metadata.labels["tier"] = "front"
            await client.update(obj)
        if index % 4 == 1:
            await client.bind(namespace, obj.metadata.name, node_name)
    for index, obj in enumerate(created):
        if index % 5 == 2:
            await client.delete(POD, obj.metadata.name, namespace, grace_period_seconds=0)
        elif index % 7 == 3:
            await client.delete(POD, obj.metadata.name, namespace, grace_period_seconds=1)


async def test_informer_stays_equal_to_the_server(
    client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    node_name = unique("node")
    await client.create(node(node_name))
    informer = Informer(client, POD, namespace=namespace, indexers={"node": by_node})
    log = EventLog().register(informer)
    await client.create(pod("before", namespace))
    async with running(informer):
        await churn(client, namespace, node_name, "p", 40)
        final = await assert_matches_server(client, informer, namespace)

    assert log.problems == []
    assert versions(log.state) == final
    assert any(kind == "delete" for kind, _, _ in log.events)
    bound = await client.list_all(POD, namespace, field_selector=f"spec.nodeName={node_name}")
    assert sorted(p.metadata.name for p in informer.by_index("node", node_name)) == sorted(
        p.metadata.name for p in bound.items
    )
    assert bound.items, "some bound pods survive the churn"


async def test_informers_started_during_writes_converge(
    client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    """The list's resourceVersion is where the watch starts: an informer started while writes land must
    neither miss one made between its list and its watch nor apply one twice."""
    node_name = unique("node")
    await client.create(node(node_name))
    writer = asyncio.create_task(churn(client, namespace, node_name, "w", 60))
    informers = []
    logs = []
    try:
        for _ in range(3):
            await asyncio.sleep(random.uniform(0.01, 0.1))
            informer = Informer(client, POD, namespace=namespace, page_size=7)
            logs.append(EventLog().register(informer))
            informers.append(informer)
        async with contextlib.AsyncExitStack() as stack:
            for informer in informers:
                await stack.enter_async_context(running(informer))
            await writer
            final = await assert_matches_server(client, informers[0], namespace)
            for informer in informers[1:]:
                assert await assert_matches_server(client, informer, namespace) == final
    finally:
        writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await writer
    for log in logs:
        assert log.problems == []
        assert versions(log.state) == final


async def test_resync_catches_up_at_once_and_the_watch_repeats_nothing(
    client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    """A new leader's catch-up: once ``resync`` returns, every write made before it is held (without
    waiting for the watch), and the watch's own copies of those events, arriving later, are not applied
    again (each object is added once, and resourceVersions only grow)."""
    node_name = unique("node")
    await client.create(node(node_name))
    informer = Informer(client, POD, namespace=namespace)
    log = EventLog().register(informer)
    async with running(informer):
        for round_ in range(5):
            await churn(client, namespace, node_name, f"r{round_}", 12)
            marker = await client.create(pod(f"marker-{round_}", namespace))
            await informer.resync()
            held = informer.get(f"{namespace}/marker-{round_}")
            assert held is not None and held.metadata.resource_version == marker.metadata.resource_version
            assert int(informer.resource_version) >= int(marker.metadata.resource_version)
        final = await assert_matches_server(client, informer, namespace)
    assert log.problems == []
    assert versions(log.state) == final
    added = [key for kind, key, _ in log.events if kind == "add"]
    assert len(added) == len(set(added)), "an object was added twice"


# ------------------------------------------------------------------------------------ cut connections


class TcpProxy:
    """A loopback TCP proxy to the API server that a test can cut (every connection dropped, new ones
    refused) and restore, as a network partition between one client and the server would."""

    def __init__(self, target: str) -> None:
        host, _, port = target.rpartition(":")
        self._target = (host, int(port))
        self._server: asyncio.Server | None = None
        self._pumps: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()
        for writer in list(self._writers):
            writer.transport.abort()
        for task in list(self._pumps):
            task.cancel()
        await asyncio.gather(*self._pumps, return_exceptions=True)

    async def close(self) -> None:
        await self.cut()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self._target)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, upstream_writer))
        for source, sink in ((reader, upstream_writer), (upstream_reader, writer)):
            task = asyncio.create_task(self._pump(source, sink))
            self._pumps.add(task)
            task.add_done_callback(self._pumps.discard)

    async def _pump(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            sink.transport.abort()
            self._writers.discard(sink)


@contextlib.asynccontextmanager
async def proxy_to(address: str) -> AsyncIterator[TcpProxy]:
    proxy = TcpProxy(address)
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.close()


async def test_rewatches_after_a_cut_without_repeating_or_missing_an_event(
    client: Client, apiserver: ApiServerProcess, namespace: str
) -> None:
    async with proxy_to(apiserver.address) as proxy, Client(proxy.address, timeout_s=5.0) as cut_client:
        informer = Informer(cut_client, POD, namespace=namespace, rewatch_policy=QUICK_REWATCH)
        log = EventLog().register(informer)
        async with running(informer):
            first = await client.create(pod("a", namespace))
            await _until(lambda: informer.resource_version == first.metadata.resource_version)
            rv_before_cut = informer.resource_version

            await proxy.cut()
            created = await client.create(pod("b", namespace))
            await client.delete(POD, "a", namespace, grace_period_seconds=0)
            created.metadata.labels["while"] = "cut"
            await client.update(created)
            await asyncio.sleep(0.3)  # the informer notices the cut and fails to re-watch at least once
            assert informer.resource_version == rv_before_cut
            await proxy.start()

            final = await assert_matches_server(client, informer, namespace)

    assert [(kind, key) for kind, key, _ in log.events] == [
        ("add", f"{namespace}/a"),
        ("add", f"{namespace}/b"),
        ("delete", f"{namespace}/a"),
        ("update", f"{namespace}/b"),
    ]
    assert log.problems == []
    assert versions(log.state) == final


async def _until(predicate: Callable[[], bool], timeout_s: float = CATCH_UP_S) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not predicate():
        assert loop.time() < deadline, f"condition not met within {timeout_s}s"
        await asyncio.sleep(0.02)


#: The API server compacts every second; it always keeps the newest 1000 revisions (kine's rule), so a
#: test pushes history past that with filler writes.
COMPACT_FAST = ["--compaction-interval", "1s"]
RETAINED_REVISIONS = 1000


@pytest.fixture
def compacting_apiserver(backend: str, tmp_path: Path) -> Iterator[ApiServerProcess]:
    """An API server on a store of the test's own (it compacts it) that compacts every second."""
    with own_apiserver(backend, tmp_path, name_prefix="compact", extra_args=COMPACT_FAST) as server:
        yield server


async def write_filler(client: Client, revisions: int, batch: int = 50) -> None:
    """Writes the informer does not watch (Leases in a namespace of their own) until the store is
    ``revisions`` revisions further on; counted in revisions, since concurrent writes may share one."""
    namespace = f"filler-{random.getrandbits(32):08x}"
    before: int | None = None
    for start in itertools.count(0, batch):
        written = await asyncio.gather(*(
            client.create(lease(f"l-{index}", namespace)) for index in range(start, start + batch)
        ))
        versions = [int(obj.metadata.resource_version) for obj in written]
        before = min(versions) - 1 if before is None else before
        if max(versions) - before >= revisions:
            return


def lease(name: str, namespace: str) -> objects_pb2.Lease:
    result = objects_pb2.Lease()
    result.metadata.name = name
    result.metadata.namespace = namespace
    result.spec.holder_identity = "filler"
    return result


async def wait_until_compacted_past(client: Client, namespace: str, resource_version: str) -> None:
    """Wait until a watch from ``resource_version`` is refused as too old (the compactor has run)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CATCH_UP_S
    while True:
        events = client.watch(POD, namespace, resource_version=resource_version)
        try:
            await anext(events)
        except Expired:
            return
        finally:
            await events.aclose()
        assert loop.time() < deadline, f"resourceVersion {resource_version} not compacted in {CATCH_UP_S}s"
        await asyncio.sleep(0.5)


async def test_relists_when_the_history_it_missed_was_compacted(
    compacting_apiserver: ApiServerProcess, namespace: str
) -> None:
    server = compacting_apiserver
    async with (
        Client(server.address) as client,
        proxy_to(server.address) as proxy,
        Client(proxy.address, timeout_s=5.0) as cut_client,
    ):
        for name in ("gone", "changed", "same"):
            await client.create(pod(name, namespace))
        informer = Informer(cut_client, POD, namespace=namespace, rewatch_policy=QUICK_REWATCH)
        log = EventLog().register(informer)
        async with running(informer):
            assert len(informer) == 3
            cut_at = informer.resource_version

            await proxy.cut()
            await client.delete(POD, "gone", namespace, grace_period_seconds=0)
            changed = await client.get(POD, "changed", namespace)
            changed.metadata.labels["while"] = "cut"
            await client.update(changed)
            await client.create(pod("new", namespace))
            await write_filler(client, RETAINED_REVISIONS + 50)
            await wait_until_compacted_past(client, namespace, cut_at)
            await proxy.start()

            final = await assert_matches_server(client, informer, namespace)

    assert log.problems == []
    assert versions(log.state) == final
    assert sorted((kind, key) for kind, key, _ in log.events[3:]) == [
        ("add", f"{namespace}/new"), ("delete", f"{namespace}/gone"), ("update", f"{namespace}/changed"),
    ]
    assert int(informer.resource_version) > int(cut_at) + RETAINED_REVISIONS
