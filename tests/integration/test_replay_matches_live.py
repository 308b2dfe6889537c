"""The replay decides as the live scheduler does: a small trace replayed on the virtual clock
(cluster/simulate/replay/) and the same events played in real time against a real `podsched apiserver`
and a real `podsched scheduler --seed S` put every pod on the same node, on each backend.

The live side plays the events in the replay's order (driver.py): at each instant the runs that end are
ended first (deleted with grace 0, by end instant, then bind order), then the pods waiting for room that
now fit are bound, then the instant's arrivals are created in trace order (all have priority 0, so that
is PrioritySort's order too), each waited for until it is bound or found unschedulable before the next
is created. The scheduler's pods informer is one watch, so it hears of a deletion before the creation
that follows it: no settling time is needed. A pod's run ends its duration after the instant at which
it was bound.

Determinism needs the same nodes in the same order on both sides (the scheduling cycle visits the node
tree round robin, and ties between equally good nodes are drawn in that order from the seeded random
source): the live nodes are created before the scheduler starts, so its informer lists them by name;
the trace's node names sort in trace order, which is the order the replay creates them in.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import heapq
import itertools
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster.api import errors, kinds, objects_pb2
from cluster.client import Client, Informer
from cluster.launcher.process import ApiServerProcess
from cluster.simulate.outcome import unschedulable_message
from cluster.simulate.replay import PodRecord, replay
from cluster.simulate.trace import Trace, TracePod
from scheduler.config import SchedulerConfiguration, load_config, parse_config
from scheduler.framework.registry import Registry
from scheduler.plugins.registry import IN_TREE
from tests import builders
from tests.integration.test_scheduler import running_scheduler

SEED = 20240601
NAMESPACE = "trace"
#: How long the live scheduler may take to bind one pod, or to find it unschedulable.
DECISION_TIMEOUT_S = 20.0

MOST_ALLOCATED: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{
        "schedulerName": "default-scheduler",
        "pluginConfig": [{"name": "NodeResourcesFit",
                          "args": {"scoringStrategy": {"type": "MostAllocated"}}}],
    }],
}
#: Short backoffs, so that the live scheduler retries a pod that waited for room soon after the room
#: is made (the replay retries it at once either way: its instants are further apart than that).
SHORT_BACKOFF: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 1,
}

GPU_TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
GPU_TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}


# --------------------------------------------------------------------------------------------- traces


def trace_node(name: str, cpu: str, memory: str, zone: str, disk: str,
               taints: tuple[Mapping[str, str], ...] = (), **labels: str) -> objects_pb2.Node:
    return builders.node(
        name, allocatable={"cpu": cpu, "memory": memory, "pods": "110"}, ready="True", taints=taints,
        labels={"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone, "disktype": disk,
                **labels},
    )


def trace_pod(name: str, cpu: str, memory: str, arrival_s: float, duration_s: float,
              spec: Mapping[str, Any] | None = None) -> TracePod:
    pod = builders.pod(name, NAMESPACE, cpu=cpu, memory=memory, image=builders.IMAGE, spec=spec)
    return TracePod(pod, arrival_s, duration_s, where=f"pod {name}")


def mixed_trace() -> Trace:
    """Eight nodes (pairs alike but for their zone, so that equally good nodes tie; one tainted for GPU
    pods) and 40 pods arriving every 2 s (some two at an instant), each running 6 to 30 s: pods leave
    while others arrive, and every pod fits when it arrives."""
    nodes = [
        trace_node("n0-small-a", "2", "4Gi", "zone-a", "ssd"),
        trace_node("n1-small-b", "2", "4Gi", "zone-b", "ssd"),
        trace_node("n2-medium-a", "4", "8Gi", "zone-a", "hdd"),
        trace_node("n3-medium-b", "4", "8Gi", "zone-b", "hdd"),
        trace_node("n4-medium-c", "4", "8Gi", "zone-c", "hdd"),
        trace_node("n5-large-c", "8", "16Gi", "zone-c", "ssd"),
        trace_node("n6-large-a", "8", "16Gi", "zone-a", "ssd"),
        trace_node("n7-gpu-b", "8", "32Gi", "zone-b", "ssd", (GPU_TAINT,), accelerator="gpu"),
    ]
    shapes: list[Mapping[str, Any] | None] = [
        None,
        None,
        {"nodeSelector": {"disktype": "ssd"}},
        {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{
                "key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a", "zone-b"],
            }]}]}}}},
        {"nodeSelector": {"accelerator": "gpu"}, "tolerations": [GPU_TOLERATION]},
        {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 50, "preference": {"matchExpressions": [
                {"key": "disktype", "operator": "In", "values": ["hdd"]}]}}]}}},
        {"tolerations": [GPU_TOLERATION]},
    ]
    requests = [("250m", "256Mi"), ("500m", "512Mi"), ("1", "1Gi"), ("500m", "2Gi"), ("1500m", "1Gi")]
    draw = random.Random(7)  # a fixed trace, not a random one: the same 40 pods every run
    pods = []
    arrival = 0
    for index in range(40):
        cpu, memory = draw.choice(requests)
        pods.append(trace_pod(f"p{index:02d}", cpu, memory, arrival, 2 * draw.randint(3, 15),
                              draw.choice(shapes)))
        if index % 5 != 2:  # every fifth pod arrives with the next one
            arrival += 2
    return Trace(nodes=nodes, pods=pods, objects=[], format="test")


def waiting_trace() -> Trace:
    """Two nodes alike, filled by "a" and "b" (1500m of 2 CPU each); "w" (1 CPU) cannot fit until "a"'s
    run ends at 10 s, then goes where "a" was, and runs 8 s from then; the small pods around it tie."""
    nodes = [trace_node("n0-a", "2", "4Gi", "zone-a", "ssd"), trace_node("n1-b", "2", "4Gi", "zone-b", "ssd")]
    # The live scheduler's attempts at a waiting pod depend on its real-time backoff, so their number may
    # differ from the replay's; a failed attempt must leave nothing that later cycles depend on.
    # Preemption's dry run would draw a random offset each time: a pod that never preempts makes no draw.
    # And every attempt visits every node (fewer than 100 nodes, no PreFilter narrowing them), so the
    # round-robin start where the next cycle begins does not move.
    never = objects_pb2.PriorityClass(metadata=objects_pb2.ObjectMeta(name="never-preempt"), value=0,
                                      preemption_policy="Never")
    pods = [
        trace_pod("a", "1500m", "1Gi", 0, 10),
        trace_pod("b", "1500m", "1Gi", 0, 20),
        trace_pod("w", "1", "1Gi", 2, 8, {"priorityClassName": never.metadata.name}),
        trace_pod("c", "250m", "256Mi", 4, 30),
        trace_pod("d", "250m", "256Mi", 10, 30),
        trace_pod("e", "250m", "256Mi", 12, 4),
        trace_pod("f", "250m", "256Mi", 18, 4),
        trace_pod("g", "250m", "256Mi", 22, 4),
        trace_pod("h", "250m", "256Mi", 22, 4),
    ]
    return Trace(nodes=nodes, pods=pods, objects=[never], format="test")


def key_of(entry: TracePod) -> str:
    return f"{entry.pod.metadata.namespace}/{entry.pod.metadata.name}"


# ----------------------------------------------------------------------------------------------- live


@dataclass(frozen=True, slots=True)
class Placement:
    node: str | None
    bound_at: float | None


class LivePods:
    """The trace's pods as the API server has them (an informer), with waits on what becomes of them."""

    def __init__(self, client: Client) -> None:
        self.informer: Informer[objects_pb2.Pod] = Informer(client, kinds.POD, namespace=NAMESPACE)
        self._changed = asyncio.Event()
        self.informer.add_handler(on_add=self._note, on_update=lambda _old, _new: self._note(),
                                  on_delete=self._note)

    def _note(self, *_: object) -> None:
        self._changed.set()

    def node_of(self, key: str) -> str:
        pod = self.informer.get(key)
        return pod.spec.node_name if pod is not None else ""

    def decided(self, key: str) -> bool:
        """Bound, or tried and found unschedulable."""
        pod = self.informer.get(key)
        return pod is not None and (bool(pod.spec.node_name) or unschedulable_message(pod) is not None)

    def gone(self, key: str) -> bool:
        return self.informer.get(key) is None

    async def until(self, done: Callable[[], object]) -> bool:
        """Wait until ``done()`` holds, at most DECISION_TIMEOUT_S; whether it does."""
        deadline = time.monotonic() + DECISION_TIMEOUT_S
        while not done():
            self._changed.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)
        return True


