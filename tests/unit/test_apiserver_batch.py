"""Batch through the whole request pipeline of an API server in this process: each item is authorized,
checked, fenced and written as its own call would be, and answered with what that call answers (the same
object, or the same code, message and reason); one item's failure fails no other."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

import grpc
import pytest

from cluster.api import apiserver_pb2, errors, kinds, objects_pb2
from cluster.api.fencing import BOUND_UNDER_FENCE_ANNOTATION, SCHEDULER_LEASE
from cluster.api.kinds import POD
from cluster.api.limits import MAX_BATCH_ITEMS
from tests.builders import IMAGE, pod
from tests.unit.token_server import (
    ADMIN_TOKEN,
    CLIENT_TOKEN,
    NAMESPACE,
    NODE,
    SCHEDULER_TOKEN,
    Served,
    as_token,
    token_server,
)


class BatchServed(Served):
    """``Served`` with the calls of a batch and of its items one by one."""

    async def batch(self, token: str, *items: apiserver_pb2.BatchItem) -> list[apiserver_pb2.BatchResult]:
        response = await self.stub.Batch(apiserver_pb2.BatchRequest(items=items), metadata=as_token(token))
        return list(response.results)

    async def single(self, token: str, item: apiserver_pb2.BatchItem) -> apiserver_pb2.BatchResult:
        """The item sent as its own call, its answer as a Batch result."""
        write = item.WhichOneof("write")
        try:
            if write == "create":
                obj = await self.stub.Create(item.create, metadata=as_token(token))
            else:
                obj = apiserver_pb2.Object(pod=await self.stub.Bind(item.bind, metadata=as_token(token)))
        except grpc.aio.AioRpcError as err:
            return apiserver_pb2.BatchResult(error=apiserver_pb2.Status(
                code=err.code().value[0], message=err.details(),
                reason=errors.reason_of(err.trailing_metadata())))
        return apiserver_pb2.BatchResult(object=obj)


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[BatchServed]:
    async with token_server(tmp_path, BatchServed) as served:
        yield served


@pytest.fixture
async def enforced(tmp_path: Path) -> AsyncIterator[BatchServed]:
    async with token_server(tmp_path, BatchServed, enforce_leader_fencing=True) as served:
        yield served


def create(obj: Any, fence: apiserver_pb2.Fence | None = None) -> apiserver_pb2.BatchItem:
    return apiserver_pb2.BatchItem(create=apiserver_pb2.CreateRequest(object=kinds.wrap(obj), fence=fence))


def bind(name: str, node: str = NODE, fence: apiserver_pb2.Fence | None = None) -> apiserver_pb2.BatchItem:
    binding = objects_pb2.Binding(metadata=objects_pb2.ObjectMeta(name=name, namespace=NAMESPACE))
    binding.target.name = node
    return apiserver_pb2.BatchItem(bind=apiserver_pb2.BindRequest(binding=binding, fence=fence))


def invalid_pod(name: str) -> objects_pb2.Pod:
    bad = pod(name, NAMESPACE, image=IMAGE)
    bad.spec.containers[0].name = "Not A Name"
    return bad


def outcome(result: apiserver_pb2.BatchResult) -> tuple[str, str] | tuple[int, str, str]:
    """What a result says, without the object's server-set fields: ("object", name) or the status."""
    if result.HasField("error"):
        return result.error.code, result.error.reason, result.error.message
    obj = kinds.unwrap(result.object)
    return "object", obj.metadata.name  # type: ignore[attr-defined]


async def test_each_item_is_answered_on_its_own_with_what_its_own_call_answers(served: BatchServed) -> None:
    await served.admin.create(pod("bound", NAMESPACE, image=IMAGE))
    await served.admin.bind(NAMESPACE, "bound", NODE)
    await served.admin.create(pod("to-bind", NAMESPACE, image=IMAGE))
    await served.admin.create(pod("exists", NAMESPACE, image=IMAGE))
    items = [
        create(pod("new", NAMESPACE, image=IMAGE)),
        create(invalid_pod("bad")),
        create(pod("exists", NAMESPACE, image=IMAGE)),
        bind("to-bind"),
        bind("bound"),
        bind("missing"),
        bind("to-bind-elsewhere", node="no-such-node"),
        apiserver_pb2.BatchItem(),
    ]
    await served.admin.create(pod("to-bind-elsewhere", NAMESPACE, image=IMAGE))

    results = await served.batch(ADMIN_TOKEN, *items)

    assert [outcome(result) for result in results] == [
        ("object", "new"),
        outcome(await served.single(ADMIN_TOKEN, items[1])),
        outcome(await served.single(ADMIN_TOKEN, items[2])),
        ("object", "to-bind"),
        outcome(await served.single(ADMIN_TOKEN, items[4])),
        outcome(await served.single(ADMIN_TOKEN, items[5])),
        outcome(await served.single(ADMIN_TOKEN, items[6])),
        (grpc.StatusCode.INVALID_ARGUMENT.value[0], "Invalid",
         "Batch is invalid: items[7]: Required value: a create or a bind"),
    ]
    # The invalid create names its object, as the single Create does; the failures are the right kinds.
    assert results[1].error.message.startswith('Pod "bad" is invalid: spec.containers[0].name')
    reasons = [results[i].error.reason for i in (2, 4, 5, 6)]
    assert reasons == ["AlreadyExists", "Conflict", "NotFound", "NotFound"]
    # What succeeded is stored, and answered as stored; what failed wrote nothing.
    assert kinds.unwrap(results[0].object) == await served.admin.get(POD, "new", NAMESPACE)
    assert results[3].object.pod == await served.admin.get(POD, "to-bind", NAMESPACE)
    assert results[3].object.pod.spec.node_name == NODE
    assert (await served.admin.get(POD, "to-bind-elsewhere", NAMESPACE)).spec.node_name == ""
    with pytest.raises(errors.NotFound):
        await served.admin.get(POD, "bad", NAMESPACE)


