"""BindGroup against the real `podsched apiserver` process, on each backend, through `Client.bind_group`:
a group lands whole at one resourceVersion, or not at all (a bound or terminating pod, a stale fence), and
a watcher sees every pod of it with that one resourceVersion. And the binds of a Batch call, which land
or fail each on its own: one under a stale fence is refused alone."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import grpc
import pytest

from cluster.api import apiserver_pb2, apiserver_pb2_grpc, errors, objects_pb2
from cluster.api.kinds import LEASE
from cluster.client import Client, Fence, Informer
from cluster.launcher.process import ApiServerProcess
from tests import builders

GROUP = 8
LEASE_NAME = "kube-scheduler"
BOUND_ANNOTATION = "podsched.io/bound-under-fence"


async def _setup(
    client: Client, namespace: str, unique: Callable[[str], str], count: int = GROUP
) -> list[str]:
    """Two nodes and ``count`` pending pods w-0..; the nodes' names."""
    nodes = [unique("node"), unique("node")]
    for node in nodes:
        await client.create(builders.node(node, allocatable=builders.ROOMY))
    for index in range(count):
        await client.create(builders.pod(f"w-{index}", namespace, image=builders.IMAGE))
    return nodes


def _bindings(namespace: str, nodes: list[str], count: int = GROUP) -> list[tuple[str, str, str]]:
    return [(namespace, f"w-{index}", nodes[index % len(nodes)]) for index in range(count)]


async def _nodes_of(client: Client, namespace: str, count: int = GROUP) -> list[str]:
    pods = await asyncio.gather(*(client.get("pods", f"w-{i}", namespace) for i in range(count)))
    return [pod.spec.node_name for pod in pods]  # type: ignore[attr-defined]


