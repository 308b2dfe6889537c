"""The victims a gang preempts, chosen for the whole group (scheduler/plugins/defaultpreemption/group.py)."""

from __future__ import annotations

from scheduler.framework import Code
from scheduler.plugins.defaultpreemption.group import NOT_ENOUGH_ROOM
from tests.unit.gang_preemption_util import (
    X_K8S,
    GangCluster,
    fill,
    member,
    nodes,
    pod_group,
    victims,
)
from tests.unit.preemption_util import cpu_pod, pdb

GANG = pod_group("train", 2, priority=100)
#: A gang of one pod, priority 100.
GANG_OF_ONE = pod_group("train", 1, priority=100)


def gang(count: int, cpu: str = "2", priority: int = 100, **kwargs: object) -> list:
    return [member(f"w-{i}", "train", cpu, priority, **kwargs) for i in range(count)]  # type: ignore[arg-type]


def test_the_lowest_priority_pods_are_evicted_and_every_member_gets_a_node():
    cluster = GangCluster(nodes("a", "b"), [*fill("a", "low", 4, "1", 1), *fill("b", "mid", 4, "1", 50)],
                          [GANG])
    plan, status = cluster.select(gang(2))
    assert status is None
    assert victims(plan) == ["low-0", "low-1", "low-2", "low-3"]
    assert plan.placements == {"default/w-0": "a", "default/w-1": "a"}
    assert plan.num_pdb_violations == 0
    assert plan.victim_groups == []


def test_fewest_victims_win_among_equal_priorities():
    big = [cpu_pod(f"big-{i}", "2", 1, node_name="a") for i in range(2)]
    cluster = GangCluster(nodes("a", "b"), [*big, *fill("b", "small", 4, "1", 1)], [GANG])
    plan, _ = cluster.select(gang(2))
    assert victims(plan) == ["big-0", "big-1"]
    assert set(plan.placements.values()) == {"a"}


def test_room_already_free_is_used_before_anything_is_evicted():
    cluster = GangCluster(nodes("a", "b"), [*fill("a", "low", 2, "1", 1), *fill("b", "low-b", 4, "1", 1)],
                          [GANG])
    plan, status = cluster.select(gang(2))
    assert status is None
    # w-0 takes the free half of a; w-1 needs room: the two pods left on a are the fewest victims.
    assert plan.placements == {"default/w-0": "a", "default/w-1": "a"}
    assert victims(plan) == ["low-0", "low-1"]


def test_pods_a_pdb_protects_are_spared_when_others_can_go():
    protected = cpu_pod("guarded", "2", 1, node_name="a", labels={"app": "db"})
    others = [cpu_pod("free-b", "2", 1, node_name="b"), cpu_pod("free-c", "2", 1, node_name="c")]
    cluster = GangCluster(nodes("a", "b", "c", cpu="2"), [protected, *others], [GANG],
                          pdbs=[pdb("db", {"app": "db"}, 0)])
    for offset in range(3):  # wherever each member's dry run starts
        plan, status = cluster.select(gang(2), offset=offset)
        assert status is None
        assert victims(plan) == ["free-b", "free-c"]
        assert plan.num_pdb_violations == 0


def test_a_pdb_is_violated_only_when_the_gang_needs_it_and_the_violations_are_counted():
    guarded = [cpu_pod(f"guarded-{n}", "2", 1, node_name=n, labels={"app": "db"}) for n in ("a", "b")]
    cluster = GangCluster(nodes("a", "b", cpu="2"), guarded, [GANG], pdbs=[pdb("db", {"app": "db"}, 1)])
    plan, status = cluster.select(gang(2))
    assert status is None
    assert victims(plan) == ["guarded-a", "guarded-b"]
    assert plan.num_pdb_violations == 1  # the budget allows one disruption: the second violates it


def test_only_pods_of_lower_priority_than_the_gang_are_victims():
    cluster = GangCluster(nodes("a", "b"), [*fill("a", "same", 4, "1", 100), *fill("b", "low", 4, "1", 99)],
                          [GANG])
    plan, _ = cluster.select(gang(2))
    assert victims(plan) == ["low-0", "low-1", "low-2", "low-3"]


