"""Server-enforced leadership against real processes: an API server that authenticates every call, a
caller holding the `scheduler` identity (a podsched:schedulers token, the one the real scheduler uses)
as the attacker, and a real `podsched scheduler` as the leader.

With --enforce-leader-fencing the attacker can neither bind (nor nominate, nor delete a pod) without a
fence, nor take the Lease from a leader that renews it: the real leader keeps leading and binding, and
podsched's own elector still acquires, renews, releases on SIGTERM and takes over an expired lease.
Without the flag both attacks work as before (compatibility with plain kube-scheduler clients)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest

from cluster.api import apiserver_pb2, apiserver_pb2_grpc, errors, objects_pb2
from cluster.api.kinds import LEASE, LEASE_CANDIDATE, POD
from cluster.client import Client, ClientCredentials, Fence
from cluster.launcher.process import ApiServerProcess, SchedulerProcess, cli_env
from tests import builders
from tests.builders import IMAGE, pod
from tests.integration.helpers import REPO, settle

ADMIN_TOKEN, SCHEDULER_TOKEN, CLIENT_TOKEN = "admin-token", "scheduler-token", "client-token"
LEASE_NAMESPACE, LEASE_NAME = "kube-system", "kube-scheduler"
#: The real scheduler's election timings: short, so that expiries happen within the test.
LEASE_S, RENEW_S, RETRY_S = 4, 3, 0.5


def _server(directory: Path, *, enforce: bool) -> ApiServerProcess:
    tokens = directory / "tokens.csv"
    tokens.write_text(
        f"{ADMIN_TOKEN},ada,1,system:masters\n"
        f"{SCHEDULER_TOKEN},kube-scheduler,2,podsched:schedulers\n"
        f"{CLIENT_TOKEN},cleo,3,podsched:clients\n"
    )
    flags = ["--token-auth-file", str(tokens), "--controllers", "none"]
    if enforce:
        flags.append("--enforce-leader-fencing")
    return ApiServerProcess(["--data-dir", str(directory / "data")], extra_args=flags)


@pytest.fixture(scope="module")
def enforcing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    with _server(tmp_path_factory.mktemp("enforcing"), enforce=True) as server:
        yield server


@pytest.fixture(scope="module")
def permissive(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    with _server(tmp_path_factory.mktemp("permissive"), enforce=False) as server:
        yield server


def _client(server: ApiServerProcess, token: str) -> Client:
    return Client(server.address, credentials=ClientCredentials(token=token))


def _scheduler(server: ApiServerProcess) -> SchedulerProcess:
    return SchedulerProcess(
        ["--server", server.address, "--metrics-addr", "127.0.0.1:0", "--token", SCHEDULER_TOKEN,
         "--leader-elect-lease-duration", f"{LEASE_S}s", "--leader-elect-renew-deadline", f"{RENEW_S}s",
         "--leader-elect-retry-period", f"{RETRY_S}s"],
        env=cli_env(""), cwd=REPO,
    )


async def _holder(admin: Client) -> objects_pb2.Lease:
    lease = await admin.get(LEASE, LEASE_NAME, LEASE_NAMESPACE)
    assert isinstance(lease, objects_pb2.Lease)
    return lease


async def _take_over(attacker: Client, holder: str) -> objects_pb2.Lease:
    """Rewrite the Lease's holder, as an acquiring candidate does, whoever holds it."""
    current = await attacker.get(LEASE, LEASE_NAME, LEASE_NAMESPACE)
    taken = objects_pb2.Lease()
    taken.CopyFrom(current)
    taken.spec.holder_identity = holder
    taken.spec.lease_transitions += 1
    return await attacker.update(taken)


def _fence_of(lease: objects_pb2.Lease) -> Fence:
    token = int(lease.metadata.resource_version)
    return Fence(lease.metadata.namespace, lease.metadata.name, lease.spec.holder_identity, token)


async def _bound(admin: Client, namespace: str, name: str) -> objects_pb2.Pod:
    pod = objects_pb2.Pod()

    async def bound() -> bool:
        pod.CopyFrom(await admin.get(POD, name, namespace))
        return bool(pod.spec.node_name)

    await settle(f"the binding of pod {namespace}/{name}", bound)
    return pod


