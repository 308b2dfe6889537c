"""Gang scheduling with a real `podsched scheduler` process against a real API server process, on each
backend: a gang that fits is bound whole at one resourceVersion (one BindGroup); a gang that does not
fit stays Pending with the group's message and holds no node, and starts whole once a blocker goes.

The module's cluster is an API server on a store of its own with five nodes of 1 CPU and one scheduler;
each test puts a 1-CPU blocker pod on one node first, which leaves room for exactly four 1-CPU pods.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cluster.api import objects_pb2
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess, SchedulerProcess
from tests import builders
from tests.integration.conftest import own_apiserver
from tests.integration.helpers import run_cli
from tests.integration.test_scheduler import (
    all_bound,
    eventually,
    no_node_overcommitted,
    pods_in,
    running_scheduler,
)

NODES = 5


@pytest.fixture(scope="module")
def cluster(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    with own_apiserver(backend, tmp_path_factory.mktemp("gang-cluster")) as server:
        yield server


@pytest.fixture(scope="module")
def scheduler(cluster: ApiServerProcess) -> Iterator[SchedulerProcess]:
    with running_scheduler(cluster.address) as process:
        yield process


@pytest.fixture
async def nodes(api: Client, scheduler: SchedulerProcess) -> None:
    for index in range(NODES):
        node = builders.node(f"node-{index}", allocatable={**builders.ROOMY, "cpu": "1"})
        existing = await api.list("nodes")
        if node.metadata.name not in {n.metadata.name for n in existing.items}:  # type: ignore[attr-defined]
            await api.create(node)


def gang_member(name: str, namespace: str, group: str) -> objects_pb2.Pod:
    created = builders.pod(name, namespace, cpu="1", image=builders.IMAGE)
    created.spec.scheduling_group.pod_group_name = group
    return created


async def place_blocker(api: Client, namespace: str) -> None:
    await api.create(builders.pod("blocker", namespace, cpu="1", image=builders.IMAGE))
    await eventually(lambda: all_bound(api, namespace, 1), "the blocker bound")


async def test_a_gang_that_fits_is_bound_whole_at_one_resource_version(
    cluster: ApiServerProcess, api: Client, ns: str, nodes: None
) -> None:
    await place_blocker(api, ns)
    await api.create(builders.pod_group("train", ns, kind="PodGroup", min_count=4))
    for index in range(4):
        await api.create(gang_member(f"w-{index}", ns, "train"))
    pods = await eventually(lambda: all_bound(api, ns, 5), "the gang bound")
    gang = [p for p in pods if p.metadata.name != "blocker"]
    assert len({p.metadata.resource_version for p in gang}) == 1  # one BindGroup transaction
    assert len({p.spec.node_name for p in gang}) == 4
    await no_node_overcommitted(api)

    async def scheduled() -> objects_pb2.Condition | None:
        group = await api.get("podgroups", "train", ns)
        return next((c for c in group.status.conditions  # type: ignore[attr-defined]
                     if c.type == "PodGroupInitiallyScheduled" and c.status == "True"), None)

    await eventually(scheduled, "the PodGroupInitiallyScheduled condition")


async def test_a_gang_that_does_not_fit_waits_whole_and_starts_whole_once_a_blocker_goes(
    cluster: ApiServerProcess, api: Client, ns: str, nodes: None
) -> None:
    await place_blocker(api, ns)
    await api.create(builders.pod_group("train", ns, kind="PodGroup", min_count=5))
    for index in range(5):
        await api.create(gang_member(f"w-{index}", ns, "train"))
    message_head = f"pod group {ns}/train: 4/5 pods placeable, minCount 5: pod "

    async def reported() -> list[objects_pb2.Pod] | None:
        gang = [p for p in await pods_in(api, ns) if p.metadata.name != "blocker"]
        conditions = [next((c for c in p.status.conditions if c.type == "PodScheduled"), None) for p in gang]
        if len(gang) == 5 and all(c is not None and c.message.startswith(message_head) for c in conditions):
            return gang
        return None

    gang = await eventually(reported, "every member's PodScheduled=False with the group's message")
    assert all(not p.spec.node_name for p in gang)
    condition = next(c for c in gang[0].status.conditions if c.type == "PodScheduled")
    # Four members took the four free nodes in the cycle; the fifth found every node full, and the
    # blocker, of the gang's own priority, is no victim for gang preemption.
    assert condition.message.endswith(": 0/5 nodes are available: 5 Insufficient cpu. preemption: not enough "
                                      "room for the whole gang even after evicting lower-priority pods")
    await no_node_overcommitted(api)

    # describe says, per member, where the last attempt could place it or why nowhere.
    described = run_cli(cluster.address, "describe", "pg", "train", "-n", ns)
    assert described.code == 0, described.stderr
    attempt = described.stdout.split("Last scheduling attempt:")[1].split("Events:")[0]
    placements = dict(line.split(None, 1) for line in attempt.strip().splitlines()[2:])
    assert sorted(placements) == [f"w-{index}" for index in range(5)]
    could_go = [p for p in placements.values() if p.startswith("could go to node-")]
    assert len(could_go) == 4 and len(set(could_go)) == 4
    assert [p for p in placements.values() if not p.startswith("could go to")] == [
        "0/5 nodes are available: 5 Insufficient cpu."]

    await api.delete("pods", "blocker", ns, grace_period_seconds=0)
    pods = await eventually(lambda: all_bound(api, ns, 5), "the gang bound once the blocker went",
                            within=40)
    assert len({p.metadata.resource_version for p in pods}) == 1
    await no_node_overcommitted(api)
