"""schedule_pod through kube-scheduler's default profile built from the real in-tree plugins: the config,
the registry, the framework and the algorithm fit together and fail the way kube-scheduler words it."""

from __future__ import annotations

import asyncio
import random

import pytest

from scheduler.algorithm import ScheduleFitError, ScheduleResult, schedule_pod
from scheduler.config import in_tree_registry, load_config
from scheduler.framework import CycleState, NodeInfo, PodInfo
from scheduler.framework.runtime import Framework, build_framework
from tests.builders import ROOMY, node, pod
from tests.unit.framework_fakes import Snapshot, fake_handle


def make_node(name: str, cpu: str, *, gpu_taint: bool = False) -> NodeInfo:
    taints = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}] if gpu_taint else []
    return NodeInfo(node(name, labels={"kubernetes.io/hostname": name}, allocatable={**ROOMY, "cpu": cpu},
                         taints=taints))


def make_pod(name: str, cpu: str) -> PodInfo:
    return PodInfo(pod(name, cpu=cpu))


def default_framework(snapshot: Snapshot) -> Framework:
    config = load_config(None)
    handle = fake_handle(snapshot)
    return build_framework(config.profiles[0], in_tree_registry(), handle)


def attempt(snapshot: Snapshot, pod: PodInfo) -> ScheduleResult:
    return asyncio.run(schedule_pod(
        default_framework(snapshot),
        CycleState(),
        pod,
        snapshot,
        percentage_of_nodes_to_score=None,
        rng=random.Random(0),
        start_index=0,
    ))


def test_the_default_profile_explains_a_failure_like_kube_scheduler() -> None:
    snapshot = Snapshot(
        [
            make_node("gpu-1", "16", gpu_taint=True),
            make_node("small-1", "1"),
            make_node("small-2", "1"),
            make_node("gpu-2", "16", gpu_taint=True),
            make_node("small-3", "1"),
        ]
    )
    with pytest.raises(ScheduleFitError) as caught:
        attempt(snapshot, make_pod("web", "2"))
    assert caught.value.message() == (
        "0/5 nodes are available: 2 node(s) had untolerated taint {dedicated: gpu}, 3 Insufficient cpu."
    )
    assert caught.value.diagnosis.unschedulable_plugins == {"TaintToleration", "NodeResourcesFit"}
    groups = {(g.plugin, g.reason): g.count for g in caught.value.explanation.value.filtered}
    assert groups == {
        ("TaintToleration", "node(s) had untolerated taint {dedicated: gpu}"): 2,
        ("NodeResourcesFit", "Insufficient cpu"): 3,
    }


def test_the_default_profile_prefers_the_least_allocated_node() -> None:
    snapshot = Snapshot(
        [make_node("small", "2"), make_node("big", "16"), make_node("gpu", "32", gpu_taint=True)]
    )
    result = attempt(snapshot, make_pod("web", "1"))
    assert (result.suggested_host, result.feasible_nodes) == ("big", 2)
