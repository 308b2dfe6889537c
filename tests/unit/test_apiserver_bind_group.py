"""BindGroup through the real service: all pods bound at one resourceVersion, or none, and a clear error
naming what is wrong."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from cluster.api import apiserver_pb2, errors, objects_pb2, timeutil
from cluster.api.kinds import LEASE, NODE, POD
from cluster.apiserver.binding import MAX_GROUP_BINDINGS, bind_group
from cluster.apiserver.failures import error_of
from cluster.apiserver.fencing import Fencing
from cluster.apiserver.storage import Storage
from store.base import KeyValue, TransactionTooLarge
from store.sqlite import SqliteStore
from tests.unit.framework_fakes import GroupBindingClient
from tests.unit.test_apiserver_server import Harness, api, make_node, make_pod

__all__ = ["api"]


def _binding(name: str, node: str, namespace: str = "") -> objects_pb2.Binding:
    return objects_pb2.Binding(
        metadata=objects_pb2.ObjectMeta(name=name, namespace=namespace),
        target=objects_pb2.ObjectReference(name=node),
    )


async def _group(api: Harness, *bindings: objects_pb2.Binding) -> list[objects_pb2.Pod]:
    response = await api.call("BindGroup", apiserver_pb2.BindGroupRequest(bindings=bindings))
    return list(response.pods)


async def _nodes_of(api: Harness, *names: str) -> list[str]:
    return [(await api.get("Pod", name)).spec.node_name for name in names]


async def test_a_group_is_bound_at_one_resource_version(api: Harness) -> None:
    await api.create(make_node("n1"))
    await api.create(make_node("n2"))
    for name in ("w-0", "w-1", "w-2"):
        await api.create(make_pod(name))

    bound = await _group(api, _binding("w-0", "n1"), _binding("w-1", "n2"), _binding("w-2", "n1"))

    assert [(p.metadata.name, p.spec.node_name, p.status.phase) for p in bound] == [
        ("w-0", "n1", "Running"), ("w-1", "n2", "Running"), ("w-2", "n1", "Running"),
    ]
    assert len({p.metadata.resource_version for p in bound}) == 1
    for pod in bound:
        assert await api.get("Pod", pod.metadata.name) == pod


@pytest.mark.parametrize("bad", ["bound", "terminating", "missing-pod", "missing-node", "stale-uid"])
async def test_one_pod_that_cannot_be_bound_binds_none(api: Harness, bad: str) -> None:
    await api.create(make_node("n1"))
    for name in ("w-0", "w-1"):
        await api.create(make_pod(name))
    last = _binding("w-2", "n1")
    if bad == "bound":
        await api.create(make_pod("w-2", node_name="n1"))
        expected: type[errors.ApiError] = errors.Conflict
        message = r'^Operation cannot be fulfilled on pods/binding "w-2": pod w-2 is already assigned'
    elif bad == "terminating":
        await api.create(make_pod("w-2", node_name="n1"))
        await api.delete("Pod", "w-2", grace=30)
        expected, message = errors.Conflict, r'"w-2": pod w-2 is being deleted, cannot be assigned to a host$'
    elif bad == "missing-pod":
        expected, message = errors.NotFound, r'^pods "w-2" not found$'
    elif bad == "missing-node":
        await api.create(make_pod("w-2"))
        last = _binding("w-2", "n9")
        expected, message = errors.NotFound, r'^nodes "n9" not found$'
    else:
        await api.create(make_pod("w-2"))
        last.metadata.uid = "other"
        expected = errors.Conflict
        message = r'^Operation cannot be fulfilled on pods "w-2": Precondition failed: UID'

    with pytest.raises(expected, match=message):
        await _group(api, _binding("w-0", "n1"), _binding("w-1", "n1"), last)

    assert await _nodes_of(api, "w-0", "w-1") == ["", ""]


@pytest.mark.parametrize(
    ("bindings", "message"),
    [
        ([], r"^BindGroup is invalid: bindings: Required value: at least one binding$"),
        ([_binding("w-0", "n1"), _binding("", "n1")],
         r"^BindGroup is invalid: bindings\[1\]\.metadata\.name: Required value$"),
        ([_binding("w-0", "")], r"^BindGroup is invalid: bindings\[0\]\.target\.name: Required value$"),
        ([objects_pb2.Binding(metadata=objects_pb2.ObjectMeta(name="w-0"),
                              target=objects_pb2.ObjectReference(kind="Pod", name="n1"))],
         r'^BindGroup is invalid: bindings\[0\]\.target\.kind: Unsupported value: "Pod"'),
        ([_binding("w-0", "n1"), _binding("w-0", "n2", namespace="default")],
         r'^BindGroup is invalid: bindings\[1\]\.metadata\.name: Duplicate value: "default/w-0"$'),
        ([_binding(f"w-{i}", "n1") for i in range(MAX_GROUP_BINDINGS + 1)],
         rf"^BindGroup is invalid: bindings: Too many: {MAX_GROUP_BINDINGS + 1}: must have at most "
         rf"{MAX_GROUP_BINDINGS} items$"),
    ],
    ids=["none", "no-pod-name", "no-node-name", "target-not-a-node", "pod-twice", "too-many"],
)
async def test_bad_groups_are_invalid_and_bind_nothing(
    api: Harness, bindings: list[objects_pb2.Binding], message: str
) -> None:
    await api.create(make_node("n1"))
    await api.create(make_pod("w-0"))
    with pytest.raises(errors.Invalid, match=message):
        await _group(api, *bindings)
    assert await _nodes_of(api, "w-0") == [""]


async def test_the_fake_client_binds_a_group_all_or_nothing() -> None:
    free, taken = make_pod("w-0"), make_pod("w-1", node_name="n1")
    client = GroupBindingClient([free, taken])
    with pytest.raises(errors.Conflict):
        await client.bind_group([("default", "w-0", "n1"), ("default", "w-1", "n2")])
    assert client.pods["default/w-0"].spec.node_name == ""
    client.pods["default/w-2"] = make_pod("w-2")
    bound = await client.bind_group([("default", "w-0", "n1"), ("default", "w-2", "n2")])
    assert [(p.spec.node_name, p.metadata.resource_version) for p in bound] == [("n1", "2"), ("n2", "2")]


class CountingStore:
    """A real SqliteStore that counts the calls that reach it."""

    def __init__(self, store: SqliteStore) -> None:
        self._store = store
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._store, name)
        if not callable(attribute) or name in ("watch", "close"):
            return attribute

        async def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            return await attribute(*args, **kwargs)

        return counted

    async def get_many(self, keys: Sequence[str]) -> list[KeyValue | None]:
        self.calls.append("get_many")
        return await self._store.get_many(keys)


async def test_a_group_of_64_pods_is_one_read_and_one_write_of_the_store(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path)
    try:
        setup = Storage(store)
        fence_lease = objects_pb2.Lease(
            metadata=objects_pb2.ObjectMeta(name="kube-scheduler", namespace="kube-system")
        )
        fence_lease.spec.holder_identity = "leader"
        lease = await setup.create(LEASE, fence_lease)
        for index in range(8):
            await setup.create(NODE, make_node(f"n{index}"))
        for index in range(64):
            await setup.create(POD, make_pod(f"w-{index}", namespace="default"))
        counting = CountingStore(store)
        registry = Storage(counting)  # type: ignore[arg-type]
        fence = Fencing(registry).of(apiserver_pb2.Fence(
            lease_namespace="kube-system", lease_name="kube-scheduler", holder_identity="leader",
            token=int(lease.metadata.resource_version),
        ))
        bound = await bind_group(registry, [_binding(f"w-{i}", f"n{i % 8}", "default") for i in range(64)],
                                 timeutil.now(), fence=fence)
        assert counting.calls == ["get_many", "txn"]
        assert len({pod.metadata.resource_version for pod in bound}) == 1
        stamp = f"leader@{lease.metadata.resource_version}"
        assert {pod.metadata.annotations["podsched.io/bound-under-fence"] for pod in bound} == {stamp}
    finally:
        await store.close()


class ChangedAfterRead:
    """A real SqliteStore that, right after the first batch read, rewrites pod w-1 as a concurrent client
    would between BindGroup's read and its write: labelled (still unbound), or bound to n2."""

    def __init__(self, store: SqliteStore, *, bind: bool) -> None:
        self._store = store
        self._bind = bind
        self.reads = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def get_many(self, keys: Sequence[str]) -> list[KeyValue | None]:
        found = await self._store.get_many(keys)
        self.reads += 1
        if self.reads == 1:
            registry = Storage(self._store)
            pod = await registry.require(POD, "default", "w-1")
            if self._bind:
                pod.spec.node_name = "n2"
            else:
                pod.metadata.labels["touched"] = "yes"
            assert (await registry.update(POD, pod, int(pod.metadata.resource_version))).succeeded
        return found