async def test_each_item_is_authorized_as_the_verb_it_is(served: BatchServed) -> None:
    """A client may create pods in its namespaces but not in kube-system, and may not bind: each item is
    refused or let through alone, with the single call's PERMISSION_DENIED."""
    await served.admin.create(pod("waiting", NAMESPACE, image=IMAGE))
    items = [
        create(pod("mine", NAMESPACE, image=IMAGE)),
        create(pod("system", "kube-system", image=IMAGE)),
        bind("waiting"),
    ]

    results = await served.batch(CLIENT_TOKEN, *items)

    assert [outcome(result) for result in results] == [
        ("object", "mine"),
        outcome(await served.single(CLIENT_TOKEN, items[1])),
        outcome(await served.single(CLIENT_TOKEN, items[2])),
    ]
    assert {results[i].error.code for i in (1, 2)} == {grpc.StatusCode.PERMISSION_DENIED.value[0]}
    assert (await served.admin.get(POD, "waiting", NAMESPACE)).spec.node_name == ""


async def _scheduler_fence(served: BatchServed, holder: str = "sched-a") -> apiserver_pb2.Fence:
    """The scheduler's credential takes the schedulers' Lease; the fence of that tenure."""
    lease = objects_pb2.Lease(
        metadata=objects_pb2.ObjectMeta(name=SCHEDULER_LEASE.name, namespace=SCHEDULER_LEASE.namespace))
    lease.spec.holder_identity = holder
    lease.spec.lease_duration_seconds = 15
    created = await served.stub.Create(apiserver_pb2.CreateRequest(object=kinds.wrap(lease)),
                                       metadata=as_token(SCHEDULER_TOKEN))
    return apiserver_pb2.Fence(lease_namespace=SCHEDULER_LEASE.namespace, lease_name=SCHEDULER_LEASE.name,
                               holder_identity=holder, token=int(created.lease.metadata.resource_version))


async def test_each_item_carries_its_own_fence_and_a_stale_one_is_refused_alone(
    enforced: BatchServed,
) -> None:
    fence = await _scheduler_fence(enforced)
    stale = apiserver_pb2.Fence()
    stale.CopyFrom(fence)
    stale.token += 1000
    for name in ("p-0", "p-1", "p-2", "p-3"):
        await enforced.admin.create(pod(name, NAMESPACE, image=IMAGE))
    items = [bind("p-0", fence=fence), bind("p-1", fence=stale), bind("p-2"), bind("p-3", fence=fence)]

    results = await enforced.batch(SCHEDULER_TOKEN, *items)

    assert [outcome(result)[:2] for result in results] == [
        ("object", "p-0"),
        (grpc.StatusCode.FAILED_PRECONDITION.value[0], "Fenced"),
        (grpc.StatusCode.PERMISSION_DENIED.value[0], "Forbidden"),
        ("object", "p-3"),
    ]
    assert [outcome(results[i]) for i in (1, 2)] == [
        outcome(await enforced.single(SCHEDULER_TOKEN, items[i])) for i in (1, 2)]
    pods = [await enforced.admin.get(POD, name, NAMESPACE) for name in ("p-0", "p-1", "p-2", "p-3")]
    assert [p.spec.node_name for p in pods] == [NODE, "", "", NODE]
    stamp = results[0].object.pod.metadata.annotations[BOUND_UNDER_FENCE_ANNOTATION]
    assert stamp == f"sched-a@{fence.token}"


async def test_a_batch_of_too_many_items_is_refused_whole(served: BatchServed) -> None:
    items = [create(pod(f"p-{i}", NAMESPACE, image=IMAGE)) for i in range(MAX_BATCH_ITEMS + 1)]
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await served.batch(ADMIN_TOKEN, *items)
    assert (refused.value.code(), refused.value.details()) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        f"Batch is invalid: items: Too many: {MAX_BATCH_ITEMS + 1}: "
        f"must have at most {MAX_BATCH_ITEMS} items",
    )
    assert list((await served.admin.list(POD, NAMESPACE)).items) == []


async def test_a_batch_needs_credentials(served: BatchServed) -> None:
    call: Awaitable[Any] = served.stub.Batch(apiserver_pb2.BatchRequest(items=[create(pod("p", NAMESPACE))]))
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await call
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert list((await served.admin.list(POD, NAMESPACE)).items) == []
