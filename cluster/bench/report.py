"""`podsched bench`'s output: tables for people (throughput, then what a pod costs: CPU by process,
store writes, watch bytes), JSON for machines, a PNG of throughput over time and CPU per pod.

Files are written whole or not at all (a temporary file beside the target, renamed over it), and
``cluster.outputfiles.check_writable`` finds an unwritable path before a long run rather than after it.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cluster.bench.runner import WorkloadResult
from cluster.printers.table import TableWriter

MIB = 1024 * 1024


def cpu_budget_ms(threshold: float | None, cores: int | None = None) -> float | None:
    """The CPU a pod may cost, all processes together, for the machine's cores to keep up with
    ``threshold`` pods/s: 2 cores at 680 pods/s leave 2.9 ms."""
    cores = cores or os.cpu_count() or 1
    return None if not threshold else cores * 1000.0 / threshold


@dataclass(frozen=True)
class RunInfo:
    store: str
    topology: str
    scale: str
    #: The store's raw rate of Bind-sized compare-and-swap writes, measured in the same run.
    limit_writes_per_s: float


def _write_atomically(path: str, write: Callable[[str], object], suffix: str) -> None:
    directory = Path(path).resolve().parent
    fd, scratch = tempfile.mkstemp(dir=directory, prefix=".podsched-bench-", suffix=suffix)
    os.close(fd)
    try:
        write(scratch)
        os.replace(scratch, path)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _summary(summary: Any) -> dict[str, float | None]:
    return {key: _finite(value) for key, value in summary.as_dict().items()}


def fraction_of_limit(result: WorkloadResult, info: RunInfo) -> float:
    return result.throughput.average / info.limit_writes_per_s if info.limit_writes_per_s > 0 else math.nan


def as_json(results: Sequence[WorkloadResult], info: RunInfo) -> dict[str, Any]:
    return {
        "store": info.store,
        "topology": info.topology,
        "scale": info.scale,
        "limit_writes_per_s": info.limit_writes_per_s,
        "workloads": [
            {
                "name": r.name,
                "nodes": r.nodes,
                "init_pods": r.init_pods,
                "pods": r.measured_pods,
                "throughput": _summary(r.throughput),
                "throughput_samples": r.samples,
                "limit_writes_per_s": info.limit_writes_per_s,
                "fraction_of_limit": _finite(fraction_of_limit(r, info)),
                "threshold": r.threshold,
                "threshold_reached": None if r.threshold is None else r.throughput.average >= r.threshold,
                "scheduling_attempt_latency_s": _summary(r.attempt_latency_s),
                "e2e_latency_s": _summary(r.e2e_latency_s),
                "peak_rss_bytes": r.peak_rss_bytes,
                "measured_s": r.measured_s,
                "churn_pods": r.churn_pods,
                "gangs": r.gangs,
                **r.cost.as_dict(),
                "cpu_budget_ms_per_pod": cpu_budget_ms(r.threshold),
                "placements_correct": r.passed,
                "problems": r.problems,
                "store": info.store,
                "topology": info.topology,
                "scale": r.scale,
            }
            for r in results
        ],
    }


def write_json(path: str, results: Sequence[WorkloadResult], info: RunInfo) -> None:
    document = json.dumps(as_json(results, info), indent=2) + "\n"
    _write_atomically(path, lambda scratch: Path(scratch).write_text(document), ".json")


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}" if math.isfinite(seconds) else "-"


def _rss(values: dict[str, int | None]) -> str:
    return " ".join(f"{role}={value / MIB:.0f}MiB" for role, value in values.items() if value is not None)


def _target(r: WorkloadResult) -> str:
    if r.threshold is None:
        return "-"
    return f"{r.threshold:.0f} {'met' if r.throughput.average >= r.threshold else 'missed'}"


def format_table(results: Sequence[WorkloadResult], info: RunInfo) -> str:
    header = ("WORKLOAD", "NODES", "PODS", "AVG/S", "P50/S", "P90/S", "P99/S", "OF LIMIT", "TARGET",
              "ATTEMPT P50/P99 MS", "E2E P50/P99 MS", "CORRECT", "PEAK RSS")
    rows = [
        (
            r.name, str(r.nodes), str(r.measured_pods),
            f"{r.throughput.average:.0f}", f"{r.throughput.p50:.0f}", f"{r.throughput.p90:.0f}",
            f"{r.throughput.p99:.0f}", f"{fraction_of_limit(r, info):.1%}",
            _target(r),
            f"{_ms(r.attempt_latency_s.p50)}/{_ms(r.attempt_latency_s.p99)}",
            f"{_ms(r.e2e_latency_s.p50)}/{_ms(r.e2e_latency_s.p99)}",
            "yes" if r.passed else "NO", _rss(r.peak_rss_bytes),
        )
        for r in results
    ]  # fmt: skip
    lines = [
        f"store {info.store}, topology {info.topology}, scale {info.scale}; limit: "
        f"{info.limit_writes_per_s:.0f} Bind-sized compare-and-swap writes/s",
        *(line.rstrip() for line in TableWriter(header).table(rows)),  # PEAK RSS may be empty
    ]
    lines.extend(("", *_cost_table(results)))
    for r in results:
        lines.extend(f"{r.name}: {problem}" for problem in r.problems)
    return "\n".join(lines)


def _cost_table(results: Sequence[WorkloadResult]) -> list[str]:
    """CPU ms per measured pod by process (and the budget), store writes and watch bytes per pod."""
    roles = list(dict.fromkeys(role for r in results for role in r.cost.cpu_ms if role != "total"))
    header = ("WORKLOAD", *(f"{role.split(' (')[0].upper()} MS" for role in roles), "TOTAL MS", "BUDGET MS",
              "STORE WRITES", "KEYS WRITTEN", "WATCH EVENTS", "WATCH KB")
    rows = [
        (
            r.name, *(_cpu(r.cost.cpu_ms.get(role)) for role in roles), _cpu(r.cost.cpu_ms.get("total")),
            _cpu(cpu_budget_ms(r.threshold)), f"{r.cost.store_write_requests:.2f}",
            f"{r.cost.store_written_keys:.2f}", f"{r.cost.watch_events:.1f}",
            f"{r.cost.watch_bytes / 1024:.1f}",
        )
        for r in results
    ]  # fmt: skip
    return ["per measured pod: CPU ms by process, store write requests and keys, watch events and KiB sent",
            *(line.rstrip() for line in TableWriter(header).table(rows))]


def _cpu(ms: float | None) -> str:
    return "-" if ms is None else f"{ms:.2f}"


def write_plot(path: str, results: Sequence[WorkloadResult], info: RunInfo) -> None:
    """Throughput over time, one line per workload (matplotlib is imported only here)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, (axes, costs) = pyplot.subplots(1, 2, figsize=(16, 5), gridspec_kw={"width_ratios": (3, 2)})
    for r in results:
        axes.plot(range(1, len(r.samples) + 1), r.samples, label=f"{r.name} ({r.nodes} nodes)")
    axes.set_xlabel("second of the measured phase")
    axes.set_ylabel("pods bound per second")
    axes.set_title(f"podsched bench: store {info.store}, topology {info.topology}, scale {info.scale}")
    axes.legend()
    axes.grid(alpha=0.3)
    _plot_costs(costs, results)
    figure.tight_layout()

    def save(scratch: str) -> None:
        figure.savefig(scratch, format="png", dpi=100)

    try:
        _write_atomically(path, save, ".png")
    finally:
        pyplot.close(figure)


def _plot_costs(axes: Any, results: Sequence[WorkloadResult]) -> None:
    """CPU ms per pod as one stacked bar per workload (a segment per process), its budget as a tick."""
    roles = list(dict.fromkeys(role for r in results for role in r.cost.cpu_ms if role != "total"))
    positions = range(len(results))
    bottoms = [0.0] * len(results)
    for role in roles:
        heights = [r.cost.cpu_ms.get(role, 0.0) for r in results]
        axes.bar(positions, heights, bottom=bottoms, label=role)
        bottoms = [b + h for b, h in zip(bottoms, heights, strict=True)]
    for position, r in zip(positions, results, strict=True):
        budget = cpu_budget_ms(r.threshold)
        if budget is not None:
            axes.hlines(budget, position - 0.4, position + 0.4, colors="black", linestyles="dashed")
    axes.set_xticks(list(positions), [r.name for r in results], rotation=30, ha="right")
    axes.set_ylabel("CPU ms per measured pod (dashed: budget)")
    axes.set_title("what a pod costs, by process")
    axes.legend(fontsize="small")
    axes.grid(alpha=0.3, axis="y")
