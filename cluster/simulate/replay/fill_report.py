"""The results of ``podsched replay --fill``: each configuration's figures averaged over its seeds, as the
side-by-side table, the JSON document, and the paper's figure (GPU allocation and fragmentation against
arrived workload)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cluster.printers.table import TableWriter
from cluster.simulate.replay.fill import GPU_KINDS

#: The summary's figures kept per seed and never averaged.
_PER_SEED = ("seed",)


def averaged(summaries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The mean of each figure over ``summaries`` (one per seed); a table of figures (by arrived
    percentage, by kind) is averaged entry by entry over the seeds that have the entry, as pandas' mean
    skips what is missing."""
    result: dict[str, Any] = {"seeds": [summary["seed"] for summary in summaries]}
    for key, first in summaries[0].items():
        if key in _PER_SEED:
            continue
        if isinstance(first, Mapping):
            entries: dict[str, list[float]] = {}
            for summary in summaries:
                for entry, value in summary.get(key, {}).items():
                    entries.setdefault(entry, []).append(value)
            # Percentages in their order, whichever seed had which.
            ordered = sorted(entries, key=int) if all(map(str.isdigit, entries)) else list(entries)
            result[key] = {entry: sum(entries[entry]) / len(entries[entry]) for entry in ordered}
        else:
            values = [summary[key] for summary in summaries]
            result[key] = sum(values) / len(values)
    return result


def fill_document(trace_info: dict[str, Any], runs: Sequence[tuple[str, Sequence[Mapping[str, Any]]]]
                  ) -> dict[str, Any]:
    """The --json document: the trace, then per configuration its averaged summary and each seed's."""
    return {
        "trace": trace_info,
        "runs": [{"config": name, "summary": averaged(seeds), "seeds": list(seeds)} for name, seeds in runs],
    }


def _highest(summary: Mapping[str, Any]) -> str | None:
    table = summary.get("gpu_allocation_at_arrived") or {}
    return max(table, key=int) if table else None


def fill_table(runs: Sequence[tuple[str, Sequence[Mapping[str, Any]]]]) -> str:
    """One row per figure, one column per configuration (averages over its seeds)."""
    summaries = [averaged(seeds) for _, seeds in runs]
    highest = max((int(key) for key in map(_highest, summaries) if key is not None), default=None)
    at = ["100", *([str(highest)] if highest is not None and highest != 100 else [])]
    rows: list[list[str]] = [["seeds", *(str(len(s["seeds"])) for s in summaries)],
                             ["pods tried", *(f"{s['pods']:.0f}" for s in summaries)],
                             ["pods failed", *(_count(s["failed"]) for s in summaries)]]
    rows += [[f"  {kind}", *(_count(s["failed_pods_by_kind"][kind]) for s in summaries)]
             for kind in GPU_KINDS]
    for key in at:
        rows.append([f"GPU allocation at {key}% arrived",
                     *(_share(s["gpu_allocation_at_arrived"].get(key)) for s in summaries)])
    for key in at:
        rows.append([f"fragmentation at {key}% arrived",
                     *(_share(s.get("fragmentation_at_arrived", {}).get(key)) for s in summaries)])
    rows += [["scheduling cycles", *(f"{s['scheduling_cycles']:.0f}" for s in summaries)],
             ["wall time per seed", *(f"{s['wall_seconds']:.1f}s" for s in summaries)],
             ["  scheduling", *(f"{s['scheduling_seconds']:.1f}s" for s in summaries)],
             ["  API server and store", *(f"{s['api_seconds']:.1f}s" for s in summaries)],
             ["  replay itself", *(f"{s['other_seconds']:.1f}s" for s in summaries)]]
    writer = TableWriter(("FIGURE", *(name for name, _ in runs)))
    return "".join(line + "\n" for line in writer.table(rows))


def _count(value: float) -> str:
    """A count, or a mean of counts over seeds (to a tenth when it is not whole)."""
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}%"


def write_fill_plot(path: str, runs: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], title: str) -> None:
    """The paper's figure: GPU allocation and fragmentation (% of the cluster's GPUs) against arrived
    workload (% of the cluster's GPUs), one line per configuration averaged over its seeds (matplotlib,
    an optional extra, is imported only here)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, panels = pyplot.subplots(2, 1, figsize=(12, 9), sharex=True)
    series = (("GPU allocation (%)", "gpu_allocation_at_arrived"),
              ("fragmented GPU milli (%)", "fragmentation_at_arrived"))
    for axes, (label, key) in zip(panels, series, strict=True):
        for name, seeds in runs:
            table = averaged(seeds).get(key, {})
            arrived = sorted(table, key=int)
            axes.plot([int(p) for p in arrived], [100 * table[p] for p in arrived], label=name)
        axes.set_ylabel(label)
        axes.grid(True, alpha=0.3)
    panels[0].set_title(title)
    panels[0].legend()
    panels[-1].set_xlabel("arrived workload (% of the cluster's GPUs)")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    pyplot.close(figure)
