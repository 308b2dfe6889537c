"""The runs of ``podsched replay --fill``: one per (configuration, seed), each in this process or, with
``--jobs N``, in N worker processes (spawned: each builds its own control plane from the files, so that a
run's figures depend only on its configuration and seed, wherever it runs).

FGD scores a node by the fragmentation it would leave for the workload's typical pods, which its args
list (``workload``). A configuration that enables FGDScore without them gets the trace's typical pods, as
the artifact gives them to FGD: ``load_run_config`` adds them to its document before it is decoded.
"""

from __future__ import annotations

import multiprocessing
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from cluster.api.decoding import documents
from cluster.simulate.replay.arrived import GpuBooks
from cluster.simulate.replay.driver import Progress
from cluster.simulate.replay.engine import replay
from cluster.simulate.replay.fill import fill, gpu_ask, pod_kind, tie_order
from cluster.simulate.trace import Trace, load_trace
from cluster.simulate.trace.devices import as_devices
from scheduler.config import SchedulerConfiguration, load_config, parse_config
from scheduler.config.feature_gates import apply_feature_gates
from scheduler.framework.registry import Registry
from scheduler.framework.types import pod_key
from scheduler.gpus.fragmentation import Workload, typical_workload
from scheduler.plugins.registry import IN_TREE

FGD_PLUGIN = "FGDScore"
#: FGDScore's args field of the typical pods.
WORKLOAD_FIELD = "workload"
#: How often (wall seconds) a worker process prints its progress.
WORKER_PROGRESS_PERIOD_S = 5.0

#: What runs a run's coroutine to its end on an event loop of the caller's choice (a module-level function,
#: so that worker processes receive it by name).
Runner = Callable[[Coroutine[Any, Any, Any]], Any]


@dataclass(frozen=True, slots=True)
class FillJob:
    """One run: everything a worker process needs to make it from the files."""

    nodes: str
    pods: str
    #: The configuration's file (None: kube-scheduler's defaults) and its column's name.
    config: str | None
    name: str
    plugins: tuple[tuple[str, str], ...]
    feature_gates: str
    devices: bool
    ratio: float
    seed: int
    order: str
    #: The trace's nodes the cluster has (``fill.NODE_SETS``).
    nodes_kept: str


def trace_workload(trace: Trace) -> Workload:
    """The typical pods of the trace's own pods (the artifact's GetTypicalPods of its workload pods)."""
    return typical_workload(pod_kind(entry.pod) for entry in trace.pods)


def workload_args(workload: Workload) -> list[dict[str, Any]]:
    """``workload`` as FGDScore's args list it."""
    entries = []
    for kind, weight in zip(workload.kinds, workload.weights, strict=True):
        entry: dict[str, Any] = {"milliCpu": kind.milli_cpu, "gpuMilli": kind.gpu_milli,
                                 "gpuCount": kind.gpu_count, "weight": weight}
        if kind.models is not None:
            entry["models"] = sorted(kind.models)
        entries.append(entry)
    return entries


def load_run_config(path: str | None, plugins: Sequence[tuple[str, str]], gates: str,
                    workload: Workload | None = None) -> tuple[SchedulerConfiguration, Registry]:
    """One configuration with a registry of its own (each run builds its plugins afresh); with
    ``workload``, the profiles that enable FGDScore without one get it. Raise ConfigError,
    PluginLoadError or ValueError naming what is wrong."""
    registry = Registry(IN_TREE)
    for name, target in plugins:
        registry.register(name, target)
        registry.load(name)  # a plugin that cannot load is a mistake to report now, enabled or not
    config = load_config(path, registry=registry)
    wanting = [index for index, profile in enumerate(config.profiles)
               if FGD_PLUGIN in profile.plugin_args
               and not getattr(profile.plugin_args[FGD_PLUGIN], WORKLOAD_FIELD, None)]
    if path is not None and workload is not None and wanting:
        with open(path, encoding="utf-8") as stream:
            document = next(data for _, data in documents(stream.read(), path, numbered=False))
        for index in wanting:
            _give_workload(document["profiles"][index], workload_args(workload))
        config = parse_config(document, source=path, registry=registry)
    apply_feature_gates(config, gates)
    return config, registry


