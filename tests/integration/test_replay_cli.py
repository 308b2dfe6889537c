"""`podsched replay` as a user runs it: a new process on the shipped samples, two configurations side by
side with the JSON and the plot, progress on stderr and the table alone on stdout, the same figures for the
same seed, and exit code 2 naming what is wrong for bad input."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.helpers import REPO, parse_table, run_cli

SAMPLE = REPO / "examples" / "replay" / "openb-sample"
NATIVE = REPO / "examples" / "replay" / "native"
MOST_ALLOCATED = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}, {name: nvidia.com/gpu, weight: 3}]
"""
#: Figures that measure the machine, not the policy: they differ from run to run.
WALL_FIGURES = ("wall_seconds", "pods_per_second", "scheduling_seconds", "api_seconds", "other_seconds")


def replay(*args: str) -> tuple[int, str, str]:
    done = run_cli("127.0.0.1:1", "replay", *args, timeout=300)
    return done.code, done.stdout, done.stderr


def policy_figures(document: dict) -> list[dict]:  # type: ignore[type-arg]
    return [{key: value for key, value in run["summary"].items() if key not in WALL_FIGURES}
            | {"pods": run["pods"], "samples": run["samples"]} for run in document["runs"]]


def test_two_configurations_side_by_side_with_json_and_plot(tmp_path: Path) -> None:
    packed = tmp_path / "most-allocated.yaml"
    packed.write_text(MOST_ALLOCATED)
    out, plot = tmp_path / "replay.json", tmp_path / "replay.png"
    code, stdout, stderr = replay("--nodes", str(SAMPLE / "nodes.csv"), "--pods", str(SAMPLE / "pods.csv"),
                                  "--config", str(REPO / "examples" / "replay" / "least-allocated.yaml"),
                                  "--config", str(packed), "--json", str(out), "--plot", str(plot))
    assert code == 0, stderr
    assert "replaying 400 pods on 40 nodes (openb) under 2 configuration(s)" in stderr
    assert "least-allocated: virtual" in stderr and "most-allocated: virtual" in stderr  # progress
    rows = {row["FIGURE"]: row for row in parse_table(stdout)}
    assert rows["pods placed"]["least-allocated"] == rows["pods placed"]["most-allocated"] == "400"
    for label in ("GPU allocation (mean)", "fragmented GPUs (mean)", "scheduling delay p99", "wall time",
                  "pods placed per second", "scheduling", "API server and store"):
        assert label in rows
    document = json.loads(out.read_text())
    assert [run["config"] for run in document["runs"]] == ["least-allocated", "most-allocated"]
    assert document["trace"]["format"] == "openb" and document["trace"]["pods"] == 400
    least, most = document["runs"]
    assert len(least["pods"]) == len(most["pods"]) == 400
    assert least["samples"]
    assert set(least["samples"][0]) >= {"t", "gpu_allocation", "pending", "fragmentation"}
    # Packing and spreading place differently.
    assert [p["node"] for p in least["pods"]] != [p["node"] for p in most["pods"]]
    assert plot.read_bytes().startswith(b"\x89PNG")


def test_the_same_trace_and_seed_give_the_same_figures(tmp_path: Path) -> None:
    documents = []
    for n in (1, 2):
        out = tmp_path / f"run{n}.json"
        code, _, stderr = replay("--nodes", str(NATIVE / "nodes.yaml"), "--pods", str(NATIVE / "pods.yaml"),
                                 "--seed", "7", "--json", str(out))
        assert code == 0, stderr
        documents.append(json.loads(out.read_text()))
    assert policy_figures(documents[0]) == policy_figures(documents[1])
    assert documents[0]["trace"]["format"] == "native-yaml"


def test_bad_trace_input_names_file_line_and_column_and_replays_nothing(tmp_path: Path) -> None:
    pods = tmp_path / "pods.csv"
    lines = (SAMPLE / "pods.csv").read_text().splitlines()
    fields = lines[3].split(",")
    fields[1] = "lots"  # cpu_milli
    lines[3] = ",".join(fields)
    pods.write_text("\n".join(lines) + "\n")
    code, stdout, stderr = replay("--nodes", str(SAMPLE / "nodes.csv"), "--pods", str(pods))
    assert code == 2 and stdout == ""
    assert f"error: {pods}:4:2: cpu_milli:" in stderr
    assert stderr.rstrip().endswith("error: nothing was replayed")


def test_bad_configuration_and_unwritable_outputs_are_refused_before_replaying(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "profiles: [{schedulerName: x, plugins: {score: {enabled: [{name: NoSuchPlugin}]}}}]\n")
    common = ("--nodes", str(SAMPLE / "nodes.csv"), "--pods", str(SAMPLE / "pods.csv"))
    code, stdout, stderr = replay(*common, "--config", str(broken))
    assert code == 2 and stdout == "" and "NoSuchPlugin" in stderr and str(broken) in stderr
    code, stdout, stderr = replay(*common, "--json", str(tmp_path / "missing" / "out.json"))
    assert code == 2 and stdout == "" and "cannot write --json" in stderr
    code, stdout, stderr = replay(*common, "--sample-every", "0")
    assert code == 2 and "--sample-every must be positive" in stderr


