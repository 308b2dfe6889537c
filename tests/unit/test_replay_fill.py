"""The FGD experiment's workload (``podsched replay --fill``): the artifact's shuffle and tuning to a ratio of
the cluster's GPU milli, the pods' kinds, and the command's bad flags."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.cli.main import main
from cluster.simulate.replay.fill import (
    ALL_NODES,
    GPU_NODES,
    SHUFFLED,
    TRACE_ORDER,
    GpuAsk,
    cluster_gpu_milli,
    fill,
    gpu_ask,
    kept_nodes,
    pod_kind,
    tie_order,
)
from cluster.simulate.trace import Trace, load_trace
from scheduler.gpus.fragmentation import PodKind

NODES = "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,8,V100\nn1,64000,262144,2,T4\nc0,32000,65536,0,\n"
POD_HEADER = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
              "deletion_time,scheduled_time\n")


def trace(tmp_path: Path, rows: list[tuple[str, int, int, int, str]]) -> Trace:
    """A trace of the 10 GPUs of NODES and pods (name, cpu milli, GPUs, milli per GPU, models), each created
    at its row's number."""
    (tmp_path / "nodes.csv").write_text(NODES)
    lines = [f"{name},{cpu},1024,{gpus},{milli},{models},LS,Running,{100 + n},{200 + n},"
             for n, (name, cpu, gpus, milli, models) in enumerate(rows)]
    (tmp_path / "pods.csv").write_text(POD_HEADER + "\n".join(lines) + "\n")
    return load_trace(str(tmp_path / "nodes.csv"), str(tmp_path / "pods.csv"))


def total(result: Trace) -> int:
    return sum(gpu_ask(entry.pod).total for entry in result.pods)


def names(result: Trace) -> list[str]:
    return [entry.pod.metadata.name for entry in result.pods]


def one_gpu_pods(count: int) -> list[tuple[str, int, int, int, str]]:
    return [(f"p{n:02d}", 1000, 1, 1000 if n % 2 else 500, "") for n in range(count)]


def test_the_cluster_s_gpu_milli_and_what_a_pod_asks() -> None:
    assert [GpuAsk(count, milli).kind for count, milli in ((0, 0), (1, 300), (1, 1000), (2, 1000), (3, 1000),
                                                            (4, 1000), (8, 1000))] == [
        "PureCpu", "ShareGpu", "OneGpu", "TwoGpu", "Others", "FourGpu", "EightGpu"]
    assert GpuAsk(4, 1000).total == 4000 and GpuAsk(1, 250).total == 250


def test_kinds_read_the_share_and_the_accepted_models(tmp_path: Path) -> None:
    loaded = trace(tmp_path, [("a", 4000, 1, 250, "V100|T4"), ("b", 0, 2, 1000, ""), ("c", 8000, 0, 0, "")])
    assert cluster_gpu_milli(loaded.nodes) == 10_000
    assert [pod_kind(entry.pod) for entry in loaded.pods] == [
        PodKind(4000, 250, 1, frozenset({"V100", "T4"})),
        PodKind(100, 1000, 2, None),  # no CPU request counts as kube-scheduler's non-zero default
        PodKind(8000, 0, 0, None)]


def test_too_little_work_is_topped_up_with_named_copies_of_the_trace_s_pods(tmp_path: Path) -> None:
    loaded = trace(tmp_path, one_gpu_pods(6))  # 4500 milli of 10000
    result = fill(loaded, 1.3, seed=42)
    original = names(result)[:6]
    assert sorted(original) == sorted(names(loaded))
    copies = names(result)[6:]
    assert copies and [name.split("-tuned-")[1] for name in copies] == [str(i) for i in range(len(copies))]
    assert all(name.split("-tuned-")[0] in original for name in copies)
    # Only one-GPU pods: the last copy stopped at the first draw that would pass 13000.
    assert 13_000 - 1000 < total(result) <= 13_000
    assert [entry.arrival_s for entry in result.pods] == [float(i) for i in range(len(result.pods))]
    assert all(entry.duration_s is None for entry in result.pods)


def test_a_copy_of_several_gpus_is_weighed_by_its_milli_per_gpu_as_the_artifact_does(tmp_path: Path) -> None:
    loaded = trace(tmp_path, [("eight", 1000, 8, 1000, "")])
    result = fill(loaded, 1.0, seed=1)
    # 8000 + 1000 <= 10000: one copy, 16000 in all, past the target by 6 GPUs.
    assert names(result) == ["eight", "eight-tuned-0"] and total(result) == 16_000


def test_too_much_work_loses_pods_drawn_at_random_until_it_fits(tmp_path: Path) -> None:
    loaded = trace(tmp_path, one_gpu_pods(30))  # 22500 milli
    result = fill(loaded, 1.0, seed=42)
    assert set(names(result)) < set(names(loaded))
    assert 10_000 - 1000 < total(result) <= 10_000


