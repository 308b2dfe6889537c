"""`podsched replay --nodes FILE --pods FILE [--config FILE ...] [--json FILE] [--plot FILE.png]`: replay a
cluster trace (docs/trace-format.md) on a virtual clock through an in-process control plane, once per
scheduler configuration, and print the configurations' figures side by side (docs/replay.md).

stdout holds only the table; progress (virtual time reached, pods placed, the rate), warnings and errors go
to stderr. The same trace, configurations and seed always print the same figures, wall times aside.

Exit codes: 0 done; 2 the trace, a configuration or the command line is invalid (the message names the
file, line and column, or document and field); 1 the replay itself failed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from cluster.cli import eventloop
from cluster.cli.scheduler import parse_plugin
from cluster.outputfiles import PLOT_INSTALL, can_plot, check_writable
from cluster.simulate import BackgroundTaskEnded
from cluster.simulate.replay import Progress, ReplayError, ReplayRun, replay
from cluster.simulate.replay.fill import (
    ALL_NODES,
    GPU_NODES,
    NODE_SETS,
    ORDERS,
    SHUFFLED,
    TRACE_ORDER,
    check_fillable,
    kept_nodes,
)
from cluster.simulate.replay.fill_report import fill_document, fill_table, write_fill_plot
from cluster.simulate.replay.groups import without_topology_constraints
from cluster.simulate.replay.jobs import FillJob, load_run_config, run_fill_jobs, trace_workload
from cluster.simulate.replay.report import document, duration, table, write_plot
from cluster.simulate.trace import Trace, TraceError, load_trace
from cluster.simulate.trace.devices import DRIVER, as_devices
from cluster.simulate.trace.model import GPU_RESOURCE
from scheduler.config import ConfigError
from scheduler.framework.registry import PluginLoadError
from scheduler.gpus.fragmentation import Workload
from scheduler.scheduler import SchedulerConfigError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INVALID = 2
DEFAULT_SEED = 0
#: The artifact's first seed.
DEFAULT_FILL_SEED = 42
#: The column of a replay run without --config.
DEFAULT_CONFIG_NAME = "default"
#: --gpus: the trace's GPUs as the extended resource nvidia.com/gpu, or as DRA devices.
EXTENDED_RESOURCE = "extended-resource"
DEVICES = "devices"
GPU_MAPPINGS = (EXTENDED_RESOURCE, DEVICES)
#: --topology-constraints: replay the groups' topology constraints as the trace gives them, without
#: them, or both ways side by side.
KEEP, DROP, BOTH = "keep", "drop", "both"
TOPOLOGY_CHOICES = (KEEP, DROP, BOTH)
#: What a column of a replay without the constraints adds to its configuration's name.
DROPPED_SUFFIX = " without topology"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="replay a cluster trace on a virtual clock and compare scheduler configurations",
        description="Replay a node list and a pod trace (openb CSV, or the native CSV or YAML format) "
        "through an in-process API server and scheduler on a virtual clock: pods arrive at their time, run "
        "for their duration from their bind, and leave. With several --config, replay the same trace under "
        "each and print their figures side by side.",
    )
    parser.add_argument("--nodes", required=True, metavar="FILE", help="the node list (CSV or YAML)")
    parser.add_argument("--pods", required=True, metavar="FILE", help="the pod trace (CSV or YAML)")
    parser.add_argument(
        "--config", action="append", default=[], metavar="FILE",
        help="a KubeSchedulerConfiguration YAML file; repeat to compare (default: kube-scheduler's defaults)",
    )
    parser.add_argument(
        "--plugin", type=parse_plugin, action="append", default=[], metavar="NAME=MODULE:FACTORY",
        help="register a plugin written in Python under NAME, so that a --config can enable it (repeatable)",
    )
    parser.add_argument("--seed", type=int, action="append", default=[],
                        help=f"seed of the choice between equally good nodes (default {DEFAULT_SEED}); with "
                        f"--fill also of the workload's draws, repeatable: each configuration runs once per "
                        f"seed and the figures are averaged (default {DEFAULT_FILL_SEED})")
    parser.add_argument("--fill", type=float, metavar="RATIO",
                        help="the FGD experiment: the trace's pods shuffled and tuned to RATIO x the "
                        "cluster's GPUs, arriving one by one, each tried once, none leaving")
    parser.add_argument("--fill-order", choices=ORDERS, default=None,
                        help=f"with --fill: the pods in an order drawn from the seed ({SHUFFLED}, default) "
                        f"or in the trace's order ({TRACE_ORDER})")
    parser.add_argument("--fill-nodes", choices=NODE_SETS, default=None,
                        help=f"with --fill: the cluster is the trace's nodes with GPUs ({GPU_NODES}, "
                        f"default, as the artifact's experiments run) or all of them ({ALL_NODES})")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="with --fill: run the (configuration, seed) pairs in N processes (default 1)")
    parser.add_argument("--sample-every", type=float, default=None, metavar="SECONDS",
                        help="virtual seconds between samples (default: the arrivals' span / 200)")
    parser.add_argument("--json", metavar="FILE", help="also write every figure, sample and pod as JSON")
    parser.add_argument("--plot", metavar="FILE.png",
                        help="also plot allocation, fragmentation and pending pods over time "
                        "(needs matplotlib)")
    parser.add_argument(
        "--gpus", choices=GPU_MAPPINGS, default=None,
        help=f"how the trace's GPUs are expressed: the extended resource {GPU_RESOURCE} (a share rounded "
        f"up to a whole GPU; the default without --fill), or DRA devices (a ResourceSlice per node, a "
        f"ResourceClaim per GPU pod, a share of one device for a fractional GPU; driver {DRIVER}; the "
        f"default with --fill)",
    )
    parser.add_argument(
        "--topology-constraints", choices=TOPOLOGY_CHOICES, default=KEEP,
        help=f"the PodGroups' topology constraints: as the trace gives them ({KEEP}, default), dropped "
        f"({DROP}), or each configuration replayed both ways side by side ({BOTH}; a column without them "
        f"is named '<config>{DROPPED_SUFFIX}')",
    )
    parser.add_argument(
        "--feature-gates", default="", metavar="NAME=BOOL,...",
        help="kube-scheduler feature gates podsched has (SchedulerOpportunisticBatching), for every config",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log the control plane's work to stderr")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if args.gpus is None:
        # The FGD experiment shares GPUs, which only devices can express.
        args.gpus = DEVICES if args.fill is not None else EXTENDED_RESOURCE
    problem = _flag_problem(args)
    if problem is not None:
        return _fail(problem, EXIT_INVALID)
    for flag, path in (("--json", args.json), ("--plot", args.plot)):
        if path is not None:
            try:
                check_writable(path)
            except OSError as exc:
                return _fail(f"cannot write {flag} {path}: {exc}", EXIT_INVALID)
    if args.plot is not None and not can_plot():
        return _fail(f"--plot needs matplotlib, an optional extra: {PLOT_INSTALL}", EXIT_FAILED)
    try:
        trace = load_trace(args.nodes, args.pods)
        variants = _variants(trace, args)
    except TraceError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        print("error: nothing was replayed", file=sys.stderr, flush=True)
        return EXIT_INVALID
    workload = None
    if args.fill is not None:
        try:
            check_fillable(trace)
        except ValueError as exc:
            return _fail(f"--fill: {args.nodes}, {args.pods}: {exc}", EXIT_INVALID)
        workload = trace_workload(trace)
    try:
        configs = [load_run_config(path, args.plugin, args.feature_gates, workload)
                   for path in args.config or [None]]
    except (ConfigError, PluginLoadError, ValueError) as exc:
        return _fail(str(exc), EXIT_INVALID)
    names = _column_names(args.config)
    if workload is not None:
        return _run_fill(args, trace, workload, names)
    print(f"replaying {len(trace.pods)} pods on {len(trace.nodes)} nodes ({trace.format}) under "
          f"{len(configs)} configuration(s)", file=sys.stderr, flush=True)
    runs: list[ReplayRun] = []
    for (config_name, (config, registry)), (suffix, replayed, devices) in itertools.product(
            zip(names, configs, strict=True), variants):
        name = config_name + suffix
        try:
            result = eventloop.run(replay(replayed, config, registry, name=name, seed=_seed(args),
                                        sample_every=args.sample_every, progress=_progress_printer(name),
                                        devices=devices, groups_as_traced=trace))
        except SchedulerConfigError as exc:
            return _fail(f"{name}: {exc}", EXIT_INVALID)
        except (ReplayError, BackgroundTaskEnded) as exc:
            return _fail(f"{name}: {exc}", EXIT_FAILED)
        except KeyboardInterrupt:
            return 130
        runs.append(result)
    sys.stdout.write(table(runs))
    sys.stdout.flush()
    if args.json is not None:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(document(_trace_info(args, trace), runs), out, indent=1)
            out.write("\n")
    if args.plot is not None:
        write_plot(args.plot, runs, f"podsched replay: {len(trace.pods)} pods on {len(trace.nodes)} nodes")
    return EXIT_OK


def _variants(trace: Trace, args: argparse.Namespace) -> list[tuple[str, Trace, Trace | None]]:
    """The ways each configuration replays the trace, by --topology-constraints: the column name's
    suffix, the trace replayed and, under --gpus devices, that trace with its GPUs as devices. Raises
    TraceError for a trace --gpus devices cannot express."""
    choices = {KEEP: [("", trace)], DROP: [(DROPPED_SUFFIX, without_topology_constraints(trace))],
               BOTH: [("", trace), (DROPPED_SUFFIX, without_topology_constraints(trace))]}
    with_devices = args.gpus == DEVICES and args.fill is None
    return [(suffix, replayed, as_devices(replayed) if with_devices else None)
            for suffix, replayed in choices[args.topology_constraints]]


def _flag_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the flags' values and combinations, or None."""
    if args.sample_every is not None and not args.sample_every > 0:
        return f"--sample-every must be positive, got {args.sample_every:g}"
    if len(set(args.seed)) < len(args.seed):
        return f"--seed repeats a seed: {', '.join(map(str, args.seed))}"
    if args.fill is None:
        for flag, given in (("--fill-order", args.fill_order is not None),
                            ("--fill-nodes", args.fill_nodes is not None), ("--jobs", args.jobs != 1),
                            ("several --seed", len(args.seed) > 1)):
            if given:
                return f"{flag} needs --fill (a replay in the trace's own time runs once, with one seed)"
        return None
    if not args.fill > 0:
        return f"--fill must be positive, got {args.fill:g}"
    if args.topology_constraints != KEEP:
        return ("--topology-constraints has no meaning with --fill (its pods arrive one by one, each "
                "alone)")
    if args.jobs < 1:
        return f"--jobs must be at least 1, got {args.jobs}"
    if args.sample_every is not None:
        return "--sample-every has no meaning with --fill (the measures are taken after every pod)"
    return None