def test_nothing_is_evicted_when_the_whole_gang_would_not_fit():
    # Room for three members even with every lower-priority pod gone; the gang needs four.
    cluster = GangCluster(nodes("a", "b"), [*fill("a", "low", 4, "1", 1), *fill("b", "high", 2, "1", 500)],
                          [pod_group("train", 4, priority=100)])
    plan, status = cluster.select(gang(4))
    assert plan is None
    assert status is not None and status.code is Code.UNSCHEDULABLE
    assert status.message() == NOT_ENOUGH_ROOM


def test_only_the_needed_members_must_fit():
    # minCount 4 with two members bound already: the two pending ones are all that must fit.
    cluster = GangCluster(nodes("a", "b"), [*fill("a", "low", 4, "1", 1), *fill("b", "high", 4, "1", 500)],
                          [pod_group("train", 4, priority=100)])
    plan, status = cluster.select(gang(3), needed=2)
    assert status is None
    assert len(plan.placements) == 2
    assert victims(plan) == ["low-0", "low-1", "low-2", "low-3"]


def test_a_victim_group_of_disruption_mode_all_is_evicted_whole():
    # The lowest-priority pods are the two members of gang "batch", one on each node; evicting the one
    # on a takes the one on b too, and the second member then needs no other victim.
    low_gang = [member(f"batch-{n}", "batch", "2", 1, node_name=n) for n in ("a", "b")]
    singles = [cpu_pod(f"single-{n}", "2", 50, node_name=n) for n in ("a", "b")]
    cluster = GangCluster(nodes("a", "b"), [*low_gang, *singles],
                          [GANG, pod_group("batch", 2, all_=True, priority=1)])
    plan, status = cluster.select(gang(2))
    assert status is None
    assert victims(plan) == ["batch-a", "batch-b"]
    assert plan.victim_groups == ["default/batch"]
    assert sorted(plan.placements.values()) == ["a", "b"]


def test_a_coscheduling_gang_is_evicted_whole_too():
    low_gang = [member(f"batch-{n}", "batch", "2", 1, node_name=n) for n in ("a", "b", "c")]
    cluster = GangCluster(nodes("a", "b", "c", cpu="2"), low_gang,
                          [GANG_OF_ONE, pod_group("batch", 3, api_version=X_K8S)])
    plan, status = cluster.select(gang(1))
    assert status is None
    assert victims(plan) == ["batch-a", "batch-b", "batch-c"]
    assert plan.victim_groups == ["default/batch"]


def test_a_gang_with_disruption_mode_single_loses_only_the_pods_needed():
    low_gang = [member(f"batch-{n}", "batch", "2", 1, node_name=n) for n in ("a", "b", "c")]
    cluster = GangCluster(nodes("a", "b", "c", cpu="2"), low_gang,
                          [GANG_OF_ONE, pod_group("batch", 3, single=True, priority=1)])
    plan, status = cluster.select(gang(1))
    assert status is None
    assert len(victims(plan)) == 1
    assert plan.victim_groups == []


def test_a_gang_without_disruption_mode_is_single_as_the_api_defaults():
    low_gang = [member(f"batch-{n}", "batch", "2", 1, node_name=n) for n in ("a", "b", "c")]
    cluster = GangCluster(nodes("a", "b", "c", cpu="2"), low_gang,
                          [GANG_OF_ONE, pod_group("batch", 3, priority=1)])
    plan, status = cluster.select(gang(1))
    assert status is None
    assert len(victims(plan)) == 1
    assert plan.victim_groups == []


def test_a_group_not_below_the_preemptor_is_never_a_victim_whatever_its_pods_say():
    # batch's pods say priority 1, but its PodGroup says 500: the group counts with 500, whole or pod by
    # pod; the singles go.
    for mode in ({"all_": True}, {"single": True}):
        low_pods = [member(f"batch-{n}", "batch", "2", 1, node_name=n) for n in ("a", "b")]
        singles = [cpu_pod(f"single-{n}", "2", 50, node_name=n) for n in ("a", "b")]
        cluster = GangCluster(nodes("a", "b"), [*low_pods, *singles],
                              [GANG, pod_group("batch", 2, priority=500, **mode)])
        plan, status = cluster.select(gang(2))
        assert status is None
        assert victims(plan) == ["single-a", "single-b"]


