"""The in-tree plugins' args in a configuration file: kube-scheduler's SetDefaults_*Args
(pkg/scheduler/apis/config/v1/defaults_test.go, TestPluginArgsDefaults) and ValidateXArgs
(validation/validation_pluginargs_test.go) for the plugins podsched has, each problem named by its
field path under the pluginConfig entry."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from cluster.api import objects_pb2
from scheduler.config import API_VERSION, KIND, ConfigError, load_config, parse_config
from scheduler.config.argtypes import (
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    VolumeBindingArgs,
)

CPU_MEMORY = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
ZONE = {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}


def config(*entries: tuple[str, Any]) -> dict[str, Any]:
    plugin_config = [{"name": name, "args": args} for name, args in entries]
    return {"apiVersion": API_VERSION, "kind": KIND, "profiles": [{"pluginConfig": plugin_config}]}


def args_of(name: str, args: Any) -> Any:
    return parse_config(config((name, args)), source="sched.yaml").profiles[0].plugin_args[name]


def problems(*entries: tuple[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        parse_config(config(*entries), source="sched.yaml")
    return raised.value.problems


# ---------------------------------------------------------------------------------------- defaults


@pytest.mark.parametrize(
    ("name", "given", "want"),
    [
        ("InterPodAffinity", {}, InterPodAffinityArgs(1, False)),
        ("InterPodAffinity", {"hardPodAffinityWeight": 0}, InterPodAffinityArgs(0, False)),
        ("InterPodAffinity", {"hardPodAffinityWeight": None}, InterPodAffinityArgs(1, False)),
        ("NodeResourcesFit", {}, NodeResourcesFitArgs((), (), ScoringStrategy("LeastAllocated", CPU_MEMORY))),
        ("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated"}},
         NodeResourcesFitArgs((), (), ScoringStrategy("MostAllocated", CPU_MEMORY))),
        ("NodeResourcesFit",
         {"scoringStrategy": {"type": "MostAllocated",
                              "resources": [{"name": "cpu", "weight": 0},
                                            {"name": "example.com/gpu", "weight": 3}]}},
         NodeResourcesFitArgs((), (), ScoringStrategy(
             "MostAllocated", (ResourceSpec("cpu", 1), ResourceSpec("example.com/gpu", 3))))),
        ("NodeResourcesFit",
         {"scoringStrategy": {"type": "RequestedToCapacityRatio",
                              "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10},
                                                                     {"utilization": 100}]}}},
         NodeResourcesFitArgs((), (), ScoringStrategy(
             "RequestedToCapacityRatio", CPU_MEMORY,
             (UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0))))),
        ("NodeResourcesBalancedAllocation", {}, NodeResourcesBalancedAllocationArgs(CPU_MEMORY)),
        ("NodeResourcesBalancedAllocation", {"resources": []},
         NodeResourcesBalancedAllocationArgs(CPU_MEMORY)),
        ("NodeResourcesBalancedAllocation", {"resources": [{"name": "example.com/gpu", "weight": 0}]},
         NodeResourcesBalancedAllocationArgs((ResourceSpec("example.com/gpu", 1),))),
        ("PodTopologySpread", {}, PodTopologySpreadArgs((), "System")),
        ("PodTopologySpread", {"defaultingType": ""}, PodTopologySpreadArgs((), "System")),
        ("DefaultPreemption", {}, DefaultPreemptionArgs(10, 100)),
        ("DefaultPreemption", {"minCandidateNodesPercentage": 50, "minCandidateNodesAbsolute": 500},
         DefaultPreemptionArgs(50, 500)),
        ("NodeAffinity", {}, NodeAffinityArgs(None, None)),
        ("VolumeBinding", {}, VolumeBindingArgs(
            600, (UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0)))),
        ("VolumeBinding", {"bindTimeoutSeconds": 0, "shape": []}, VolumeBindingArgs(
            0, (UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0)))),
        ("VolumeBinding", {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]},
         VolumeBindingArgs(600, (UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)))),
    ],
    ids=[
        "InterPodAffinity-empty", "InterPodAffinity-explicit-0", "InterPodAffinity-null",
        "NodeResourcesFit-empty", "NodeResourcesFit-strategy-without-resources",
        "NodeResourcesFit-zero-weight", "NodeResourcesFit-shape-point-without-score",
        "BalancedAllocation-empty", "BalancedAllocation-empty-list", "BalancedAllocation-zero-weight",
        "PodTopologySpread-empty", "PodTopologySpread-empty-defaulting-type",
        "DefaultPreemption-empty", "DefaultPreemption-set",
        "NodeAffinity-empty",
        "VolumeBinding-empty", "VolumeBinding-zero-timeout-empty-shape", "VolumeBinding-shape",
    ],
)
def test_defaults(name: str, given: dict[str, Any], want: Any) -> None:
    assert args_of(name, given) == want


def test_enabled_plugins_without_an_entry_get_default_args() -> None:
    profile = parse_config({"apiVersion": API_VERSION, "kind": KIND}).profiles[0]
    assert profile.plugin_args["DefaultPreemption"] == DefaultPreemptionArgs(10, 100)
    assert profile.plugin_args["PodTopologySpread"] == PodTopologySpreadArgs((), "System")
    assert profile.plugin_args["VolumeBinding"] == VolumeBindingArgs()


def test_embedded_api_types_are_read_into_the_api_messages() -> None:
    added = args_of("NodeAffinity", {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}})
    # Read into the API message, then parsed once, as a pod's selector is.
    (term,) = added.added_required.terms
    assert [(r.key, r.operator, r.values) for r in term.labels.requirements] == [("zone", "in", {"a"})]
    spread = args_of("PodTopologySpread", {"defaultingType": "List", "defaultConstraints": [ZONE]})
    (constraint,) = spread.default_constraints
    assert (constraint.max_skew, constraint.when_unsatisfiable) == (1, "ScheduleAnyway")
    assert not constraint.HasField("min_domains")  # unset: kube-scheduler's 1, not 0
    assert isinstance(constraint, objects_pb2.TopologySpreadConstraint)


# -------------------------------------------------------------------------------------- validation

A = "sched.yaml: profiles[0].pluginConfig[0].args"
S = f"{A}.scoringStrategy"
SHAPE = f"{S}.requestedToCapacityRatio.shape"


def ratio(*points: tuple[int, int]) -> dict[str, Any]:
    shape = [{"utilization": u, "score": s} for u, s in points]
    strategy = {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": shape}}
    return {"scoringStrategy": strategy}


@pytest.mark.parametrize(
    ("name", "args", "want"),
    [
        # ValidateDefaultPreemptionArgs
        ("DefaultPreemption", {"minCandidateNodesPercentage": -1},
         [f"{A}.minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]"]),
        ("DefaultPreemption", {"minCandidateNodesPercentage": 900},
         [f"{A}.minCandidateNodesPercentage: Invalid value: 900: not in valid range [0, 100]"]),
        ("DefaultPreemption", {"minCandidateNodesAbsolute": -1},
         [f"{A}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"]),
        ("DefaultPreemption", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
         [f"{A}.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
          "minCandidateNodesAbsolute",
          f"{A}.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
          "minCandidateNodesPercentage"]),
        ("DefaultPreemption", {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": -1},
         [f"{A}.minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]",
          f"{A}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"]),
        # ValidateInterPodAffinityArgs
        ("InterPodAffinity", {"hardPodAffinityWeight": -1},
         [f"{A}.hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"]),
        ("InterPodAffinity", {"hardPodAffinityWeight": 101},
         [f"{A}.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"]),
        # ValidateNodeResourcesFitArgs
        ("NodeResourcesFit", {"ignoredResources": ["a" * 64]},
         [f'{A}.ignoredResources[0]: Invalid value: "{"a" * 64}": name part must be no more than 63 '
          "characters"]),
        ("NodeResourcesFit", {"ignoredResourceGroups": ["example.com/aaa"]},
         [f'{A}.ignoredResourceGroups[0]: Invalid value: "example.com/aaa": resource group name can\'t '
          "contain '/'"]),
        ("NodeResourcesFit", {"scoringStrategy": {"type": "Invalid"}},
         [f'{S}.type: Unsupported value: "Invalid": supported values: "LeastAllocated", "MostAllocated", '
          '"RequestedToCapacityRatio"']),
        ("NodeResourcesFit", {"scoringStrategy": {"type": "LeastAllocated",
                                                  "resources": [{"name": "cpu", "weight": 101}]}},
         [f"{S}.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range "
          "(0, 100]"]),
        ("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated",
                                                  "resources": [{"name": "memory", "weight": -1}]}},
         [f"{S}.resources[0].weight: Invalid value: -1: resource weight of memory not in valid range "
          "(0, 100]"]),
        ("NodeResourcesFit", ratio(),
         [f"{SHAPE}: Required value: at least one point must be specified"]),
        ("NodeResourcesFit", ratio((10, 1), (5, 2)),
         [f"{SHAPE}[1].utilization: Invalid value: 5: values must be sorted in increasing order"]),
        ("NodeResourcesFit", ratio((10, 1), (10, 2)),
         [f"{SHAPE}[1].utilization: Invalid value: 10: values must be sorted in increasing order"]),
        ("NodeResourcesFit", ratio((-10, 1), (110, 2)),
         [f"{SHAPE}[0].utilization: Invalid value: -10: not in valid range [0, 100]",
          f"{SHAPE}[1].utilization: Invalid value: 110: not in valid range [0, 100]"]),
        ("NodeResourcesFit", ratio((10, -1), (20, 11)),
         [f"{SHAPE}[0].score: Invalid value: -1: not in valid range [0, 10]",
          f"{SHAPE}[1].score: Invalid value: 11: not in valid range [0, 10]"]),
        # ValidateNodeResourcesBalancedAllocationArgs
        ("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu"}, {"name": "cpu"}]},
         [f'{A}.resources[1].name: Duplicate value: "cpu"']),
        ("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 2}]},
         [f"{A}.resources[0].weight: Invalid value: 2: must be 1"]),
        # ValidatePodTopologySpreadArgs
        ("PodTopologySpread", {"defaultingType": "List", "defaultConstraints": [{**ZONE, "maxSkew": -1}]},
         [f"{A}.defaultConstraints[0].maxSkew: Invalid value: -1: not in valid range (0, inf)"]),
        ("PodTopologySpread", {"defaultingType": "List", "defaultConstraints": [{**ZONE, "topologyKey": ""}]},
         [f"{A}.defaultConstraints[0].topologyKey: Required value: can not be empty"]),
        ("PodTopologySpread",
         {"defaultingType": "List", "defaultConstraints": [{**ZONE, "whenUnsatisfiable": ""}]},
         [f"{A}.defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty"]),
        ("PodTopologySpread",
         {"defaultingType": "List", "defaultConstraints": [{**ZONE, "whenUnsatisfiable": "Unknown"}]},
         [f'{A}.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Unknown": supported values: '
          '"DoNotSchedule", "ScheduleAnyway"']),
        ("PodTopologySpread",
         {"defaultingType": "List", "defaultConstraints": [ZONE, {**ZONE, "maxSkew": 2}]},
         [f'{A}.defaultConstraints[1]: Duplicate value: "{{topology.kubernetes.io/zone, ScheduleAnyway}}"']),
        ("PodTopologySpread",
         {"defaultingType": "List",
          "defaultConstraints": [{**ZONE, "labelSelector": {"matchLabels": {"foo": "bar"}}}]},
         [f"{A}.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as "
          "they deduced for each pod"]),
        ("PodTopologySpread", {"defaultConstraints": [ZONE]},
         [f'{A}.defaultingType: Invalid value: "System": when .defaultConstraints are not empty']),
        ("PodTopologySpread", {"defaultingType": "Unknown"},
         [f'{A}.defaultingType: Unsupported value: "Unknown": supported values: "System", "List"']),
        # ValidateNodeAffinityArgs
        ("NodeAffinity",
         {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
             {"matchExpressions": [{"key": "foo", "operator": "Near", "values": ["a"]}]}]}}},
         [f"{A}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
          '.matchExpressions[0].operator: Unsupported value: "Near": supported values: "In", "NotIn", '
          '"Exists", "DoesNotExist", "Gt", "Lt"']),
        # ValidateVolumeBindingArgs
        ("VolumeBinding", {"bindTimeoutSeconds": -10},
         [f"{A}.bindTimeoutSeconds: Invalid value: -10: invalid BindTimeoutSeconds, should not be a negative "
          "value"]),
        ("VolumeBinding", {"shape": [{"utilization": 10, "score": 1}, {"utilization": 5, "score": 2}]},
         [f"{A}.shape[1].utilization: Invalid value: 5: values must be sorted in increasing order"]),
        ("VolumeBinding", {"shape": [{"utilization": -1, "score": 1}, {"utilization": 100, "score": 11}]},
         [f"{A}.shape[0].utilization: Invalid value: -1: not in valid range [0, 100]",
          f"{A}.shape[1].score: Invalid value: 11: not in valid range [0, 10]"]),
    ],
)
def test_validation(name: str, args: dict[str, Any], want: list[str]) -> None:
    assert problems((name, args)) == want


def test_the_entry_index_is_in_the_path() -> None:
    found = problems(("InterPodAffinity", {}), ("NodeResourcesFit", {
        "scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 0},
                                                                    {"name": "memory", "weight": 200}]}}))
    assert found == ["sched.yaml: profiles[0].pluginConfig[1].args.scoringStrategy.resources[1].weight: "
                     "Invalid value: 200: resource weight of memory not in valid range (0, 100]"]


@pytest.mark.parametrize(
    ("args", "want"),
    [
        ({"hardPodAffinityWeight": "high"},
         f'{A}.hardPodAffinityWeight: Invalid value: "high": must be an integer'),
        ({"hardPodAffinityWeigth": 1}, f'{A}: unknown field "hardPodAffinityWeigth"'),
        ([1], f"{A}: Invalid value: must be a mapping, not a list"),
    ],
    ids=["wrong-type", "unknown-field", "not-a-mapping"],
)
def test_args_are_decoded_strictly(args: Any, want: str) -> None:
    assert problems(("InterPodAffinity", args)) == [want]


def test_a_key_given_twice_in_args_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "sched.yaml"
    path.write_text(f"apiVersion: {API_VERSION}\nkind: {KIND}\n" + textwrap.dedent("""\
        profiles:
          - pluginConfig:
              - name: InterPodAffinity
                args:
                  hardPodAffinityWeight: 1
                  hardPodAffinityWeight: 100
        """))
    with pytest.raises(ConfigError) as raised:
        load_config(str(path))
    assert raised.value.problems == [
        f"{path}: profiles[0].pluginConfig[0].args: line 8, column 11: duplicate key 'hardPodAffinityWeight'"]
