"""Informer unit tests against an in-memory ApiServer on real loopback gRPC: list + watch, relist and
reconciliation after Expired, re-watch after a broken stream, indexers, and handler isolation."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import grpc
import pytest
from google.protobuf.message import Message

from cluster.api import errors, objects_pb2
from cluster.api.kinds import NODE, POD
from cluster.client import Client, Informer
from tests.unit.test_client_fake_apiserver import FAST_RETRIES, FakeApiServer, pod, until


class Recorder:
    """A handler set that writes down what it is told, as ("add"|"update"|"delete", name, resourceVersion)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []
        self.updates: list[tuple[Message, Message]] = []

    def on_add(self, obj: Message) -> None:
        self.seen.append(("add", obj.metadata.name, obj.metadata.resource_version))

    def on_update(self, old: Message, new: Message) -> None:
        self.updates.append((old, new))
        self.seen.append(("update", new.metadata.name, new.metadata.resource_version))

    def on_delete(self, obj: Message) -> None:
        self.seen.append(("delete", obj.metadata.name, obj.metadata.resource_version))

    def register(self, informer: Informer) -> Recorder:
        informer.add_handler(on_add=self.on_add, on_update=self.on_update, on_delete=self.on_delete)
        return self


@contextlib.asynccontextmanager
async def running(informer: Informer) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(informer.wait_synced(), 10.0)
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def by_node(obj: Message) -> list[str]:
    return [obj.spec.node_name] if obj.spec.node_name else []


def names(informer: Informer) -> list[str]:
    return sorted(key for key, _ in informer.items())


async def test_lists_then_follows_every_change(client: Client, fake: FakeApiServer) -> None:
    for name in ("a", "b", "c"):
        await fake.put(pod(name))
    informer = Informer(client, "pods", page_size=2, rewatch_policy=FAST_RETRIES)
    recorder = Recorder().register(informer)
    assert not informer.has_synced
    async with running(informer):
        assert informer.has_synced
        assert recorder.seen == [("add", "a", "1"), ("add", "b", "2"), ("add", "c", "3")]
        assert informer.resource_version == "3"
        # Paged: three objects in pages of two.
        assert [request.limit for request in fake.calls_of("List")] == [2, 2]

        created = await client.create(pod("d"))
        created.metadata.labels["x"] = "y"
        await client.update(created)
        await client.delete("pods", "a", "default")
        await until(lambda: len(recorder.seen) == 6)

    assert recorder.seen[3:] == [("add", "d", "4"), ("update", "d", "5"), ("delete", "a", "6")]
    old, new = recorder.updates[0]
    assert "x" not in old.metadata.labels and new.metadata.labels["x"] == "y"
    assert names(informer) == ["default/b", "default/c", "default/d"]
    assert informer.get("default/d").metadata.labels["x"] == "y"
    assert informer.get("default/a") is None
    assert informer.resource_version == "6"
    assert fake.calls_of("Watch")[0].resource_version == "3"


async def test_cluster_scoped_objects_are_keyed_by_name(client: Client, fake: FakeApiServer) -> None:
    node = objects_pb2.Node()
    node.metadata.name = "node-1"
    await fake.put(node)
    informer = Informer(client, NODE, rewatch_policy=FAST_RETRIES)
    async with running(informer):
        assert informer.get("node-1") is not None
        assert len(informer) == 1


async def test_relists_on_expired_and_reconciles_what_changed(client: Client, fake: FakeApiServer) -> None:
    for name in ("gone", "changed", "same"):
        await fake.put(pod(name))
    informer = Informer(client, POD, rewatch_policy=FAST_RETRIES)
    recorder = Recorder().register(informer)
    async with running(informer):
        await until(lambda: fake.open_watches == 1)
        recorder.seen.clear()

        # While the informer is cut off, history moves on and is compacted away.
        fake.watch_gate.clear()
        await fake.break_watches()
        await until(lambda: fake.open_watches == 0 and len(fake.calls_of("Watch")) == 2)
        await fake.remove(POD, "default", "gone")
        changed = objects_pb2.Pod()
        changed.CopyFrom(informer.get("default/changed"))
        changed.spec.node_name = "node-1"
        await fake.put(changed)
        await fake.put(pod("new"))
        fake.compact()
        fake.watch_gate.set()

        await until(lambda: len(recorder.seen) == 3)
        await until(lambda: fake.open_watches == 1)

    # A vanished object is reported in the last state the informer knew (its deletion was compacted away).
    assert sorted(recorder.seen) == [("add", "new", "6"), ("delete", "gone", "1"), ("update", "changed", "5")]
    assert recorder.seen[-1] == ("delete", "gone", "1"), "deletions come after the listed objects"
    assert names(informer) == ["default/changed", "default/new", "default/same"]
    assert informer.get("default/changed").spec.node_name == "node-1"
    assert informer.resource_version == "6"
    assert len(fake.calls_of("List")) == 2
    assert fake.calls_of("Watch")[-1].resource_version == "6"


