"""`podsched bench`: kube-scheduler's scheduler_perf workloads against podsched, and the store beneath.

    podsched bench [--workload NAME ...] [--scale tiny|small|full] [--store sqlite|etcd]
                   [--topology inproc|processes] [--json FILE] [--plot FILE.png]
    podsched bench store [--store sqlite|etcd|all] [--etcd HOST:PORT,...] [--writes N] [--concurrency C]
    podsched bench http [--scale tiny|small|full] [--store sqlite|etcd] [--topology inproc|processes]

Without a target it runs the scheduler workloads (all of them unless ``--workload`` names some; see
cluster/bench/workloads.py), each on a fresh store, API server and scheduler, and prints per workload
the throughput of the measured pods (average, p50, p90, p99 of per-second samples, as scheduler_perf
takes them), the scheduling-attempt and end-to-end latencies, peak RSS, whether the placements were
correct, and the throughput as a fraction of the limit: the rate of Bind-sized compare-and-swap writes
the same kind of store sustains from podsched's store library, measured at the start of the same run.
Defaults are the runs docs/performance.md compares with kube-scheduler's CI thresholds:
``--scale full --store etcd --topology processes``. It exits 1 when a workload's placements are wrong or
it cannot run, 2 on bad input.

``store`` measures, for each backend, what scheduling leans on: the rate of Bind-sized compare-and-swap
writes (a ~1.5 KB serialized Pod updated with its expected revision, by C concurrent writers, each on a
Pod of its own so that the rate is the store's and not the writers' conflicts), and the watch-delivery
lag (from a write's acknowledgement to its event reaching a watcher in the same process, measured
under that full write load, so it includes the client's own queueing), p50 and p99. Without ``--etcd``
it starts a local single-member etcd in a temporary directory and stops it afterwards; the SQLite
store lives in a temporary directory. Keys go under a unique prefix, removed at the end.

``http`` measures the Kubernetes HTTP API beside gRPC on the workloads' topology and store
(cluster/bench/httpapi.py): the create rate of each wire, ``kubectl get pods`` of the pods created, and
a watch over HTTP keeping up with SchedulingBasic's binds.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from collections.abc import Sequence
from typing import Any

from cluster.bench.report import (
    RunInfo,
    format_table,
    write_json,
    write_plot,
)
from cluster.bench.runner import BenchError, WorkloadResult, run_workload
from cluster.bench.storelimit import (
    DEFAULT_CONCURRENCY,
    DEFAULT_WRITES,
    STORES,
    bench_store,
    bench_stores,
    open_store,
)
from cluster.bench.storelimit import format_table as format_store_table
from cluster.bench.topology import TOPOLOGIES, bring_up
from cluster.bench.workloads import SCALES, WORKLOADS
from cluster.launcher.etcd import EtcdNotFound, EtcdStartError, find_etcd_binary
from cluster.launcher.process import ApiServerStartError, SchedulerStartError
from cluster.outputfiles import PLOT_INSTALL, can_plot, check_writable
from store.base import StoreError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
TARGETS = ("store", "http")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="run scheduler_perf's workloads against podsched, or measure the stores or the HTTP API",
        description="Run kube-scheduler's scheduler_perf workloads end to end (no target), measure "
        "the stores' writes/s and watch lag (store), or the HTTP API beside gRPC (http).",
    )
    parser.add_argument("target", nargs="?", choices=TARGETS,
                        help="store: measure the stores only; http: the HTTP API's creates, kubectl get "
                        "and watch beside gRPC")
    parser.add_argument(
        "--store", choices=[*STORES, "all"], default=None,
        help="backend: for the workloads sqlite or etcd (default etcd); for store also all (the default)",
    )  # fmt: skip
    workloads = parser.add_argument_group("workloads")
    workloads.add_argument(
        "--workload", action="append", choices=list(WORKLOADS), metavar="NAME", default=None,
        help=f"a workload to run, repeatable (default all: {', '.join(WORKLOADS)})",
    )  # fmt: skip
    workloads.add_argument("--scale", choices=SCALES, default="full",
                           help="full: 5000 nodes, as kube-scheduler's CI thresholds; small: 500; "
                           "tiny: 125, a quarter of small's pods, to check placements quickly (default full)")
    workloads.add_argument(
        "--topology", choices=TOPOLOGIES, default="processes",
        help="processes: etcd, apiserver and scheduler as separate processes; inproc: API server and "
        "scheduler in this process (default processes)",
    )  # fmt: skip
    workloads.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    workloads.add_argument("--plot", metavar="FILE.png", help="also plot throughput over time (PNG)")
    store = parser.add_argument_group("store")
    store.add_argument(
        "--etcd", metavar="HOST:PORT,...", type=_endpoints,
        help="an existing etcd to measure (default: start a local single-member etcd)",
    )  # fmt: skip
    store.add_argument(
        "--writes", type=_positive_int, default=DEFAULT_WRITES, metavar="N",
        help=f"compare-and-swap writes per backend (default {DEFAULT_WRITES})",
    )  # fmt: skip
    store.add_argument(
        "--concurrency", type=_positive_int, default=DEFAULT_CONCURRENCY, metavar="C",
        help=f"concurrent writers (default {DEFAULT_CONCURRENCY})",
    )  # fmt: skip
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.target == "store":
        return run_store(args)
    if args.target == "http":
        return run_http(args)
    return run_workloads(args)


def _fail(message: str, code: int) -> int:
    print(f"podsched bench: {message}", file=sys.stderr)
    return code


def run_store(args: argparse.Namespace) -> int:
    for flag, value in (("--workload", args.workload), ("--json", args.json), ("--plot", args.plot)):
        if value:
            return _fail(f"{flag} applies to the scheduler workloads, not to bench store", EXIT_USAGE)
    store = args.store or "all"
    if args.etcd is not None and store == "sqlite":
        return _fail("--etcd applies to the etcd store; use --store etcd or all", EXIT_USAGE)
    backends = STORES if store == "all" else (store,)
    try:
        results = asyncio.run(bench_stores(backends, args.etcd, args.writes, args.concurrency))
    except (StoreError, EtcdNotFound, EtcdStartError) as exc:
        return _fail(str(exc), EXIT_FAILED)
    print(format_store_table(results))
    return EXIT_OK


def run_http(args: argparse.Namespace) -> int:
    for flag, value in (("--workload", args.workload), ("--json", args.json), ("--plot", args.plot)):
        if value:
            return _fail(f"{flag} applies to the scheduler workloads, not to bench http", EXIT_USAGE)
    store, problem = _workload_store(args)
    if problem is not None:
        return problem
    # Imported here: aiohttp would cost every other podsched command its import time.
    import aiohttp

    from cluster.bench.httpapi import bench_http, format_report

    _say(f"HTTP API beside gRPC: {args.topology} on {store}, scale {args.scale}")
    try:
        result = asyncio.run(bench_http(store, args.topology, args.scale))
    except (BenchError, StoreError, EtcdStartError, ApiServerStartError, SchedulerStartError,
            aiohttp.ClientError) as exc:
        return _fail(str(exc), EXIT_FAILED)
    print(format_report(result))
    return EXIT_OK if result.watch.workload.passed and not result.watch.missing else EXIT_FAILED


def _workload_store(args: argparse.Namespace) -> tuple[str, int | None]:
    """The store the workloads (or bench http) run on, or the exit code of why they cannot."""
    store = args.store or "etcd"
    if store == "all":
        return store, _fail("the workloads run on one store: use --store sqlite or --store etcd", EXIT_USAGE)
    if args.etcd is not None:
        return store, _fail("--etcd applies to bench store; the workloads start an etcd of their own",
                            EXIT_USAGE)
    if store == "etcd":
        try:
            find_etcd_binary()
        except EtcdNotFound as exc:
            return store, _fail(str(exc), EXIT_FAILED)
    return store, None


def run_workloads(args: argparse.Namespace) -> int:
    store, problem = _workload_store(args)
    if problem is not None:
        return problem
    for flag, path in (("--json", args.json), ("--plot", args.plot)):
        if path is not None:
            try:
                check_writable(path)
            except OSError as exc:
                return _fail(f"cannot write {flag} {path}: {exc}", EXIT_USAGE)
    if args.plot is not None and not can_plot():
        return _fail(f"--plot needs matplotlib, an optional extra: {PLOT_INSTALL}", EXIT_FAILED)
    names = args.workload or list(WORKLOADS)
    try:
        info, results = asyncio.run(
            _run(names, args.scale, store, args.topology, args.writes, args.concurrency))
    except (BenchError, StoreError, EtcdStartError, ApiServerStartError, SchedulerStartError) as exc:
        return _fail(str(exc), EXIT_FAILED)
    print(format_table(results, info))
    if args.json is not None:
        write_json(args.json, results, info)
    if args.plot is not None:
        write_plot(args.plot, results, info)
    return EXIT_OK if all(r.passed for r in results) else EXIT_FAILED


async def _run(
    names: Sequence[str], scale: str, store: str, topology: str, writes: int, concurrency: int
) -> tuple[RunInfo, list[WorkloadResult]]:
    _say(f"measuring the limit: {writes} Bind-sized compare-and-swap writes on a fresh {store} store")
    async with open_store(store) as opened:
        limit = await bench_store(opened, f"/podsched-bench/{uuid.uuid4().hex[:8]}/", backend=store,
                                  writes=writes, concurrency=concurrency)
    info = RunInfo(store, topology, scale, limit.writes_per_s)
    _say(f"limit: {limit.writes_per_s:.0f} writes/s")
    results = []
    for name in names:
        workload = WORKLOADS[name]
        size = workload.scale(scale)
        gangs = f" in {len(workload.gangs.sizes(size.measured_pods))} gangs" if workload.gangs else ""
        _say(f"{name}: {workload.plan(size)}{gangs}")
        started = time.monotonic()
        async with bring_up(topology, store, controllers=workload.controllers) as sut:
            result = await run_workload(workload, scale, sut)
        results.append(result)
        _say(f"{name}: {result.throughput.average:.0f} pods/s on average, placements "
             f"{'correct' if result.passed else 'WRONG'} ({time.monotonic() - started:.0f}s in all)")
    return info, results


def _say(message: str) -> None:
    print(f"podsched bench: {message}", file=sys.stderr, flush=True)


# -- argument types ---------------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid count {text!r}: expected a positive integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"invalid count {text!r}: expected a positive integer")
    return value


def _endpoints(text: str) -> list[str]:
    endpoints = [part.strip() for part in text.split(",") if part.strip()]
    for endpoint in endpoints:
        host, _, port = endpoint.rpartition(":")
        if not host or not port.isdigit():
            raise argparse.ArgumentTypeError(f"invalid etcd endpoint {endpoint!r}: expected HOST:PORT")
    if not endpoints:
        raise argparse.ArgumentTypeError("--etcd needs at least one HOST:PORT")
    return endpoints