async def test_unfenced_leader_writes_by_the_scheduler_identity_are_refused(
    enforcing: ApiServerProcess, namespace: str, unique: Callable[[str], str]
) -> None:
    node = unique("node")
    async with (
        _client(enforcing, ADMIN_TOKEN) as admin,
        _client(enforcing, SCHEDULER_TOKEN) as attacker,
        _client(enforcing, CLIENT_TOKEN) as user,
    ):
        await admin.create(builders.node(node, allocatable=builders.ROOMY))
        for name in ("web", "victim", "nominee"):
            await admin.create(pod(name, namespace, image=IMAGE))
        await admin.bind(namespace, "victim", node)

        with pytest.raises(errors.PermissionDenied) as bind_refused:
            await attacker.bind(namespace, "web", node)
        assert bind_refused.value.message == (
            f'user "kube-scheduler" cannot bind pod {namespace}/web without a fence: this API server '
            "enforces leader fencing (--enforce-leader-fencing): only the holder of the scheduler lease "
            "writes this, under the fence of its tenure"
        )
        nominated = await attacker.get(POD, "nominee", namespace)
        nominated.status.nominated_node_name = node
        with pytest.raises(errors.PermissionDenied, match=rf"cannot change status.nominatedNodeName of pod "
                                                          rf"{namespace}/nominee without a fence"):
            await attacker.update_status(nominated)
        victim_refusal = rf"cannot delete pod {namespace}/victim \(a caller that may bind pods deletes only"
        with pytest.raises(errors.PermissionDenied, match=victim_refusal):
            await attacker.delete(POD, "victim", namespace, grace_period_seconds=0)
        assert (await admin.get(POD, "web", namespace)).spec.node_name == ""
        assert (await admin.get(POD, "nominee", namespace)).status.nominated_node_name == ""
        assert (await admin.get(POD, "victim", namespace)).spec.node_name == node

        # Other status writes, a user's delete of its own pod and an admin's unfenced bind are as before.
        nominated.status.nominated_node_name = ""
        nominated.status.message = "waiting"
        assert (await attacker.update_status(nominated)).status.message == "waiting"
        await user.delete(POD, "nominee", namespace, grace_period_seconds=0)
        assert (await admin.bind(namespace, "web", node)).spec.node_name == node


async def test_an_unfenced_pod_delete_is_refused_whatever_the_kind_is_called(
    enforcing: ApiServerProcess, namespace: str, unique: Callable[[str], str]
) -> None:
    """The kind as the wire carries it: the client library always sends "Pod", an attacker need not."""
    node = unique("node")
    async with _client(enforcing, ADMIN_TOKEN) as admin:
        await admin.create(builders.node(node, allocatable=builders.ROOMY))
        await admin.create(pod("victim", namespace, image=IMAGE))
        await admin.bind(namespace, "victim", node)
        async with grpc.aio.insecure_channel(enforcing.address) as channel:
            stub = apiserver_pb2_grpc.ApiServerStub(channel)
            for alias in ("Pod", "pods", "po", "pod", "POD"):
                request = apiserver_pb2.DeleteRequest(
                    kind=alias, namespace=namespace, name="victim", grace_period_seconds=0)
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.Delete(request, metadata=ClientCredentials(token=SCHEDULER_TOKEN).metadata())
                assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED, alias
                assert f"cannot delete pod {namespace}/victim (a caller that may bind pods" in (
                    refused.value.details()), alias
        assert (await admin.get(POD, "victim", namespace)).spec.node_name == node


