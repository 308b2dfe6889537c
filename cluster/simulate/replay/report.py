"""A replay's results for people and programs: the side-by-side table, the JSON document, the plot.

Every figure of a run is computed here, from its samples and its pods' records, once (``summary``); the
table, the JSON and the CLI's closing lines all show those same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cluster.printers.table import TableWriter
from cluster.simulate.replay.engine import ReplayRun
from cluster.simulate.replay.metrics import mean, percentile


def summary(run: ReplayRun) -> dict[str, Any]:
    """The run's figures (snake_case keys; shares are 0..1, times in seconds). Means and peaks are over
    the samples from the first arrival to the last."""
    delays = [record.delay for record in run.records if record.delay is not None]
    # While pods arrive: the drain after the last arrival, however long its runs, would dilute the means.
    samples = [s for s in run.samples if s.t <= run.last_arrival] or run.samples[:1]
    placed = len(delays)
    wall = run.wall
    return {
        "pods": len(run.records),
        "placed": placed,
        "never_placed": len(run.records) - placed,
        "completed": run.completed,
        "preempted": run.preempted,
        "delay_mean_s": mean(delays) if delays else None,
        "delay_p50_s": percentile(delays, 50),
        "delay_p90_s": percentile(delays, 90),
        "delay_p99_s": percentile(delays, 99),
        "cpu_allocation_mean": mean([s.cpu_allocation for s in samples]),
        "memory_allocation_mean": mean([s.memory_allocation for s in samples]),
        "gpu_allocation_mean": mean([s.gpu_allocation for s in samples]),
        "gpu_allocation_peak": max((s.gpu_allocation for s in samples), default=0.0),
        "pending_mean": mean([s.pending for s in samples]),
        "pending_peak": max((s.pending for s in samples), default=0),
        "unschedulable_mean": mean([s.unschedulable for s in samples]),
        "fragmented_gpus_mean": mean([s.fragmented_gpus for s in samples]),
        "fragmentation_mean": mean([s.fragmentation for s in samples]),
        "virtual_seconds": run.virtual_seconds,
        "scheduling_cycles": wall.cycles,
        "wall_seconds": run.wall_seconds,
        "pods_per_second": placed / run.wall_seconds if run.wall_seconds > 0 else 0.0,
        "scheduling_seconds": wall.scheduling_s,
        "api_seconds": wall.api_s,
        "other_seconds": max(0.0, run.wall_seconds - wall.scheduling_s - wall.api_s),
        **_group_figures(run),
    }


def _group_figures(run: ReplayRun) -> dict[str, Any]:
    """The gangs placed and never placed, and where the placed groups with a topology constraint landed;
    nothing for a trace without PodGroups."""
    if not run.groups:
        return {}
    gangs = [group for group in run.groups if group.min_count > 0]
    landed = [group.in_one_domain for group in run.groups if group.in_one_domain is not None]
    return {
        "gangs": len(gangs),
        "gangs_placed": sum(group.placed for group in gangs),
        "gangs_never_placed": sum(not group.placed for group in gangs),
        "constrained_groups": sum(bool(group.topology_key) for group in run.groups),
        "constrained_in_one_domain": sum(landed),
        "constrained_split": len(landed) - sum(landed),
    }


def document(trace_info: dict[str, Any], runs: Sequence[ReplayRun]) -> dict[str, Any]:
    """The --json document: the trace, then per configuration its summary, samples and pods."""
    return {
        "trace": trace_info,
        "runs": [
            {
                "config": run.name,
                "summary": summary(run),
                "samples": [s.to_json() for s in run.samples],
                "pods": [
                    {"name": r.key, "arrived_at": r.arrived_at, "bound_at": r.bound_at, "node": r.node,
                     "left_at": r.left_at, "preempted": r.preempted}
                    for r in run.records
                ],
                **({"groups": [group.to_json() for group in run.groups]} if run.groups else {}),
            }
            for run in runs
        ],
    }


#: The table's rows: label, summary key, how to show it.
_ROWS: tuple[tuple[str, str, str], ...] = (
    ("pods placed", "placed", "count"),
    ("pods never placed", "never_placed", "count"),
    ("pods preempted", "preempted", "count"),
    ("scheduling delay p50", "delay_p50_s", "duration"),
    ("scheduling delay p90", "delay_p90_s", "duration"),
    ("scheduling delay p99", "delay_p99_s", "duration"),
    ("CPU allocation (mean)", "cpu_allocation_mean", "share"),
    ("memory allocation (mean)", "memory_allocation_mean", "share"),
    ("GPU allocation (mean)", "gpu_allocation_mean", "share"),
    ("GPU allocation (peak)", "gpu_allocation_peak", "share"),
    ("fragmented GPUs (mean)", "fragmentation_mean", "share"),
    ("pods pending (mean)", "pending_mean", "decimal"),
    ("pods pending (peak)", "pending_peak", "count"),
    ("pods unschedulable (mean)", "unschedulable_mean", "decimal"),
    ("gangs placed", "gangs_placed", "count"),
    ("gangs never placed", "gangs_never_placed", "count"),
    ("constrained groups placed in one domain", "constrained_in_one_domain", "count"),
    ("constrained groups placed split", "constrained_split", "count"),
    ("virtual time", "virtual_seconds", "duration"),
    ("scheduling cycles", "scheduling_cycles", "count"),
    ("wall time", "wall_seconds", "seconds"),
    ("  scheduling", "scheduling_seconds", "seconds"),
    ("  API server and store", "api_seconds", "seconds"),
    ("  replay itself", "other_seconds", "seconds"),
    ("pods placed per second", "pods_per_second", "rate"),
)


def table(runs: Sequence[ReplayRun]) -> str:
    """One row per figure, one column per configuration."""
    summaries = [summary(run) for run in runs]
    writer = TableWriter(("FIGURE", *(run.name for run in runs)))
    rows = [[label, *(_show(s.get(key), how) for s in summaries)] for label, key, how in _ROWS
            if any(key in s for s in summaries)]
    return "".join(line + "\n" for line in writer.table(rows))


def _show(value: Any, how: str) -> str:
    if value is None:
        return "-"
    if how == "count":
        return str(int(value))
    if how == "share":
        return f"{100 * value:.1f}%"
    if how == "duration":
        return duration(value)
    if how == "seconds":
        return f"{value:.1f}s"
    if how == "rate":
        return f"{value:.0f}"
    return f"{value:.1f}"


def duration(seconds: float) -> str:
    """A virtual duration the way people read one: 0s, 42s, 3m20s, 2h05m, 3d04h."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h{minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d{hours:02d}h"


def write_plot(path: str, runs: Sequence[ReplayRun], title: str) -> None:
    """GPU and CPU allocation, fragmentation and pending pods over virtual time, one line per
    configuration (matplotlib, an optional extra, is imported only here)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, panels = pyplot.subplots(4, 1, figsize=(12, 12), sharex=True)
    series = (
        ("GPU allocation (%)", lambda s: 100 * s.gpu_allocation),
        ("CPU allocation (%)", lambda s: 100 * s.cpu_allocation),
        ("fragmented GPUs (%)", lambda s: 100 * s.fragmentation),
        ("pods pending", lambda s: s.pending),
    )
    days = max((run.samples[-1].t for run in runs if run.samples), default=0.0) >= 3 * 86400
    unit, scale = ("days", 86400.0) if days else ("hours", 3600.0)
    for axes, (label, value) in zip(panels, series, strict=True):
        for run in runs:
            axes.plot([s.t / scale for s in run.samples], [value(s) for s in run.samples], label=run.name)
        axes.set_ylabel(label)
        axes.grid(True, alpha=0.3)
    panels[0].set_title(title)
    panels[0].legend()
    panels[-1].set_xlabel(f"virtual time ({unit})")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    pyplot.close(figure)
