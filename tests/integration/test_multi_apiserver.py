"""Two `podsched apiserver` processes over one real 3-member etcd, as a highly available control plane runs:

- an informer whose client knows both servers sees every event exactly once and in order while the
  server it watches through is SIGKILLed mid-stream and the writes go on through the other one;
- Lease compare-and-swap through either server conflicts as through one, so exactly one contender wins,
  and fencing holds through both;
- the background work both servers run (graceful-deletion finisher, compactor, disruption controller)
  does not fight: each graceful deletion is finished once, budgets settle, history is compacted, and
  neither server logs an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
import uuid
from collections.abc import Iterator

import pytest
from google.protobuf import struct_pb2
from google.protobuf.message import Message

from cluster.api import objects_pb2
from cluster.api.kinds import LEASE, POD, POD_DISRUPTION_BUDGET
from cluster.client import Client, Conflict, Expired, Fence, Fenced, Informer
from cluster.client.retry import RetryPolicy
from cluster.launcher.process import ApiServerProcess
from tests import builders
from tests.conftest import running_cluster

pytestmark = pytest.mark.etcd

#: Writes the writer makes: 4 creates, then updates round-robin; the first server dies after KILL_AFTER.
UPDATES = 200
KILL_AFTER = 50
#: How long the informer may take to catch up with the writer after its last write.
CATCH_UP_S = 30.0
#: Compactions every second, so that both servers' compactors run while the test writes.
COMPACTION_INTERVAL = "1s"
#: The revisions a compaction always keeps (ApiServerOptions' default): the test writes more than this.
MIN_RETAINED_REVISIONS = 1000
#: What a healthy server never logs.
_ERROR_LINE = re.compile(r"Traceback|\bERROR\b|\bCRITICAL\b")


@pytest.fixture(scope="module")
def etcd3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """The client endpoints of a 3-member etcd cluster shared by this module's tests."""
    with running_cluster(3, tmp_path_factory.mktemp("etcd-multi"), "multi") as cluster:
        yield cluster.endpoints


@contextlib.contextmanager
def _two_servers(etcd3: list[str]) -> Iterator[tuple[ApiServerProcess, ApiServerProcess]]:
    """Two API servers over the cluster, each given every endpoint, each with its controllers."""
    store_args = ["--etcd", ",".join(etcd3)]
    extra = ["--compaction-interval", COMPACTION_INTERVAL]
    with contextlib.ExitStack() as stack:
        first = stack.enter_context(ApiServerProcess(store_args, extra_args=extra))
        second = stack.enter_context(ApiServerProcess(store_args, extra_args=extra))
        yield first, second


@pytest.fixture
def servers(etcd3: list[str]) -> Iterator[tuple[ApiServerProcess, ApiServerProcess]]:
    """Two servers of the test's own: it may kill one."""
    with _two_servers(etcd3) as pair:
        yield pair


@pytest.fixture(scope="module")
def shared_servers(etcd3: list[str]) -> Iterator[tuple[ApiServerProcess, ApiServerProcess]]:
    """Two servers the tests that kill none share (each works in a namespace of its own)."""
    with _two_servers(etcd3) as pair:
        yield pair


@pytest.fixture
def namespace() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


def _pod(name: str, namespace: str, *, node: str = "", **labels: str) -> objects_pb2.Pod:
    return builders.pod(name, namespace, labels=labels, image=builders.IMAGE, node_name=node)


def _node(name: str) -> objects_pb2.Node:
    return builders.node(name, cpu="64", memory="64Gi", pods="500")


def _copy(obj: Message) -> Message:
    copied = type(obj)()
    copied.CopyFrom(obj)
    return copied


def _assert_quiet(*servers: ApiServerProcess) -> None:
    for server in servers:
        bad = [line for line in server.log().splitlines() if _ERROR_LINE.search(line)]
        assert not bad, f"API server {server.store_args} logged errors:\n" + "\n".join(bad)