async def test_rewatches_from_the_last_event_without_repeating_or_missing_one(
    client: Client, fake: FakeApiServer
) -> None:
    informer = Informer(client, POD, rewatch_policy=FAST_RETRIES)
    recorder = Recorder().register(informer)
    async with running(informer):
        await client.create(pod("a"))
        await client.create(pod("b"))
        await until(lambda: len(recorder.seen) == 2)

        fake.watch_gate.clear()
        await fake.break_watches()
        await until(lambda: fake.open_watches == 0 and len(fake.calls_of("Watch")) == 2)
        await fake.put(pod("c"))
        await fake.remove(POD, "default", "a")
        fake.watch_gate.set()

        await client.create(pod("d"))
        await until(lambda: len(recorder.seen) == 5)
        # Nothing further trickles in.
        await asyncio.sleep(0.1)

    assert recorder.seen == [
        ("add", "a", "1"), ("add", "b", "2"), ("add", "c", "3"), ("delete", "a", "4"), ("add", "d", "5"),
    ]
    # From the revision before the last event applied (2), whose replayed event is dropped.
    assert [request.resource_version for request in fake.calls_of("Watch")] == ["0", "1"]
    assert len(fake.calls_of("List")) == 1
    assert names(informer) == ["default/b", "default/c", "default/d"]


async def test_a_watch_cut_inside_a_revision_loses_none_of_its_events(
    client: Client, fake: FakeApiServer
) -> None:
    """Several objects at one revision (a group bind): the stream breaks after two of its four events,
    and the re-watch delivers the other two, and the two already applied are not applied again."""
    await fake.put(pod("before"))
    informer = Informer(client, POD, rewatch_policy=FAST_RETRIES)
    recorder = Recorder().register(informer)
    async with running(informer):
        fake.cut_watch_after = 2
        await fake.put_together(pod("w-0"), pod("w-1"), pod("w-2"), pod("w-3"))
        await until(lambda: len(recorder.seen) == 5)
        await client.create(pod("after"))
        await until(lambda: len(recorder.seen) == 6)
        await asyncio.sleep(0.1)

    assert recorder.seen == [
        ("add", "before", "1"),
        ("add", "w-0", "2"), ("add", "w-1", "2"), ("add", "w-2", "2"), ("add", "w-3", "2"),
        ("add", "after", "3"),
    ]
    assert [request.resource_version for request in fake.calls_of("Watch")] == ["1", "1"]
    assert len(fake.calls_of("List")) == 1