@pytest.mark.parametrize("bind", [False, True], ids=["changed", "bound"])
async def test_a_pod_changed_between_read_and_write_is_read_again(tmp_path: Path, bind: bool) -> None:
    store = await SqliteStore.open(tmp_path)
    try:
        setup = Storage(store)
        await setup.create(NODE, make_node("n1"))
        await setup.create(NODE, make_node("n2"))
        for name in ("w-0", "w-1", "w-2"):
            await setup.create(POD, make_pod(name, namespace="default"))
        racing = ChangedAfterRead(store, bind=bind)
        bindings = [_binding(name, "n1", "default") for name in ("w-0", "w-1", "w-2")]
        if bind:
            with pytest.raises(errors.Conflict, match=r'"w-1": pod w-1 is already assigned to node "n2"$'):
                await bind_group(Storage(racing), bindings, timeutil.now())  # type: ignore[arg-type]
            expected = ["", "n2", ""]
        else:
            bound = await bind_group(Storage(racing), bindings, timeutil.now())  # type: ignore[arg-type]
            assert bound[1].metadata.labels["touched"] == "yes"
            expected = ["n1", "n1", "n1"]
        assert racing.reads == 2
        stored = [await setup.require(POD, "default", name) for name in ("w-0", "w-1", "w-2")]
        assert [pod.spec.node_name for pod in stored] == expected
    finally:
        await store.close()


def test_a_transaction_too_large_for_the_store_is_invalid_and_says_so() -> None:
    error = error_of(TransactionTooLarge("etcd at e:1 refused the request as too large (...)"), "BindGroup")
    assert isinstance(error, errors.Invalid)
    assert error.message == (
        "BindGroup: the store cannot write this much in one transaction: etcd at e:1 refused the request as "
        "too large (...)"
    )