async def test_an_informer_sees_every_event_once_in_order_across_a_server_kill(
    servers: tuple[ApiServerProcess, ApiServerProcess], namespace: str
) -> None:
    first, second = servers
    seen: list[tuple[str, str, int]] = []
    caught_up = asyncio.Event()
    last_written = [0]

    def record(what: str, obj: Message) -> None:
        seen.append((what, obj.metadata.name, int(obj.metadata.resource_version)))
        if last_written[0] and seen[-1][2] >= last_written[0]:
            caught_up.set()

    informer_client = Client([first.address, second.address], timeout_s=20.0)
    writer = Client(second.address, timeout_s=20.0)
    async with informer_client, writer:
        informer = Informer(informer_client, POD, namespace=namespace,
                            rewatch_policy=RetryPolicy(initial_s=0.05, max_s=0.5))
        informer.add_handler(
            on_add=lambda obj: record("add", obj),
            on_update=lambda old, new: record("update", new),
            on_delete=lambda obj: record("delete", obj),
        )
        running = asyncio.create_task(informer.run())
        try:
            await asyncio.wait_for(informer.wait_synced(), CATCH_UP_S)
            assert informer_client.current_server == first.address

            written: list[tuple[str, str, int]] = []
            pods = [await writer.create(_pod(f"p{index}", namespace)) for index in range(4)]
            written += [("add", pod.metadata.name, int(pod.metadata.resource_version)) for pod in pods]
            for step in range(UPDATES):
                if step == KILL_AFTER:
                    await asyncio.to_thread(first.kill)
                pod = pods[step % len(pods)]
                pod.metadata.labels["step"] = str(step)
                pod = pods[step % len(pods)] = await writer.update(pod)
                written.append(("update", pod.metadata.name, int(pod.metadata.resource_version)))

            last_written[0] = written[-1][2]
            if seen and seen[-1][2] >= last_written[0]:
                caught_up.set()
            await asyncio.wait_for(caught_up.wait(), CATCH_UP_S)
            await asyncio.sleep(0.5)  # anything repeated after the last event would show now
        finally:
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running

    assert not first.running()
    assert informer_client.current_server == second.address
    versions = [rv for _, _, rv in seen]
    assert len(set(versions)) == len(versions), "an event was delivered twice"
    assert versions == sorted(versions), "events were delivered out of order"
    assert seen == written
    _assert_quiet(first, second)


async def test_lease_compare_and_swap_through_either_server(
    shared_servers: tuple[ApiServerProcess, ApiServerProcess], namespace: str
) -> None:
    first, second = shared_servers
    async with Client(first.address) as via_first, Client(second.address) as via_second:
        lease = objects_pb2.Lease(metadata=objects_pb2.ObjectMeta(name="kube-scheduler", namespace=namespace))
        lease.spec.holder_identity = "a"
        lease.spec.lease_duration_seconds = 15
        created = await via_first.create(lease)
        token_a = int(created.metadata.resource_version)
        read_second = await via_second.get(LEASE, "kube-scheduler", namespace)
        assert read_second == created

        renewal = _copy(created)
        renewal.spec.renew_time.FromNanoseconds(time.time_ns())
        renewed = await via_first.update(renewal)
        stale = _copy(read_second)
        stale.spec.holder_identity = "b"
        with pytest.raises(Conflict):
            await via_second.update(stale)
        assert (await via_second.get(LEASE, "kube-scheduler", namespace)) == renewed

        # Ten contenders, half through each server, all from the same read: exactly one wins.
        async def contend(index: int) -> Message:
            client = via_first if index % 2 else via_second
            attempt = _copy(renewed)
            attempt.spec.holder_identity = f"c{index}"
            attempt.spec.lease_transitions = renewed.spec.lease_transitions + 1
            return await client.update(attempt)

        outcomes = await asyncio.gather(*(contend(index) for index in range(10)), return_exceptions=True)
        winners = [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]
        assert len(winners) == 1, outcomes
        assert all(isinstance(outcome, Conflict) for outcome in outcomes if outcome is not winners[0])
        winner = winners[0]
        assert (await via_first.get(LEASE, "kube-scheduler", namespace)) == winner
        assert winner.spec.lease_transitions == renewed.spec.lease_transitions + 1

        # The fence follows the lease whichever server checks it.
        node = f"node-{uuid.uuid4().hex[:8]}"
        await via_first.create(_node(node))
        for name in ("p1", "p2"):
            await via_first.create(_pod(name, namespace))
        old = Fence(namespace, "kube-scheduler", "a", token_a)
        new = Fence(namespace, "kube-scheduler", winner.spec.holder_identity,
                    int(winner.metadata.resource_version))
        for client in (via_first, via_second):
            with pytest.raises(Fenced):
                await client.bind(namespace, "p1", node, fence=old)
        assert (await via_second.bind(namespace, "p1", node, fence=new)).spec.node_name == node
        assert (await via_first.bind(namespace, "p2", node, fence=new)).spec.node_name == node
    _assert_quiet(first, second)