async def test_retries_the_first_list_until_the_server_answers(
    fake: FakeApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    await fake.put(pod("a"))
    fake.fail("List", grpc.StatusCode.UNAVAILABLE, "store down", times=6)
    # A client with a budget shorter than the outage: the informer itself must keep trying.
    with caplog.at_level(logging.WARNING, logger="cluster.client.informer"):
        async with Client(fake.address, timeout_s=0.05, retry_policy=FAST_RETRIES) as client:
            informer = Informer(client, POD, rewatch_policy=FAST_RETRIES)
            async with running(informer):
                assert names(informer) == ["default/a"]
                lists = len(fake.calls_of("List"))
                await asyncio.sleep(0.1)
                assert len(fake.calls_of("List")) == lists  # no list once it has one
    assert fake.faults["List"].times == 0  # every one of the outage's answers was taken
    assert any("list failed" in record.getMessage() for record in caplog.records)  # by the informer too
    # At least the outage and one success. Not exactly: on a loaded machine an answer can come after the
    # client's 0.05 s budget, which makes one more list.
    assert lists >= 7


@pytest.mark.parametrize(
    ("code", "error"),
    [
        (grpc.StatusCode.INVALID_ARGUMENT, errors.Invalid),
        (grpc.StatusCode.FAILED_PRECONDITION, errors.Forbidden),
    ],
    ids=["invalid-selector", "forbidden"],
)
async def test_a_request_the_server_rejects_ends_run_and_wait_synced(
    client: Client, fake: FakeApiServer, code: grpc.StatusCode, error: type[errors.ApiError]
) -> None:
    fake.fail("List", code, 'unable to parse requirement: "a=="')
    informer = Informer(client, POD, label_selector="a==", rewatch_policy=FAST_RETRIES)
    task = asyncio.create_task(informer.run())
    with pytest.raises(error, match="unable to parse"):
        await asyncio.wait_for(informer.wait_synced(), 5.0)
    with pytest.raises(error):
        await task
    assert not informer.has_synced
    assert fake.calls_of("List")[0].label_selector == "a=="


async def test_indexes_follow_adds_updates_and_deletes(client: Client, fake: FakeApiServer) -> None:
    informer = Informer(client, POD, indexers={"node": by_node}, rewatch_policy=FAST_RETRIES)
    await fake.put(pod("a", node="n1"))
    await fake.put(pod("unbound"))
    async with running(informer):
        assert [p.metadata.name for p in informer.by_index("node", "n1")] == ["a"]

        b = await client.create(pod("b", node="n1"))
        await until(lambda: len(informer.by_index("node", "n1")) == 2)

        b.spec.node_name = "n2"
        await client.update(b)
        await until(lambda: informer.by_index("node", "n2") != [])
        assert [p.metadata.name for p in informer.by_index("node", "n1")] == ["a"]
        assert [p.metadata.name for p in informer.by_index("node", "n2")] == ["b"]

        await client.delete(POD, "a", "default")
        await until(lambda: informer.by_index("node", "n1") == [])
        assert informer.by_index("node", "") == []
        assert informer.by_index("node", "n3") == []


async def test_indexes_follow_a_relist(client: Client, fake: FakeApiServer) -> None:
    informer = Informer(client, POD, indexers={"node": by_node}, rewatch_policy=FAST_RETRIES)
    await fake.put(pod("a", node="n1"))
    await fake.put(pod("b", node="n1"))
    async with running(informer):
        await until(lambda: fake.open_watches == 1)
        fake.watch_gate.clear()
        await fake.break_watches()
        await until(lambda: fake.open_watches == 0 and len(fake.calls_of("Watch")) == 2)
        await fake.remove(POD, "default", "a")
        await fake.put(pod("b", node="n2"))
        fake.compact()
        fake.watch_gate.set()
        await until(lambda: len(fake.calls_of("List")) == 2 and fake.open_watches == 1)
        assert informer.by_index("node", "n1") == []
        assert [p.metadata.name for p in informer.by_index("node", "n2")] == ["b"]


async def test_asking_for_an_unknown_index_names_the_known_ones(client: Client) -> None:
    informer = Informer(client, POD, indexers={"node": by_node})
    with pytest.raises(KeyError, match='no index "zone" \\(indexes: node\\)'):
        informer.by_index("zone", "a")


async def test_a_failing_handler_is_logged_and_contained(
    client: Client, fake: FakeApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    def explode(obj: Message) -> None:
        raise RuntimeError(f"boom on {obj.metadata.name}")

    informer = Informer(client, POD, rewatch_policy=FAST_RETRIES)
    informer.add_handler(on_add=explode, on_update=lambda old, new: explode(new), on_delete=explode)
    recorder = Recorder().register(informer)
    with caplog.at_level(logging.ERROR, logger="cluster.client.informer"):
        async with running(informer) as task:
            created = await client.create(pod("a"))
            await client.update(created)
            await client.delete(POD, "a", "default")
            await until(lambda: len(recorder.seen) == 3)
            assert not task.done()
    assert [entry[0] for entry in recorder.seen] == ["add", "update", "delete"]
    failures = [record for record in caplog.records if "failed" in record.getMessage()]
    assert len(failures) == 3
    assert "boom on a" in str(failures[0].exc_info[1])
    assert "default/a" in failures[0].getMessage()


async def test_partial_handler_sets_hear_only_their_changes_in_registration_order(
    client: Client, fake: FakeApiServer
) -> None:
    heard: list[tuple[str, str]] = []
    informer = Informer(client, POD, rewatch_policy=FAST_RETRIES)
    informer.add_handler(on_update=lambda old, new: heard.append(("first update", new.metadata.name)))
    informer.add_handler(on_add=lambda obj: heard.append(("add", obj.metadata.name)),
                         on_delete=lambda obj: heard.append(("delete", obj.metadata.name)))
    informer.add_handler(on_update=lambda old, new: heard.append(("second update", new.metadata.name)))
    async with running(informer):
        created = await client.create(pod("a"))
        await client.update(created)
        await client.delete(POD, "a", "default")
        await until(lambda: len(heard) == 4)
    assert heard == [("add", "a"), ("first update", "a"), ("second update", "a"), ("delete", "a")]


async def test_a_handler_added_after_sync_hears_the_existing_objects(
    client: Client, fake: FakeApiServer
) -> None:
    await fake.put(pod("a"))
    await fake.put(pod("b"))
    informer = Informer(client, POD, rewatch_policy=FAST_RETRIES)
    async with running(informer):
        late = Recorder().register(informer)
        assert sorted(late.seen) == [("add", "a", "1"), ("add", "b", "2")]
        await client.create(pod("c"))
        await until(lambda: len(late.seen) == 3)
    assert late.seen[-1] == ("add", "c", "3")


async def test_a_namespaced_informer_sees_only_its_namespace(client: Client, fake: FakeApiServer) -> None:
    await fake.put(pod("a", namespace="team-a"))
    await fake.put(pod("b", namespace="team-b"))
    informer = Informer(client, POD, namespace="team-a", rewatch_policy=FAST_RETRIES)
    async with running(informer):
        await client.create(pod("c", namespace="team-b"))
        await client.create(pod("d", namespace="team-a"))
        await until(lambda: len(informer) == 2)
    assert names(informer) == ["team-a/a", "team-a/d"]
    assert fake.calls_of("List")[0].namespace == "team-a"
