"""`podsched bench --scale tiny`, the real command, runs each scheduler workload once: every placement
must be correct and the JSON must carry every measured field. Nothing here looks at how fast it went, so
the tiny scale (125 nodes, a quarter of small's pods) proves the same in a quarter of small's time.

In-process topology on SQLite keeps the run short on a 2-core machine; `podsched bench`'s own default
(separate etcd, API server and scheduler processes) is the same code path behind the client library, run
here for the gang workload, whose group binds are etcd transactions there. The gang workload runs there
only, not on SQLite as well: its placements are checked the same way on either store, and gangs on SQLite
are bound in tests/integration/test_gang_scheduling.py. That no --workload means every workload is
tests/unit/test_bench_report.py's. The DRA workloads are left out: even at the tiny scale (1250 pods
whose claims the resourceclaim controller makes and the scheduler allocates) one takes a minute or more
on this machine; their checks are tests/unit/test_bench_dra.py's. All but one: the steady-state DRA
workload with the cluster's devices all but one batch's held, whose run is its fixed ten seconds after
the claims are allocated, runs end to end (claims allocated without pods, batches deleted and created,
the claims of deleted pods freed for the next). The rack-constrained gang workload runs on its own, in
process on SQLite: what it adds to the gang workload is where the scheduler puts each gang.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cluster.bench.workloads import WORKLOADS

#: Generous: the tiny workloads take well under a minute on a loaded 2-core machine.
BENCH_TIMEOUT_S = 340
#: Every workload but the gang ones, which the tests below run, and the DRA ones.
ON_SQLITE = [name for name, workload in WORKLOADS.items()
             if workload.gangs is None and not workload.uses_claims]


def test_every_tiny_workload_places_its_pods_correctly(tmp_path: Path) -> None:
    report = tmp_path / "bench.json"
    plot = tmp_path / "bench.png"
    chosen = [flag for name in ON_SQLITE for flag in ("--workload", name)]

    finished = subprocess.run(
        [sys.executable, "-m", "cluster.cli", "bench", *chosen, "--scale", "tiny", "--store", "sqlite",
         "--topology", "inproc", "--json", str(report), "--plot", str(plot)],
        capture_output=True, text=True, timeout=BENCH_TIMEOUT_S, check=False,
    )  # fmt: skip

    assert finished.returncode == 0, finished.stdout + finished.stderr
    document = json.loads(report.read_text())
    assert (document["store"], document["topology"], document["scale"]) == ("sqlite", "inproc", "tiny")
    assert [w["name"] for w in document["workloads"]] == ON_SQLITE
    for workload in document["workloads"]:
        expected = WORKLOADS[workload["name"]].scale("tiny")
        assert (workload["nodes"], workload["pods"]) == (expected.nodes, expected.measured_pods)
        assert workload["placements_correct"] is True, workload["problems"]
        assert set(workload["throughput"]) == {"average", "p50", "p90", "p99"}
        assert workload["throughput"]["average"] > 0 and workload["limit_writes_per_s"] > 0
        assert set(workload["cpu_ms_per_pod"]) == {"bench (api server, scheduler, client)", "total"}
    preemption = next(w for w in document["workloads"] if w["name"] == "PreemptionAsync")
    assert preemption["churn_pods"] > 0
    assert plot.read_bytes()[:4] == b"\x89PNG"
    for name in ON_SQLITE:
        assert name in finished.stdout


def _gangs_at_tiny_scale() -> int:
    gang_scheduling = WORKLOADS["GangScheduling"]
    assert gang_scheduling.gangs is not None
    return len(gang_scheduling.gangs.sizes(gang_scheduling.scale("tiny").measured_pods))


@pytest.mark.etcd
def test_the_gang_workload_runs_on_etcd_in_separate_processes(tmp_path: Path) -> None:
    report = tmp_path / "bench.json"

    finished = subprocess.run(
        [sys.executable, "-m", "cluster.cli", "bench", "--workload", "GangScheduling", "--scale", "tiny",
         "--json", str(report)],
        capture_output=True, text=True, timeout=BENCH_TIMEOUT_S, check=False,
    )  # fmt: skip

    assert finished.returncode == 0, finished.stdout + finished.stderr
    document = json.loads(report.read_text())
    assert (document["store"], document["topology"]) == ("etcd", "processes")
    [workload] = document["workloads"]
    assert (workload["name"], workload["nodes"], workload["pods"]) == ("GangScheduling", 125, 250)
    assert workload["placements_correct"] is True, workload["problems"]
    assert workload["gangs"] == _gangs_at_tiny_scale()
    assert set(workload["throughput"]) == {"average", "p50", "p90", "p99"}
    assert workload["throughput"]["average"] > 0 and workload["limit_writes_per_s"] > 0
    assert set(workload["peak_rss_bytes"]) == {"etcd", "apiserver", "scheduler"}
    cpu = workload["cpu_ms_per_pod"]
    assert set(cpu) == {"etcd", "apiserver", "scheduler", "bench client", "total"}
    assert all(ms > 0 for ms in cpu.values()) and cpu["total"] == pytest.approx(
        sum(ms for role, ms in cpu.items() if role != "total"))
    # Each measured pod is created, bound and has its Scheduled event written (in the background: the
    # phase's cost is read once the store is quiet); its create and bind reach two watchers (the
    # scheduler's and the bench's informers). A gang's bind is one request for all its members.
    assert workload["store_written_keys_per_pod"] >= 3
    assert workload["store_write_requests_per_pod"] < workload["store_written_keys_per_pod"]
    assert workload["watch_events_per_pod"] >= 4 and workload["watch_bytes_per_pod"] > 0
    assert "GangScheduling" in finished.stdout


def test_bench_http_prints_the_creates_kubectl_and_the_watch() -> None:
    """`podsched bench http` at the tiny scale: each wire's creates, kubectl listing every pod created,
    and the HTTP watch seeing every bind SchedulingBasic made (how fast is not looked at)."""
    finished = subprocess.run(
        [sys.executable, "-m", "cluster.cli", "bench", "http", "--scale", "tiny", "--store", "sqlite",
         "--topology", "inproc"],
        capture_output=True, text=True, timeout=BENCH_TIMEOUT_S, check=False,
    )  # fmt: skip

    assert finished.returncode == 0, finished.stdout + finished.stderr
    lines = finished.stdout.splitlines()
    assert lines[0] == "store sqlite, topology inproc, scale tiny; the Kubernetes HTTP API beside gRPC"
    basic = WORKLOADS["SchedulingBasic"].scale("tiny")
    per_wire = basic.measured_pods // 2
    rows = {line.split()[0]: line.split() for line in lines[3:5]}
    assert lines[2].split()[:5] == ["WIRE", "PODS", "CONCURRENCY", "CREATES/S", "OF"]
    assert sorted(rows) == ["grpc", "http"]
    for row in rows.values():
        assert row[1:3] == [str(per_wire), "32"] and float(row[3]) > 0
    assert rows["grpc"][4] == "100.0%"
    kubectl = next(line for line in lines if line.startswith("kubectl get pods"))
    assert kubectl.startswith(f"kubectl get pods ({2 * per_wire} pods): ")
    assert kubectl.endswith(f", {2 * per_wire} rows"), kubectl
    bound = basic.init_pods + basic.measured_pods
    assert any(line.startswith("watch over HTTP during SchedulingBasic") and "placements correct" in line
               for line in lines)
    assert any(line.strip().startswith(f"binds seen {bound} of {bound}, ") for line in lines), lines


def test_the_rack_gang_workload_places_every_gang_whole_inside_one_rack(tmp_path: Path) -> None:
    report = tmp_path / "bench.json"

    finished = subprocess.run(
        [sys.executable, "-m", "cluster.cli", "bench", "--workload", "TopologyGangScheduling", "--scale",
         "tiny", "--store", "sqlite", "--topology", "inproc", "--json", str(report)],
        capture_output=True, text=True, timeout=BENCH_TIMEOUT_S, check=False,
    )  # fmt: skip

    document = json.loads(report.read_text())
    [workload] = document["workloads"]
    workloads = WORKLOADS["TopologyGangScheduling"]
    assert workloads.gangs is not None
    assert (workload["name"], workload["nodes"], workload["pods"]) == ("TopologyGangScheduling", 125, 250)
    assert workload["gangs"] == len(workloads.gangs.sizes(250))
    # The checks include every gang whole (all or nothing) and inside one rack.
    assert workload["placements_correct"] is True, workload["problems"]
    assert finished.returncode == 0, finished.stdout + finished.stderr


def test_the_steady_dra_workload_turns_a_full_cluster_over(tmp_path: Path) -> None:
    report = tmp_path / "bench.json"
    name = "SteadyStateClusterResourceClaimTemplate/full"

    finished = subprocess.run(
        [sys.executable, "-m", "cluster.cli", "bench", "--workload", name, "--scale", "tiny", "--store",
         "sqlite", "--topology", "inproc", "--json", str(report)],
        capture_output=True, text=True, timeout=BENCH_TIMEOUT_S, check=False,
    )  # fmt: skip

    assert finished.returncode == 0, finished.stdout + finished.stderr
    [workload] = json.loads(report.read_text())["workloads"]
    assert (workload["name"], workload["nodes"], workload["init_pods"]) == (name, 125, 0)
    # 1240 of the 1250 devices held by claims without pods: each batch of 10 takes the rest, and the next
    # is scheduled only once the deleted batch's claims have given their devices back.
    assert "1240 claims allocated without pods, pods in batches of 10 for 10s" in finished.stderr
    # Pods counted are those scheduled in the run; the checks include the deleted pods' claims as seen.
    assert workload["pods"] > 0 and workload["throughput"]["average"] > 0
    assert workload["placements_correct"] is True, workload["problems"]
    assert workload["cpu_ms_per_pod"]["total"] > 0 and workload["store_written_keys_per_pod"] > 0
