"""The replay engine on small traces: arrival and departure order on the virtual clock, runs counted from
the bind, preemption, determinism and samples. Each replay runs the real in-process control plane (API
server, store and scheduler), as `podsched replay` does."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from cluster.simulate.replay import ReplayRun, replay
from cluster.simulate.trace import Trace, load_trace
from cluster.simulate.trace.devices import as_devices
from scheduler.config import load_config
from scheduler.framework.registry import Registry
from scheduler.plugins.registry import IN_TREE

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "replay"
NODES_HEADER = "name,cpu,memory\n"
PODS_HEADER = "name,arrival,duration,cpu,memory,priority\n"


def trace(tmp_path: Path, nodes: str, pods: str) -> Trace:
    (tmp_path / "nodes.csv").write_text(NODES_HEADER + nodes)
    (tmp_path / "pods.csv").write_text(PODS_HEADER + pods)
    return load_trace(str(tmp_path / "nodes.csv"), str(tmp_path / "pods.csv"))


async def run(t: Trace, *, seed: int = 0, sample_every: float | None = None,
              devices: Trace | None = None) -> ReplayRun:
    registry = Registry(IN_TREE)
    return await replay(t, load_config(None, registry=registry), registry, name="default", seed=seed,
                        sample_every=sample_every, devices=devices)


def outcome(result: ReplayRun) -> dict[str, tuple[float | None, str | None, float | None, bool]]:
    return {r.key.removeprefix("default/"): (r.bound_at, r.node, r.left_at, r.preempted)
            for r in result.records}


async def test_a_pod_runs_its_duration_from_its_bind_not_from_its_arrival(tmp_path: Path) -> None:
    result = await run(trace(tmp_path, "n1,1,1Gi\n", "a,0,100,1,100Mi,\nb,10,50,1,100Mi,\n"))
    # b waits for a's run to end at 100 and then runs its full 50 seconds.
    assert outcome(result) == {"a": (0.0, "n1", 100.0, False), "b": (100.0, "n1", 150.0, False)}
    assert [r.delay for r in result.records] == [0.0, 90.0]
    assert (result.completed, result.preempted, result.virtual_seconds) == (2, 0, 150.0)


async def test_a_run_that_ends_makes_room_for_an_arrival_at_the_same_instant(tmp_path: Path) -> None:
    result = await run(trace(tmp_path, "n1,1,1Gi\n", "a,0,100,1,100Mi,\nc,100,10,1,100Mi,\n"))
    assert outcome(result)["c"] == (100.0, "n1", 110.0, False)


async def test_arrivals_of_one_instant_are_placed_in_trace_order(tmp_path: Path) -> None:
    result = await run(trace(tmp_path, "n1,1,1Gi\n", "first,0,30,1,100Mi,\nsecond,0,30,1,100Mi,\n"))
    assert outcome(result) == {"first": (0.0, "n1", 30.0, False), "second": (30.0, "n1", 60.0, False)}


async def test_a_pod_without_a_duration_runs_to_the_end(tmp_path: Path) -> None:
    result = await run(trace(tmp_path, "n1,2,1Gi\n", "forever,0,,1,100Mi,\nbrief,5,10,1,100Mi,\n"))
    assert outcome(result) == {"forever": (0.0, "n1", None, False), "brief": (5.0, "n1", 15.0, False)}
    assert result.virtual_seconds == 15.0


async def test_a_preempted_pod_is_counted_and_its_run_ends_with_the_eviction(tmp_path: Path) -> None:
    result = await run(trace(tmp_path, "n1,1,1Gi\n", "low,0,1000,1,100Mi,1\nhigh,10,100,1,100Mi,1000\n"))
    low, high = result.records
    # The victim leaves at the end of its grace period (30 s by default), then the preemptor binds.
    assert (low.preempted, low.left_at) == (True, 40.0)
    assert (high.bound_at, high.node, high.left_at) == (40.0, "n1", 140.0)
    assert (result.preempted, result.completed) == (1, 1)


async def test_samples_show_the_cluster_between_events(tmp_path: Path) -> None:
    result = await run(trace(tmp_path, "n1,4,4Gi\n", "a,0,100,1,1Gi,\nb,50,100,2,1Gi,\n"), sample_every=25)
    got = [(s.t, s.cpu_allocation, s.memory_allocation, s.running, s.pending) for s in result.samples]
    assert got == [
        (0.0, 0.25, 0.25, 1, 0),
        (25.0, 0.25, 0.25, 1, 0),
        (50.0, 0.75, 0.5, 2, 0),
        (75.0, 0.75, 0.5, 2, 0),
        (100.0, 0.5, 0.25, 1, 0),
        (125.0, 0.5, 0.25, 1, 0),
        (150.0, 0.0, 0.0, 0, 0),
    ]


async def test_the_same_trace_and_seed_replay_alike(tmp_path: Path) -> None:
    t = load_trace(str(EXAMPLES / "openb-sample" / "nodes.csv"), str(EXAMPLES / "openb-sample" / "pods.csv"))
    first, again = await run(t, seed=3), await run(t, seed=3)
    assert [dataclasses.astuple(r) for r in first.records] == [dataclasses.astuple(r) for r in again.records]
    assert first.samples == again.samples
    assert all(r.node for r in first.records)


async def test_gpus_as_devices_place_and_measure_as_the_extended_resource_does(tmp_path: Path) -> None:
    # Whole GPUs only, two models, a pod that waits for GPUs and one restricted to a model: the default
    # profile scores neither the extended resource nor devices, so both mappings place alike.
    (tmp_path / "nodes.csv").write_text(
        "name,cpu,memory,gpu,labels\n"
        "a100-1,16,64Gi,4,nvidia.com/gpu.product=A100\n"
        "a100-2,16,64Gi,2,nvidia.com/gpu.product=A100\n"
        "t4-1,16,64Gi,2,nvidia.com/gpu.product=T4\n"
        "cpu-1,16,64Gi,0,\n")
    (tmp_path / "pods.csv").write_text(
        "name,arrival,duration,cpu,memory,gpu,node_selector\n"
        "big,0,300,2,4Gi,4,\n"
        "t4-only,0,200,1,2Gi,1,nvidia.com/gpu.product=T4\n"
        "pair,10,100,1,2Gi,2,\n"
        "pair-2,20,100,1,2Gi,2,\n"
        "waits,30,50,1,2Gi,4,nvidia.com/gpu.product=A100\n"
        "cpu,30,50,4,8Gi,0,\n"
        "one,40,60,1,1Gi,1,\n")
    t = load_trace(str(tmp_path / "nodes.csv"), str(tmp_path / "pods.csv"))
    extended = await run(t, sample_every=10)
    devices = await run(t, sample_every=10, devices=as_devices(t))
    assert outcome(devices) == outcome(extended)
    assert outcome(extended)["waits"][:2] == (300.0, "a100-1")
    assert devices.samples == extended.samples
    assert max(s.gpu_allocation for s in devices.samples) == 1.0
    assert any(0 < s.fragmented_gpus for s in devices.samples)


async def test_gpus_as_devices_share_a_gpu_the_extended_resource_gives_whole(tmp_path: Path) -> None:
    # Three pods asking half of one GPU each, on a node of two GPUs: as devices they all run from the
    # start, counted as one and a half GPUs; as the extended resource each takes a GPU and the third waits.
    (tmp_path / "nodes.csv").write_text("name,cpu,memory,gpu\ng1,8,32Gi,2\n")
    (tmp_path / "pods.csv").write_text("name,arrival,duration,cpu,gpu,gpu_milli\n"
                                       "a,0,100,1,1,500\nb,0,100,1,1,500\nc,0,100,1,1,500\n")
    t = load_trace(str(tmp_path / "nodes.csv"), str(tmp_path / "pods.csv"))
    extended = await run(t, sample_every=50)
    devices = await run(t, sample_every=50, devices=as_devices(t))
    assert [(name, bound_at) for name, (bound_at, *_) in outcome(extended).items()] == [
        ("a", 0.0), ("b", 0.0), ("c", 100.0)]
    assert [(name, bound_at) for name, (bound_at, *_) in outcome(devices).items()] == [
        ("a", 0.0), ("b", 0.0), ("c", 0.0)]
    assert (extended.samples[0].gpu_allocation, devices.samples[0].gpu_allocation) == (1.0, 0.75)