async def test_background_work_of_two_servers_does_not_fight(
    shared_servers: tuple[ApiServerProcess, ApiServerProcess], namespace: str
) -> None:
    first, second = shared_servers
    node = f"node-{uuid.uuid4().hex[:8]}"
    async with Client([first.address, second.address]) as client, Client(second.address) as other:
        await client.create(_node(node))

        # Disruption controllers: both compute the same status; it is written and then left alone.
        for index in range(3):
            await client.create(_pod(f"web-{index}", namespace, node=node, app="web"))
        pdb = objects_pb2.PodDisruptionBudget(
            metadata=objects_pb2.ObjectMeta(name="web", namespace=namespace)
        )
        pdb.spec.min_available.CopyFrom(struct_pb2.Value(number_value=2))
        pdb.spec.selector.match_labels["app"] = "web"
        await client.create(pdb)
        settled = await _wait_for_budget(client, namespace)
        assert (settled.status.current_healthy, settled.status.desired_healthy,
                settled.status.expected_pods, settled.status.disruptions_allowed) == (3, 2, 3, 1)
        await asyncio.sleep(3.0)
        assert (await other.get(POD_DISRUPTION_BUDGET, "web", namespace)) == settled

        # Graceful deletions: marked through either server, each finished exactly once.
        names = [f"grace-{index}" for index in range(10)]
        for name in names:
            await client.create(_pod(name, namespace, node=node))
        marked_at = (await client.list(POD, namespace)).resource_version
        for index, name in enumerate(names):
            marker = client if index % 2 else other
            marked = await marker.delete(POD, name, namespace, grace_period_seconds=1)
            assert marked.metadata.HasField("deletion_timestamp")
        deleted: list[str] = []
        async with asyncio.timeout(CATCH_UP_S):
            async for event in other.watch(POD, namespace, resource_version=marked_at):
                if event.type == "DELETED":
                    deleted.append(event.object.metadata.name)
                    if sorted(deleted) == names:
                        break
        assert sorted(deleted) == names
        await asyncio.sleep(1.0)  # a second finisher's deletion would be in the logs by now
        logs = first.log() + second.log()
        for name in names:
            finished = f"deleted /registry/pods/{namespace}/{name}: its grace period ended"
            assert logs.count(finished) == 1, f"{name} finished {logs.count(finished)} times"

        # Compactors: more than the retained revisions written, so both have something to compact.
        # Counted in revisions, not writes: concurrent writes may share one (group commit).
        churn = await client.create(_pod("churn", namespace))
        early = churn.metadata.resource_version
        beyond = int(early) + MIN_RETAINED_REVISIONS + 150

        async def write(worker: int) -> None:
            writer = client if worker % 2 else other
            while True:
                latest = await writer.create(_pod(f"c-{uuid.uuid4().hex[:10]}", namespace))
                await writer.delete(POD, latest.metadata.name, namespace)
                if int(latest.metadata.resource_version) > beyond:
                    return

        await asyncio.gather(*(write(worker) for worker in range(8)))
        async with asyncio.timeout(CATCH_UP_S):
            while True:
                try:
                    events = other.watch(POD, namespace, resource_version=early)
                    async with contextlib.aclosing(events):
                        await asyncio.wait_for(anext(events), 1.0)
                except Expired:
                    break
                except TimeoutError:
                    pass
                await asyncio.sleep(0.5)
    assert first.running() and second.running()
    _assert_quiet(first, second)


async def _wait_for_budget(client: Client, namespace: str) -> objects_pb2.PodDisruptionBudget:
    async with asyncio.timeout(CATCH_UP_S):
        while True:
            pdb = await client.get(POD_DISRUPTION_BUDGET, "web", namespace)
            if pdb.status.expected_pods == 3:
                return pdb
            await asyncio.sleep(0.1)