def test_the_work_already_at_the_ratio_is_only_reordered(tmp_path: Path) -> None:
    loaded = trace(tmp_path, [(f"p{n}", 1000, 1, 1000, "") for n in range(10)])
    result = fill(loaded, 1.0, seed=3)
    assert sorted(names(result)) == names(loaded) and names(result) != names(loaded)


def test_a_seed_decides_the_order_and_the_draws_and_decides_them_alike_every_time(tmp_path: Path) -> None:
    loaded = trace(tmp_path, one_gpu_pods(12))
    assert names(fill(loaded, 1.3, seed=42)) == names(fill(loaded, 1.3, seed=42))
    assert names(fill(loaded, 1.3, seed=42)) != names(fill(loaded, 1.3, seed=43))
    # The trace's order keeps the originals as they came; the copies are still drawn.
    in_order = fill(loaded, 1.3, seed=42, order=TRACE_ORDER)
    assert names(in_order)[:12] == names(loaded)
    assert names(fill(loaded, 1.3, seed=42, order=SHUFFLED))[:12] != names(loaded)


def test_the_cluster_is_the_nodes_with_gpus_unless_all_are_asked_for(tmp_path: Path) -> None:
    loaded = trace(tmp_path, one_gpu_pods(4))
    with_gpus = [node.metadata.name for node in loaded.nodes if cluster_gpu_milli([node])]
    assert 0 < len(with_gpus) < len(loaded.nodes)  # the table's NODES has a node without GPUs
    assert [node.metadata.name for node in kept_nodes(loaded.nodes, GPU_NODES)] == with_gpus
    assert kept_nodes(loaded.nodes, ALL_NODES) == list(loaded.nodes)
    assert [node.metadata.name for node in fill(loaded, 1.3, seed=42).nodes] == with_gpus
    assert fill(loaded, 1.3, seed=42, nodes=ALL_NODES).nodes == list(loaded.nodes)
    with pytest.raises(ValueError, match="the nodes must be one of gpu, all"):
        fill(loaded, 1.3, seed=42, nodes="cpu")


def test_ties_go_by_a_seeded_order_of_every_node(tmp_path: Path) -> None:
    loaded = trace(tmp_path, one_gpu_pods(12))
    order = tie_order(loaded.nodes, 42)
    assert sorted(order) == sorted(node.metadata.name for node in loaded.nodes)
    assert sorted(order.values()) == list(range(len(loaded.nodes)))
    assert tie_order(list(reversed(loaded.nodes)), 42) == order
    assert any(tie_order(loaded.nodes, seed) != order for seed in range(43, 53))


def test_a_trace_without_gpus_or_a_ratio_not_above_0_cannot_be_filled(tmp_path: Path) -> None:
    loaded = trace(tmp_path, one_gpu_pods(2))
    with pytest.raises(ValueError, match="must be positive"):
        fill(loaded, 0, seed=1)
    cpu_only = trace(tmp_path, [("c", 1000, 0, 0, "")])
    with pytest.raises(ValueError, match="ask no GPU"):
        fill(cpu_only, 1.0, seed=1)
    without_gpus = Trace([node for node in loaded.nodes if node.metadata.name == "c0"], loaded.pods, [],
                         loaded.format)
    with pytest.raises(ValueError, match="have no GPU"):
        fill(without_gpus, 1.0, seed=1)


@pytest.mark.parametrize(("flags", "message"), [
    (["--fill", "0"], "--fill must be positive, got 0"),
    (["--fill", "-1.3"], "--fill must be positive, got -1.3"),
    (["--fill", "1.3", "--jobs", "0"], "--jobs must be at least 1, got 0"),
    (["--jobs", "2"], "--jobs needs --fill"),
    (["--fill-order", "trace"], "--fill-order needs --fill"),
    (["--fill-nodes", "all"], "--fill-nodes needs --fill"),
    (["--seed", "1", "--seed", "2"], "several --seed needs --fill"),
    (["--fill", "1.3", "--seed", "1", "--seed", "1"], "--seed repeats a seed: 1, 1"),
    (["--fill", "1.3", "--sample-every", "60"], "--sample-every has no meaning with --fill"),
])
def test_bad_fill_flags_exit_2_naming_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               flags: list[str], message: str) -> None:
    loaded_files = trace(tmp_path, one_gpu_pods(2))
    assert loaded_files.pods
    code = main(["replay", "--nodes", str(tmp_path / "nodes.csv"), "--pods", str(tmp_path / "pods.csv"),
                 *flags])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert message in captured.err


def test_filling_a_trace_without_gpu_pods_exits_2_naming_the_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace(tmp_path, [("c", 1000, 0, 0, "")])
    code = main(["replay", "--nodes", str(tmp_path / "nodes.csv"), "--pods", str(tmp_path / "pods.csv"),
                 "--fill", "1.3"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    files = f"{tmp_path / 'nodes.csv'}, {tmp_path / 'pods.csv'}"
    assert f"--fill: {files}: the trace's pods ask no GPU" in captured.err
