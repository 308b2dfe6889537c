"""Server-enforced leadership through the whole request pipeline of an API server in this process
(authentication, authorization, the leadership checks, the verbs): the scheduler's credential is the
attacker, and what it sends is what a caller on the wire could send, kind names included."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import grpc
import pytest

from cluster.api import apiserver_pb2, kinds, objects_pb2
from cluster.api.kinds import POD
from tests.builders import IMAGE, pod
from tests.unit.token_server import (
    CLIENT_TOKEN,
    NAMESPACE,
    NODE,
    SCHEDULER_TOKEN,
    Served,
    as_token,
    token_server,
)

#: Every way a caller may name the Pod kind: the kind, its plural, its short name, in any case.
POD_ALIASES = ("Pod", "pods", "po", "pod", "POD", "Pods", "PO")


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    async with token_server(tmp_path, enforce_leader_fencing=True) as served:
        yield served


async def _refused(call: Awaitable[object]) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await call
    return refused.value


def test_the_table_names_the_pod_kind_every_way_the_api_accepts() -> None:
    assert {alias.lower() for alias in POD_ALIASES} == {POD.name.lower(), POD.plural, *POD.short_names}
    assert all(kinds.kind_by_name(alias) is POD for alias in POD_ALIASES)


@pytest.mark.parametrize("alias", POD_ALIASES)
async def test_an_unfenced_pod_delete_by_the_scheduler_is_refused_however_the_kind_is_named(
    served: Served, alias: str
) -> None:
    await served.admin.create(pod("victim", NAMESPACE, image=IMAGE))
    await served.admin.bind(NAMESPACE, "victim", NODE)
    request = apiserver_pb2.DeleteRequest(
        kind=alias, namespace=NAMESPACE, name="victim", grace_period_seconds=0)
    refused = await _refused(served.stub.Delete(request, metadata=as_token(SCHEDULER_TOKEN)))
    assert refused.code() == grpc.StatusCode.PERMISSION_DENIED
    assert refused.details() == (
        f'user "kube-scheduler" cannot delete pod {NAMESPACE}/victim (a caller that may bind pods deletes '
        "only preemption victims, and only as the leader) without a fence: this API server enforces leader "
        "fencing (--enforce-leader-fencing): only the holder of the scheduler lease writes this, under the "
        "fence of its tenure"
    )
    assert (await served.admin.get(POD, "victim", NAMESPACE)).spec.node_name == NODE
    # A caller that may not bind deletes its own pod unfenced, under any name of the kind.
    await served.stub.Delete(request, metadata=as_token(CLIENT_TOKEN))


@pytest.mark.parametrize("alias", POD_ALIASES)
async def test_an_unfenced_nomination_is_refused_whatever_kind_the_object_names(
    served: Served, alias: str
) -> None:
    """UpdateStatus takes its kind from the object it carries, never from the object's own kind field."""
    created = await served.admin.create(pod("nominee", NAMESPACE, image=IMAGE))
    nominated = objects_pb2.Pod()
    nominated.CopyFrom(created)
    nominated.kind = alias
    nominated.status.nominated_node_name = NODE
    request = apiserver_pb2.UpdateRequest(object=kinds.wrap(nominated))
    refused = await _refused(served.stub.UpdateStatus(request, metadata=as_token(SCHEDULER_TOKEN)))
    assert refused.code() == grpc.StatusCode.PERMISSION_DENIED
    assert f"cannot change status.nominatedNodeName of pod {NAMESPACE}/nominee without a fence" in (
        refused.details()
    )
    assert (await served.admin.get(POD, "nominee", NAMESPACE)).status.nominated_node_name == ""


# ------------------------------------------------------------------------------- which lease a fence names

ROGUE = "rogue"
ROGUE_REFUSAL = (
    'user "kube-scheduler" cannot write under a fence of lease kube-system/rogue: this API server enforces '
    "leader fencing (--enforce-leader-fencing) and takes fences only of the lease kube-system/kube-scheduler "
    "(--fenced-lease)"
)


async def _rogue_fence(served: Served) -> apiserver_pb2.Fence:
    """The scheduler's credential creates a Lease of its own, which it holds: a fence that names it would
    hold against it."""
    lease = objects_pb2.Lease(metadata=objects_pb2.ObjectMeta(name=ROGUE, namespace="kube-system"))
    lease.spec.holder_identity = "attacker"
    lease.spec.lease_duration_seconds = 15
    created = await served.stub.Create(apiserver_pb2.CreateRequest(object=kinds.wrap(lease)),
                                       metadata=as_token(SCHEDULER_TOKEN))
    return apiserver_pb2.Fence(lease_namespace="kube-system", lease_name=ROGUE, holder_identity="attacker",
                               token=int(created.lease.metadata.resource_version))


def _binding(name: str) -> objects_pb2.Binding:
    binding = objects_pb2.Binding(metadata=objects_pb2.ObjectMeta(name=name, namespace=NAMESPACE))
    binding.target.name = NODE
    return binding


async def test_every_write_under_a_fence_of_a_lease_the_server_does_not_take_is_refused(
    served: Served,
) -> None:
    fence = await _rogue_fence(served)
    for name in ("web", "w-0", "w-1", "nominee", "victim"):
        await served.admin.create(pod(name, NAMESPACE, image=IMAGE))
    await served.admin.bind(NAMESPACE, "victim", NODE)
    nominated = await served.admin.get(POD, "nominee", NAMESPACE)
    nominated.status.nominated_node_name = NODE
    event = objects_pb2.Event(metadata=objects_pb2.ObjectMeta(name="web.1", namespace=NAMESPACE),
                              reason="Scheduled", message="bound")
    event.involved_object.kind, event.involved_object.name = "Pod", "web"
    stub, attacker = served.stub, as_token(SCHEDULER_TOKEN)
    victim = apiserver_pb2.DeleteRequest(kind="Pod", namespace=NAMESPACE, name="victim", fence=fence)
    group = apiserver_pb2.BindGroupRequest(bindings=[_binding("w-0"), _binding("w-1")], fence=fence)
    calls: dict[str, Callable[[], Awaitable[object]]] = {
        "Bind": lambda: stub.Bind(apiserver_pb2.BindRequest(binding=_binding("web"), fence=fence),
                                  metadata=attacker),
        "BindGroup": lambda: stub.BindGroup(group, metadata=attacker),
        "nomination": lambda: stub.UpdateStatus(
            apiserver_pb2.UpdateRequest(object=kinds.wrap(nominated), fence=fence), metadata=attacker),
        "Delete": lambda: stub.Delete(victim, metadata=attacker),
        "Event": lambda: stub.Create(
            apiserver_pb2.CreateRequest(object=kinds.wrap(event), fence=fence), metadata=attacker),
    }
    for verb, call in calls.items():
        refused = await _refused(call())
        assert (refused.code(), refused.details()) == (grpc.StatusCode.PERMISSION_DENIED, ROGUE_REFUSAL), verb
    for name in ("web", "w-0", "w-1"):
        assert (await served.admin.get(POD, name, NAMESPACE)).spec.node_name == ""
    assert (await served.admin.get(POD, "nominee", NAMESPACE)).status.nominated_node_name == ""
    assert (await served.admin.get(POD, "victim", NAMESPACE)).spec.node_name == NODE
    assert list((await served.admin.list(kinds.EVENT, NAMESPACE)).items) == []
