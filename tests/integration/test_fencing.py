"""Fenced writes against the real `podsched apiserver` process, on each backend: a Lease's tenure token is
the revision of the write that acquired it and survives renewals; Bind, UpdateStatus and Delete under the
current tenure land (a fenced Bind is stamped with it); under a stale, missing, released or foreign tenure
they fail with Fenced and change nothing, and the server logs each refusal; clients cannot forge the
server's annotations; binds racing renewals all land."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import grpc
import pytest
from google.protobuf.message import Message

from cluster.api import apiserver_pb2, apiserver_pb2_grpc, errors, kinds, objects_pb2
from cluster.api.kinds import LEASE, POD
from cluster.client import Client, Fence
from cluster.launcher.process import ApiServerProcess
from tests import builders

LEASE_NAME = "kube-scheduler"
TOKEN_ANNOTATION = "podsched.io/fencing-token"
BOUND_ANNOTATION = "podsched.io/bound-under-fence"
WRITTEN_ANNOTATION = "podsched.io/written-under-fence"
#: How long a refusal may take to show in the server's log (its stderr is read by a thread).
LOG_WAIT_S = 10.0


def _lease(namespace: str, holder: str) -> objects_pb2.Lease:
    return builders.lease(LEASE_NAME, namespace, holder=holder, duration=15, transitions=0)


def _pod(name: str, namespace: str) -> objects_pb2.Pod:
    return builders.pod(name, namespace, image=builders.IMAGE)


async def _node(client: Client, name: str) -> None:
    await client.create(builders.node(name, allocatable=builders.ROOMY))


async def _renew(client: Client, namespace: str) -> objects_pb2.Lease:
    """One renewal as a leader does it: read, bump renewTime, compare-and-swap; again on a conflict."""
    while True:
        current = await client.get(LEASE, LEASE_NAME, namespace)
        renewed = objects_pb2.Lease()
        renewed.CopyFrom(current)
        renewed.spec.renew_time.FromNanoseconds(time.time_ns())
        try:
            return await client.update(renewed)
        except errors.Conflict:
            continue


async def _take_over(client: Client, namespace: str, holder: str) -> int:
    """Update the lease to ``holder`` (a change of holder, as an acquiring standby does); its new token."""
    current = await client.get(LEASE, LEASE_NAME, namespace)
    taken = objects_pb2.Lease()
    taken.CopyFrom(current)
    taken.spec.holder_identity = holder
    taken.spec.lease_transitions += 1
    updated = await client.update(taken)
    assert TOKEN_ANNOTATION not in updated.metadata.annotations
    return int(updated.metadata.resource_version)


def _fence(namespace: str, holder: str, token: int) -> Fence:
    return Fence(lease_namespace=namespace, lease_name=LEASE_NAME, holder_identity=holder, token=token)


async def _wait_for_log(server: ApiServerProcess, text: str) -> str:
    deadline = time.monotonic() + LOG_WAIT_S
    while True:
        for line in server.log().splitlines():
            if text in line:
                return line
        if time.monotonic() > deadline:
            raise AssertionError(f"the API server never logged {text!r}; its log:\n{server.log()}")
        await asyncio.sleep(0.1)


async def test_the_token_is_the_acquiring_revision_and_writes_under_it_land_through_renewals(
    client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    node = unique("node")
    await _node(client, node)
    for name in ("bound", "nominated", "doomed", "marked"):
        await client.create(_pod(name, namespace))
    await client.bind(namespace, "marked", node)

    created = await client.create(_lease(namespace, "a"))
    token = int(created.metadata.resource_version)
    assert TOKEN_ANNOTATION not in created.metadata.annotations
    fence = _fence(namespace, "a", token)

    for _ in range(3):
        renewed = await _renew(client, namespace)
        assert int(renewed.metadata.resource_version) > token
        assert renewed.metadata.annotations[TOKEN_ANNOTATION] == str(token)
    stored = await client.get(LEASE, LEASE_NAME, namespace)
    assert stored.metadata.annotations[TOKEN_ANNOTATION] == str(token)

    bound = await client.bind(namespace, "bound", node, fence=fence)
    assert bound.spec.node_name == node
    assert bound.metadata.annotations[BOUND_ANNOTATION] == f"a@{token}"
    assert (await client.get(POD, "bound", namespace)).metadata.annotations[BOUND_ANNOTATION] == f"a@{token}"

    await _renew(client, namespace)
    pending = await client.get(POD, "nominated", namespace)
    pending.status.nominated_node_name = node
    nominated = await client.update_status(pending, fence=fence)
    assert nominated.status.nominated_node_name == node
    assert (await client.get(POD, "nominated", namespace)).status.nominated_node_name == node

    await _renew(client, namespace)
    await client.delete(POD, "doomed", namespace, fence=fence)
    with pytest.raises(errors.NotFound):
        await client.get(POD, "doomed", namespace)
    marked = await client.delete(POD, "marked", namespace, grace_period_seconds=60, fence=fence)
    assert marked.metadata.HasField("deletion_timestamp")
    assert (await client.get(POD, "marked", namespace)).metadata.HasField("deletion_timestamp")


async def test_after_a_takeover_the_old_token_is_fenced_and_changes_nothing(
    apiserver: ApiServerProcess, client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    node = unique("node")
    await _node(client, node)
    for name in ("unbound", "victim", "marked"):
        await client.create(_pod(name, namespace))
    await client.bind(namespace, "victim", node)
    await client.bind(namespace, "marked", node)
    await client.delete(POD, "marked", namespace, grace_period_seconds=60)
    old_token = int((await client.create(_lease(namespace, "a"))).metadata.resource_version)
    await _renew(client, namespace)
    new_token = await _take_over(client, namespace, "b")
    await _renew(client, namespace)
    before = {name: await client.get(POD, name, namespace) for name in ("unbound", "victim", "marked")}
    stale = _fence(namespace, "a", old_token)
    told: list[errors.Fenced] = []
    client.on_fenced = told.append
    why = (
        f'lease {namespace}/{LEASE_NAME} is held by "b" with token {new_token}; the fence names holder "a" '
        f"with token {old_token}"
    )

    with pytest.raises(errors.Fenced) as bind_refused:
        await client.bind(namespace, "unbound", node, fence=stale)
    assert bind_refused.value.message == f"refused a fenced bind of Pod {namespace}/unbound: {why}"
    nominated = objects_pb2.Pod()
    nominated.CopyFrom(before["unbound"])
    nominated.status.nominated_node_name = node
    with pytest.raises(errors.Fenced) as status_refused:
        await client.update_status(nominated, fence=stale)
    assert status_refused.value.message == f"refused a fenced status update of Pod {namespace}/unbound: {why}"
    deletes = [
        ("victim", {"grace_period_seconds": 0}),
        ("victim", {}),
        # Already terminating: the delete would change nothing, and is still refused.
        ("marked", {"grace_period_seconds": 60}),
    ]
    for name, grace in deletes:
        with pytest.raises(errors.Fenced) as delete_refused:
            await client.delete(POD, name, namespace, fence=stale, **grace)
        assert delete_refused.value.message == f"refused a fenced delete of Pod {namespace}/{name}: {why}"

    after = {name: await client.get(POD, name, namespace) for name in before}
    assert after == before
    assert len(told) == 5 and all(isinstance(error, errors.Fenced) for error in told)
    line = await _wait_for_log(apiserver, f"refused a fenced bind of Pod {namespace}/unbound")
    assert "WARNING" in line and why in line and "fenced writes refused so far" in line

    # The new holder's fence works on the same objects.
    current = _fence(namespace, "b", new_token)
    assert (await client.bind(namespace, "unbound", node, fence=current)).metadata.annotations[
        BOUND_ANNOTATION
    ] == f"b@{new_token}"
    await client.delete(POD, "victim", namespace, grace_period_seconds=0, fence=current)
    with pytest.raises(errors.NotFound):
        await client.get(POD, "victim", namespace)


def _event(namespace: str, name: str) -> objects_pb2.Event:
    return builders.event(name, namespace, about={"kind": "Pod", "namespace": namespace, "name": "web"},
                          reason="FailedScheduling", message="0/1 nodes are available", type_="Warning",
                          count=1, component="default-scheduler")


async def test_events_under_a_deposed_terms_fence_are_refused_and_stamped_under_the_current(
    apiserver: ApiServerProcess, client: Client, namespace: str
) -> None:
    """A scheduler's events belong to its term: once the lease changed hands, an event the old term
    writes (a create, or a count update of its own event) is refused and changes nothing."""
    old_token = int((await client.create(_lease(namespace, "a"))).metadata.resource_version)
    await _renew(client, namespace)
    old = _fence(namespace, "a", old_token)
    written = await client.create(_event(namespace, "web.1"), fence=old)
    assert written.metadata.annotations[WRITTEN_ANNOTATION] == f"a@{old_token}"
    new_token = await _take_over(client, namespace, "b")

    with pytest.raises(errors.Fenced) as create_refused:
        await client.create(_event(namespace, "web.2"), fence=old)
    assert create_refused.value.message == (
        f'refused a fenced create of Event {namespace}/web.2: lease {namespace}/{LEASE_NAME} is held by "b" '
        f'with token {new_token}; the fence names holder "a" with token {old_token}'
    )
    with pytest.raises(errors.NotFound):
        await client.get("Event", "web.2", namespace)
    repeat = objects_pb2.Event()
    repeat.CopyFrom(written)
    repeat.count = 2
    with pytest.raises(errors.Fenced, match=rf"^refused a fenced update of Event {namespace}/web.1: "):
        await client.update(repeat, fence=old)
    assert (await client.get("Event", "web.1", namespace)) == written

    # The current term writes; an unfenced write (a user, kube-scheduler) lands unstamped, and cannot
    # forge the stamp.
    current = _fence(namespace, "b", new_token)
    assert (await client.update(repeat, fence=current)).metadata.annotations[WRITTEN_ANNOTATION] == (
        f"b@{new_token}"
    )
    forged = _event(namespace, "web.3")
    forged.metadata.annotations[WRITTEN_ANNOTATION] = f"b@{new_token}"
    unfenced = await client.create(forged)
    assert WRITTEN_ANNOTATION not in unfenced.metadata.annotations
    unfenced.count = 2
    unfenced.metadata.annotations[WRITTEN_ANNOTATION] = f"b@{new_token}"
    assert WRITTEN_ANNOTATION not in (await client.update(unfenced)).metadata.annotations


async def test_a_fence_on_a_missing_released_or_other_lease_is_refused(
    client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    node = unique("node")
    await _node(client, node)
    await client.create(_pod("web", namespace))

    with pytest.raises(errors.Fenced, match=rf"lease {namespace}/{LEASE_NAME} does not exist"):
        await client.bind(namespace, "web", node, fence=_fence(namespace, "a", 1))

    token = int((await client.create(_lease(namespace, "a"))).metadata.resource_version)
    with pytest.raises(errors.Fenced, match=r'is held by "a" with token \d+; the fence names holder "z"'):
        await client.bind(namespace, "web", node, fence=_fence(namespace, "z", token))
    with pytest.raises(errors.Fenced, match=rf'the fence names holder "a" with token {token + 1000}$'):
        await client.bind(namespace, "web", node, fence=_fence(namespace, "a", token + 1000))
    other = Fence(lease_namespace=namespace, lease_name="other-lease", holder_identity="a", token=token)
    with pytest.raises(errors.Fenced, match=rf"lease {namespace}/other-lease does not exist"):
        await client.bind(namespace, "web", node, fence=other)

    # Released as client-go releases on shutdown: empty holder, a one-second lease.
    current = await client.get(LEASE, LEASE_NAME, namespace)
    released = objects_pb2.Lease()
    released.CopyFrom(current)
    released.spec.holder_identity = ""
    released.spec.lease_duration_seconds = 1
    await client.update(released)
    with pytest.raises(errors.Fenced, match=r"has no holder \(released\)"):
        await client.bind(namespace, "web", node, fence=_fence(namespace, "a", token))

    await client.delete(LEASE, LEASE_NAME, namespace)
    with pytest.raises(errors.Fenced, match="does not exist"):
        await client.bind(namespace, "web", node, fence=_fence(namespace, "a", token))
    assert (await client.get(POD, "web", namespace)).spec.node_name == ""


async def test_a_client_cannot_forge_the_server_annotations(
    client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    forged = _lease(namespace, "a")
    forged.metadata.annotations[TOKEN_ANNOTATION] = "1"
    created = await client.create(forged)
    token = int(created.metadata.resource_version)
    assert TOKEN_ANNOTATION not in created.metadata.annotations

    renewal = objects_pb2.Lease()
    renewal.CopyFrom(created)
    renewal.metadata.annotations[TOKEN_ANNOTATION] = "1"
    renewed = await client.update(renewal)
    assert renewed.metadata.annotations[TOKEN_ANNOTATION] == str(token)
    # Dropping it does not end the tenure either.
    renewal.CopyFrom(renewed)
    del renewal.metadata.annotations[TOKEN_ANNOTATION]
    assert (await client.update(renewal)).metadata.annotations[TOKEN_ANNOTATION] == str(token)
    # A fence with the forged token is refused; the real one holds.
    node = unique("node")
    await _node(client, node)
    await client.create(_pod("web", namespace))
    with pytest.raises(errors.Fenced):
        await client.bind(namespace, "web", node, fence=_fence(namespace, "a", 1))

    pod = _pod("stamped", namespace)
    pod.metadata.annotations[BOUND_ANNOTATION] = "a@1"
    assert BOUND_ANNOTATION not in (await client.create(pod)).metadata.annotations
    bound = await client.bind(namespace, "stamped", node, fence=_fence(namespace, "a", token))
    relabelled = objects_pb2.Pod()
    relabelled.CopyFrom(bound)
    relabelled.metadata.annotations[BOUND_ANNOTATION] = "z@9"
    assert (await client.update(relabelled)).metadata.annotations[BOUND_ANNOTATION] == f"a@{token}"


async def test_fenced_binds_racing_renewals_all_land(
    client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    count, rounds = 50, 5
    node = unique("node")
    await _node(client, node)
    token = int((await client.create(_lease(namespace, "a"))).metadata.resource_version)
    fence = _fence(namespace, "a", token)

    async def renew_all() -> list[int]:
        return [int((await _renew(client, namespace)).metadata.resource_version) for _ in range(count)]

    async def bind(name: str) -> objects_pb2.Pod:
        return await client.bind(namespace, name, node, fence=fence)

    # Whether a renewal lands between two binds depends on how the server batches the writes: race again
    # (every bind must land each time) until one does, a few times at most.
    raced = False
    for round_ in range(rounds):
        names = [f"p{round_}-{index}" for index in range(count)]
        for name in names:
            await client.create(_pod(name, namespace))
        renewals, *bound = await asyncio.gather(renew_all(), *(bind(name) for name in names))
        assert len(renewals) == count
        assert all(pod.spec.node_name == node for pod in bound)
        bind_versions = sorted(int(pod.metadata.resource_version) for pod in bound)
        if any(bind_versions[0] < renewal < bind_versions[-1] for renewal in renewals):
            raced = True
            break
    assert raced, f"no renewal landed between two binds in {rounds} races"
    listed = (await client.list_all(POD, namespace)).items
    assert len(listed) == count * (round_ + 1)
    for pod in listed:
        assert pod.spec.node_name == node
        assert pod.metadata.annotations[BOUND_ANNOTATION] == f"a@{token}"
    lease = await client.get(LEASE, LEASE_NAME, namespace)
    assert lease.metadata.annotations[TOKEN_ANNOTATION] == str(token)


async def test_unfenced_writes_are_unchanged(
    client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    """No lease anywhere: unfenced Bind, UpdateStatus and Delete work as before and stamp nothing."""
    node = unique("node")
    await _node(client, node)
    await client.create(_pod("web", namespace))
    await client.create(_pod("gone", namespace))
    bound = await client.bind(namespace, "web", node)
    assert BOUND_ANNOTATION not in bound.metadata.annotations
    bound.status.message = "fine"
    assert (await client.update_status(bound)).status.message == "fine"
    await client.delete(POD, "gone", namespace)
    with pytest.raises(errors.NotFound):
        await client.get(POD, "gone", namespace)


async def _raw_call(server: ApiServerProcess, method: str, request: Message) -> grpc.aio.AioRpcError:
    async with grpc.aio.insecure_channel(server.address) as channel:
        stub = apiserver_pb2_grpc.ApiServerStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await getattr(stub, method)(request)
    return raised.value


async def test_a_fence_where_none_is_taken_or_a_bad_fence_is_invalid(
    apiserver: ApiServerProcess, client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    await client.create(_lease(namespace, "a"))
    node = unique("node")
    await _node(client, node)
    created = await client.create(_pod("web", namespace))
    request = apiserver_pb2.UpdateRequest(
        object=kinds.wrap(created), fence=_fence(namespace, "a", 1).to_proto()
    )
    refused = await _raw_call(apiserver, "Update", request)
    assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.details() == ("Update takes a fence only for Events, Leases, PersistentVolumes and "
                                 "PersistentVolumeClaims, not for a Pod")
    refused = await _raw_call(apiserver, "Create", apiserver_pb2.CreateRequest(
        object=kinds.wrap(_pod("db", namespace)), fence=_fence(namespace, "a", 1).to_proto()
    ))
    assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.details() == "Create takes a fence only for Events and ResourceClaims, not for a Pod"

    with pytest.raises(
        errors.Invalid,
        match=r"^the fence is invalid: \[fence.holderIdentity: Required value, fence.token: Invalid value: "
        r"0: must be greater than 0\]$",
    ):
        await client.bind(namespace, "web", node, fence=_fence(namespace, "", 0))
    assert (await client.get(POD, "web", namespace)).spec.node_name == ""