async def test_no_write_lands_under_a_fence_of_a_lease_the_scheduler_credential_created(
    enforcing: ApiServerProcess, namespace: str, unique: Callable[[str], str]
) -> None:
    """The credential may create a Lease and hold it: its fence would hold, but the server takes fences
    only of the scheduler's Lease."""
    node, rogue = unique("node"), unique("rogue")
    async with _client(enforcing, ADMIN_TOKEN) as admin, _client(enforcing, SCHEDULER_TOKEN) as attacker:
        await admin.create(builders.node(node, allocatable=builders.ROOMY))
        for name in ("web", "w-0", "w-1", "nominee", "victim"):
            await admin.create(pod(name, namespace, image=IMAGE))
        await admin.bind(namespace, "victim", node)
        held = objects_pb2.Lease(metadata=objects_pb2.ObjectMeta(name=rogue, namespace=LEASE_NAMESPACE))
        held.spec.holder_identity = "attacker"
        held.spec.lease_duration_seconds = 3600
        fence = _fence_of(await attacker.create(held))
        nominated = await attacker.get(POD, "nominee", namespace)
        nominated.status.nominated_node_name = node

        refusal = (
            f'user "kube-scheduler" cannot write under a fence of lease {LEASE_NAMESPACE}/{rogue}: this API '
            "server enforces leader fencing (--enforce-leader-fencing) and takes fences only of the lease "
            f"{LEASE_NAMESPACE}/{LEASE_NAME} (--fenced-lease)"
        )
        writes = {
            "Bind": lambda: attacker.bind(namespace, "web", node, fence=fence),
            "BindGroup": lambda: attacker.bind_group(
                [(namespace, "w-0", node), (namespace, "w-1", node)], fence=fence),
            "nomination": lambda: attacker.update_status(nominated, fence=fence),
            "Delete": lambda: attacker.delete(POD, "victim", namespace, grace_period_seconds=0, fence=fence),
        }
        for verb, write in writes.items():
            with pytest.raises(errors.PermissionDenied) as refused:
                await write()
            assert refused.value.message == refusal, verb
        assert [(await admin.get(POD, name, namespace)).spec.node_name for name in ("web", "w-0", "w-1")] == [
            "", "", ""]
        assert (await admin.get(POD, "nominee", namespace)).status.nominated_node_name == ""
        assert (await admin.get(POD, "victim", namespace)).spec.node_name == node


async def test_a_standby_keeps_its_lease_candidate_without_a_fence(
    enforcing: ApiServerProcess, namespace: str
) -> None:
    """A candidate's writes are not a leader's: any replica, leading or not, makes them unfenced."""
    async with _client(enforcing, SCHEDULER_TOKEN) as standby, _client(enforcing, CLIENT_TOKEN) as user:
        candidate = objects_pb2.LeaseCandidate(
            metadata=objects_pb2.ObjectMeta(name="vm_standby", namespace=namespace),
            spec=objects_pb2.LeaseCandidateSpec(lease_name=LEASE_NAME, binary_version="0.1.0",
                                                emulation_version="0.1.0", strategy="OldestEmulationVersion"),
        )
        candidate.spec.renew_time.FromSeconds(1_700_000_000)
        created = await standby.create(candidate)
        created.spec.renew_time.FromSeconds(1_700_000_015)
        assert (await standby.update(created)).spec.renew_time.seconds == 1_700_000_015
        with pytest.raises(errors.PermissionDenied, match='cannot create resource "leasecandidates"'):
            await user.create(candidate)
        await standby.delete(LEASE_CANDIDATE, "vm_standby", namespace)
        with pytest.raises(errors.NotFound):
            await standby.get(LEASE_CANDIDATE, "vm_standby", namespace)


# The leader must renew its 4 s lease in time for 8 s: it runs alone, with the timing tests.
@pytest.mark.timing
async def test_the_lease_cannot_be_taken_from_a_live_leader_which_keeps_leading(
    enforcing: ApiServerProcess, namespace: str, unique: Callable[[str], str]
) -> None:
    node = unique("node")
    first, second, third = _scheduler(enforcing), _scheduler(enforcing), _scheduler(enforcing)
    async with _client(enforcing, ADMIN_TOKEN) as admin, _client(enforcing, SCHEDULER_TOKEN) as attacker:
        await admin.create(builders.node(node, allocatable=builders.ROOMY))
        first.start()
        try:
            await settle("the first scheduler's election",
                         lambda: _holds(admin, first.identity))
            await admin.create(pod("before", namespace, image=IMAGE))
            await _bound(admin, namespace, "before")

            with pytest.raises(errors.Forbidden) as refused:
                await _take_over(attacker, "attacker")
            assert refused.value.message.startswith(
                f'lease {LEASE_NAMESPACE}/{LEASE_NAME} is held by "{first.identity}" and cannot be taken '
                f'over by "attacker": it expires by this API server\'s clock only in '
            )
            # Nor by a release followed by a takeover: a release before expiry needs the tenure's fence.
            current = await attacker.get(LEASE, LEASE_NAME, LEASE_NAMESPACE)
            current.spec.holder_identity = ""
            with pytest.raises(errors.Forbidden, match="cannot be released"):
                await attacker.update(current)
            # The attacker's own fence names no tenure of the lease.
            await admin.create(pod("stolen", namespace, image=IMAGE))
            own = Fence(LEASE_NAMESPACE, LEASE_NAME, "attacker", int(current.metadata.resource_version))
            with pytest.raises(errors.Fenced):
                await attacker.bind(namespace, "stolen", node, fence=own)

            # Longer than a lease duration later, the real leader still leads and binds.
            await asyncio.sleep(2 * LEASE_S)
            lease = await _holder(admin)
            assert lease.spec.holder_identity == first.identity
            assert (await _bound(admin, namespace, "stolen")).metadata.annotations[
                "podsched.io/bound-under-fence"
            ].startswith(f"{first.identity}@")
            assert "leader election lost" not in first.log(), first.log()

            # podsched's own elector under enforcement: a standby waits, takes over only once the
            # killed leader's lease has expired by the server's clock, and releases it on SIGTERM.
            second.start()
            first.kill()
            await settle("the takeover of the expired lease", lambda: _holds(admin, second.identity))
            await admin.create(pod("after", namespace, image=IMAGE))
            await _bound(admin, namespace, "after")
            assert second.stop() == 0, second.log()
            assert (await _holder(admin)).spec.holder_identity == ""
            third.start()
            await settle("the takeover of the released lease", lambda: _holds(admin, third.identity))
        finally:
            for scheduler in (first, second, third):
                scheduler.stop()
    for scheduler in (second, third):
        assert "cannot be released" not in scheduler.log() and "PERMISSION_DENIED" not in scheduler.log(), (
            scheduler.log()
        )


