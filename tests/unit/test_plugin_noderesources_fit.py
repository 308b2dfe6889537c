"""NodeResourcesFit: the fit filter, the three scoring strategies with hand-computed scores, args
defaults and validation, and the queueing hints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from scheduler.config import ConfigError
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    DRAManager,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    PodInfo,
    PreFilterPlugin,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
)
from scheduler.plugins.noderesources import fit
from scheduler.plugins.noderesources.fit import broken_linear
from scheduler.plugins.noderesources.resource_allocation import ResourceSpec
from tests import builders
from tests.builders import PLUGIN_ARGS_PATH, container, node, node_info, plugin_args, pod
from tests.unit.framework_fakes import Snapshot, fake_handle, node_set
from tests.unit.plugin_util import run_score


def plugin(args: Mapping[str, Any] | None = None) -> Any:
    return fit.new(plugin_args(fit.NAME, args), fake_handle(Snapshot([])))


def with_init(requests: dict[str, str], *init: dict[str, str], overhead: dict[str, str] | None = None) -> Any:
    spec: dict[str, Any] = {
        "containers": [container(requests)],
        "initContainers": [{**container(r), "name": f"init{i}"} for i, r in enumerate(init)],
    }
    if overhead:
        spec["overhead"] = overhead
    return pod(spec=spec)


# A small node in kube's fit_test.go units: 10 milli-CPU, 20 bytes of memory, 32 pods, 5 example.com/foo,
# 20 hugepages-2Mi, 20 bytes of ephemeral storage.
SMALL = {
    "cpu": "10m",
    "memory": "20",
    "pods": "32",
    "example.com/foo": "5",
    "hugepages-2Mi": "20",
    "ephemeral-storage": "20",
}


def cm(cpu: int, memory: int, **other: str) -> dict[str, str]:
    return {"cpu": f"{cpu}m", "memory": str(memory), **other}


# fit_test.go's TestEnoughRequests cases (and a few more): (pod, what the node's pods request, args,
# reasons, code). A request larger than the whole node is unresolvable: evicting pods cannot help.
U = Code.UNSCHEDULABLE
X = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
ALL_SHORT = {**cm(11, 21), "ephemeral-storage": "21", "example.com/foo": "6", "example.com/bar": "1"}
ALL_REASONS = (
    "Insufficient cpu",
    "Insufficient memory",
    "Insufficient ephemeral-storage",
    "Insufficient example.com/bar",
    "Insufficient example.com/foo",
)


@pytest.mark.parametrize(
    ("the_pod", "used", "args", "reasons", "code"),
    [
        (pod(), cm(10, 20), None, (), None),
        (pod(requests=cm(1, 1)), cm(10, 20), None, ("Insufficient cpu", "Insufficient memory"), U),
        (with_init(cm(1, 1), cm(3, 1)), cm(8, 19), None, ("Insufficient cpu",), U),
        (with_init(cm(1, 1), cm(3, 1), cm(2, 1)), cm(8, 19), None, ("Insufficient cpu",), U),
        (with_init(cm(1, 1), cm(1, 3)), cm(9, 19), None, ("Insufficient memory",), U),
        (with_init(cm(1, 1), cm(1, 1), cm(1, 1)), cm(9, 19), None, (), None),
        (pod(requests=cm(1, 1)), cm(5, 5), None, (), None),
        (pod(requests=cm(2, 1)), cm(9, 5), None, ("Insufficient cpu",), U),
        (pod(requests=cm(1, 2)), cm(5, 19), None, ("Insufficient memory",), U),
        (pod(requests=cm(5, 1)), cm(5, 19), None, (), None),
        (pod(requests={"example.com/foo": "1"}), cm(0, 0), None, (), None),
        (
            pod(requests={"example.com/foo": "3"}),
            {"example.com/foo": "3"},
            None,
            ("Insufficient example.com/foo",),
            U,
        ),
        (pod(requests={"example.com/bar": "1"}), cm(0, 0), None, ("Insufficient example.com/bar",), X),
        (
            pod(requests={"example.com/bar": "1"}),
            cm(0, 0),
            {"ignoredResources": ["example.com/bar"]},
            (),
            None,
        ),
        (
            pod(requests={"example.com/bar": "1"}),
            cm(0, 0),
            {"ignoredResourceGroups": ["example.com"]},
            (),
            None,
        ),
        (
            pod(requests={"hugepages-2Mi": "30"}),
            cm(0, 0),
            {"ignoredResources": ["hugepages-2Mi"]},
            ("Insufficient hugepages-2Mi",),
            X,
        ),
        (with_init(cm(1, 1), overhead={"cpu": "4m"}), cm(5, 5), None, (), None),
        (with_init(cm(1, 1), overhead={"cpu": "5m"}), cm(5, 5), None, ("Insufficient cpu",), U),
        (
            pod(requests={"ephemeral-storage": "10"}),
            {"ephemeral-storage": "15"},
            None,
            ("Insufficient ephemeral-storage",),
            U,
        ),
        (pod(requests=ALL_SHORT), cm(0, 0), None, ALL_REASONS, X),
        (pod(requests=cm(6, 0)), cm(5, 0), None, ("Insufficient cpu",), U),
        (pod(requests=cm(11, 0)), cm(5, 0), None, ("Insufficient cpu",), X),
    ],
    ids=[
        "no-requests-always-fits",
        "too-many-resources",
        "init-container-cpu",
        "highest-init-container-cpu",
        "init-container-memory",
        "init-containers-take-the-max-not-the-sum",
        "both-fit",
        "cpu-short",
        "memory-short",
        "exactly-fills",
        "extended-fits",
        "extended-short",
        "extended-unknown-to-the-node",
        "ignored-resource",
        "ignored-resource-group",
        "hugepages-are-native-not-ignorable",
        "overhead-fits",
        "overhead-counts",
        "ephemeral-storage-short",
        "every-shortfall-listed",
        "preemption-could-help",
        "larger-than-the-whole-node",
    ],
)
def test_filter(
    the_pod: Any, used: dict[str, str], args: Any, reasons: tuple[str, ...], code: Code | None
) -> None:
    p = plugin(args)
    assert isinstance(p, PreFilterPlugin) and isinstance(p, FilterPlugin)
    info = node_info(node("node", allocatable=SMALL), [pod(requests=used, name="existing", node_name="node")])
    state = CycleState()
    pod_info = PodInfo(the_pod)
    assert p.pre_filter(state, pod_info, [info]) == (None, None)
    status = p.filter(state, pod_info, info)
    if code is None:
        assert status is None
    else:
        assert status is not None and status.code is code
        assert status.reasons == reasons


def test_too_many_pods_comes_first_and_with_the_rest() -> None:
    p = plugin()
    info = node_info(
        node("node", allocatable={**SMALL, "pods": "1"}), [pod(name="existing", node_name="node")]
    )
    state = CycleState()
    pod_info = PodInfo(pod(requests=cm(11, 1)))
    p.pre_filter(state, pod_info, [info])
    status = p.filter(state, pod_info, info)
    assert status is not None and status.reasons == ("Too many pods", "Insufficient cpu")
    # Even a pod that requests nothing needs a pod slot.
    empty = PodInfo(pod())
    p.pre_filter(state, empty, [info])
    status = p.filter(state, empty, info)
    assert status is not None and status.reasons == ("Too many pods",)


def test_filter_without_pre_filter_is_an_error() -> None:
    status = plugin().filter(CycleState(), PodInfo(pod()), node_info(node(allocatable=SMALL)))
    assert status is not None and status.is_error


# ------------------------------------------------------------------------------------------ scores

BIG = {"cpu": "4", "memory": "8Gi", "pods": "110", "example.com/gpu": "4"}


def scores(args: Any, the_pod: Any, *nodes_used: tuple[dict[str, str], dict[str, str] | None]) -> list[int]:
    """Score ``the_pod`` on nodes given as (allocatable, requests of the one pod already there)."""
    infos = []
    for i, (allocatable, used) in enumerate(nodes_used):
        existing = [] if used is None else [pod(requests=used, name=f"existing{i}", node_name=f"node{i}")]
        infos.append(node_info(node(f"node{i}", allocatable=allocatable), existing))
    p = plugin(args)
    assert isinstance(p, PreScorePlugin) and isinstance(p, ScorePlugin)
    return run_score(p, the_pod, infos)


USED = {"cpu": "1", "memory": "2Gi"}
POD = pod(requests={"cpu": "1", "memory": "1Gi"})
GPU = {"example.com/gpu": "1"}
HALF_PLUS_OVERHEAD = with_init({"cpu": "500m", "memory": "512Mi"},
                               overhead={"cpu": "500m", "memory": "512Mi"})


def strategy(
    kind: str, resources: list[dict[str, Any]] | None = None, shape: list[tuple[int, int]] | None = None
) -> Any:
    out: dict[str, Any] = {"type": kind}
    if resources is not None:
        out["resources"] = resources
    if shape is not None:
        out["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": s} for u, s in shape]}
    return {"scoringStrategy": out}


# Hand-computed. With the pod, a 4-CPU / 8Gi node running (1 CPU, 2Gi) has cpu 2000/4000 requested and
# memory 3Gi/8Gi.
#   LeastAllocated: cpu (4000-2000)*100/4000 = 50, memory (8-3)*100/8 = 62 (62.5 truncated).
#   MostAllocated:  cpu 2000*100/4000 = 50, memory 3*100/8 = 37.
@pytest.mark.parametrize(
    ("args", "the_pod", "used", "allocatable", "expected"),
    [
        (None, POD, USED, BIG, 56),  # (50 + 62) / 2
        (strategy("LeastAllocated", [{"name": "cpu", "weight": 3}, {"name": "memory"}]), POD, USED, BIG, 53),
        (None, pod(cpu="5", memory="1Gi"), USED, BIG, 31),  # cpu over-committed: (0 + 62) / 2
        # No requests anywhere: 100m and 200Mi each count (non-zero defaults): cpu 3800*100/4000 = 95,
        # memory (8192-400)*100/8192 = 95.
        (None, pod(), {}, BIG, 95),
        # gpu weight 2: 2 of 4 requested -> 50; (50 + 62 + 2*50) / 4 = 53.
        (
            strategy(
                "LeastAllocated",
                [{"name": "cpu"}, {"name": "memory"}, {"name": "example.com/gpu", "weight": 2}],
            ),
            pod(requests={"cpu": "1", "memory": "1Gi", **GPU}),
            {**USED, **GPU},
            BIG,
            53,
        ),
        # The pod requests no gpu: the gpu is left out of the average.
        (
            strategy(
                "LeastAllocated",
                [{"name": "cpu"}, {"name": "memory"}, {"name": "example.com/gpu", "weight": 2}],
            ),
            POD,
            {**USED, **GPU},
            BIG,
            56,
        ),
        # The node has no gpu: left out too.
        (
            strategy(
                "LeastAllocated",
                [{"name": "cpu"}, {"name": "memory"}, {"name": "example.com/gpu", "weight": 2}],
            ),
            pod(requests={"cpu": "1", "memory": "1Gi", **GPU}),
            USED,
            {"cpu": "4", "memory": "8Gi", "pods": "110"},
            56,
        ),
        (strategy("MostAllocated"), POD, USED, BIG, 43),  # (50 + 37) / 2
        (
            strategy("MostAllocated"),
            pod(requests={"cpu": "5", "memory": "1Gi"}),
            USED,
            BIG,
            68,
        ),  # (100 + 37) / 2
        (strategy("MostAllocated", [{"name": "cpu"}, {"name": "memory", "weight": 3}]), POD, USED, BIG, 40),
        # Shape (0,0)-(100,10), scaled to (0,0)-(100,100): cpu util 50 -> 50, memory util 37 -> 37;
        # (50 + 37) / 2 = 43.5, rounded half up to 44.
        (strategy("RequestedToCapacityRatio", shape=[(0, 0), (100, 10)]), POD, USED, BIG, 44),
        # Shape (0,10)-(60,5) -> (0,100)-(60,50): f(50) = 100 + trunc(-50*50/60) = 59,
        # f(37) = 100 + trunc(-50*37/60) = 70; (59 + 70) / 2 = 64.5 -> 65.
        (strategy("RequestedToCapacityRatio", shape=[(0, 10), (60, 5)]), POD, USED, BIG, 65),
        # Memory utilization 0 on a 1Ti node scores 0 and is left out: cpu 2000/4000 -> 50 alone.
        (
            strategy("RequestedToCapacityRatio", shape=[(0, 0), (100, 10)]),
            pod(requests={"cpu": "2"}),
            None,
            {"cpu": "4", "memory": "1Ti", "pods": "110"},
            50,
        ),
        # Over capacity scores f(100): flat after the last point (50 with shape (0,0)-(50,5));
        # memory f(37) = 37: (50 + 37) / 2 -> 44.
        (
            strategy("RequestedToCapacityRatio", shape=[(0, 0), (50, 5)]),
            pod(requests={"cpu": "5", "memory": "1Gi"}),
            USED,
            BIG,
            44,
        ),
        # Pod overhead counts as requested, in every strategy: containers (500m, 512Mi) plus overhead
        # (500m, 512Mi) score as POD does (kube's resource helpers add spec.overhead to the requests).
        (None, HALF_PLUS_OVERHEAD, USED, BIG, 56),
        (strategy("MostAllocated"), HALF_PLUS_OVERHEAD, USED, BIG, 43),
        (strategy("RequestedToCapacityRatio", shape=[(0, 0), (100, 10)]), HALF_PLUS_OVERHEAD, USED, BIG, 44),
        # Overhead adds to the non-zero defaults: the pod's 100m + 100m and 200Mi + 200Mi, with the
        # existing pod's defaults: cpu (4000-300)*100/4000 = 92, memory (8192-600)*100/8192 = 92.
        (None, with_init({}, overhead={"cpu": "100m", "memory": "200Mi"}), {}, BIG, 92),
    ],
    ids=[
        "least-allocated",
        "least-allocated-weighted",
        "least-allocated-over-committed",
        "least-allocated-non-zero-defaults",
        "least-allocated-extended-resource",
        "least-allocated-extended-not-requested",
        "least-allocated-extended-not-on-node",
        "most-allocated",
        "most-allocated-over-committed",
        "most-allocated-weighted",
        "ratio-increasing",
        "ratio-decreasing-truncates",
        "ratio-zero-score-left-out",
        "ratio-over-capacity",
        "least-allocated-overhead",
        "most-allocated-overhead",
        "ratio-overhead",
        "least-allocated-non-zero-defaults-plus-overhead",
    ],
)
def test_score(
    args: Any, the_pod: Any, used: dict[str, str] | None, allocatable: dict[str, str], expected: int
) -> None:
    assert scores(args, the_pod, (allocatable, used)) == [expected]


def test_scores_have_no_normalization_and_rank_emptier_nodes_higher() -> None:
    assert plugin().score_extensions() is None
    got = scores(None, POD, (BIG, USED), (BIG, None), (BIG, {"cpu": "3", "memory": "6Gi"}))
    # Empty node: cpu 1000/4000 -> 75, memory 1/8 -> 87: 81. Nearly full: cpu 4000/4000 -> 0,
    # memory 7/8 -> 12: 6.
    assert got == [56, 81, 6]


@pytest.mark.parametrize(
    ("shape", "points"),
    [
        ([(0, 0), (100, 100)], {0: 0, 50: 50, 100: 100}),
        ([(10, 20), (50, 60)], {0: 20, 10: 20, 30: 40, 50: 60, 90: 60}),
        ([(0, 100), (30, 0)], {10: 67, 20: 34, 40: 0}),
    ],
    ids=["identity", "flat-outside", "decreasing-truncates-toward-zero"],
)
def test_broken_linear(shape: list[tuple[int, int]], points: dict[int, int]) -> None:
    f = broken_linear(shape)
    assert {p: f(p) for p in points} == points


# -------------------------------------------------------------------------------------------- args


def test_args_defaults() -> None:
    args = plugin_args(fit.NAME, {})
    assert args.scoring_strategy.type == "LeastAllocated"
    assert args.scoring_strategy.resources == (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
    assert args.scoring_strategy.shape is None
    assert args.ignored_resources == () and args.ignored_resource_groups == ()
    most = plugin_args(fit.NAME, {"scoringStrategy": {"type": "MostAllocated"}})
    assert most.scoring_strategy.resources == (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
    weights = plugin_args(
        fit.NAME, strategy("LeastAllocated", [{"name": "cpu"}, {"name": "memory", "weight": 0}])
    )
    assert weights.scoring_strategy.resources == (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
    ratio = plugin_args(fit.NAME, strategy("RequestedToCapacityRatio", shape=[(0, 10), (100, 0)]))
    assert [(p.utilization, p.score) for p in ratio.scoring_strategy.shape or ()] == [(0, 10), (100, 0)]
    typed = plugin_args(
        fit.NAME, {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeResourcesFitArgs"}
    )
    assert typed == args


S = f"{PLUGIN_ARGS_PATH}.scoringStrategy"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            strategy("Foo"),
            f'{S}.type: Unsupported value: "Foo": supported values: "LeastAllocated", "MostAllocated", '
            '"RequestedToCapacityRatio"',
        ),
        ({"scoringStrategy": {}}, f'{S}.type: Unsupported value: ""'),
        (
            strategy("LeastAllocated", [{"name": "cpu", "weight": 101}]),
            f"{S}.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range "
            "(0, 100]",
        ),
        (
            strategy("MostAllocated", [{"name": "memory", "weight": -1}]),
            f"{S}.resources[0].weight: Invalid value: -1: resource weight of memory not in valid range "
            "(0, 100]",
        ),
        (
            strategy("RequestedToCapacityRatio"),
            f"{S}.requestedToCapacityRatio: Required value: must be specified when type is "
            "RequestedToCapacityRatio",
        ),
        (
            strategy("RequestedToCapacityRatio", shape=[]),
            f"{S}.requestedToCapacityRatio.shape: Required value: at least one point must be specified",
        ),
        (
            strategy("RequestedToCapacityRatio", shape=[(50, 1), (10, 2)]),
            f"{S}.requestedToCapacityRatio.shape[1].utilization: Invalid value: 10: values must be sorted in "
            "increasing order",
        ),
        (
            strategy("RequestedToCapacityRatio", shape=[(0, 1), (101, 2)]),
            f"{S}.requestedToCapacityRatio.shape[1].utilization: Invalid value: 101: not in valid "
            "range [0, 100]",
        ),
        (
            strategy("RequestedToCapacityRatio", shape=[(0, 11)]),
            f"{S}.requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in valid range [0, 10]",
        ),
        (
            strategy("LeastAllocated", shape=[(0, 1)]),
            f"{S}.requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio",
        ),
        (
            {"ignoredResources": ["example.com/"]},
            f'{PLUGIN_ARGS_PATH}.ignoredResources[0]: Invalid value: "example.com/"',
        ),
        (
            {"ignoredResourceGroups": ["example.com/foo"]},
            f'{PLUGIN_ARGS_PATH}.ignoredResourceGroups[0]: Invalid value: "example.com/foo": resource '
            "group name can't contain '/'",
        ),
        ({"ignoredResources": "example.com/foo"}, f"{PLUGIN_ARGS_PATH}.ignoredResources: Invalid value"),
        ({"scoringStrategy": {"type": "MostAllocated", "shape": []}}, f'{S}: unknown field "shape"'),
        (
            {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": "high"}]}},
            "must be an integer",
        ),
        (
            {"scoringStrategy": {"type": "MostAllocated", "resources": [{"weight": 1}]}},
            f"{S}.resources[0].name: Required value",
        ),
        ({"ignoredResource": []}, f'{PLUGIN_ARGS_PATH}: unknown field "ignoredResource"'),
    ],
    ids=[
        "unknown-type",
        "missing-type",
        "weight-too-large",
        "weight-negative",
        "ratio-without-shape",
        "ratio-empty-shape",
        "shape-unsorted",
        "shape-utilization-range",
        "shape-score-range",
        "shape-for-another-strategy",
        "bad-ignored-resource",
        "ignored-group-with-slash",
        "ignored-resources-not-a-list",
        "unknown-strategy-field",
        "weight-not-an-integer",
        "resource-without-name",
        "unknown-field",
    ],
)
def test_args_validation(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        plugin_args(fit.NAME, data)
    assert message in str(info.value)


def test_args_report_every_problem() -> None:
    with pytest.raises(ConfigError) as info:
        plugin_args(
            fit.NAME, {"ignoredResourceGroups": ["a/b"], **strategy("Foo", [{"name": "cpu", "weight": 500}])}
        )
    message = str(info.value)
    assert "ignoredResourceGroups[0]" in message and ".type:" in message and ".resources[0].weight" in message


# ------------------------------------------------------------------------------------------- events


def hints() -> dict[tuple[EventResource, ActionType], Any]:
    p = plugin()
    assert isinstance(p, EnqueueExtensions)
    events = p.events_to_register()
    found: dict[tuple[EventResource, ActionType], Any] = {}
    for event in (
        ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
        ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN),
        ClusterEvent(EventResource.NODE, ActionType.ADD),
        ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_ALLOCATABLE),
    ):
        (registered,) = [e for e in events if event.matches(e.event)]
        assert registered.hint is not None
        found[(event.resource, event.action)] = registered.hint
    return found


WAITING = pod(requests={"cpu": "2"}, name="waiting", uid="uid-waiting")


@pytest.mark.parametrize(
    ("deleted", "expected"),
    [
        (pod(requests={"cpu": "1"}, name="gone", node_name="n"), QueueingHint.QUEUE),
        (pod(requests={"cpu": "1"}, name="gone"), QueueingHint.SKIP),
    ],
    ids=["assigned-pod-deleted", "unassigned-pod-deleted"],
)
def test_pod_delete_hint(deleted: Any, expected: QueueingHint) -> None:
    assert hints()[(EventResource.ASSIGNED_POD, ActionType.DELETE)](WAITING, deleted, None) is expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (WAITING, pod(requests={"cpu": "1"}, name="waiting", uid="uid-waiting"), QueueingHint.QUEUE),
        (pod("other", cpu="2"), pod("other", cpu="1"), QueueingHint.SKIP),
        (
            pod(requests={"cpu": "2"}, name="other", node_name="n"),
            pod(requests={"cpu": "1"}, name="other", node_name="n"),
            QueueingHint.QUEUE,
        ),
        (
            pod(requests={"cpu": "1", "memory": "2Gi"}, name="other", node_name="n"),
            pod(requests={"cpu": "1", "memory": "1Gi"}, name="other", node_name="n"),
            QueueingHint.SKIP,
        ),
    ],
    ids=[
        "the-pod-itself",
        "unassigned-pod",
        "assigned-pod-frees-cpu",
        "frees-only-what-the-pod-does-not-need",
    ],
)
def test_pod_scale_down_hint(old: Any, new: Any, expected: QueueingHint) -> None:
    assert (
        hints()[(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN)](WAITING, old, new) is expected
    )


def sized(cpu: str, memory: str = "1Gi", pods: str = "110") -> Any:
    return node("n", allocatable={"cpu": cpu, "memory": memory, "pods": pods})


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (None, sized("4"), QueueingHint.QUEUE),
        (None, sized("1"), QueueingHint.SKIP),
        (None, sized("4", pods="0"), QueueingHint.SKIP),
        (sized("3"), sized("4"), QueueingHint.QUEUE),
        (sized("4", "1Gi"), sized("4", "2Gi"), QueueingHint.SKIP),
        (sized("4", pods="10"), sized("4", pods="20"), QueueingHint.QUEUE),
        (sized("1"), sized("1500m"), QueueingHint.SKIP),
    ],
    ids=[
        "big-enough-node-added",
        "too-small-node-added",
        "node-without-pod-slots-added",
        "more-cpu",
        "more-of-what-the-pod-does-not-need",
        "more-pod-slots",
        "grew-but-still-too-small",
    ],
)
def test_node_change_hint(old: Any, new: Any, expected: QueueingHint) -> None:
    assert hints()[(EventResource.NODE, ActionType.UPDATE_NODE_ALLOCATABLE)](WAITING, old, new) is expected


def _dra_plugin() -> Any:
    """Fit with DeviceClass "gpu-class" serving example.com/gpu (and its implicit name)."""
    manager = DRAManager()
    served = builders.device_class("gpu-class")
    served.spec.extended_resource_name = "example.com/gpu"
    manager.device_classes.set(served)
    return fit.new(plugin_args(fit.NAME, None), fake_handle(Snapshot([]), dra_manager=manager))


# fit_test.go's extended resources backed by DRA: a resource a DeviceClass serves is not Fit's to check
# on a node that has none of it in its allocatable (DynamicResources allocates devices there); on a node
# that advertises it, it is checked as any extended resource.
@pytest.mark.parametrize(
    ("requests", "allocatable", "used", "reasons", "code"),
    [
        ({"example.com/gpu": "1"}, {}, {}, (), None),
        ({"example.com/gpu": "1"}, {"example.com/gpu": "0"}, {}, (), None),
        ({"deviceclass.resource.kubernetes.io/gpu-class": "2"}, {}, {}, (), None),
        ({"example.com/gpu": "1"}, {"example.com/gpu": "1"}, {"example.com/gpu": "1"},
         ("Insufficient example.com/gpu",), U),
        ({"example.com/gpu": "2"}, {"example.com/gpu": "1"}, {}, ("Insufficient example.com/gpu",), X),
        ({"example.com/gpu": "1", "example.com/bar": "1"}, {}, {}, ("Insufficient example.com/bar",), X),
        ({"example.com/gpu": "1", **cm(11, 0)}, {}, {}, ("Insufficient cpu",), X),
    ],
    ids=[
        "served-by-a-class-and-not-allocatable",
        "served-by-a-class-and-zero-allocatable",
        "implicit-class-name",
        "allocatable-and-used-up",
        "allocatable-and-too-little",
        "a-resource-no-class-serves-still-checked",
        "other-resources-still-checked",
    ],
)
def test_filter_extended_resources_backed_by_dra(
    requests: dict[str, str], allocatable: dict[str, str], used: dict[str, str], reasons: tuple[str, ...],
    code: Code | None,
) -> None:
    p = _dra_plugin()
    info = node_info(node("node", allocatable={**cm(10, 20), "pods": "32", **allocatable}),
                     [pod(requests=used, name="existing", node_name="node")])
    the_pod = PodInfo(pod(requests=requests))
    state = CycleState()
    assert p.pre_filter(state, the_pod, [info]) == (None, None)
    # The node by itself and in a batch (the resource columns) agree.
    for status in (p.filter(state, the_pod, info), p.filter_nodes(state, the_pod, node_set([info]))[0]):
        if code is None:
            assert status is None
        else:
            assert status is not None and status.code is code
            assert status.reasons == reasons


def test_without_device_classes_extended_resources_are_checked() -> None:
    p = plugin()
    info = node_info(node("node", allocatable={**cm(10, 20), "pods": "32"}))
    state, the_pod = CycleState(), PodInfo(pod(requests={"example.com/gpu": "1"}))
    p.pre_filter(state, the_pod, [info])
    status = p.filter(state, the_pod, info)
    assert status is not None and status.reasons == ("Insufficient example.com/gpu",)


def _gpu_class(name: str = "gpu-class", extended: str | None = "example.com/gpu") -> Any:
    device_class = builders.device_class(name)
    if extended is not None:
        device_class.spec.extended_resource_name = extended
    return device_class


GPU_WAITING = pod(requests={"example.com/gpu": "1"}, name="waiting", uid="uid-waiting")
IMPLICIT_WAITING = pod(requests={"deviceclass.resource.kubernetes.io/gpu-class": "1"}, name="waiting",
                       uid="uid-waiting")


# fit_test.go's isSchedulableAfterDeviceClassEvent cases.
@pytest.mark.parametrize(
    ("waiting", "old", "new", "expected"),
    [
        (GPU_WAITING, None, _gpu_class(), QueueingHint.QUEUE),
        (GPU_WAITING, None, _gpu_class(extended="example.com/other"), QueueingHint.SKIP),
        (GPU_WAITING, None, _gpu_class(extended=None), QueueingHint.SKIP),
        (IMPLICIT_WAITING, None, _gpu_class(extended=None), QueueingHint.QUEUE),
        (IMPLICIT_WAITING, None, _gpu_class("other-class", extended=None), QueueingHint.SKIP),
        (GPU_WAITING, _gpu_class(extended=None), _gpu_class(), QueueingHint.QUEUE),
        (GPU_WAITING, _gpu_class(), _gpu_class(), QueueingHint.SKIP),
        (IMPLICIT_WAITING, _gpu_class(extended=None), _gpu_class(extended=None), QueueingHint.SKIP),
    ],
    ids=["added-serving-the-resource", "added-serving-another", "added-without-a-name",
         "added-with-the-implicit-name", "another-class-added", "updated-to-serve-the-resource",
         "updated-with-the-same-name", "implicit-name-unchanged-by-an-update"],
)
def test_device_class_hint(waiting: Any, old: Any, new: Any, expected: QueueingHint) -> None:
    p = plugin()
    (registered,) = [e for e in p.events_to_register()
                     if ClusterEvent(EventResource.DEVICE_CLASS, ActionType.ADD).matches(e.event)]
    assert registered.hint(waiting, old, new) is expected


def test_a_node_without_a_resource_a_class_serves_may_fit() -> None:
    """A node change leaves the resource a class serves to DynamicResources when the node lacks it."""
    p = _dra_plugin()
    (registered,) = [e for e in p.events_to_register()
                     if ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_ALLOCATABLE).matches(e.event)]
    assert registered.hint(GPU_WAITING, None, sized("4")) is QueueingHint.QUEUE
    assert registered.hint(GPU_WAITING, sized("4", "1Gi"), sized("4", "2Gi")) is QueueingHint.QUEUE
    assert plugin().events_to_register()[2].hint(GPU_WAITING, None, sized("4")) is QueueingHint.SKIP
