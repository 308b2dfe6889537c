"""The synthetic openb-shaped trace: deterministic per seed, shaped like the real one, loadable at full
size, and the committed sample is what the generator writes for its documented arguments."""

from __future__ import annotations

import csv
import importlib.util
import io
from collections import Counter
from pathlib import Path

import pytest

from cluster.simulate.trace import load_trace
from cluster.simulate.trace.openb import NODE_COLUMNS, POD_COLUMNS
from cluster.simulate.trace.synthetic import DEFAULT_NODES, DEFAULT_PODS, generate_openb, peak_gpus

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "examples" / "replay" / "openb-sample"
SCRIPT = REPO / "examples" / "replay" / "generate_openb_trace.py"
#: The arguments docs/trace-format.md and the script's docstring give for the sample.
SAMPLE_ARGS = {"nodes": 40, "pods": 400, "seed": 1}


def table(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_the_same_seed_gives_the_same_trace_and_another_seed_another() -> None:
    first = generate_openb(60, 300, seed=7)
    assert generate_openb(60, 300, seed=7) == first
    other = generate_openb(60, 300, seed=8)
    assert other[0] != first[0] and other[1] != first[1]


def test_columns_are_openbs() -> None:
    nodes, pods = generate_openb(20, 50, seed=3)
    assert nodes.splitlines()[0] == ",".join(NODE_COLUMNS)
    assert pods.splitlines()[0] == ",".join(POD_COLUMNS)


def test_mix_looks_like_the_real_trace() -> None:
    nodes_text, pods_text = generate_openb(400, 3000, seed=5, gpu_spec_fraction=0.2)
    nodes, pods = table(nodes_text), table(pods_text)
    models = Counter(node["model"] for node in nodes)
    assert models.most_common(1)[0][0] == "G2"
    assert 0.12 <= models[""] / len(nodes) <= 0.28
    cpu_only = sum(pod["num_gpu"] == "0" for pod in pods) / len(pods)
    assert 0.10 <= cpu_only <= 0.20
    sharing = [pod for pod in pods if pod["num_gpu"] == "1" and int(pod["gpu_milli"]) < 1000]
    assert len(sharing) > len(pods) / 3
    assert {pod["num_gpu"] for pod in pods} == {"0", "1", "2", "4", "8"}
    gpu_pods = [pod for pod in pods if pod["num_gpu"] != "0"]
    with_spec = sum(bool(pod["gpu_spec"]) for pod in gpu_pods) / len(gpu_pods)
    assert 0.12 <= with_spec <= 0.28
    assert {pod["qos"] for pod in pods} == {"LS", "BE", "Burstable", "Guaranteed"}
    assert all(pod["scheduled_time"] == "" for pod in pods if pod["pod_phase"] == "Pending")


@pytest.mark.parametrize("load", [0.5, 1.0])
def test_the_gpus_asked_at_the_peak_are_load_times_the_cluster(tmp_path: Path, load: float) -> None:
    nodes, pods = generate_openb(100, 1000, seed=2, load=load)
    (tmp_path / "nodes.csv").write_text(nodes)
    (tmp_path / "pods.csv").write_text(pods)
    trace = load_trace(str(tmp_path / "nodes.csv"), str(tmp_path / "pods.csv"))
    capacity = sum(int(node.status.allocatable.get("nvidia.com/gpu", "0")) for node in trace.nodes)
    asked = [int(pod.pod.spec.containers[0].resources.requests.get("nvidia.com/gpu", "0"))
             for pod in trace.pods]
    runs = [int(pod.duration_s or 0) for pod in trace.pods]
    peak = peak_gpus([pod.arrival_s for pod in trace.pods], runs, asked)
    assert 0.9 * load * capacity <= peak <= 1.1 * load * capacity


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="at least one node"):
        generate_openb(0, 10)
    with pytest.raises(ValueError, match="gpu_spec_fraction"):
        generate_openb(10, 10, gpu_spec_fraction=1.5)


def test_the_full_size_trace_loads(tmp_path: Path) -> None:
    nodes, pods = generate_openb()
    (tmp_path / "nodes.csv").write_text(nodes)
    (tmp_path / "pods.csv").write_text(pods)
    trace = load_trace(str(tmp_path / "nodes.csv"), str(tmp_path / "pods.csv"))
    assert (len(trace.nodes), len(trace.pods)) == (DEFAULT_NODES, DEFAULT_PODS) == (1523, 8152)
    assert trace.format == "openb"
    assert trace.pods[0].arrival_s == 0.0


def test_the_committed_sample_is_what_the_generator_writes() -> None:
    nodes, pods = generate_openb(**SAMPLE_ARGS)
    assert (SAMPLE / "nodes.csv").read_text() == nodes
    assert (SAMPLE / "pods.csv").read_text() == pods
    assert f"--nodes {SAMPLE_ARGS['nodes']} --pods {SAMPLE_ARGS['pods']} --seed {SAMPLE_ARGS['seed']}" in (
        SCRIPT.read_text())


def test_the_script_writes_both_files(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("generate_openb_trace", SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.main(["--out", str(tmp_path / "out"), "--nodes", "5", "--pods", "20", "--seed", "4"]) == 0
    assert ((tmp_path / "out" / "nodes.csv").read_text(), (tmp_path / "out" / "pods.csv").read_text()) == (
        generate_openb(5, 20, seed=4))


def test_the_committed_sample_loads() -> None:
    trace = load_trace(str(SAMPLE / "nodes.csv"), str(SAMPLE / "pods.csv"))
    assert (len(trace.nodes), len(trace.pods)) == (SAMPLE_ARGS["nodes"], SAMPLE_ARGS["pods"])
