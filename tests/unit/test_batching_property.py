"""Opportunistic batching decides exactly as the unbatched cycle: on generated clusters and sequences of
pods (many signed alike, some unbatchable), with placements, node changes, added nodes, deleted pods and
nominations in between, the batched and the unbatched scheduler choose the same node, explain it with
the same per-plugin scores, and fail with the same fit errors."""

from __future__ import annotations

import asyncio
import json
import random
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster.api import objects_pb2
from cluster.cli.common import EXIT_USAGE
from cluster.cli.main import main
from scheduler.algorithm import ScheduleFitError, ScheduleResult, SchedulingError, schedule_pod
from scheduler.cache import Cache, Snapshot
from scheduler.clock import SystemClock
from scheduler.config import in_tree_registry, load_config
from scheduler.config.feature_gates import apply_feature_gates
from scheduler.framework import CycleState, PodInfo
from scheduler.framework.runtime import Framework, build_framework
from tests.builders import container, pod
from tests.builders import node as make_node
from tests.unit.framework_fakes import Nominator, fake_handle
from tests.unit.test_filter_batch_property import POD_IMAGES, random_node, random_pod


class World:
    """A cache, its snapshot and a default-profile framework over them, batching or not."""

    def __init__(self, nodes: list[objects_pb2.Node], placed: list[objects_pb2.Pod], nominator: Nominator,
                 *, batching: bool) -> None:
        self.cache = Cache(clock=SystemClock())
        for node in nodes:
            self.cache.add_node(node)
        for placed_pod in placed:
            self.cache.add_pod(placed_pod)
        self.snapshot = Snapshot()
        handle = fake_handle(self.snapshot, nominator=nominator)
        self.framework: Framework = build_framework(load_config(None).profiles[0], in_tree_registry(), handle,
                                                    batching=batching)
        self.start = 0

    def attempt(self, incoming: objects_pb2.Pod, *, percentage: int, seed: int) -> Any:
        """The attempt's outcome (its result, or what its failure carries); a chosen node gets the pod."""
        self.cache.update_snapshot(self.snapshot)
        pod_info = PodInfo(incoming)
        try:
            result = asyncio.run(schedule_pod(self.framework, CycleState(), pod_info, self.snapshot,
                                              percentage_of_nodes_to_score=percentage,
                                              rng=random.Random(seed), start_index=self.start))
        except ScheduleFitError as err:
            self.start = err.next_start_index
            return (err.message(), err.next_start_index, err.diagnosis, err.explanation.to_json())
        except SchedulingError as err:
            self.start = err.next_start_index
            return (err.status, err.next_start_index)
        assert isinstance(result, ScheduleResult)
        self.start = result.next_start_index
        placed = objects_pb2.Pod()
        placed.CopyFrom(incoming)
        placed.spec.node_name = result.suggested_host
        self.cache.assume_pod(PodInfo(placed))
        return (result, result.explanation.to_json())


def plain_pod(rng: random.Random, name: str) -> objects_pb2.Pod:
    """A pod as SchedulingBasic makes them: requests and an image only (few shapes, so that signatures
    repeat, and pods that differ by their image alone)."""
    requests = {"cpu": rng.choice(["100m", "900m"]), "memory": rng.choice(["100Mi", "500Mi"])}
    return pod(name, spec={"containers": [container(requests, image=rng.choice(POD_IMAGES))]})


def renamed(template: objects_pb2.Pod, name: str) -> objects_pb2.Pod:
    copy = objects_pb2.Pod()
    copy.CopyFrom(template)
    copy.metadata.name = name
    copy.spec.node_name = ""
    return copy


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), node_count=st.sampled_from([12, 130]),
       percentage=st.sampled_from([0, 1, 30, 100]), steps=st.integers(10, 40))