async def play_live(client: Client, trace: Trace, replayed: Mapping[str, PodRecord]) -> dict[str, Placement]:
    """Play ``trace``'s events against the live scheduler in the replay's order; where each pod went and
    at which instant of the trace it was bound. A pod that waited is expected bound at the instant the
    replay bound it (the live side cannot know otherwise when to stop waiting for it); if it is not, its
    placement says so and the comparison fails."""
    live = LivePods(client)
    watching = asyncio.create_task(live.informer.run())
    try:
        await live.informer.wait_synced()
        arrivals = {instant: list(group) for instant, group in
                    itertools.groupby(trace.pods, key=lambda entry: entry.arrival_s)}
        durations = {key_of(entry): entry.duration_s for entry in trace.pods}
        placements: dict[str, Placement] = {}
        pending: list[str] = []
        departures: list[tuple[float, int, str]] = []
        binds = itertools.count()

        def note_binds(instant: float) -> None:
            """The pending pods bound by now were bound at ``instant``: their runs end from there."""
            for key in [key for key in pending if live.node_of(key)]:
                placements[key] = Placement(live.node_of(key), instant)
                pending.remove(key)
                duration = durations[key]
                if duration is not None:
                    heapq.heappush(departures, (instant + duration, next(binds), key))

        while arrivals or departures:
            instant = min([*arrivals, departures[0][0]] if departures else arrivals)
            while departures and departures[0][0] <= instant:
                _, _, key = heapq.heappop(departures)
                namespace, _, name = key.partition("/")
                with contextlib.suppress(errors.NotFound):
                    await client.delete(kinds.POD, name, namespace, grace_period_seconds=0)
                assert await live.until(functools.partial(live.gone, key)), f"{key} was not deleted"
            for key in [key for key in pending if replayed[key].bound_at == instant]:
                # Not bound in time: it stays pending, and the comparison shows where and when it went.
                await live.until(functools.partial(live.node_of, key))
                note_binds(instant)
            for entry in arrivals.pop(instant, []):
                key = key_of(entry)
                await client.create(entry.pod)
                pending.append(key)
                assert await live.until(functools.partial(live.decided, key)), \
                    f"the live scheduler neither bound {key} nor found it unschedulable"
                note_binds(instant)
        for key in pending:
            placements[key] = Placement(None, None)
        return placements
    finally:
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)