def test_numbers_past_what_a_replay_holds_exit_2_without_a_traceback(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.csv"
    nodes.write_text("name,cpu,memory\nn1," + "1" * 30 + ",16Gi\n")
    pods = tmp_path / "pods.csv"
    pods.write_text("name,arrival,cpu\np1,0,1\np2,1e308,1\n")
    code, stdout, stderr = replay("--nodes", str(nodes), "--pods", str(pods))
    assert code == 2 and stdout == ""
    assert f'error: {nodes}:2:2: cpu: Invalid value: "{"1" * 30}": must be at most 9223372036854775806m' \
        in stderr
    assert f'error: {pods}:3:2: arrival: Invalid value: "1e308": must be at most 100000000000 seconds' \
        in stderr
    assert "Traceback" not in stderr
    assert stderr.rstrip().endswith("error: nothing was replayed")


def test_gpus_as_devices_give_the_figures_of_the_extended_resource_and_refuse_what_they_cannot_hold(
        tmp_path: Path) -> None:
    nodes, pods = tmp_path / "nodes.csv", tmp_path / "pods.csv"
    nodes.write_text("name,cpu,memory,gpu,labels\na,8,32Gi,4,nvidia.com/gpu.product=A100\n"
                     "b,8,32Gi,2,nvidia.com/gpu.product=T4\n")
    pods.write_text("name,arrival,duration,cpu,gpu,node_selector\nbig,0,100,1,4,\n"
                    "t4,0,50,1,1,nvidia.com/gpu.product=T4\nwaits,10,20,1,3,nvidia.com/gpu.product=A100\n")
    documents = []
    for gpus in ("extended-resource", "devices"):
        out = tmp_path / f"{gpus}.json"
        code, _, stderr = replay("--nodes", str(nodes), "--pods", str(pods), "--gpus", gpus,
                                 "--json", str(out))
        assert code == 0, stderr
        documents.append(json.loads(out.read_text()))
    assert [document["trace"]["gpus"] for document in documents] == ["extended-resource", "devices"]
    assert policy_figures(documents[0]) == policy_figures(documents[1])
    assert [(p["name"], p["node"], p["bound_at"]) for p in documents[1]["runs"][0]["pods"]] == [
        ("default/big", "a", 0), ("default/t4", "b", 0), ("default/waits", "a", 100)]
    nodes.write_text("name,cpu,memory,gpu\nhuge,8,32Gi,200\n")
    code, stdout, stderr = replay("--nodes", str(nodes), "--pods", str(pods), "--gpus", "devices")
    assert code == 2 and stdout == ""
    assert "error: node huge: 200 GPUs: a node's devices are published in one ResourceSlice" in stderr
    assert stderr.rstrip().endswith("error: nothing was replayed")


def test_the_fgd_experiment_with_two_seeds_in_two_processes_averages_what_one_process_finds(
        tmp_path: Path) -> None:
    out, plot, single = tmp_path / "fill.json", tmp_path / "fill.png", tmp_path / "single.json"
    common = ("--nodes", str(SAMPLE / "nodes.csv"), "--pods", str(SAMPLE / "pods.csv"), "--fill", "1.3")
    code, stdout, stderr = replay(*common, "--seed", "42", "--seed", "43", "--jobs", "2", "--json", str(out),
                                  "--plot", str(plot))
    assert code == 0, stderr
    assert "default seed 42: 2" in stderr and "default seed 43: 2" in stderr  # the workers' progress
    rows = {row["FIGURE"]: row for row in parse_table(stdout)}
    for label in ("pods failed", "EightGpu", "GPU allocation at 100% arrived",
                  "fragmentation at 100% arrived"):
        assert label in rows
    document = json.loads(out.read_text())
    assert document["trace"] | {"seed": None} == document["trace"]
    assert (document["trace"]["fill"], document["trace"]["seeds"]) == (1.3, [42, 43])
    assert document["trace"]["gpus"] == "devices"  # the experiment shares GPUs: devices by default
    (run,) = document["runs"]
    assert [seed["seed"] for seed in run["seeds"]] == [42, 43] and run["summary"]["seeds"] == [42, 43]
    for summary in (*run["seeds"], run["summary"]):
        allocation = summary["gpu_allocation_at_arrived"]
        assert set(summary["failed_pods_by_kind"]) == {"PureCpu", "ShareGpu", "OneGpu", "TwoGpu", "FourGpu",
                                                       "EightGpu", "Others"}
        assert "100" in allocation and max(map(int, allocation)) <= 130
        values = [allocation[key] for key in sorted(allocation, key=int)]
        assert all(0 <= value <= 1 for value in values)
        if summary is not run["summary"]:
            # Pods never leave: a seed's allocation only grows (the average over seeds need not: a
            # percentage one seed lacks is the mean of the others).
            assert values == sorted(values)
        assert all(0 <= value <= 1 for value in summary["fragmentation_at_arrived"].values())
    assert run["summary"]["pods"] == sum(seed["pods"] for seed in run["seeds"]) / 2
    assert plot.read_bytes().startswith(b"\x89PNG")
    # A seed's run in this process finds what it found in a worker.
    code, _, stderr = replay(*common, "--seed", "43", "--json", str(single))
    assert code == 0, stderr
    alone = json.loads(single.read_text())["runs"][0]["seeds"][0]
    figures = [{key: value for key, value in summary.items() if not key.endswith("seconds")}
               for summary in (alone, run["seeds"][1])]
    assert figures[0] == figures[1]