def test_batched_and_unbatched_scheduling_decide_alike(seed: int, node_count: int, percentage: int,
                                                       steps: int) -> None:
    rng = random.Random(seed)
    nodes = [random_node(rng, i) for i in range(node_count)]
    placed = [random_pod(rng, f"placed-{j}", node_name=f"n{rng.randrange(node_count)}")
              for j in range(node_count // 2)]
    nominator = Nominator({f"n{rng.randrange(node_count)}": [PodInfo(random_pod(rng, f"nominated-{k}"))]
                           for k in range(2)})
    worlds = [World(nodes, placed, nominator, batching=True), World(nodes, placed, nominator, batching=False)]
    templates = [plain_pod(rng, f"plain-{i}") for i in range(5)]
    templates += [random_pod(rng, f"t-{i}") for i in range(3)]
    added = 0
    for step in range(steps):
        incoming = renamed(rng.choice(templates), f"incoming-{step}")
        outcomes = [world.attempt(incoming, percentage=percentage, seed=step) for world in worlds]
        assert outcomes[0] == outcomes[1], f"step {step}: {incoming.metadata.name}"
        event = rng.random()
        if event < 0.15:  # a node changes (labels, taints, cordon): its NodeInfo gets a new generation
            changed = random_node(rng, rng.randrange(node_count + added))
            for world in worlds:
                world.cache.update_node(changed, changed)
        elif event < 0.2:  # a node joins: the node list is laid out again
            new_node = random_node(rng, node_count + added)
            added += 1
            for world in worlds:
                world.cache.add_node(new_node)
        elif event < 0.3 and placed:  # a pod goes
            gone = placed.pop(rng.randrange(len(placed)))
            for world in worlds:
                world.cache.remove_pod(gone)
    assert worlds[1].framework.batch_attempts == {"unsignable": steps}


def test_pods_signed_alike_reuse_the_verdicts_and_scores_of_unchanged_nodes() -> None:
    rng = random.Random(7)
    nodes = [random_node(rng, i) for i in range(150)]
    world = World(nodes, [], Nominator(), batching=True)
    template = plain_pod(rng, "template")
    for step in range(3):
        world.attempt(renamed(template, f"p{step}"), percentage=100, seed=step)
    framework = world.framework
    assert framework.batch_attempts == {"new_signature": 1, "hit": 2}
    signature = framework.sign(PodInfo(template))
    assert signature is not None
    memo = framework.batch_memos.peek(signature)
    assert memo is not None
    # The first pod filtered every node; each later one only the node the pod before it went to.
    assert memo.evaluated == 150 + 1 + 1
    assert memo.reused == 2 * 149


def test_pods_with_pod_affinity_or_spread_constraints_are_not_batched() -> None:
    rng = random.Random(3)
    world = World([random_node(rng, i) for i in range(20)], [], Nominator(), batching=True)
    term = {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "kubernetes.io/hostname"}
    anti = pod("anti", labels={"app": "a"}, spec={"containers": [container({"cpu": "100m"})], "affinity": {
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}})
    spread = pod("spread", labels={"app": "a"}, spec={"containers": [container({"cpu": "100m"})],
                 "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                                "whenUnsatisfiable": "DoNotSchedule",
                                                "labelSelector": {"matchLabels": {"app": "a"}}}]})
    assert world.framework.sign(PodInfo(anti)) is None
    assert world.framework.sign(PodInfo(spread)) is None
    plain = plain_pod(rng, "plain")
    assert world.framework.sign(PodInfo(plain)) is not None
    # A placed pod with (anti-)affinity terms may refuse or attract any pod: nobody signs while it runs.
    world.attempt(anti, percentage=100, seed=0)
    world.cache.update_snapshot(world.snapshot)
    assert world.framework.sign(PodInfo(plain)) is None


def test_a_profile_with_batching_off_signs_nobody() -> None:
    rng = random.Random(5)
    world = World([random_node(rng, i) for i in range(5)], [], Nominator(), batching=False)
    assert world.framework.sign(PodInfo(plain_pod(rng, "plain"))) is None


@pytest.mark.parametrize(("text", "problem"), [
    ("SchedulerOpportunisticBatching", "is not NAME=true|false"),
    ("NoSuchGate=true", "unknown feature gate 'NoSuchGate'"),
    ("SchedulerOpportunisticBatching=maybe", "must be true or false, got 'maybe'"),
])
def test_bad_feature_gates_are_refused_and_change_nothing(text: str, problem: str) -> None:
    config = load_config(None)
    with pytest.raises(ValueError, match=re.escape(problem)):
        apply_feature_gates(config, f"SchedulerOpportunisticBatching=false,{text}")
    assert config.opportunistic_batching


def test_the_feature_gate_turns_batching_off() -> None:
    config = load_config(None)
    apply_feature_gates(config, "SchedulerOpportunisticBatching=false")
    assert not config.opportunistic_batching
    apply_feature_gates(config, " SchedulerOpportunisticBatching = TRUE ")
    assert config.opportunistic_batching


@pytest.mark.parametrize("command", [["scheduler"], ["simulate", "-f", "no-such-scenario.yaml"]])
def test_the_commands_refuse_an_unknown_feature_gate(command: list[str],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*command, "--feature-gates", "NoSuchGate=true"]) == EXIT_USAGE
    assert "unknown feature gate 'NoSuchGate'" in capsys.readouterr().err


def test_pods_that_differ_by_their_images_alone_are_scored_for_their_own_images() -> None:
    """ImageLocality signs the pod's images: a pod whose image only one node has is not given the raw
    scores an earlier pod with the same requests but another image left in the memo."""
    big = [(["registry.example/big:latest"], 2000 * 2**20)]
    nodes = [make_node(f"n{i}", allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"},
                  images=big if i == 3 else []) for i in range(6)]
    worlds = [World(nodes, [], Nominator(), batching=True), World(nodes, [], Nominator(), batching=False)]
    small = pod("small", spec={"containers": [container({"cpu": "100m"}, image="busybox:1.36")]})
    large = pod("large", spec={"containers": [container({"cpu": "100m"}, image="registry.example/big")]})
    for incoming in (small, large):
        outcomes = [world.attempt(incoming, percentage=100, seed=1) for world in worlds]
        assert outcomes[0] == outcomes[1]
    result, explanation = outcomes[0]
    assert result.suggested_host == "n3"
    # 2000Mi on one node of six counts 333Mi: 100 * (333Mi - 23Mi) / (1000Mi - 23Mi).
    (chosen,) = [entry for entry in json.loads(explanation)["top"] if entry["node"] == "n3"]
    assert chosen["scores"]["ImageLocality"] == 31
    assert worlds[0].framework.batch_attempts == {"new_signature": 2}
