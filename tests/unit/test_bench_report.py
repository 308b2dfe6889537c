"""`podsched bench`'s output (JSON shape, table, plot) and its refusals of bad input (no cluster started)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import pytest

from cluster.bench import measure
from cluster.bench.report import RunInfo, as_json, cpu_budget_ms, format_table, write_json, write_plot
from cluster.bench.runner import WorkloadResult
from cluster.bench.workloads import WORKLOADS
from cluster.cli import bench

INFO = RunInfo("etcd", "processes", "full", 2000.0)


def _result(**overrides: object) -> WorkloadResult:
    fields: dict[str, object] = dict(
        name="SchedulingBasic", scale="full", nodes=5000, init_pods=1000, measured_pods=10000,
        threshold=680.0,
        throughput=measure.Summary(700.0, 690.0, 750.0, 800.0), samples=[650.0, 750.0],
        attempt_latency_s=measure.Summary(0.002, 0.001, 0.004, math.nan),
        e2e_latency_s=measure.Summary(1.0, 0.9, 1.5, 2.0),
        peak_rss_bytes={"scheduler": 300 * 2**20, "etcd": None},
        measured_s=14.3,
        cost=measure.PodCost(
            cpu_ms={"etcd": 0.8, "apiserver": 1.2, "scheduler": 0.9, "bench client": 0.5, "total": 3.4},
            store_write_requests=2.5, store_written_keys=3.0, watch_events=9.0, watch_bytes=12_288.0),
    )  # fmt: skip
    fields.update(overrides)
    return WorkloadResult(**fields)  # type: ignore[arg-type]


def test_the_json_has_the_fields_the_issue_asks_for() -> None:
    document = as_json([_result()], INFO)
    workload = document["workloads"][0]

    assert {"name", "nodes", "pods", "throughput", "limit_writes_per_s"} <= workload.keys()
    assert workload["throughput"] == {"average": 700.0, "p50": 690.0, "p90": 750.0, "p99": 800.0}
    assert (workload["name"], workload["nodes"], workload["pods"]) == ("SchedulingBasic", 5000, 10000)
    assert workload["limit_writes_per_s"] == document["limit_writes_per_s"] == 2000.0
    assert workload["fraction_of_limit"] == 0.35 and workload["threshold_reached"] is True
    assert workload["scheduling_attempt_latency_s"]["p99"] is None  # NaN is not JSON
    assert workload["placements_correct"] is True and workload["problems"] == []
    assert (workload["store"], workload["topology"], workload["scale"]) == ("etcd", "processes", "full")
    assert workload["gangs"] == 0
    assert as_json([_result(name="GangScheduling", gangs=26)], INFO)["workloads"][0]["gangs"] == 26


def test_json_is_written_whole(tmp_path: Path) -> None:
    target = tmp_path / "bench.json"

    write_json(str(target), [_result(), _result(name="TopologySpreading")], INFO)

    assert [w["name"] for w in json.loads(target.read_text())["workloads"]] == [
        "SchedulingBasic", "TopologySpreading"]
    assert [p.name for p in tmp_path.iterdir()] == ["bench.json"]


def test_the_table_shows_target_fraction_correctness_and_problems() -> None:
    lines = format_table([_result(), _result(name="X", threshold=None, problems=["spreading: skew 9"])],
                         INFO).splitlines()

    assert "limit: 2000" in lines[0]
    assert lines[1].split()[:4] == ["WORKLOAD", "NODES", "PODS", "AVG/S"]
    assert lines[2].split()[:10] == ["SchedulingBasic", "5000", "10000", "700", "690", "750", "800", "35.0%",
                                     "680", "met"]
    assert " NO " in lines[3] and lines[-1] == "X: spreading: skew 9"


def test_the_cost_table_shows_cpu_by_process_against_the_budget_and_writes_and_bytes() -> None:
    lines = format_table([_result(), _result(name="X", threshold=None)], INFO).splitlines()

    header = lines.index(next(line for line in lines if line.startswith("per measured pod")))
    assert lines[header + 1].split() == [
        "WORKLOAD", "ETCD", "MS", "APISERVER", "MS", "SCHEDULER", "MS", "BENCH", "CLIENT", "MS",
        "TOTAL", "MS", "BUDGET", "MS", "STORE", "WRITES", "KEYS", "WRITTEN", "WATCH", "EVENTS", "WATCH", "KB"]
    budget = f"{cpu_budget_ms(680.0):.2f}"
    assert lines[header + 2].split() == [
        "SchedulingBasic", "0.80", "1.20", "0.90", "0.50", "3.40", budget, "2.50", "3.00", "9.0", "12.0"]
    assert lines[header + 3].split()[6] == "-"  # no threshold, no budget


def test_the_budget_is_the_cores_time_shared_by_the_threshold_rate() -> None:
    assert cpu_budget_ms(680.0, cores=2) == pytest.approx(2.94, abs=0.01)
    assert cpu_budget_ms(None, cores=2) is None


def test_the_json_has_the_cost_per_pod() -> None:
    workload = as_json([_result()], INFO)["workloads"][0]

    assert workload["cpu_ms_per_pod"] == {
        "etcd": 0.8, "apiserver": 1.2, "scheduler": 0.9, "bench client": 0.5, "total": 3.4}
    assert workload["store_write_requests_per_pod"] == 2.5 and workload["store_written_keys_per_pod"] == 3.0
    assert workload["watch_events_per_pod"] == 9.0 and workload["watch_bytes_per_pod"] == 12_288.0
    assert workload["cpu_budget_ms_per_pod"] == cpu_budget_ms(680.0)


def test_the_plot_is_a_png(tmp_path: Path) -> None:
    target = tmp_path / "bench.png"

    write_plot(str(target), [_result()], INFO)

    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="podsched")
    bench.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["bench", *argv])
    return args.func(args)


def test_an_unknown_workload_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        _run("--workload", "SchedulingEverything")

    assert exited.value.code == 2
    assert "invalid choice: 'SchedulingEverything'" in capsys.readouterr().err


def test_without_a_workload_flag_every_workload_runs_in_order(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[list[str]] = []

    async def run(names: list[str], scale: str, *_: object) -> tuple[RunInfo, list[WorkloadResult]]:
        asked.append(list(names))
        return RunInfo("sqlite", "inproc", scale, 1000.0), [_result(name=name) for name in names]

    monkeypatch.setattr(bench, "_run", run)

    assert _run("--store", "sqlite", "--topology", "inproc", "--scale", "small") == 0
    assert asked == [list(WORKLOADS)]
    throughput, costs = capsys.readouterr().out.split("\n\n")
    assert [line.split()[0] for line in throughput.splitlines()[2:]] == list(WORKLOADS)
    assert [line.split()[0] for line in costs.splitlines()[2:]] == list(WORKLOADS)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--json", "/nonexistent-dir/out.json"], "cannot write --json /nonexistent-dir/out.json"),
        (["--plot", "/nonexistent-dir/out.png"], "cannot write --plot /nonexistent-dir/out.png"),
        (["--store", "all"], "use --store sqlite or --store etcd"),
        (["--etcd", "a:1"], "--etcd applies to bench store"),
        (["store", "--json", "x.json"], "--json applies to the scheduler workloads"),
    ],
    ids=["json-dir-missing", "plot-dir-missing", "all-stores", "etcd-endpoints", "json-with-store"],
)
def test_bad_input_is_refused_before_anything_runs(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(*argv) == 2
    assert message in capsys.readouterr().err


def test_a_missing_etcd_is_a_runtime_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ETCD_BIN", str(tmp_path / "no-etcd"))

    assert _run("--store", "etcd", "--json", str(tmp_path / "out.json")) == 1
    assert "ETCD_BIN=" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_plot_without_matplotlib_says_how_to_get_it_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed

    assert _run("--store", "sqlite", "--topology", "inproc", "--plot", str(tmp_path / "out.png")) == 1
    err = capsys.readouterr().err
    assert "--plot needs matplotlib, an optional extra: pip install 'podsched[plot]'" in err
    assert not (tmp_path / "out.png").exists()
