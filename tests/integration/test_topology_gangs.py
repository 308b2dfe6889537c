"""Topology-aware gangs with a real `podsched scheduler` process against a real API server process: the
rack-gang example (three racks, an eight-worker gang constrained to one rack) applies unchanged and is
bound whole in the one rack with room for it, in one group bind; a gang too big for every rack stays
Pending with the group's reason per rack and holds no node.

The store is irrelevant to placements: the module runs on SQLite only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from cluster.api import kinds, objects_pb2, podgroups
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess, SchedulerProcess
from tests import builders
from tests.integration.conftest import own_apiserver
from tests.integration.helpers import EXAMPLES, run_cli
from tests.integration.test_scheduler import (
    all_bound,
    eventually,
    no_node_overcommitted,
    pods_in,
    running_scheduler,
)

RACK = "topology.kubernetes.io/rack"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    with own_apiserver("sqlite", tmp_path_factory.mktemp("topology-gangs")) as server:
        yield server


@pytest.fixture(scope="module")
def rack_gang(cluster: ApiServerProcess) -> Iterator[SchedulerProcess]:
    """A scheduler running, and examples/workloads/rack-gang.yaml applied unchanged."""
    with running_scheduler(cluster.address) as process:
        applied = run_cli(cluster.address, "apply", "-f", str(EXAMPLES / "workloads" / "rack-gang.yaml"))
        assert applied.code == 0, applied.stderr
        assert "unknown field" not in applied.stderr, applied.stderr
        yield process


async def racks(api: Client) -> dict[str, str]:
    return {n.metadata.name: n.metadata.labels[RACK] for n in (await api.list(kinds.NODE)).items}  # type: ignore[attr-defined]


async def test_the_rack_gang_example_is_bound_whole_in_the_rack_with_room_for_it(
    api: Client, rack_gang: SchedulerProcess
) -> None:
    pods = await eventually(lambda: all_bound(api, "default", 8), "the eight workers bound")
    rack_of = await racks(api)
    assert {rack_of[p.spec.node_name] for p in pods} == {"rack-b"}  # rack-a holds 4 workers, rack-c 6
    assert len({p.metadata.resource_version for p in pods}) == 1  # one BindGroup transaction
    await no_node_overcommitted(api)

    async def scheduled() -> objects_pb2.Condition | None:
        group = await api.get(kinds.POD_GROUP, "allreduce", "default")
        return next(
            (
                c
                for c in group.status.conditions  # type: ignore[attr-defined]
                if c.type == podgroups.POD_GROUP_INITIALLY_SCHEDULED and c.status == "True"
            ),
            None,
        )

    await eventually(scheduled, "the PodGroupInitiallyScheduled condition")


async def test_a_gang_too_big_for_every_rack_stays_pending_with_the_reason_per_rack(
    api: Client, ns: str, rack_gang: SchedulerProcess
) -> None:
    group = builders.pod_group("big", ns, kind="PodGroup", min_count=9)
    group.spec.scheduling_constraints.topology.add(key=RACK)
    await api.create(group)
    for index in range(9):
        member = builders.pod(f"big-{index}", ns, cpu="1", memory="1Gi", image=builders.IMAGE)
        member.spec.scheduling_group.pod_group_name = "big"
        await api.create(member)

    def full(nodes: int) -> str:
        return rf"0/{nodes} nodes are available: {nodes} Insufficient cpu\."

    reason = re.compile(
        rf"pod group {ns}/big: no placement fits: "
        rf"rack rack-a: 4/9 pods placeable, minCount 9: pod big-\d: {full(2)}; "
        rf"rack rack-b: \d/9 pods placeable, minCount 9: pod big-\d: {full(4)}; "
        rf"rack rack-c: 6/9 pods placeable, minCount 9: pod big-\d: {full(3)}"
    )

    async def reported() -> list[objects_pb2.Pod] | None:
        gang = await pods_in(api, ns)
        conditions = [next((c for c in p.status.conditions if c.type == "PodScheduled"), None) for p in gang]
        if len(gang) == 9 and all(c is not None and reason.fullmatch(c.message) for c in conditions):
            return gang
        return None

    gang = await eventually(reported, "every member's PodScheduled=False with the reason per rack")
    assert all(not p.spec.node_name for p in gang)
    pod_group = await api.get(kinds.POD_GROUP, "big", ns)
    (condition,) = pod_group.status.conditions  # type: ignore[attr-defined]
    assert (condition.status, condition.reason) == ("False", "Unschedulable")
    assert reason.fullmatch(condition.message), condition.message
    await no_node_overcommitted(api)