async def _holds(admin: Client, identity: str) -> bool:
    try:
        return (await _holder(admin)).spec.holder_identity == identity
    except errors.NotFound:
        return False


async def test_without_the_flag_both_attacks_still_work(
    permissive: ApiServerProcess, namespace: str, unique: Callable[[str], str]
) -> None:
    """Off by default, as kube-apiserver: a plain kube-scheduler client binds without a fence and takes
    over the lease by its own clock."""
    node = unique("node")
    async with _client(permissive, ADMIN_TOKEN) as admin, _client(permissive, SCHEDULER_TOKEN) as attacker:
        await admin.create(builders.node(node, allocatable=builders.ROOMY))
        await admin.create(pod("unfenced", namespace, image=IMAGE))
        await admin.create(pod("stolen", namespace, image=IMAGE))
        assert (await attacker.bind(namespace, "unfenced", node)).spec.node_name == node

        held = objects_pb2.Lease(
            metadata=objects_pb2.ObjectMeta(name=LEASE_NAME, namespace=LEASE_NAMESPACE)
        )
        held.spec.holder_identity = "real-leader"
        held.spec.lease_duration_seconds = 15
        with pytest.raises(errors.NotFound):
            await admin.get(LEASE, LEASE_NAME, LEASE_NAMESPACE)
        await admin.create(held)
        taken = await _take_over(attacker, "attacker")
        assert taken.spec.holder_identity == "attacker"
        bound = await attacker.bind(namespace, "stolen", node, fence=_fence_of(taken))
        assert bound.metadata.annotations["podsched.io/bound-under-fence"] == (
            f"attacker@{taken.metadata.resource_version}"
        )


async def test_a_group_bind_needs_the_bind_permission_and_under_enforcement_a_fence(
    enforcing: ApiServerProcess, namespace: str, unique: Callable[[str], str]
) -> None:
    node = unique("node")
    group = [(namespace, name, node) for name in ("w-0", "w-1")]
    async with (
        _client(enforcing, ADMIN_TOKEN) as admin,
        _client(enforcing, SCHEDULER_TOKEN) as attacker,
        _client(enforcing, CLIENT_TOKEN) as user,
    ):
        await admin.create(builders.node(node, allocatable=builders.ROOMY))
        for _, name, _ in group:
            await admin.create(pod(name, namespace, image=IMAGE))

        with pytest.raises(errors.PermissionDenied, match=r"pods/binding"):
            await user.bind_group(group)
        with pytest.raises(errors.PermissionDenied) as refused:
            await attacker.bind_group(group)
        assert refused.value.message.startswith(
            f'user "kube-scheduler" cannot bind pod {namespace}/w-0 without a fence: this API server '
            "enforces leader fencing (--enforce-leader-fencing)"
        )
        assert [(await admin.get(POD, name, namespace)).spec.node_name for _, name, _ in group] == ["", ""]

        bound = await admin.bind_group(group)
        assert [p.spec.node_name for p in bound] == [node, node]