def _seed(args: argparse.Namespace) -> int:
    return int(args.seed[0]) if args.seed else DEFAULT_SEED


def _run_fill(args: argparse.Namespace, trace: Trace, workload: Workload, names: Sequence[str]) -> int:
    seeds = args.seed or [DEFAULT_FILL_SEED]
    order = args.fill_order or SHUFFLED
    kept = args.fill_nodes or GPU_NODES
    jobs = [FillJob(args.nodes, args.pods, path, name, tuple(args.plugin), args.feature_gates,
                    args.gpus == DEVICES, args.fill, seed, order, kept)
            for path, name in zip(args.config or [None], names, strict=True) for seed in seeds]
    cluster = kept_nodes(trace.nodes, kept)
    print(f"filling {len(cluster)} nodes ({kept}) to {args.fill:g} x their GPUs with the {len(trace.pods)} "
          f"pods "
          f"of {args.pods} ({trace.format}) under {len(names)} configuration(s) and {len(seeds)} seed(s)",
          file=sys.stderr, flush=True)
    try:
        summaries = run_fill_jobs(jobs, trace, workload, args.jobs, eventloop.run, _progress_printer)
    except SchedulerConfigError as exc:
        return _fail(str(exc), EXIT_INVALID)
    except (ReplayError, BackgroundTaskEnded) as exc:
        return _fail(str(exc), EXIT_FAILED)
    except KeyboardInterrupt:
        return 130
    per_config = len(seeds)
    runs = [(name, summaries[index * per_config:(index + 1) * per_config])
            for index, name in enumerate(names)]
    sys.stdout.write(fill_table(runs))
    sys.stdout.flush()
    if args.json is not None:
        info = {**_trace_info(args, trace), "seed": None, "seeds": seeds, "fill": args.fill,
                "fill_order": order, "fill_nodes": kept, "cluster_nodes": len(cluster)}
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(fill_document(info, runs), out, indent=1)
            out.write("\n")
    if args.plot is not None:
        write_fill_plot(args.plot, runs, f"podsched replay --fill {args.fill:g}: {len(cluster)} nodes, "
                        f"{len(seeds)} seed(s)")
    return EXIT_OK