async def test_a_group_lands_whole_at_one_resource_version_and_a_watcher_sees_it_so(
    client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    nodes = await _setup(client, namespace, unique)
    listed = await client.list("pods", namespace)
    events = client.watch("pods", namespace, resource_version=listed.resource_version)
    seen: list[tuple[str, str, str, str]] = []

    async def follow() -> None:
        async for event in events:
            pod = event.object
            seen.append((event.type, pod.metadata.name, pod.spec.node_name, pod.metadata.resource_version))
            if len(seen) == GROUP:
                return

    following = asyncio.create_task(follow())
    try:
        bound = await client.bind_group(_bindings(namespace, nodes))
        await asyncio.wait_for(following, 20)
    finally:
        following.cancel()
        await events.aclose()

    version = bound[0].metadata.resource_version
    assert [(p.metadata.name, p.spec.node_name, p.metadata.resource_version) for p in bound] == [
        (name, node, version) for _, name, node in _bindings(namespace, nodes)
    ]
    assert all(p.status.phase == "Running" for p in bound)
    assert await _nodes_of(client, namespace) == [node for _, _, node in _bindings(namespace, nodes)]
    # One revision, its events in key order (w-0 < w-1 < ...), every one MODIFIED.
    assert seen == [("MODIFIED", name, node, version) for _, name, node in _bindings(namespace, nodes)]


@pytest.mark.parametrize("spoiler", ["bound", "terminating"])
async def test_one_pod_that_cannot_be_bound_leaves_the_whole_group_unbound(
    client: Client, namespace: str, unique: Callable[[str], str], spoiler: str
) -> None:
    nodes = await _setup(client, namespace, unique, count=GROUP - 1)
    await client.create(builders.pod(f"w-{GROUP - 1}", namespace, image=builders.IMAGE, node_name=nodes[0]))
    if spoiler == "terminating":
        await client.delete("pods", f"w-{GROUP - 1}", namespace, grace_period_seconds=30)

    with pytest.raises(errors.Conflict, match=f'"w-{GROUP - 1}"'):
        await client.bind_group(_bindings(namespace, [nodes[1]]))

    assert await _nodes_of(client, namespace, GROUP - 1) == [""] * (GROUP - 1)


async def test_a_stale_fence_is_refused_and_binds_nothing(
    client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    nodes = await _setup(client, namespace, unique)
    lease = objects_pb2.Lease(metadata=objects_pb2.ObjectMeta(name=LEASE_NAME, namespace=namespace))
    lease.spec.holder_identity = "old-leader"
    lease.spec.lease_duration_seconds = 15
    created = await client.create(lease)
    stale = Fence(namespace, LEASE_NAME, "old-leader", int(created.metadata.resource_version))
    taken = objects_pb2.Lease()
    taken.CopyFrom(created)
    taken.spec.holder_identity = "new-leader"
    taken = await client.update(taken)

    with pytest.raises(errors.Fenced, match=r'is held by "new-leader"'):
        await client.bind_group(_bindings(namespace, nodes), fence=stale)
    assert await _nodes_of(client, namespace) == [""] * GROUP

    current = Fence(namespace, LEASE_NAME, "new-leader", int(taken.metadata.resource_version))
    bound = await client.bind_group(_bindings(namespace, nodes), fence=current)
    assert {p.metadata.annotations[BOUND_ANNOTATION] for p in bound} == {
        f"new-leader@{taken.metadata.resource_version}"
    }
    assert await client.get(LEASE, LEASE_NAME, namespace) == taken


async def test_a_batch_binds_each_pod_on_its_own_and_refuses_only_the_one_under_a_stale_fence(
    client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    nodes = await _setup(client, namespace, unique)
    lease = objects_pb2.Lease(metadata=objects_pb2.ObjectMeta(name=LEASE_NAME, namespace=namespace))
    lease.spec.holder_identity = "leader"
    lease.spec.lease_duration_seconds = 15
    created = await client.create(lease)
    current = Fence(namespace, LEASE_NAME, "leader", int(created.metadata.resource_version))
    stale = Fence(namespace, LEASE_NAME, "deposed", current.token - 1)
    items = [
        apiserver_pb2.BatchItem(bind=apiserver_pb2.BindRequest(
            binding=objects_pb2.Binding(metadata=objects_pb2.ObjectMeta(name=name, namespace=ns),
                                        target=objects_pb2.ObjectReference(kind="Node", name=node)),
            fence=(stale if name == "w-3" else current).to_proto()))
        for ns, name, node in _bindings(namespace, nodes)
    ]
    async with grpc.aio.insecure_channel(client.servers[0]) as channel:
        stub = apiserver_pb2_grpc.ApiServerStub(channel)
        response = await stub.Batch(apiserver_pb2.BatchRequest(items=items))

    refused = response.results[3].error
    assert (refused.code, refused.reason) == (grpc.StatusCode.FAILED_PRECONDITION.value[0], "Fenced")
    assert 'is held by "leader"' in refused.message
    bound = [result.object.pod for index, result in enumerate(response.results) if index != 3]
    assert [(p.metadata.name, p.spec.node_name) for p in bound] == [
        (name, node) for _, name, node in _bindings(namespace, nodes) if name != "w-3"]
    assert {p.metadata.annotations[BOUND_ANNOTATION] for p in bound} == {f"leader@{current.token}"}
    assert await _nodes_of(client, namespace) == [
        "" if name == "w-3" else node for _, name, node in _bindings(namespace, nodes)]


async def test_an_informer_keeps_every_pod_of_groups_bound_across_api_server_restarts(
    fresh_apiserver: ApiServerProcess, namespace: str, unique: Callable[[str], str]
) -> None:
    async with Client(fresh_apiserver.address, timeout_s=30.0) as client:
        nodes = await _setup(client, namespace, unique, count=3 * GROUP)
        informer: Informer[objects_pb2.Pod] = Informer(client, "pods", namespace=namespace)
        running = asyncio.create_task(informer.run())
        try:
            await asyncio.wait_for(informer.wait_synced(), 20)
            for group in range(3):
                bindings = [(namespace, f"w-{group * GROUP + i}", nodes[i % 2]) for i in range(GROUP)]
                await client.bind_group(bindings)
                # The server goes away while the informer may be anywhere in the group's events.
                fresh_apiserver.restart()
            expected = {f"{namespace}/w-{i}": nodes[(i % GROUP) % 2] for i in range(3 * GROUP)}

            def held() -> dict[str, str]:
                return {key: pod.spec.node_name for key, pod in informer.items()}

            caught_up = asyncio.Event()
            informer.add_handler(on_update=lambda old, new: caught_up.set() if held() == expected else None)
            if held() != expected:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(caught_up.wait(), 30)
            assert held() == expected
            assert not running.done()
        finally:
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
