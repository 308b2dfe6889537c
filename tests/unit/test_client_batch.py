"""The client's batched writes (create_many, bind_many) against the fake server on real loopback gRPC: each
object's own answer or error, in order; the fences; the batch limits; the single calls' retry rules."""

from __future__ import annotations

import grpc
import pytest

from cluster.api import errors, objects_pb2
from cluster.api.limits import MAX_BATCH_ITEMS
from cluster.client import Client, Fence
from tests.unit.test_client_fake_apiserver import FakeApiServer, pod

FENCE = Fence("kube-system", "kube-scheduler", "me", 7)


async def test_create_many_answers_each_object_in_order_with_its_own_error(
    client: Client, fake: FakeApiServer
) -> None:
    await fake.put(pod("taken"))
    results = await client.create_many([pod("a"), pod("taken"), pod("b")])
    assert isinstance(results[0], objects_pb2.Pod) and results[0].metadata.name == "a"
    assert isinstance(results[1], errors.AlreadyExists)
    assert results[1].message == 'pods "taken" already exists'
    assert isinstance(results[2], objects_pb2.Pod) and results[2].metadata.name == "b"
    assert results[0].metadata.resource_version and results[2].metadata.resource_version
    (request,) = fake.calls_of("Batch")
    assert [item.create.object.pod.metadata.name for item in request.items] == ["a", "taken", "b"]


async def test_create_many_fences_each_create_only_when_given_a_fence(
    client: Client, fake: FakeApiServer
) -> None:
    client.fence = FENCE  # the client's fence does not apply to a create, as with `create`
    await client.create_many([pod("a")])
    await client.create_many([pod("b")], fence=FENCE)
    unfenced, fenced = fake.calls_of("Batch")
    assert not unfenced.items[0].create.HasField("fence")
    assert (fenced.items[0].create.fence.holder_identity, fenced.items[0].create.fence.token) == ("me", 7)


async def test_bind_many_answers_each_binding_and_carries_the_clients_fence_on_each(
    client: Client, fake: FakeApiServer
) -> None:
    client.fence = FENCE
    await fake.put(pod("free"))
    await fake.put(pod("bound", node="n9"))
    results = await client.bind_many([("default", "free", "n1"), ("default", "bound", "n1"),
                                      ("default", "gone", "n1")])
    assert isinstance(results[0], objects_pb2.Pod) and results[0].spec.node_name == "n1"
    assert isinstance(results[1], errors.Conflict)
    assert isinstance(results[2], errors.NotFound) and results[2].message == 'pods "gone" not found'
    (request,) = fake.calls_of("Batch")
    assert [(item.bind.binding.metadata.name, item.bind.binding.target.name, item.bind.fence.token)
            for item in request.items] == [("free", "n1", 7), ("bound", "n1", 7), ("gone", "n1", 7)]


async def test_a_fenced_item_is_its_own_fenced_error_and_tells_the_client(
    client: Client, fake: FakeApiServer
) -> None:
    heard: list[errors.Fenced] = []
    client.on_fenced = heard.append
    await fake.put(pod("a"))
    await fake.put(pod("b"))
    fake.fenced_binds.add("b")
    results = await client.bind_many([("default", "a", "n1"), ("default", "b", "n1")], fence=FENCE)
    assert isinstance(results[0], objects_pb2.Pod)
    assert isinstance(results[1], errors.Fenced)
    assert heard == [results[1]]


async def test_more_objects_than_one_batch_carries_go_in_several_calls(
    client: Client, fake: FakeApiServer
) -> None:
    objs = [pod(f"p-{i:04d}") for i in range(MAX_BATCH_ITEMS + 3)]
    results = await client.create_many(objs)
    assert [r.metadata.name for r in results] == [o.metadata.name for o in objs]  # type: ignore[union-attr]
    assert [len(request.items) for request in fake.calls_of("Batch")] == [MAX_BATCH_ITEMS, 3]


async def test_nothing_to_write_makes_no_call(client: Client, fake: FakeApiServer) -> None:
    assert await client.create_many([]) == []
    assert await client.bind_many([]) == []
    assert fake.calls_of("Batch") == []


async def test_a_batch_that_never_reached_a_server_is_retried_as_a_create_is(
    client: Client, fake: FakeApiServer
) -> None:
    fake.fail("Batch", grpc.StatusCode.UNAVAILABLE, "store down", times=2)
    results = await client.create_many([pod("a")])
    assert isinstance(results[0], objects_pb2.Pod)
    assert len(fake.calls_of("Batch")) == 3


async def test_a_batch_refused_as_a_whole_raises_for_every_object_and_is_not_retried(
    client: Client, fake: FakeApiServer
) -> None:
    fake.fail("Batch", grpc.StatusCode.INVALID_ARGUMENT, "Batch is invalid: items: Too many",
              reason="Invalid")
    with pytest.raises(errors.Invalid, match="Batch is invalid"):
        await client.bind_many([("default", "a", "n1")])
    assert len(fake.calls_of("Batch")) == 1
