"""The placement plugins and the framework's placement phases, as tables (upstream's
topology_placement_test.go, podgroup_pods_count_test.go, placement_merging_test.go and NodeResourcesFit's
placement score cases)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from cluster.api import objects_pb2
from scheduler.config import in_tree_registry, parse_config
from scheduler.config.types import API_VERSION, KIND
from scheduler.framework import (
    Code,
    CycleState,
    NodeInfo,
    Placement,
    PlacementScore,
    PluginError,
    PodGroupAssignments,
    PodGroupIndex,
    PodGroupInfo,
    PodInfo,
    ProposedAssignment,
)
from scheduler.framework.registry import Registry
from scheduler.framework.runtime import build_framework
from scheduler.plugins.noderesources.fit import NodeResourcesFit
from scheduler.plugins.podgrouppodscount import PodGroupPodsCount
from scheduler.plugins.topologyplacement import TopologyPlacement
from tests import builders
from tests.unit.framework_fakes import Snapshot, fake_handle


def node(
    name: str,
    labels: Mapping[str, str] | None = None,
    *,
    cpu: str = "5",
    memory: str = "5000",
    gpu: str = "",
    pods: Sequence[objects_pb2.Pod] = (),
) -> NodeInfo:
    allocatable = {"cpu": cpu, "memory": memory, "pods": "110"}
    if gpu:
        allocatable["nvidia.com/gpu"] = gpu
    return builders.node_info(builders.node(name, labels=labels, allocatable=allocatable), pods)


def group(key: str = "", name: str = "root") -> objects_pb2.PodGroup:
    created = builders.pod_group(name, min_count=1)
    if key:
        created.spec.scheduling_constraints.topology.add(key=key)
    return created


def member(name: str, group_name: str = "root", node_name: str = "", **requests: str) -> objects_pb2.Pod:
    created = builders.pod(name, uid=name, node_name=node_name, requests=requests)
    created.spec.scheduling_group.pod_group_name = group_name
    return created


# ------------------------------------------------------------------------------- TopologyPlacement

GENERATE_CASES: list[
    tuple[str, str, list[str], list[NodeInfo], list[NodeInfo], dict[str, list[str]] | None]
] = [
    # (name, topology key, nodes the group's placed pods are on, placement nodes, other nodes,
    #  wanted placements by name, None for an error)
    (
        "with topology key constraint, returns placement for each topology domain",
        "topology1",
        [],
        [
            node("node0", {"topology2": "d1"}),
            node("node1", {"topology2": "d4"}),
            node("node2", {"topology1": "d1"}),
            node("node3", {"topology1": "d2"}),
            node("node4", {"topology1": "d1"}),
            node("node5", {"topology1": "d3"}),
        ],
        [],
        {"d1": ["node2", "node4"], "d2": ["node3"], "d3": ["node5"]},
    ),
    (
        "without matching topology label, returns empty",
        "topology3",
        [],
        [node("node0", {"topology2": "d1"}), node("node2", {"topology1": "d1"})],
        [],
        {},
    ),
    (
        "with pods already scheduled in a single domain, returns that domain",
        "topology",
        ["node2", "node3"],
        [node("node0", {"topology": "d2"}), node("node1", {"topology": "d1"})],
        [node("node2", {"topology": "d1"}), node("node3", {"topology": "d1"})],
        {"d1": ["node1"]},
    ),
    (
        "with pods already scheduled in a single domain not present in current placement, returns empty",
        "topology",
        ["node2", "node3"],
        [node("node0", {"topology": "d2"})],
        [node("node2", {"topology": "d1"}), node("node3", {"topology": "d1"})],
        {},
    ),
    (
        "with pods already scheduled in conflicting domains, returns error",
        "topology",
        ["node2", "node3"],
        [node("node0", {"topology": "d2"}), node("node1", {"topology": "d1"})],
        [node("node2", {"topology": "d0"}), node("node3", {"topology": "d1"})],
        None,
    ),
    (
        "with pods already scheduled in the empty string domain, returns that domain",
        "topology",
        ["node2", "node3"],
        [node("node0", {"topology": "d1"}), node("node1", {"topology": ""})],
        [node("node2", {"topology": ""}), node("node3", {"topology": ""})],
        {"": ["node1"]},
    ),
    (
        "with already scheduled pod on node outside of snapshot, returns error",
        "topology",
        ["node2", "node4"],
        [node("node0", {"topology": "d2"}), node("node1", {"topology": "d1"})],
        [node("node2", {"topology": "d1"}), node("node3", {"topology": "d1"})],
        None,
    ),
    (
        "with already scheduled pod on node without topology label, returns error",
        "topology",
        ["node2"],
        [node("node1", {"topology": "d2"})],
        [node("node2", {"foo": "bar"})],
        None,
    ),
]


@pytest.mark.parametrize(
    ("key", "placed_on", "placement_nodes", "other_nodes", "wanted"),
    [case[1:] for case in GENERATE_CASES],
    ids=[case[0] for case in GENERATE_CASES],
)
def test_topology_placement_generates_one_placement_per_domain(
    key: str,
    placed_on: list[str],
    placement_nodes: list[NodeInfo],
    other_nodes: list[NodeInfo],
    wanted: dict[str, list[str]] | None,
) -> None:
    index = PodGroupIndex()
    pod_group = group(key)
    index.set_group(pod_group)
    for i, node_name in enumerate(placed_on):
        index.set_pod(member(f"pod{i}", node_name=node_name))
    plugin = TopologyPlacement(fake_handle(Snapshot([*placement_nodes, *other_nodes]), pod_groups=index))
    parent = Placement("test-placement", tuple(placement_nodes))
    info = PodGroupInfo("default/root", pod_group, [])
    if wanted is None:
        with pytest.raises(PluginError, match="cannot determine domain for already scheduled pods"):
            plugin.generate_placements(CycleState(), info, parent)
        return
    got = plugin.generate_placements(CycleState(), info, parent)
    assert {p.name: [n.name for n in p.nodes] for p in got} == wanted


def test_topology_placement_without_a_constraint_answers_with_the_whole_cluster() -> None:
    nodes = [node("node1"), node("node2", {"foo": "bar"})]
    plugin = TopologyPlacement(fake_handle(Snapshot([*nodes, node("node3")])))
    parent = Placement("test-placement", tuple(nodes))
    got = plugin.generate_placements(CycleState(), PodGroupInfo("default/root", group(), []), parent)
    assert len(got) == 1 and got[0] is parent


def test_topology_placement_follows_an_assumed_pod_to_its_node() -> None:
    assumed = {"default/pod0": "node2"}
    index = PodGroupIndex(lambda key: key in assumed, lambda key: assumed.get(key, ""))
    pod_group = group("topology")
    index.set_group(pod_group)
    index.set_pod(member("pod0"))  # not bound: the cache assumed it on node2
    nodes = [
        node("node1", {"topology": "d1"}),
        node("node2", {"topology": "d2"}),
        node("node3", {"topology": "d2"}),
    ]
    plugin = TopologyPlacement(fake_handle(Snapshot(nodes), pod_groups=index))
    got = plugin.generate_placements(
        CycleState(), PodGroupInfo("default/root", pod_group, []), Placement("", tuple(nodes))
    )
    assert {p.name: [n.name for n in p.nodes] for p in got} == {"d2": ["node2", "node3"]}


# -------------------------------------------------------------------------------- PodGroupPodsCount


@pytest.mark.parametrize(
    ("bound", "assumed", "wanted"),
    [
        (["node2", "node3"], ["node1"], 5),  # 1 assumed + 2 assigned + 2 proposed
        (["node1"], [], 3),
        ([], ["node1"], 3),
        ([], [], 2),
    ],
    ids=[
        "existing assigned and assumed pods",
        "no assumed pods",
        "no assigned pods",
        "no assigned pods, no assumed pods",
    ],
)
def test_pod_group_pods_count_counts_placed_and_proposed_pods(
    bound: list[str], assumed: list[str], wanted: int
) -> None:
    assumed_at = {f"default/a{i}": node_name for i, node_name in enumerate(assumed)}
    index = PodGroupIndex(lambda key: key in assumed_at, lambda key: assumed_at.get(key, ""))
    index.set_group(group(name="pg1"))
    for i, node_name in enumerate(bound):
        index.set_pod(member(f"p{i}", "pg1", node_name))
    for key in assumed_at:
        index.set_pod(member(key.partition("/")[2], "pg1"))
    proposed = tuple(
        ProposedAssignment(PodInfo(member(f"proposed-pod-{i}", "pg1")), f"node{i}") for i in (1, 2)
    )
    plugin = PodGroupPodsCount(fake_handle(Snapshot([]), pod_groups=index))
    info = PodGroupInfo("default/pg1", group(name="pg1"), [])
    assert (
        plugin.score_placement(CycleState(), info, PodGroupAssignments(Placement("p", ()), proposed))
        == wanted
    )


@pytest.mark.parametrize(
    ("raw", "wanted"),
    [
        ([10, 50, 110], [9, 45, 100]),
        ([50, 50], [100, 100]),
        ([50], [100]),
        ([11, 100, 101, 102], [10, 98, 99, 100]),
    ],
    ids=[
        "distinct scores",
        "equal scores",
        "single score",
        "some minimal score that is far from a group of scores located closely",
    ],
)
def test_pod_group_pods_count_normalizes_by_the_highest_count(raw: list[int], wanted: list[int]) -> None:
    scores = [PlacementScore(Placement(str(i), ()), score) for i, score in enumerate(raw)]
    plugin = PodGroupPodsCount(fake_handle(Snapshot([])))
    plugin.normalize_placement_score(CycleState(), PodGroupInfo("default/pg1", group(), []), scores)
    assert [entry.score for entry in scores] == wanted


def test_pod_group_pods_count_rejects_placements_without_pods() -> None:
    scores = [PlacementScore(Placement("a", ()), 0), PlacementScore(Placement("b", ()), 0)]
    plugin = PodGroupPodsCount(fake_handle(Snapshot([])))
    with pytest.raises(
        PluginError, match="no pods from pod group are assigned to any of the candidate placements"
    ):
        plugin.normalize_placement_score(CycleState(), PodGroupInfo("default/pg1", group(), []), scores)


# ----------------------------------------------------------------------- NodeResourcesFit's score

MOST_ALLOCATED = {
    "type": "MostAllocated",
    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
}
WITH_GPU = {
    "type": "MostAllocated",
    "resources": [
        {"name": "cpu", "weight": 1},
        {"name": "memory", "weight": 1},
        {"name": "nvidia.com/gpu", "weight": 1},
    ],
}


@pytest.mark.parametrize(
    ("strategy", "gpu", "group_requests", "existing", "wanted"),
    [
        (MOST_ALLOCATED, "", [{"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "2000"}], None, 25),
        (
            MOST_ALLOCATED,
            "",
            [{"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "2000"}],
            {"cpu": "1000m", "memory": "0"},
            30,
        ),
        (
            WITH_GPU,
            "5",
            [
                {"cpu": "1000m", "memory": "0", "nvidia.com/gpu": "0"},
                {"cpu": "1000m", "memory": "2000", "nvidia.com/gpu": "1"},
            ],
            {"cpu": "1000m", "memory": "0"},
            20,
        ),
        (
            WITH_GPU,
            "5",
            [
                {"cpu": "1000m", "memory": "0", "nvidia.com/gpu": "0"},
                {"cpu": "1000m", "memory": "2000", "nvidia.com/gpu": "0"},
            ],
            {"cpu": "1000m", "memory": "0", "nvidia.com/gpu": "1"},
            25,
        ),
    ],
    ids=[
        "computes score based on total requests",
        "includes pre-existing pods from outside of pod group",
        "includes scalar resources if any pod in pod group has nonzero requests",
        "does not include scalar resources if all pods in pod group have zero requests",
    ],
)
def test_node_resources_fit_scores_a_placement_as_one_node(
    strategy: dict[str, Any],
    gpu: str,
    group_requests: list[dict[str, str]],
    existing: dict[str, str] | None,
    wanted: int,
) -> None:
    on_node1 = [member("baz", "other", "node1", **existing)] if existing is not None else []
    nodes = (node("node1", gpu=gpu, pods=on_node1), node("node2", gpu=gpu))
    args = builders.plugin_args("NodeResourcesFit", {"scoringStrategy": strategy})
    plugin = NodeResourcesFit(args, frozenset)  # type: ignore[arg-type]
    proposed = tuple(
        ProposedAssignment(PodInfo(member(f"p{i}", **requests)), nodes[i].name)
        for i, requests in enumerate(group_requests)
    )
    info = PodGroupInfo("default/root", group(), [])
    assert (
        plugin.score_placement(CycleState(), info, PodGroupAssignments(Placement("p", nodes), proposed))
        == wanted
    )


# --------------------------------------------------------------------------- the framework's phases


class Generator:
    def __init__(
        self, name: str, placements: Sequence[tuple[str, Sequence[str]]] | None = None, error: str = ""
    ) -> None:
        self.name = name
        self._placements = placements
        self._error = error

    def generate_placements(
        self, state: CycleState, group: PodGroupInfo, parent: Placement
    ) -> list[Placement]:
        if self._error:
            raise PluginError(self._error)
        if self._placements is None:
            return [parent]
        by_name = {info.name: info for info in parent.nodes}
        return [Placement(name, tuple(by_name[n] for n in nodes)) for name, nodes in self._placements]


class FixedScore:
    def __init__(self, name: str, scores: Mapping[str, int], normalize: bool = False) -> None:
        self.name = name
        self._scores = scores
        self._normalize = normalize

    def score_placement(
        self, state: CycleState, group: PodGroupInfo, assignments: PodGroupAssignments
    ) -> int:
        return self._scores[assignments.placement.name]

    def placement_score_extensions(self) -> FixedScore | None:
        return self if self._normalize else None

    def normalize_placement_score(
        self, state: CycleState, group: PodGroupInfo, scores: list[PlacementScore]
    ) -> None:
        for entry in scores:
            entry.score //= 10


def framework_with(plugins: Sequence[Any], point: str, weights: Mapping[str, int] | None = None) -> Any:
    registry = in_tree_registry()
    for plugin in plugins:
        registry.register(plugin.name, lambda args, handle, plugin=plugin: plugin)
    enabled = [
        {"name": p.name, **({"weight": weights[p.name]} if weights and p.name in weights else {})}
        for p in plugins
    ]
    document = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "profiles": [
            {
                "plugins": {
                    "multiPoint": {
                        "disabled": [
                            {"name": "TopologyPlacementGenerator"},
                            {"name": "PodGroupPodsCount"},
                            {"name": "NodeResourcesFit"},
                        ]
                    },
                    point: {"enabled": enabled},
                }
            }
        ],
    }
    config = parse_config(document, registry=registry)
    return build_framework(config.profiles[0], Registry(dict(registry)), fake_handle(Snapshot(ALL)))


ALL = [node(name) for name in ("n1", "n2", "n3", "n4")]


def generated(plugins: Sequence[Generator]) -> tuple[dict[str, list[str]], Any]:
    framework = framework_with(plugins, "placementGenerate")
    placements, status = framework.run_placement_generate(
        CycleState(), PodGroupInfo("default/root", group(), []), ALL
    )
    return {p.name: [n.name for n in p.nodes] for p in placements}, status


@pytest.mark.parametrize(
    ("plugins", "wanted"),
    [
        (
            [Generator("a", [("a", ["n1", "n2", "n3"])]), Generator("b", [("b", ["n2", "n3", "n4"])])],
            {"a/b": ["n2", "n3"]},
        ),
        (
            [
                Generator("a", [("a1", ["n1", "n2"]), ("a2", ["n3", "n4"])]),
                Generator("b", [("b1", ["n2", "n3"])]),
            ],
            {"a1/b1": ["n2"], "a2/b1": ["n3"]},
        ),
        (
            [
                Generator("a", [("a", ["n1", "n2", "n3"])]),
                Generator("b", [("b", ["n2", "n3", "n4"])]),
                Generator("c", [("c", ["n3", "n4"])]),
            ],
            {"a/b/c": ["n3"]},
        ),
        ([Generator("a"), Generator("b", [("b", ["n2", "n3"])])], {"b": ["n2", "n3"]}),
        ([Generator("a"), Generator("b")], {"": ["n1", "n2", "n3", "n4"]}),
        (
            [Generator("a", [("dup", ["n1", "n2"])]), Generator("b", [("dup", ["n2", "n3"])])],
            {"dup/dup": ["n2"]},
        ),
        (
            [Generator("a", [("zone-a/rack-1", ["n1", "n2"])]), Generator("b", [("", ["n2", "n3"])])],
            {"zone-a/rack-1/": ["n2"]},
        ),
    ],
    ids=[
        "two single-placement plugins intersect",
        "cross product drops empty intersections",
        "three plugins fold-merge",
        "unconstrained plugin is skipped",
        "all unconstrained returns input placement",
        "same placement name from different plugins succeeds",
        "empty and slash-containing placement names succeed",
    ],
)
def test_placement_generators_are_merged_by_intersection(
    plugins: list[Generator], wanted: dict[str, list[str]]
) -> None:
    got, status = generated(plugins)
    assert status is None
    assert got == wanted


def test_placement_generators_without_overlap_leave_the_group_unschedulable() -> None:
    got, status = generated([Generator("a", [("a", ["n1"])]), Generator("b", [("b", ["n2"])])])
    assert got == {} and status is not None
    assert (status.code, status.plugin) == (Code.UNSCHEDULABLE, "b")


def test_a_failing_placement_generator_is_an_error_naming_it() -> None:
    _, status = generated([Generator("a", error="boom")])
    assert status is not None and status.code is Code.ERROR
    assert 'plugin "a" failed' in status.message() and "boom" in status.message()


def scored(plugins: Sequence[FixedScore], weights: Mapping[str, int] | None = None) -> tuple[list[int], Any]:
    framework = framework_with(plugins, "placementScore", weights)
    assignments = [PodGroupAssignments(Placement(name, ()), ()) for name in ("x", "y")]
    return framework.run_placement_score(CycleState(), PodGroupInfo("default/root", group(), []), assignments)


def test_placement_scores_are_normalized_weighted_and_summed() -> None:
    totals, status = scored(
        [FixedScore("a", {"x": 100, "y": 500}, normalize=True), FixedScore("b", {"x": 30, "y": 10})],
        {"a": 2, "b": 3},
    )
    assert status is None
    assert totals == [10 * 2 + 30 * 3, 50 * 2 + 10 * 3]


def test_a_placement_score_out_of_range_is_an_error() -> None:
    _, status = scored([FixedScore("a", {"x": 101, "y": 0})])
    assert status is not None and status.code is Code.ERROR
    assert 'plugin "a" returns an invalid score 101 for placement "x"' in status.message()


def test_the_default_profile_runs_the_upstream_placement_plugins() -> None:
    document = {"apiVersion": API_VERSION, "kind": KIND}
    config = parse_config(document, registry=in_tree_registry())
    framework = build_framework(config.profiles[0], in_tree_registry(), fake_handle(Snapshot(ALL)))
    assert framework.plugin_names("placementGenerate") == ["TopologyPlacementGenerator"]
    assert framework.plugin_names("placementScore") == ["NodeResourcesFit", "PodGroupPodsCount"]


def test_a_placement_is_bin_packed_whatever_strategy_scores_nodes() -> None:
    """kube-scheduler scores placements with MostAllocated and the strategy's resource weights: under the
    default LeastAllocated the fuller of two domains still scores higher."""
    args = builders.plugin_args("NodeResourcesFit", {})
    plugin = NodeResourcesFit(args, frozenset)  # type: ignore[arg-type]
    info = PodGroupInfo("default/root", group(), [])

    def score(existing: dict[str, str] | None) -> int:
        on_node1 = [member("baz", "other", "node1", **existing)] if existing is not None else []
        nodes = (node("node1", pods=on_node1), node("node2"))
        proposed = (ProposedAssignment(PodInfo(member("p0", cpu="1000m", memory="0")), "node1"),)
        assignments = PodGroupAssignments(Placement("p", nodes), proposed)
        return plugin.score_placement(CycleState(), info, assignments)

    assert score({"cpu": "2000m", "memory": "2000"}) > score(None)