def _column_names(paths: Sequence[str]) -> list[str]:
    """A column per configuration: its file's name without extension, made unique."""
    if not paths:
        return [DEFAULT_CONFIG_NAME]
    names: list[str] = []
    for path in paths:
        base = os.path.splitext(os.path.basename(path))[0] or path
        name, n = base, 2
        while name in names:
            name, n = f"{base}#{n}", n + 1
        names.append(name)
    return names


def _trace_info(args: argparse.Namespace, trace: Trace) -> dict[str, Any]:
    return {
        "nodes_file": args.nodes, "pods_file": args.pods, "format": trace.format, "nodes": len(trace.nodes),
        "pods": len(trace.pods), "seed": _seed(args), "configs": list(args.config), "gpus": args.gpus,
        "topology_constraints": args.topology_constraints,
    }


def _progress_printer(name: str) -> Callable[[Progress], None]:
    """Progress on stderr: rewritten in place on a terminal, a line every few reports otherwise."""
    terminal = sys.stderr.isatty()
    reports = 0

    def show(progress: Progress) -> None:
        nonlocal reports
        reports += 1
        rate = progress.placed / progress.wall_seconds if progress.wall_seconds > 0 else 0.0
        line = (f"{name}: virtual {duration(progress.virtual_seconds)}, {progress.arrived}/{progress.total} "
                f"pods arrived, {progress.placed} placed, {rate:.0f} pods/s, {progress.wall_seconds:.1f}s")
        if terminal:
            end = "\n" if progress.finished else ""
            print(f"\r\033[K{line}", end=end, file=sys.stderr, flush=True)
        elif progress.finished or reports % 10 == 1:
            print(line, file=sys.stderr, flush=True)

    return show


def _fail(message: str, code: int) -> int:
    print(f"podsched replay: {message}", file=sys.stderr, flush=True)
    return code
