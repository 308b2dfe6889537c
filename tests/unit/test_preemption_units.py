"""Preemption units and the priority a group's pods count with (scheduler/plugins/defaultpreemption/
units.py), translated from kube-scheduler's TestNewDomainForWorkloadPreemption and
TestNewPodGroupPreemptorResolvesPreemptionPolicy (pkg/scheduler/framework/preemption)."""

from __future__ import annotations

import pytest

from cluster.api import objects_pb2
from scheduler.framework import PodInfo
from scheduler.plugins.defaultpreemption.units import DisruptionUnits, group_preempts, preemptor_priority
from tests.unit.gang_preemption_util import X_K8S, GangCluster, member, nodes, pod_group
from tests.unit.preemption_util import cpu_pod


def victims_of(pods: list[objects_pb2.Pod],
               groups: list[objects_pb2.PodGroup]) -> list[tuple[frozenset[str], frozenset[str], int]]:
    """Every victim the running pods make: (its pods, the nodes they run on, the priority it counts
    with), as upstream's expectedVictim."""
    cluster = GangCluster(nodes("node1", "node2"), pods, groups)
    units = DisruptionUnits(cluster.snapshot, cluster.index)
    seen: dict[frozenset[str], tuple[frozenset[str], frozenset[str], int]] = {}
    for node_info in cluster.snapshot.list():
        for pod_info in node_info.pods.values():
            unit = units.unit(pod_info, node_info.name)
            names = frozenset(info.pod.metadata.name for info, _ in unit)
            seen[names] = (names, frozenset(node for _, node in unit), units.priority_of(pod_info))
    return sorted(seen.values(), key=lambda victim: sorted(victim[0]))


def v(pods: str, on: str, priority: int) -> tuple[frozenset[str], frozenset[str], int]:
    return frozenset(pods.split()), frozenset(on.split()), priority


