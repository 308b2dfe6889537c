"""`podsched bench --scale small`, the real command, runs each scheduler workload once: every placement
must be correct and the JSON must carry every measured field. Nothing here looks at how fast it went.

In-process topology on SQLite keeps the run short on a 2-core machine; `podsched bench`'s own default
(separate etcd, API server and scheduler processes) is the same code path behind the client library.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cluster.bench.workloads import WORKLOADS

#: Generous: five small workloads take a minute or two on a loaded 2-core machine.
BENCH_TIMEOUT_S = 280


def test_every_small_workload_places_its_pods_correctly(tmp_path: Path) -> None:
    report = tmp_path / "bench.json"
    plot = tmp_path / "bench.png"

    finished = subprocess.run(
        [sys.executable, "-m", "cluster.cli", "bench", "--scale", "small", "--store", "sqlite",
         "--topology", "inproc", "--json", str(report), "--plot", str(plot)],
        capture_output=True, text=True, timeout=BENCH_TIMEOUT_S, check=False,
    )  # fmt: skip

    assert finished.returncode == 0, finished.stdout + finished.stderr
    document = json.loads(report.read_text())
    assert (document["store"], document["topology"], document["scale"]) == ("sqlite", "inproc", "small")
    assert [w["name"] for w in document["workloads"]] == list(WORKLOADS)
    for workload in document["workloads"]:
        expected = WORKLOADS[workload["name"]].small
        assert (workload["nodes"], workload["pods"]) == (expected.nodes, expected.measured_pods)
        assert workload["placements_correct"] is True, workload["problems"]
        assert set(workload["throughput"]) == {"average", "p50", "p90", "p99"}
        assert workload["throughput"]["average"] > 0 and workload["limit_writes_per_s"] > 0
    preemption = next(w for w in document["workloads"] if w["name"] == "PreemptionAsync")
    assert preemption["churn_pods"] > 0
    assert plot.read_bytes()[:4] == b"\x89PNG"
    for name in WORKLOADS:
        assert name in finished.stdout