def test_a_group_below_the_preemptor_is_a_victim_whatever_its_pods_say():
    # batch's pods say 500, above the gang's members, but their PodGroup says 1.
    high_pods = [member(f"batch-{n}", "batch", "2", 500, node_name=n) for n in ("a", "b")]
    singles = [cpu_pod(f"single-{n}", "2", 50, node_name=n) for n in ("a", "b")]
    cluster = GangCluster(nodes("a", "b"), [*high_pods, *singles],
                          [GANG, pod_group("batch", 2, all_=True, priority=1)])
    plan, status = cluster.select(gang(2))
    assert status is None
    assert victims(plan) == ["batch-a", "batch-b"]


def test_the_gang_preempts_with_its_podgroups_priority_not_its_pods():
    # The members say 100, their PodGroup 10: pods of 50 are not below the gang.
    cluster = GangCluster(nodes("a"), fill("a", "mid", 2, "2", 50), [pod_group("train", 1, priority=10)])
    plan, status = cluster.select(gang(1))
    assert plan is None
    assert status is not None and status.message() == NOT_ENOUGH_ROOM
    # And the other way round: members saying 1 in a PodGroup of 100 evict them.
    cluster = GangCluster(nodes("a"), fill("a", "mid", 2, "2", 50), [GANG_OF_ONE])
    plan, status = cluster.select(gang(1, priority=1))
    assert status is None
    assert len(victims(plan)) == 1 and victims(plan)[0].startswith("mid-")


def test_a_podgroup_without_priority_counts_as_zero():
    # Upstream's PodGroupPriority: no spec.priority (no class, no globalDefault at its creation) is 0.
    cluster = GangCluster(nodes("a"), fill("a", "low", 2, "2", 1), [pod_group("train", 1)])
    plan, status = cluster.select(gang(1))
    assert plan is None and status is not None and status.message() == NOT_ENOUGH_ROOM


def test_a_running_gang_as_the_only_room_is_evicted_whole_or_not_at_all():
    # A one-pod gang needs one node of two, each held by a member of gang "batch".
    whole = [member(f"batch-{n}", "batch", "2", 1, node_name=n) for n in ("a", "b")]
    cluster = GangCluster(nodes("a", "b", cpu="2"), whole,
                          [GANG_OF_ONE, pod_group("batch", 2, all_=True, priority=1)])
    plan, status = cluster.select(gang(1))
    assert status is None
    assert victims(plan) == ["batch-a", "batch-b"]

    cluster = GangCluster(nodes("a", "b", cpu="2"), whole,
                          [GANG_OF_ONE, pod_group("batch", 2, all_=True, priority=500)])
    plan, status = cluster.select(gang(1))
    assert plan is None
    assert status is not None and status.message() == NOT_ENOUGH_ROOM


def test_a_pod_of_a_group_the_scheduler_has_not_seen_goes_alone_with_its_own_priority():
    # Upstream falls back to the pod itself when its PodGroup is missing.
    unknown = [member(f"other-{n}", "unseen", "2", 1, node_name=n) for n in ("a", "b")]
    single = cpu_pod("single-c", "2", 50, node_name="c")
    cluster = GangCluster(nodes("a", "b", "c", cpu="2"), [*unknown, single], [GANG_OF_ONE])
    plan, _ = cluster.select(gang(1))
    assert len(victims(plan)) == 1 and victims(plan)[0].startswith("other-")
    assert plan.victim_groups == []


def test_the_gangs_own_nominations_are_not_counted_twice():
    # w-0 was nominated to a by an earlier preemption whose victims are gone: a has room for exactly it.
    w0 = member("w-0", "train", "4", 100, nominated="a")
    cluster = GangCluster(nodes("a"), [], [GANG_OF_ONE], nominated={"a": [w0]})
    plan, status = cluster.select([w0])
    assert status is None
    assert plan.placements == {"default/w-0": "a"}
    assert plan.evictions == []


def test_a_higher_priority_nomination_keeps_its_room():
    other = cpu_pod("other", "4", 500, nominated="a")
    cluster = GangCluster(nodes("a", "b"), fill("b", "low", 2, "2", 1), [GANG_OF_ONE],
                          nominated={"a": [other]})
    plan, status = cluster.select(gang(1, cpu="4"))
    assert status is None
    assert plan.placements == {"default/w-0": "b"}
    assert victims(plan) == ["low-0", "low-1"]