CASES = {
    "pods without pod groups": (
        [cpu_pod("p1", "1", 10, node_name="node1"), cpu_pod("p2", "1", 20, node_name="node2")],
        [],
        [v("p1", "node1", 10), v("p2", "node2", 20)],
    ),
    "pods with pod group (DisruptionModeAll)": (
        [member("p1", "pg1", "1", 10, node_name="node1"), member("p2", "pg1", "1", 10, node_name="node2")],
        [pod_group("pg1", 2, all_=True, priority=50)],
        [v("p1 p2", "node1 node2", 50)],
    ),
    "pods with pod group (DisruptionModeSingle)": (
        [member("p1", "pg1", "1", 10, node_name="node1"), member("p2", "pg1", "1", 20, node_name="node2")],
        [pod_group("pg1", 2, single=True, priority=50)],
        [v("p1", "node1", 50), v("p2", "node2", 50)],
    ),
    "pods with pod group without disruptionMode (Single, the API's default)": (
        [member("p1", "pg1", "1", 10, node_name="node1"), member("p2", "pg1", "1", 20, node_name="node2")],
        [pod_group("pg1", 2, priority=50)],
        [v("p1", "node1", 50), v("p2", "node2", 50)],
    ),
    "mix of pod groups and individual pods": (
        [member("p1", "pg1", "1", 10, node_name="node1"), member("p2", "pg1", "1", 10, node_name="node2"),
         member("p3", "pg2", "1", 20, node_name="node1"), cpu_pod("p4", "1", 30, node_name="node2")],
        [pod_group("pg1", 2, all_=True, priority=50), pod_group("pg2", 1, single=True, priority=60)],
        [v("p1 p2", "node1 node2", 50), v("p3", "node1", 60), v("p4", "node2", 30)],
    ),
    "pods with pod group (DisruptionModeAll) but missing pod group falls back to pod preemption": (
        [member("p1", "pg1", "1", 10, node_name="node1"), member("p2", "pg1", "1", 10, node_name="node2")],
        [],
        [v("p1", "node1", 10), v("p2", "node2", 10)],
    ),
    "pod group without priority counts as 0": (
        [member("p1", "pg1", "1", 10, node_name="node1")],
        [pod_group("pg1", 1, all_=True)],
        [v("p1", "node1", 0)],
    ),
    "Coscheduling gang: whole, each pod with its own priority (its API has neither field)": (
        [member("p1", "pg1", "1", 10, node_name="node1"), member("p2", "pg1", "1", 10, node_name="node2")],
        [pod_group("pg1", 2, api_version=X_K8S)],
        [v("p1 p2", "node1 node2", 10)],
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_preemption_units(case: str) -> None:
    pods, groups, want = CASES[case]
    assert victims_of(pods, groups) == sorted(want, key=lambda victim: sorted(victim[0]))


def _with_policy(pod: objects_pb2.Pod, policy: str) -> objects_pb2.Pod:
    pod.spec.preemption_policy = policy
    return pod


NEVER_POD = _with_policy(cpu_pod("p-never", "1", 1), "Never")
LOWER_POD = _with_policy(cpu_pod("p-lower", "1", 1), "PreemptLowerPriority")
NO_POLICY_POD = cpu_pod("p-nil", "1", 1)

POLICY_CASES = {
    "PreemptNever is resolved from the PodGroup, ignoring the pods'": (
        pod_group("pg", 1, priority=1, never=True), [LOWER_POD], False),
    "PreemptLowerPriority is resolved from the PodGroup, ignoring different policies in pods": (
        pod_group("pg", 1, priority=1), [NEVER_POD, LOWER_POD, NO_POLICY_POD], True),
    "Coscheduling group (no policy field): from the pods, PreemptLowerPriority when none says Never": (
        pod_group("pg", 1, api_version=X_K8S), [LOWER_POD, NO_POLICY_POD], True),
    "Coscheduling group (no policy field): from the pods, Never when any says Never": (
        pod_group("pg", 1, api_version=X_K8S), [NEVER_POD, LOWER_POD], False),
}


@pytest.mark.parametrize("case", POLICY_CASES, ids=list(POLICY_CASES))
def test_group_preemption_policy(case: str) -> None:
    group, pods, preempts = POLICY_CASES[case]
    assert group_preempts(group, [PodInfo(pod) for pod in pods]) is preempts


def test_a_group_preempts_with_its_podgroups_priority_else_its_members_lowest() -> None:
    members = [PodInfo(cpu_pod("a", "1", 7)), PodInfo(cpu_pod("b", "1", 3))]
    assert preemptor_priority(pod_group("pg", 1, priority=1000), members) == 1000
    assert preemptor_priority(pod_group("pg", 1), members) == 0
    assert preemptor_priority(pod_group("pg", 1, api_version=X_K8S), members) == 3
    assert preemptor_priority(None, members) == 3


def test_the_more_important_victim_first() -> None:
    """Upstream's MoreImportantVictim: the priority counted with; at equal priority a pod of a group
    before a lone pod, the larger unit, then the unit that started first."""
    pods = [
        cpu_pod("lone-old", "1", 10, node_name="node1", start=100),
        cpu_pod("lone-new", "1", 10, node_name="node1", start=200),
        member("single", "pg-single", "1", 10, node_name="node1", start=300),
        member("small", "pg-small", "1", 10, node_name="node1", start=400),
        *(member(f"big-{n}", "pg-big", "1", 10, node_name=n, start=500) for n in ("node1", "node2")),
        cpu_pod("high", "1", 20, node_name="node2", start=900),
    ]
    groups = [pod_group("pg-single", 1, single=True, priority=10),
              pod_group("pg-small", 1, all_=True, priority=10),
              pod_group("pg-big", 2, all_=True, priority=10)]
    cluster = GangCluster(nodes("node1", "node2"), pods, groups)
    units = DisruptionUnits(cluster.snapshot, cluster.index)
    infos = [info for node_info in cluster.snapshot.list() for info in node_info.pods.values()]
    ordered = [info.pod.metadata.name for info in sorted(infos, key=units.importance)]
    assert ordered[0] == "high" and set(ordered[1:3]) == {"big-node1", "big-node2"}  # one unit
    assert ordered[3:] == ["single", "small", "lone-old", "lone-new"]


def test_a_lone_pod_goes_before_a_group_of_the_same_priority() -> None:
    # One full node, room for the preemptor once one 2-CPU pod goes: the lone pod, not the group's,
    # though the lone one has run longer.
    pods = [cpu_pod("lone", "2", 10, node_name="node1", start=100),
            member("grouped", "pg", "2", 10, node_name="node1", start=900)]
    cluster = GangCluster(nodes("node1", cpu="4"), pods,
                          [pod_group("pg", 1, single=True, priority=10), pod_group("train", 1, priority=100)])
    plan, status = cluster.select([member("w-0", "train", "2", 100)])
    assert status is None and plan is not None
    assert [e.victim.pod.metadata.name for e in plan.evictions] == ["lone"]
