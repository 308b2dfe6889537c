"""`podsched up`: a highly available control plane on this machine, as separate OS processes.

    podsched up [--replicas 3] [--etcd ENDPOINTS | --etcd-local 3] [--apiservers K] [--nodes N]
                [--data-dir DIR] [--listen 127.0.0.1:7443] [--http-listen 127.0.0.1:7444]
                [--leader-elect-lease-duration 15s] [--leader-elect-renew-deadline 10s]
                [--leader-elect-retry-period 2s]
                [--tls [--certs-dir DIR]] [--ui [--ui-listen 127.0.0.1:8080] [--ui-allowed-host NAME]...]

It starts the API server(s) (on the embedded store by default, on etcd when asked, a local etcd cluster
included) and N `podsched scheduler` replicas electing a leader, creates N nodes if asked, and prints a
timestamped line for each thing that happens: each process started (with its pid, and a replica's
identity), each change of leader (with its fencing token and how long there was none), each exit and
restart. Each API server serves the Kubernetes HTTP API beside gRPC (the first on ``--http-listen``,
by default the port after ``--listen``'s; the others on free ports), and a kubeconfig for the first's,
DATA_DIR/kubeconfig, is written for kubectl: up prints the ``export KUBECONFIG=`` line that uses it.
A replica that exits (killed, or deposed) is started again, as a standby. Ctrl-C (SIGINT) or
SIGTERM stops everything, replicas first, and exits 0. Bad flags exit 2; a part that does not start
exits 1 with its output.

``--tls`` secures every connection with `podsched certs` files (made in ``--certs-dir``, default
DATA_DIR/pki, unless a CA is there already): API servers serve mutual TLS and tokens, a local etcd
requires client certificates, replicas authenticate as the ``scheduler`` user. It prints the variables
that make the CLI the ``admin`` user of the cluster.

``--ui`` also runs the web view, `podsched ui` (as the ``readonly`` user with ``--tls``), restarted as
the rest is, and prints its URL.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from pathlib import Path

from cluster.cli.common import parse_duration, stop_signals
from cluster.launcher.localcluster import DEFAULT_UI_LISTEN, LocalCluster, UpConfig, UpConfigError, UpFailed
from cluster.launcher.supervisor import stamped
from scheduler.leaderelection import (
    DEFAULT_LEASE_DURATION_S,
    DEFAULT_RENEW_DEADLINE_S,
    DEFAULT_RETRY_PERIOD_S,
    LeaderElectionTimings,
)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
DEFAULT_LISTEN = "127.0.0.1:7443"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "up",
        help="run API server(s) and scheduler replicas with leader election, restarting what exits",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument("--replicas", type=int, default=3, help="scheduler replicas (default 3)")
    store = parser.add_mutually_exclusive_group()
    store.add_argument("--etcd", metavar="ENDPOINTS", default="",
                       help="use this etcd cluster (host:port,host:port,...) instead of the embedded store")
    store.add_argument("--etcd-local", type=int, default=0, metavar="MEMBERS",
                       help="start a local etcd cluster of this many members (e.g. 3) and use it")
    parser.add_argument("--apiservers", type=int, default=1,
                        help="API servers (more than 1 needs --etcd or --etcd-local; default 1)")
    parser.add_argument("--nodes", type=int, default=0,
                        help="create nodes node-1..node-N of 8 cpu, 32Gi and 110 pods (default 0)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="keep the store's data here (default: a temporary directory, removed on exit)")
    parser.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT",
                        help="the first API server's address; port 0 picks a free one "
                        f"(default {DEFAULT_LISTEN})")
    parser.add_argument("--http-listen", default="", metavar="HOST:PORT",
                        help="where the first API server serves the Kubernetes HTTP API; port 0 picks a "
                        "free one (default: --listen's host, the port after its port)")
    for flag, default, what in (
        ("lease-duration", DEFAULT_LEASE_DURATION_S, "how long a standby waits for a silent leader"),
        ("renew-deadline", DEFAULT_RENEW_DEADLINE_S, "how long the leader retries renewing before it stops"),
        ("retry-period", DEFAULT_RETRY_PERIOD_S, "the pause between acquire and renew attempts"),
    ):
        parser.add_argument(f"--leader-elect-{flag}", type=parse_duration, default=default,
                            metavar="DURATION", help=f"{what} (default {default:g}s)")
    parser.add_argument("--tls", action="store_true",
                        help="TLS and authentication everywhere, with certificates made by podsched certs")
    parser.add_argument("--certs-dir", type=Path, default=None, metavar="DIR",
                        help="where the certificates are, made when absent (default: DATA_DIR/pki)")
    parser.add_argument("--ui", action="store_true",
                        help="also serve the read-only web view of the cluster (podsched ui)")
    parser.add_argument("--ui-listen", default=None, metavar="HOST:PORT",
                        help=f"where the web view serves, with --ui; port 0 picks a free one "
                        f"(default {DEFAULT_UI_LISTEN})")
    parser.add_argument("--ui-allowed-host", dest="ui_allowed_hosts", action="append", default=[],
                        metavar="NAME[:PORT]",
                        help="with --ui: a name the web view answers besides its address (its "
                        "--allowed-host); repeatable")
    parser.set_defaults(func=run)


def config_from(args: argparse.Namespace) -> UpConfig:
    """The cluster the flags describe; UpConfigError naming the flag when they make no sense."""
    host, sep, port = args.listen.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise UpConfigError("--listen", f"expected HOST:PORT, got {args.listen!r}")
    endpoints = tuple(part.strip() for part in args.etcd.split(",") if part.strip())
    if args.etcd and not endpoints:
        raise UpConfigError("--etcd", f"expected host:port[,host:port...], got {args.etcd!r}")
    try:
        timings = LeaderElectionTimings(
            lease_duration_s=args.leader_elect_lease_duration,
            renew_deadline_s=args.leader_elect_renew_deadline,
            retry_period_s=args.leader_elect_retry_period,
        )
    except ValueError as exc:
        raise UpConfigError("--leader-elect-*", str(exc)) from None
    if args.ui_listen is not None and not args.ui:
        raise UpConfigError("--ui-listen", "applies with --ui only")
    if args.ui_allowed_hosts and not args.ui:
        raise UpConfigError("--ui-allowed-host", "applies with --ui only")
    return UpConfig(
        replicas=args.replicas, apiservers=args.apiservers, etcd=endpoints, etcd_local=args.etcd_local,
        nodes=args.nodes, data_dir=args.data_dir, host=host, port=int(port), http_listen=args.http_listen,
        timings=timings,
        tls=args.tls, certs_dir=args.certs_dir, ui=args.ui, ui_listen=args.ui_listen or DEFAULT_UI_LISTEN,
        ui_allowed_hosts=tuple(args.ui_allowed_hosts),
    )


def say(text: str) -> None:
    print(stamped(text), flush=True)


def run(args: argparse.Namespace) -> int:
    try:
        config = config_from(args)
    except UpConfigError as exc:
        print(f"podsched up: {exc}", file=sys.stderr, flush=True)
        return EXIT_USAGE
    return asyncio.run(_up(config))


async def _up(config: UpConfig) -> int:
    # Caught from the start: Ctrl-C while the processes start still stops whatever has started.
    with stop_signals() as stop:
        return await _run(config, stop)


async def _run(config: UpConfig, stop: asyncio.Event) -> int:
    cluster = LocalCluster(config, report=say)
    starting = asyncio.create_task(cluster.start())
    stopping = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not starting.done():
            starting.cancel()
            say("stopping before everything has started")
            with contextlib.suppress(asyncio.CancelledError, UpFailed):
                await starting
            return EXIT_OK
        try:
            starting.result()
        except UpFailed as exc:
            print(f"podsched up: {exc}", file=sys.stderr, flush=True)
            return EXIT_FAILED
        apiservers = f"{config.apiservers} API server{'s' if config.apiservers > 1 else ''}"
        say(f"up: {apiservers} and {config.replicas} scheduler replicas; Ctrl-C stops everything")
        for name, value in cluster.client_env().items():
            say(f"export {name}={value}")
        say(f"export KUBECONFIG={cluster.kubeconfig}")
        await stopping
        say("stopping: the scheduler replicas, then the API servers")
        await cluster.stop()
        say("stopped: every process has exited")
        return EXIT_OK
    finally:
        stopping.cancel()
        await cluster.stop()