def _give_workload(profile: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    configs = profile.setdefault("pluginConfig", None) or []
    profile["pluginConfig"] = configs
    for entry in configs:
        if entry.get("name") == FGD_PLUGIN:
            args = entry.get("args") or {}
            args[WORKLOAD_FIELD] = entries
            entry["args"] = args
            return
    configs.append({"name": FGD_PLUGIN, "args": {WORKLOAD_FIELD: entries}})


def run_fill(job: FillJob, trace: Trace, workload: Workload, runner: Runner,
             progress: Callable[[Progress], None] | None) -> dict[str, Any]:
    """The run ``job`` on the loaded ``trace`` whose typical pods are ``workload``, on ``runner``'s event
    loop: its summary (``GpuBooks.summary`` with the wall times)."""
    config, registry = load_run_config(job.config, job.plugins, job.feature_gates, workload)
    filled = fill(trace, job.ratio, job.seed, job.order, job.nodes_kept)
    asks = {pod_key(entry.pod): gpu_ask(entry.pod) for entry in filled.pods}
    books = GpuBooks(filled.nodes, len(filled.pods), workload)
    run = runner(replay(filled, config, registry, name=job.name, seed=job.seed, progress=progress,
                             devices=as_devices(filled) if job.devices else None, books=books, asks=asks,
                             tie_order=tie_order(filled.nodes, job.seed)))
    wall = run.wall
    return {
        "seed": job.seed,
        **books.summary(job.ratio),
        "scheduling_cycles": wall.cycles,
        "wall_seconds": run.wall_seconds,
        "scheduling_seconds": wall.scheduling_s,
        "api_seconds": wall.api_s,
        "other_seconds": max(0.0, run.wall_seconds - wall.scheduling_s - wall.api_s),
    }


def run_fill_jobs(jobs: Sequence[FillJob], trace: Trace, workload: Workload, processes: int, runner: Runner,
                  progress: Callable[[str], Callable[[Progress], None]]) -> list[dict[str, Any]]:
    """Every job's summary, in ``jobs``' order: here one after the other on ``trace`` and its typical pods
    ``workload`` with ``progress(label)``'s reports, or in ``processes`` spawned workers, each loading the
    trace and printing a line of progress now and then."""
    if processes <= 1 or len(jobs) <= 1:
        return [run_fill(job, trace, workload, runner, progress(_label(job))) for job in jobs]
    context = multiprocessing.get_context("spawn")
    with context.Pool(min(processes, len(jobs))) as pool:
        return pool.starmap(_worker, [(job, runner) for job in jobs], chunksize=1)


def _label(job: FillJob) -> str:
    return f"{job.name} seed {job.seed}"


#: A worker's trace and its typical pods, by files: a worker runs several jobs of the same trace.
_loaded: dict[tuple[str, str], tuple[Trace, Workload]] = {}


def _worker(job: FillJob, runner: Runner) -> dict[str, Any]:
    files = (job.nodes, job.pods)
    if files not in _loaded:
        trace = load_trace(*files)
        _loaded[files] = (trace, trace_workload(trace))
    trace, workload = _loaded[files]
    return run_fill(job, trace, workload, runner, _worker_progress(_label(job)))


def _worker_progress(label: str) -> Callable[[Progress], None]:
    last = -WORKER_PROGRESS_PERIOD_S

    def show(progress: Progress) -> None:
        nonlocal last
        now = time.monotonic()
        if progress.finished or now - last >= WORKER_PROGRESS_PERIOD_S:
            last = now
            print(f"{label}: {progress.arrived}/{progress.total} pods tried, {progress.placed} placed, "
                  f"{progress.wall_seconds:.1f}s", file=sys.stderr, flush=True)

    return show
