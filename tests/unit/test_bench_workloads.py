"""The bench's workloads build scheduler_perf's objects, and the checks find each kind of wrong placement."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cluster.api import objects_pb2
from cluster.api.podgroups import POD_GROUP_LABEL
from cluster.bench import workloads as w
from cluster.bench.checks import Placements, check
from scheduler.algorithm import MIN_FEASIBLE_NODES_TO_FIND


def _bound(pod: objects_pb2.Pod, node: objects_pb2.Node, role: str = w.MEASURED) -> objects_pb2.Pod:
    pod.spec.node_name = node.metadata.name
    pod.metadata.labels[w.ROLE_LABEL] = role
    return pod


def test_the_workloads_have_scheduler_perfs_sizes_and_thresholds() -> None:
    sizes = {name: (wl.full, wl.small.nodes, wl.threshold) for name, wl in w.WORKLOADS.items()}

    assert sizes == {
        "SchedulingBasic": (w.Scale(5000, 1000, 10000), 500, 680),
        "PreemptionAsync": (w.Scale(5000, 20000, 5000), 500, 570),
        "SchedulingNodeAffinity": (w.Scale(5000, 5000, 10000), 500, 220),
        "SchedulingPodAntiAffinity": (w.Scale(5000, 1000, 2000), 500, 60),
        "TopologySpreading": (w.Scale(5000, 5000, 5000), 500, 460),
        "GangScheduling": (w.Scale(5000, 0, 10000), 500, None),
        "TopologyGangScheduling": (w.Scale(5000, 0, 10000), 500, None),
        # scheduler_perf's DRA configs stop at 500 nodes: full and small are the same.
        "SchedulingWithResourceClaimTemplate": (w.Scale(500, 2500, 2500), 500, 56),
        "SchedulingWithMultipleResourceClaims": (w.Scale(500, 2500, 2500), 500, None),
        "SchedulingWithResourceClaim": (w.Scale(500, 2500, 2500), 500, None),
        # Steady: no measured count, the duration decides; the thresholds of the 500-node variants.
        "SteadyStateClusterResourceClaimTemplate/empty": (w.Scale(500, 0, 0), 500, 64),
        "SteadyStateClusterResourceClaimTemplate/half": (w.Scale(500, 0, 0), 500, 60),
        "SteadyStateClusterResourceClaimTemplate/full": (w.Scale(500, 0, 0), 500, 60),
    }


def test_the_tiny_scale_is_a_quarter_of_small_above_the_nodes_every_cycle_scores() -> None:
    for workload in w.WORKLOADS.values():
        tiny, small = workload.scale("tiny"), workload.small
        assert (tiny.nodes * 4, tiny.init_pods * 4, tiny.measured_pods * 4) == (
            small.nodes, small.init_pods, small.measured_pods), workload.name
        assert tiny.nodes > MIN_FEASIBLE_NODES_TO_FIND
    # What each workload's shape needs still holds: PreemptionAsync fills every node with four pods, and
    # every anti-affine pod finds a node of its own.
    preemption, anti = w.WORKLOADS["PreemptionAsync"].scale("tiny"), w.WORKLOADS["SchedulingPodAntiAffinity"]
    assert preemption.init_pods == 4 * preemption.nodes
    assert anti.scale("tiny").init_pods + anti.scale("tiny").measured_pods <= anti.scale("tiny").nodes


def test_an_unknown_scale_is_refused_naming_the_scales() -> None:
    with pytest.raises(ValueError, match="unknown scale 'huge': use one of tiny, small, full"):
        w.WORKLOADS["SchedulingBasic"].scale("huge")


def test_nodes_are_node_default_with_zones_round_robin() -> None:
    spreading = w.WORKLOADS["TopologySpreading"]
    nodes = [spreading.node(i) for i in range(4)]

    assert [n.metadata.labels[w.ZONE_LABEL] for n in nodes] == ["moon-1", "moon-2", "moon-3", "moon-1"]
    assert dict(nodes[0].status.allocatable) == {"pods": "110", "cpu": "4", "memory": "32Gi"}
    assert nodes[0].metadata.labels[w.HOSTNAME_LABEL] == nodes[0].metadata.name
    assert w.ZONE_LABEL not in w.WORKLOADS["SchedulingBasic"].node(0).metadata.labels


@pytest.mark.parametrize(
    ("template", "cpu"),
    [(w.pod_default, "100m"), (w.pod_low_priority, "900m"), (w.pod_high_priority, "3000m")],
    ids=["default", "low-priority", "high-priority"],
)
def test_pod_templates_request_what_scheduler_perfs_do(template: w.PodTemplate, cpu: str) -> None:
    pod = template("p", "ns")

    assert dict(pod.spec.containers[0].resources.requests) == {"cpu": cpu, "memory": "500Mi"}
    assert (pod.metadata.name, pod.metadata.namespace) == ("p", "ns")


def test_preemption_pods_take_their_priority_from_a_class() -> None:
    preemption = w.WORKLOADS["PreemptionAsync"]

    assert preemption.churn is not None and preemption.churn.interval_s == 0.2
    assert preemption.churn.template("p", "ns").spec.priority_class_name == w.HIGH_PRIORITY_CLASS
    assert [(c.metadata.name, c.value) for c in preemption.priority_classes] == [
        (w.HIGH_PRIORITY_CLASS, w.HIGH_PRIORITY)
    ]


def test_correct_placements_pass() -> None:
    nodes = [w.WORKLOADS["SchedulingNodeAffinity"].node(i) for i in range(2)]
    pods = [_bound(w.pod_with_node_affinity(f"m{i}", "ns"), nodes[i % 2]) for i in range(4)]

    names = {"m0", "m1", "m2", "m3"}
    assert check(Placements(nodes, pods, {w.MEASURED: names}, names)) == []


def test_a_measured_pod_never_bound_is_reported() -> None:
    problems = check(Placements([], [], {w.MEASURED: {"m0"}}, set()))

    assert problems == ["unbound measured: measured pod m0 was never bound"]


def test_a_node_over_its_allocatable_is_reported() -> None:
    node = w.WORKLOADS["PreemptionAsync"].node(0)
    pods = [_bound(w.pod_low_priority(f"low{i}", "ns"), node, w.INIT) for i in range(4)]
    pods.append(_bound(w.pod_high_priority("high", "ns"), node))

    assert check(Placements([node], pods)) == [
        "over allocatable: node scheduler-perf-00000: cpu (m) 6600 > allocatable 4000"
    ]


@pytest.mark.parametrize(
    ("restart_policy", "overhead", "over"),
    [
        # A classic init container has finished before the 3-CPU app container runs: 3 CPUs at most.
        pytest.param(None, "", False, id="classic-init"),
        # A sidecar runs beside it: 4.1 CPUs on a 4-CPU node.
        pytest.param("Always", "", True, id="sidecar"),
        # The pod overhead comes on top of the containers.
        pytest.param(None, "1100m", True, id="overhead"),
    ],
)
def test_a_node_over_its_allocatable_counts_sidecars_and_overhead(
    restart_policy: str | None, overhead: str, over: bool
) -> None:
    node = w.WORKLOADS["PreemptionAsync"].node(0)
    pod = _bound(w.pod_high_priority("high", "ns"), node)
    init = pod.spec.init_containers.add(name="init")
    init.resources.requests["cpu"] = "1100m"
    if restart_policy:
        init.restart_policy = restart_policy
    if overhead:
        pod.spec.overhead["cpu"] = overhead

    assert check(Placements([node], [pod])) == (
        ["over allocatable: node scheduler-perf-00000: cpu (m) 4100 > allocatable 4000"] if over else []
    )


def test_a_pod_outside_its_node_affinity_is_reported() -> None:
    node = w.WORKLOADS["SchedulingBasic"].node(0)  # no zone label

    problems = check(Placements([node], [_bound(w.pod_with_node_affinity("m0", "ns"), node)]))

    assert problems == ["node affinity: pod ns/m0 on scheduler-perf-00000, outside its node affinity"]


def test_two_anti_affine_pods_on_one_node_are_reported() -> None:
    node = w.WORKLOADS["SchedulingPodAntiAffinity"].node(0)
    pods = [_bound(w.pod_with_pod_anti_affinity("a", w.INIT_NAMESPACE), node),
            _bound(w.pod_with_pod_anti_affinity("b", w.MEASURED_NAMESPACE), node)]

    problems = check(Placements([node], pods))

    assert len(problems) == 2
    assert all("share kubernetes.io/hostname=scheduler-perf-00000" in p for p in problems)


def test_skew_beyond_max_skew_is_reported() -> None:
    spreading = w.WORKLOADS["TopologySpreading"]
    nodes = [spreading.node(i) for i in range(3)]
    pods = [_bound(w.pod_with_topology_spreading(f"m{i}", "ns"), nodes[0]) for i in range(6)]

    problems = check(Placements(nodes, pods))

    assert problems == [
        "spreading: topology.kubernetes.io/zone skew 6 > maxSkew 5: {'moon-1': 6, 'moon-2': 0, 'moon-3': 0}"
    ]


def test_preemption_needs_every_arrival_bound_and_a_victim_for_each() -> None:
    node = w.WORKLOADS["PreemptionAsync"].node(0)
    high = _bound(w.pod_high_priority("churn-0", "ns"), node, w.CHURN)
    low = _bound(w.pod_low_priority("init-1", "ns"), node, w.INIT)
    created = {w.INIT: {"init-0", "init-1"}, w.CHURN: {"churn-0", "churn-1"}}

    problems = check(Placements([node], [high, low], created, {"churn-0", "init-0", "init-1"}))

    assert problems == ["preemption: high-priority pod churn-1 was never bound"]
    created[w.INIT] = {"init-1"}
    assert check(Placements([node], [high, low], created, {"churn-0", "churn-1"}))[-1] == (
        "preemption: 2 high-priority pods bound but only 0 low-priority pods deleted"
    )


# -- gangs ------------------------------------------------------------------------------------------


def test_gang_sizes_are_seeded_within_bounds_and_add_up() -> None:
    gangs = w.Gangs()

    for total in (8, 64, 65, 1000, 10000):
        sizes = gangs.sizes(total)
        assert sum(sizes) == total
        assert all(8 <= size <= 64 for size in sizes), sizes
        assert gangs.sizes(total) == sizes
    assert len(set(gangs.sizes(1000))) > 5
    assert w.Gangs(seed=2).sizes(1000) != gangs.sizes(1000)


def test_too_few_pods_for_a_gang_are_refused() -> None:
    with pytest.raises(ValueError, match="7 pods cannot form a gang of at least 8"):
        w.Gangs().sizes(7)


@pytest.mark.parametrize(("min_size", "max_size"), [(0, 64), (8, 14)])
def test_gang_bounds_that_cannot_split_every_remainder_are_refused(min_size: int, max_size: int) -> None:
    with pytest.raises(ValueError, match=f"gang sizes {min_size} to {max_size}: need 1 <= min_size"):
        w.Gangs(min_size=min_size, max_size=max_size)
    assert sum(w.Gangs(min_size=8, max_size=15).sizes(1000)) == 1000


def test_gangs_are_formed_in_both_spellings_with_their_size_as_minimum() -> None:
    pods = [w.pod_gang_member(f"m{i}", "ns") for i in range(300)]

    groups = w.Gangs().form(pods)

    sizes = w.Gangs().sizes(300)
    assert [g.metadata.name for g in groups] == [f"gang-{i:05d}" for i in range(len(sizes))]
    start = 0
    for index, (group, size) in enumerate(zip(groups, sizes, strict=True)):
        members = pods[start:start + size]
        start += size
        assert group.metadata.namespace == "ns"
        if index % 4 == 3:
            assert (group.api_version, group.spec.min_member) == ("scheduling.x-k8s.io/v1alpha1", size)
            joined = {p.metadata.labels[POD_GROUP_LABEL] for p in members}
            assert joined == {group.metadata.name}
            assert not any(p.spec.HasField("scheduling_group") for p in members)
        else:
            assert (group.api_version, group.spec.scheduling_policy.gang.min_count) == (
                "scheduling.k8s.io/v1alpha3", size)
            assert {p.spec.scheduling_group.pod_group_name for p in members} == {group.metadata.name}
    assert dict(pods[0].spec.containers[0].resources.requests) == {"cpu": "100m", "memory": "100Mi"}


def _gang(
    size: int,
    node_of: Callable[[int], objects_pb2.Node | None],
    version_of: Callable[[int], int] = lambda _: 7,
) -> tuple[objects_pb2.PodGroup, list[objects_pb2.Pod]]:
    """A v1alpha3 gang of ``size`` measured pods, pod i on node_of(i) (None: unbound) at version_of(i)."""
    pods = [w.pod_gang_member(f"m{i}", "ns") for i in range(size)]
    group = w.Gangs(coscheduling_every=0).form(pods)[0]
    for index, pod in enumerate(pods):
        node = node_of(index)
        pod.metadata.labels[w.ROLE_LABEL] = w.MEASURED
        pod.metadata.resource_version = str(version_of(index))
        if node is not None:
            pod.spec.node_name = node.metadata.name
    return group, pods


def test_a_gang_bound_whole_in_one_transaction_passes() -> None:
    nodes = [w.WORKLOADS["GangScheduling"].node(i) for i in range(2)]
    group, pods = _gang(10, lambda i: nodes[i % 2])

    assert check(Placements(nodes, pods, pod_groups=[group])) == []


def test_a_gang_bound_below_its_minimum_is_reported() -> None:
    node = w.WORKLOADS["GangScheduling"].node(0)
    group, pods = _gang(10, lambda i: node if i < 3 else None)
    node.status.allocatable["cpu"] = "300m"  # no room for the other seven

    assert check(Placements([node], pods, pod_groups=[group])) == [
        "gangs: gang ns/gang-00000: 3 of 10 members bound, fewer than its minimum 10"
    ]


def test_a_gang_left_waiting_with_room_for_it_is_reported() -> None:
    nodes = [w.WORKLOADS["GangScheduling"].node(i) for i in range(2)]
    group, pods = _gang(10, lambda _: None)

    assert check(Placements(nodes, pods, pod_groups=[group])) == [
        "gangs: gang ns/gang-00000: 10 of 10 members unbound though the nodes have room for them"
    ]
    nodes[0].status.allocatable["cpu"] = nodes[1].status.allocatable["cpu"] = "450m"  # room for 8 of 10
    assert check(Placements(nodes, pods, pod_groups=[group])) == []


def test_a_gang_bound_in_several_transactions_is_reported() -> None:
    node = w.WORKLOADS["GangScheduling"].node(0)
    group, pods = _gang(10, lambda _: node, lambda i: 7 if i < 6 else 9)

    problems = check(Placements([node], pods, pod_groups=[group]))

    assert problems == [
        "gangs: gang ns/gang-00000: 6 members bound at its first resourceVersion 7, fewer than its "
        "minimum 10 (bound at 2 resourceVersions, 7 to 9)"
    ]
    versions = {f"m{i}": "7" for i in range(10)}  # as the watch saw them bound, before later writes
    assert check(Placements([node], pods, pod_groups=[group], bound_versions=versions)) == []


# -- topology-constrained gangs ---------------------------------------------------------------------

TOPOLOGY_GANGS = w.WORKLOADS["TopologyGangScheduling"]


def _rack_gang(size: int, node_of: Callable[[int], objects_pb2.Node | None]
               ) -> tuple[objects_pb2.PodGroup, list[objects_pb2.Pod]]:
    """A rack-constrained gang of ``size`` measured pods, pod i on node_of(i) (None: unbound)."""
    pods = [w.pod_gang_member(f"m{i}", "ns") for i in range(size)]
    assert TOPOLOGY_GANGS.gangs is not None
    group = TOPOLOGY_GANGS.gangs.form(pods)[0]
    for index, pod in enumerate(pods):
        pod.metadata.labels[w.ROLE_LABEL] = w.MEASURED
        pod.metadata.resource_version = "7"
        if (node := node_of(index)) is not None:
            pod.spec.node_name = node.metadata.name
    return group, pods


def test_the_topology_gang_workload_labels_racks_and_constrains_every_gang() -> None:
    nodes = [TOPOLOGY_GANGS.node(i) for i in range(17)]
    assert [n.metadata.labels[w.RACK_LABEL] for n in nodes] == ["rack-0"] * 8 + ["rack-1"] * 8 + ["rack-2"]
    assert w.ZONE_LABEL not in nodes[0].metadata.labels
    pods = [w.pod_gang_member(f"m{i}", "ns") for i in range(TOPOLOGY_GANGS.scale("tiny").measured_pods)]
    assert TOPOLOGY_GANGS.gangs is not None
    groups = TOPOLOGY_GANGS.gangs.form(pods)
    assert len(groups) > 1
    for group in groups:
        assert group.api_version == "scheduling.k8s.io/v1alpha3"
        assert [c.key for c in group.spec.scheduling_constraints.topology] == [w.RACK_LABEL]
    assert all(pod.spec.scheduling_group.pod_group_name for pod in pods)
    assert POD_GROUP_LABEL not in pods[0].metadata.labels
    # The largest gang fits one rack of node-default nodes (4 CPUs each, 100m a pod).
    assert TOPOLOGY_GANGS.gangs.max_size * 100 <= TOPOLOGY_GANGS.rack_size * 4000


def test_a_coscheduling_gang_cannot_carry_a_topology_constraint() -> None:
    with pytest.raises(ValueError, match="a Coscheduling PodGroup has no topology constraint"):
        w.Gangs(topology_key=w.RACK_LABEL)


def test_a_gang_inside_one_rack_passes() -> None:
    nodes = [TOPOLOGY_GANGS.node(i) for i in range(9)]
    group, pods = _rack_gang(10, lambda i: nodes[i % 2])

    assert check(Placements(nodes, pods, pod_groups=[group])) == []


def test_a_gang_split_across_racks_is_reported() -> None:
    nodes = [TOPOLOGY_GANGS.node(i) for i in range(9)]
    group, pods = _rack_gang(10, lambda i: nodes[0] if i < 5 else nodes[8])

    assert check(Placements(nodes, pods, pod_groups=[group])) == [
        "gangs: gang ns/gang-00000: 10 of 10 members bound across 2 domains of "
        "topology.kubernetes.io/rack: "
        "rack-0, rack-1"
    ]


def test_a_gang_on_a_node_without_the_rack_label_is_reported() -> None:
    unracked = w.WORKLOADS["GangScheduling"].node(99)
    nodes = [TOPOLOGY_GANGS.node(0), unracked]
    group, pods = _rack_gang(10, lambda i: nodes[i % 2])

    assert check(Placements(nodes, pods, pod_groups=[group])) == [
        "gangs: gang ns/gang-00000: 10 of 10 members bound across 2 domains of "
        "topology.kubernetes.io/rack: "
        "(no topology.kubernetes.io/rack), rack-0"
    ]


def test_a_rack_gang_waits_rightly_when_no_single_rack_has_room() -> None:
    # Two racks of one node each, room for 6 of the gang's 10 in each: 12 places, but no rack holds 10.
    nodes = [TOPOLOGY_GANGS.node(0), TOPOLOGY_GANGS.node(8)]
    for node in nodes:
        node.status.allocatable["cpu"] = "600m"
    group, pods = _rack_gang(10, lambda _: None)

    assert check(Placements(nodes, pods, pod_groups=[group])) == []
    nodes[1].status.allocatable["cpu"] = "1"
    assert check(Placements(nodes, pods, pod_groups=[group])) == [
        "gangs: gang ns/gang-00000: 10 of 10 members unbound though one domain of "
        "topology.kubernetes.io/rack "
        "has room for them"
    ]
