"""A guaranteed update's first attempt from the watch cache's copy (UpdateStatus): no store read when the
copy is current, and the store's answer whenever the copy is behind."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from google.protobuf.message import Message

from cluster.api import errors, objects_pb2
from cluster.api.kinds import POD
from cluster.apiserver import messages
from cluster.apiserver.storage import Mutation, Storage
from store.base import KeyValue
from store.sqlite import SqliteStore
from tests.unit.test_apiserver_bind_from_cache import ReadCountingStore
from tests.unit.test_apiserver_server import make_pod


class GetCountingStore(ReadCountingStore):
    """Counts single-key reads too (a guaranteed update reads its object with ``get``)."""

    async def get(self, key: str) -> KeyValue | None:
        self.reads += 1
        return await self._store.get(key)


@pytest.fixture
async def store(tmp_path: object) -> AsyncIterator[GetCountingStore]:
    sqlite = await SqliteStore.open(tmp_path)
    try:
        yield GetCountingStore(sqlite)
    finally:
        await sqlite.close()


def copy_of(obj: Message) -> objects_pb2.Pod:
    copy = objects_pb2.Pod()
    copy.CopyFrom(obj)
    return copy


def set_message(text: str, precondition: str = "") -> Mutation:
    async def mutate(current: Message) -> Message:
        assert isinstance(current, objects_pb2.Pod)
        if precondition and precondition != current.metadata.resource_version:
            raise messages.conflict(POD, current.metadata.name)
        updated = copy_of(current)
        updated.status.message = text
        return updated

    return mutate


async def _pod(registry: Storage) -> objects_pb2.Pod:
    created = await registry.create(POD, make_pod("web", namespace="default"))
    assert isinstance(created, objects_pb2.Pod)
    return copy_of(created)


async def test_a_current_copy_is_written_without_a_store_read(store: GetCountingStore) -> None:
    registry = Storage(store)  # type: ignore[arg-type]
    cached = await _pod(registry)
    reads = store.reads

    written = await registry.guaranteed_update(POD, "default", "web", set_message("hello"),
                                               cached=cached)

    assert store.reads == reads
    assert written.status.message == "hello"  # type: ignore[attr-defined]
    assert await registry.get(POD, "default", "web") == written
    assert cached.status.message == ""  # the copy itself is left as it was


async def test_a_copy_behind_the_store_is_decided_again_from_the_store(store: GetCountingStore) -> None:
    registry = Storage(store)  # type: ignore[arg-type]
    cached = await _pod(registry)
    newer = copy_of(cached)
    newer.metadata.labels["app"] = "web"
    assert (await registry.update(POD, newer, int(cached.metadata.resource_version))).succeeded
    reads = store.reads

    written = await registry.guaranteed_update(POD, "default", "web", set_message("hello"),
                                               cached=cached)

    assert store.reads == reads  # the lost compare-and-swap answered with the store's object
    stored = await registry.get(POD, "default", "web")
    assert stored == written
    assert stored.status.message == "hello" and stored.metadata.labels["app"] == "web"  # type: ignore[attr-defined]


async def test_a_precondition_only_the_copy_fails_lands(store: GetCountingStore) -> None:
    """The caller read a newer version than the copy: the copy's refusal is not the answer."""
    registry = Storage(store)  # type: ignore[arg-type]
    cached = await _pod(registry)
    newer = copy_of(cached)
    newer.metadata.labels["app"] = "web"
    outcome = await registry.update(POD, newer, int(cached.metadata.resource_version))
    current_version = outcome.obj.metadata.resource_version  # type: ignore[union-attr]

    written = await registry.guaranteed_update(
        POD, "default", "web", set_message("hello", current_version), cached=cached)

    assert written.status.message == "hello"  # type: ignore[attr-defined]


async def test_a_precondition_the_store_fails_is_a_conflict(store: GetCountingStore) -> None:
    registry = Storage(store)  # type: ignore[arg-type]
    cached = await _pod(registry)
    with pytest.raises(errors.Conflict):
        await registry.guaranteed_update(POD, "default", "web", set_message("hello", "12345"),
                                         cached=cached)
    assert (await registry.get(POD, "default", "web")).status.message == ""  # type: ignore[union-attr]


async def test_nothing_to_write_to_a_copy_behind_is_written_to_the_store(store: GetCountingStore) -> None:
    registry = Storage(store)  # type: ignore[arg-type]
    cached = await _pod(registry)
    said = await registry.guaranteed_update(POD, "default", "web", set_message("hello"))
    cached.CopyFrom(said)
    await registry.guaranteed_update(POD, "default", "web", set_message(""))  # the copy is behind now

    written = await registry.guaranteed_update(POD, "default", "web", set_message("hello"), cached=cached)

    assert (await registry.get(POD, "default", "web")).status.message == "hello"  # type: ignore[union-attr]
    assert written.status.message == "hello"  # type: ignore[attr-defined]


async def test_a_dry_run_writes_nothing(store: GetCountingStore) -> None:
    registry = Storage(store)  # type: ignore[arg-type]
    cached = await _pod(registry)
    written = await registry.guaranteed_update(POD, "default", "web", set_message("hello"),
                                               dry_run=True, cached=cached)

    assert written.status.message == "hello"  # type: ignore[attr-defined]
    assert (await registry.get(POD, "default", "web")).status.message == ""  # type: ignore[union-attr]
