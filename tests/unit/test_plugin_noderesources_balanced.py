"""NodeResourcesBalancedAllocation: (1 - std of the requested fractions) * 100, hand-computed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from scheduler.config import ConfigError
from scheduler.framework import CycleState, PodInfo, PreScorePlugin, ScorePlugin
from scheduler.plugins.noderesources import balanced_allocation
from scheduler.plugins.noderesources.resource_allocation import ResourceSpec
from tests.builders import PLUGIN_ARGS_PATH, container, node, node_info, plugin_args, pod
from tests.unit.framework_fakes import Snapshot, fake_handle
from tests.unit.plugin_util import run_score

BIG = {"cpu": "4", "memory": "8Gi", "pods": "110", "example.com/gpu": "4"}
USED = {"cpu": "1", "memory": "2Gi"}
HALF_PLUS_OVERHEAD = pod(spec={"containers": [container({"cpu": "500m", "memory": "512Mi"})],
                              "overhead": {"cpu": "500m", "memory": "512Mi"}})
WITH_GPU = {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "example.com/gpu"}]}


def plugin(args: Mapping[str, Any] | None = None) -> Any:
    return balanced_allocation.new(plugin_args(balanced_allocation.NAME, args), fake_handle(Snapshot([])))


# Fractions include the pod and use the real requests: on a 4-CPU / 8Gi node running (1 CPU, 2Gi), a
# (1 CPU, 1Gi) pod makes cpu 0.5 and memory 0.375.
@pytest.mark.parametrize(
    ("args", "the_pod", "used", "expected"),
    [
        # std = |0.5 - 0.375| / 2 = 0.0625 -> 93.75 -> 93
        (None, pod(requests={"cpu": "1", "memory": "1Gi"}), USED, 93),
        # cpu capped at 1 (6/4): std = (1 - 0.375) / 2 = 0.3125 -> 68.75 -> 68
        (None, pod(requests={"cpu": "5", "memory": "1Gi"}), USED, 68),
        # The pod asks for cpu only: memory stays 2/8 = 0.25; std = (0.5 - 0.25) / 2 -> 87.5 -> 87
        (None, pod(requests={"cpu": "1"}), USED, 87),
        # Perfectly balanced: 0.5 and 0.5.
        (None, pod(requests={"cpu": "1", "memory": "2Gi"}), USED, 100),
        # Three resources: 0.5, 0.375 and gpu 2/4 = 0.5; mean 0.4583, std = sqrt(0.0104167 / 3) = 0.0589
        # -> 94.1 -> 94
        (
            WITH_GPU,
            pod(requests={"cpu": "1", "memory": "1Gi", "example.com/gpu": "1"}),
            {**USED, "example.com/gpu": "1"},
            94,
        ),
        # The pod requests no gpu: the gpu is left out, back to two fractions.
        (WITH_GPU, pod(requests={"cpu": "1", "memory": "1Gi"}), {**USED, "example.com/gpu": "1"}, 93),
        # Only one resource configured: std 0.
        ({"resources": [{"name": "cpu"}]}, pod(requests={"cpu": "3"}), USED, 100),
        # Pod overhead counts as requested: (500m, 512Mi) plus overhead (500m, 512Mi) is the first row's.
        (None, HALF_PLUS_OVERHEAD, USED, 93),
        # Overhead alone makes the fractions: cpu (1 + 1) / 4 = 0.5, memory (2Gi + 2Gi) / 8Gi = 0.5.
        (None, pod(spec={"containers": [container()], "overhead": {"cpu": "1", "memory": "2Gi"}}), USED, 100),
    ],
    ids=[
        "two-resources",
        "fraction-capped-at-one",
        "real-requests-not-defaults",
        "balanced",
        "three-resources",
        "extended-not-requested-left-out",
        "one-resource",
        "overhead-counts",
        "overhead-only",
    ],
)
def test_score(args: Any, the_pod: Any, used: dict[str, str], expected: int) -> None:
    p = plugin(args)
    assert isinstance(p, PreScorePlugin) and isinstance(p, ScorePlugin)
    assert p.score_extensions() is None
    info = node_info(node("node", allocatable=BIG), [pod(requests=used, name="existing", node_name="node")])
    assert run_score(p, the_pod, [info]) == [expected]


def test_a_best_effort_pod_is_not_scored() -> None:
    status = plugin().pre_score(CycleState(), PodInfo(pod()), [])
    assert status is not None and status.is_skip
    # Without PreScore (disabled in the profile) Score falls back, and still does not rank the nodes.
    assert plugin().score(CycleState(), PodInfo(pod()), node_info(node(allocatable=BIG))) == 0


def test_args() -> None:
    assert plugin_args(balanced_allocation.NAME, {}).resources == (
        ResourceSpec("cpu", 1),
        ResourceSpec("memory", 1),
    )
    args = plugin_args(
        balanced_allocation.NAME, {"resources": [{"name": "cpu", "weight": 0}, {"name": "example.com/gpu"}]}
    )
    assert args.resources == (ResourceSpec("cpu", 1), ResourceSpec("example.com/gpu", 1))


A = PLUGIN_ARGS_PATH


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"resources": [{"name": "cpu", "weight": 2}]},
            f"{A}.resources[0].weight: Invalid value: 2: must be 1",
        ),
        ({"resources": [{"name": "cpu"}, {"name": "cpu"}]}, f'{A}.resources[1].name: Duplicate value: "cpu"'),
        ({"resources": [{"name": "cpu", "colour": 1}]}, f'{A}.resources[0]: unknown field "colour"'),
        ({"shape": []}, f'{A}: unknown field "shape"'),
    ],
    ids=["weight-not-one", "duplicate", "unknown-resource-field", "unknown-field"],
)
def test_args_validation(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        plugin_args(balanced_allocation.NAME, data)
    assert message in str(info.value)
