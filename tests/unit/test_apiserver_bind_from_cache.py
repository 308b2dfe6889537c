"""A Bind's first attempt from cached copies (the watch cache's peek): no store read when they are
current, and the store's answer whenever they are behind or would refuse."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
from google.protobuf.message import Message

from cluster.api import apiserver_pb2, errors, objects_pb2, timeutil
from cluster.api.kinds import LEASE, NODE, POD, Kind
from cluster.apiserver.binding import bind
from cluster.apiserver.fencing import Fencing, LeaseFence
from cluster.apiserver.storage import Storage
from store.base import KeyValue
from store.sqlite import SqliteStore
from tests.unit.test_apiserver_server import make_node, make_pod


class ReadCountingStore:
    """A real SqliteStore that counts the reads a bind makes."""

    def __init__(self, store: SqliteStore) -> None:
        self._store = store
        self.reads = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)

    async def get_many(self, keys: Sequence[str]) -> list[KeyValue | None]:
        self.reads += 1
        return await self._store.get_many(keys)


class Copies:
    """Cached copies, as a watch cache would have them: whatever was put here, maybe behind the store."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], Message] = {}

    def put(self, kind: Kind, obj: Message) -> None:
        copy = type(obj)()
        copy.CopyFrom(obj)
        self.objects[(kind.name, obj.metadata.namespace, obj.metadata.name)] = copy  # type: ignore[attr-defined]

    def peek(self, kind: Kind, namespace: str, name: str) -> Message | None:
        return self.objects.get((kind.name, namespace, name))


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[ReadCountingStore]:
    sqlite = await SqliteStore.open(tmp_path)
    try:
        yield ReadCountingStore(sqlite)
    finally:
        await sqlite.close()


def _binding(name: str, node: str) -> objects_pb2.Binding:
    return objects_pb2.Binding(
        metadata=objects_pb2.ObjectMeta(name=name, namespace="default"),
        target=objects_pb2.ObjectReference(name=node),
    )


async def _cluster(registry: Storage, copies: Copies) -> tuple[objects_pb2.Pod, objects_pb2.Node]:
    node = await registry.create(NODE, make_node("n1"))
    pod = await registry.create(POD, make_pod("web", namespace="default"))
    copies.put(NODE, node)
    copies.put(POD, pod)
    return pod, node  # type: ignore[return-value]


async def test_current_copies_bind_without_a_store_read(store: ReadCountingStore) -> None:
    registry, copies = Storage(store), Copies()  # type: ignore[arg-type]
    await _cluster(registry, copies)

    bound = await bind(registry, _binding("web", "n1"), timeutil.now(), peek=copies.peek)

    assert store.reads == 0
    assert bound.spec.node_name == "n1" and bound.status.phase == "Running"
    assert await registry.get(POD, "default", "web") == bound


async def test_a_pod_bound_since_the_copy_conflicts_as_the_store_says(store: ReadCountingStore) -> None:
    registry, copies = Storage(store), Copies()  # type: ignore[arg-type]
    await _cluster(registry, copies)
    await registry.create(NODE, make_node("n2"))
    await bind(registry, _binding("web", "n2"), timeutil.now())  # the copy still shows it unbound

    with pytest.raises(errors.Conflict, match='already assigned to node "n2"'):
        await bind(registry, _binding("web", "n1"), timeutil.now(), peek=copies.peek)
    assert (await registry.get(POD, "default", "web")).spec.node_name == "n2"  # type: ignore[attr-defined]


async def test_a_changed_node_is_read_again_and_the_bind_lands(store: ReadCountingStore) -> None:
    registry, copies = Storage(store), Copies()  # type: ignore[arg-type]
    _, node = await _cluster(registry, copies)
    node.metadata.labels["zone"] = "b"
    await registry.update(NODE, node, int(node.metadata.resource_version))  # the copy is behind

    bound = await bind(registry, _binding("web", "n1"), timeutil.now(), peek=copies.peek)

    assert store.reads == 1 and bound.spec.node_name == "n1"


@pytest.mark.parametrize("missing", [POD, NODE])
async def test_what_the_copies_lack_is_read_from_the_store(store: ReadCountingStore, missing: Kind) -> None:
    registry, copies = Storage(store), Copies()  # type: ignore[arg-type]
    await _cluster(registry, copies)
    del copies.objects[next(key for key in copies.objects if key[0] == missing.name)]

    bound = await bind(registry, _binding("web", "n1"), timeutil.now(), peek=copies.peek)

    assert store.reads == 1 and bound.spec.node_name == "n1"


async def _lease(registry: Storage, holder: str) -> objects_pb2.Lease:
    lease = objects_pb2.Lease(metadata=objects_pb2.ObjectMeta(name="kube-scheduler", namespace="kube-system"))
    lease.spec.holder_identity = holder
    return await registry.create(LEASE, lease)  # type: ignore[return-value]


def _fence(registry: Storage, lease: objects_pb2.Lease) -> LeaseFence:
    return Fencing(registry).of(apiserver_pb2.Fence(
        lease_namespace="kube-system", lease_name="kube-scheduler",
        holder_identity=lease.spec.holder_identity, token=int(lease.metadata.resource_version),
    ))


async def test_a_stale_lease_copy_never_refuses_the_new_leaders_bind(store: ReadCountingStore) -> None:
    registry, copies = Storage(store), Copies()  # type: ignore[arg-type]
    await _cluster(registry, copies)
    old = await _lease(registry, "old-leader")
    copies.put(LEASE, old)
    old.spec.holder_identity = "new-leader"
    await registry.update(LEASE, old, int(old.metadata.resource_version))  # the copy is behind
    new = await registry.require(LEASE, "kube-system", "kube-scheduler")

    bound = await bind(registry, _binding("web", "n1"), timeutil.now(), fence=_fence(registry, new),  # type: ignore[arg-type]
                       peek=copies.peek)

    assert store.reads == 1
    assert bound.metadata.annotations["podsched.io/bound-under-fence"] == (
        f"new-leader@{new.metadata.resource_version}")


async def test_a_deposed_leaders_bind_is_refused_though_its_copy_of_the_lease_is_current_to_it(
    store: ReadCountingStore,
) -> None:
    registry, copies = Storage(store), Copies()  # type: ignore[arg-type]
    await _cluster(registry, copies)
    old = await _lease(registry, "old-leader")
    copies.put(LEASE, old)  # the copy still shows the old leader holding
    fence = _fence(registry, old)
    old.spec.holder_identity = "new-leader"
    await registry.update(LEASE, old, int(old.metadata.resource_version))

    with pytest.raises(errors.Fenced):
        await bind(registry, _binding("web", "n1"), timeutil.now(), fence=fence, peek=copies.peek)
    assert (await registry.get(POD, "default", "web")).spec.node_name == ""  # type: ignore[attr-defined]