# ---------------------------------------------------------------------------------------------- tests


def replayed_config(data: Mapping[str, Any] | None, registry: Registry) -> SchedulerConfiguration:
    return load_config(None, registry=registry) if data is None else parse_config(data, registry=registry)


async def replay_and_play_live(
    server: ApiServerProcess, tmp_path: Path, trace: Trace, config: Mapping[str, Any] | None
) -> tuple[dict[str, PodRecord], dict[str, Placement]]:
    """The trace replayed under ``config`` (None: the defaults) with ``SEED``, and played live through
    ``server`` (on an empty store) against a scheduler process with the same seed and configuration."""
    names = [node.metadata.name for node in trace.nodes]
    assert names == sorted(names), "the live scheduler lists the nodes by name: keep that the trace's order"
    registry = Registry(IN_TREE)
    run = await replay(trace, replayed_config(config, registry), registry, name="replay", seed=SEED)
    replayed = {record.key: record for record in run.records}
    assert list(replayed) == [key_of(entry) for entry in trace.pods]
    args = ["--seed", str(SEED)]
    if config is not None:
        path = tmp_path / "scheduler.yaml"
        path.write_text(yaml.safe_dump(dict(config)))
        args += ["--config", str(path)]
    async with Client(server.address, timeout_s=30.0) as client:
        for obj in [*trace.objects, *trace.nodes]:
            await client.create(obj)
        with running_scheduler(server.address, *args):
            placements = await play_live(client, trace, replayed)
    return replayed, placements


def assert_same_decisions(replayed: Mapping[str, PodRecord], placements: Mapping[str, Placement]) -> None:
    """Every pod on the same node, bound at the same instant of the trace; else a table of all of them."""
    rows = [_row("", "pod", "replay", "bound", "live", "bound")]
    differ = 0
    for key, record in replayed.items():
        live = placements[key]
        same = (record.node, record.bound_at) == (live.node, live.bound_at)
        differ += not same
        rows.append(_row("" if same else "!=", key, record.node or "-", _at(record.bound_at),
                         live.node or "-", _at(live.bound_at)))
    assert not differ, f"{differ} of {len(replayed)} pods placed differently:\n" + "\n".join(rows)


def _row(mark: str, key: str, replay_node: str, replay_at: str, live_node: str, live_at: str) -> str:
    return f"{mark:<2} {key:<12} {replay_node:<14} {replay_at:>6}   {live_node:<14} {live_at:>6}"


def _at(instant: float | None) -> str:
    return "-" if instant is None else f"{instant:g}s"


@pytest.mark.parametrize("config", [None, MOST_ALLOCATED], ids=["default", "most-allocated"])
async def test_every_pod_lands_where_the_replay_put_it(
    fresh_apiserver: ApiServerProcess, tmp_path: Path, config: Mapping[str, Any] | None
) -> None:
    trace = mixed_trace()
    replayed, placements = await replay_and_play_live(fresh_apiserver, tmp_path, trace, config)
    # No pod waited in the replay, so that neither side's timing can matter...
    assert all(record.bound_at == record.arrived_at for record in replayed.values())
    # ...and the trace has ties between equally good nodes, which the seed decides.
    registry = Registry(IN_TREE)
    reseeded = await replay(trace, replayed_config(config, registry), registry, name="other", seed=SEED + 1)
    assert [record.node for record in reseeded.records] != [record.node for record in replayed.values()]
    assert_same_decisions(replayed, placements)


async def test_a_pod_that_waits_for_room_lands_where_the_replay_put_it(
    fresh_apiserver: ApiServerProcess, tmp_path: Path
) -> None:
    trace = waiting_trace()
    replayed, placements = await replay_and_play_live(fresh_apiserver, tmp_path, trace, SHORT_BACKOFF)
    waiting = replayed[f"{NAMESPACE}/w"]
    assert (waiting.arrived_at, waiting.bound_at) == (2, 10)  # it waited for "a"'s run to end
    assert waiting.node == replayed[f"{NAMESPACE}/a"].node
    assert_same_decisions(replayed, placements)
