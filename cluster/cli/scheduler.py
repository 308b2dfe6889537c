"""`podsched scheduler`: run the scheduler against an API server.

    podsched scheduler --server ADDR[,ADDR...] [--config FILE]
                       [--leader-elect=true] [--leader-elect-lease-duration 15s]
                       [--leader-elect-renew-deadline 10s] [--leader-elect-retry-period 2s]
                       [--leader-elect-resource-name kube-scheduler]
                       [--leader-elect-resource-namespace kube-system] [--replica-name NAME]
                       [--metrics-addr 127.0.0.1:10259] [--pod-max-in-unschedulable-pods-duration 5m]
                       [--seed N] [--plugin NAME=MODULE:FACTORY ...]
                       [--token T] [--certificate-authority FILE]
                       [--client-certificate FILE --client-key FILE]

It authenticates to the API server as a client command does (kubectl's flags, or $PODSCHED_TOKEN,
$PODSCHED_CA_FILE, $PODSCHED_CLIENT_CERT, $PODSCHED_CLIENT_KEY); `podsched certs` issues a
``scheduler`` user in the podsched:schedulers group.

``--config`` is a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1); without it the scheduler
runs kube-scheduler's default profile as ``default-scheduler`` and, with the same plugins, as
``scheduler-plugins-scheduler`` (the name Kubeflow's and KubeRay's gang pods carry). ``--plugin``
registers a plugin written in Python under NAME (``my_plugins.gpu:new``, or ``my_plugins.gpu`` for a
module with ``new``), so that the config can enable it by that name like an in-tree plugin (see
``examples/plugins/``).

Leader election is on by default, as in kube-scheduler: replicas race for the Lease
``--leader-elect-resource-namespace/--leader-elect-resource-name`` (kube-system/kube-scheduler), and only
the holder schedules; the others keep their caches warm. The flags override the config file's
``leaderElection`` section. Once its informers and metrics server are up it prints one line on stderr,
which scripts and tests wait for::

    podsched scheduler started (profiles: default-scheduler, scheduler-plugins-scheduler; \
        server 127.0.0.1:7443; metrics http://127.0.0.1:10259; identity host_5c0e...)

and, with leader election, one line each time its leadership changes::

    podsched scheduler: leading (lease kube-system/kube-scheduler, fencing token 1234)
    podsched scheduler: leader election lost: WHY          (then it exits 1: restart it as a standby)
    podsched scheduler: released the lease kube-system/kube-scheduler       (on SIGTERM, then exit 0)

``/readyz`` answers ok once the informers have synced; ``/healthz`` fails when the leader has not renewed
its lease within the renew deadline. SIGTERM or SIGINT stops it cleanly (exit 0; a leader first stops
scheduling, then releases the lease so that a standby takes over at once). An invalid config or flag is
reported on one line with exit code 2; a scheduler that cannot go on (its lease lost, its metrics
address taken, a loop failing) exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import os
import sys
from typing import Any

from prometheus_client import disable_created_metrics

from cluster.api.validation import is_config_map_key
from cluster.api.version import PODSCHED_VERSION
from cluster.cli import eventloop
from cluster.cli.common import (
    SERVER_ENV,
    add_credential_flags,
    credentials_from,
    http_address,
    parse_duration,
    server_address,
    stop_signals,
)
from cluster.client import FAIL_FAST_POLICY, Client, CredentialsError, Fence
from cluster.healthserver import HealthServer
from scheduler.config import ConfigError, LeaderElectionConfig, load_config
from scheduler.config.feature_gates import apply_feature_gates
from scheduler.framework.registry import PluginLoadError, Registry
from scheduler.leaderelection import (
    Candidacy,
    LeaderElectionTimings,
    LeaderElector,
    LeaseLock,
    LeaseLost,
    default_identity,
    replica_identity,
    validate_timings,
)
from scheduler.plugins.registry import IN_TREE
from scheduler.scheduler import Scheduler, SchedulerConfigError

#: kube-scheduler's secure port, on loopback.
DEFAULT_METRICS_ADDRESS = "127.0.0.1:10259"

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
#: How long the scheduler's tasks get to finish once told to stop, before the process exits anyway.
STOP_GRACE_S = 10.0
#: Go's strconv.ParseBool, which kube-scheduler's boolean flags use.
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def replica_name(text: str) -> str:
    """An argparse type: a name an identity (and so a LeaseCandidate's name) may start with."""
    problems = is_config_map_key(replica_identity(text, 0))
    if not text or problems:
        why = "; ".join(problems or ["empty"])
        raise argparse.ArgumentTypeError(f"invalid replica name {text!r}: {why}")
    return text


def parse_bool(text: str) -> bool:
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean {text!r}: use true or false")


def parse_plugin(text: str) -> tuple[str, str]:
    name, sep, target = text.partition("=")
    if not sep or not name or not target:
        raise argparse.ArgumentTypeError(
            f"invalid plugin {text!r}: use NAME=MODULE:FACTORY (or NAME=MODULE for a module with new())"
        )
    return name, target



def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "scheduler",
        help="run the scheduler",
        description="Schedule pending pods onto nodes, as kube-scheduler does.",
    )
    parser.add_argument(
        "--server", default=None,
        help=f"API server address host:port, or a comma-separated list to fail over between "
        f"(default: ${SERVER_ENV}, else 127.0.0.1:7443)",
    )
    parser.add_argument("--config", metavar="FILE", help="a KubeSchedulerConfiguration YAML file")
    parser.add_argument(
        "--leader-elect", type=parse_bool, nargs="?", const=True, default=None, metavar="BOOL",
        help="race for a Lease and schedule only while holding it, so that several replicas can run "
        "(default: the config's leaderElection.leaderElect, true)",
    )
    durations = (
        ("--leader-elect-lease-duration", "how long standbys wait after the last observed renewal before "
         "taking over (default 15s)"),
        ("--leader-elect-renew-deadline", "how long the leader keeps retrying a renewal before it stops "
         "leading; less than the lease duration (default 10s)"),
        ("--leader-elect-retry-period", "pause between attempts to acquire or renew (default 2s)"),
    )
    for flag, text in durations:
        parser.add_argument(flag, type=parse_duration, default=None, metavar="DURATION", help=text)
    parser.add_argument("--leader-elect-resource-name", default=None, metavar="NAME",
                        help="the Lease's name (default kube-scheduler)")
    parser.add_argument("--leader-elect-resource-namespace", default=None, metavar="NAMESPACE",
                        help="the Lease's namespace (default kube-system)")
    parser.add_argument("--leader-elect-resource-lock", default=None, choices=["leases"],
                        help="the kind of lock object: only leases, as in current Kubernetes")
    parser.add_argument(
        "--replica-name", type=replica_name, default=None, metavar="NAME",
        help="name this replica in its leader-election identity, NAME_pid<PID>_<8 hex> (as podsched up "
        "names its replicas scheduler-1..N); default: kube-scheduler's <hostname>_<uuid>",
    )
    parser.add_argument(
        "--metrics-addr", type=http_address, default=DEFAULT_METRICS_ADDRESS, metavar="HOST:PORT",
        help="where to serve /metrics, /healthz and /readyz; port 0 picks one "
        f"(default {DEFAULT_METRICS_ADDRESS})",
    )
    parser.add_argument(
        "--pod-max-in-unschedulable-pods-duration", type=parse_duration, default=None, metavar="DURATION",
        help="how long a pod may wait for a cluster event before it is retried anyway, like 5m or 90s "
        "(default 5m)",
    )
    parser.add_argument(
        "--feature-gates", default="", metavar="NAME=BOOL,...",
        help="kube-scheduler feature gates podsched has: SchedulerOpportunisticBatching (default true: pods "
        "signed alike reuse each other's Filter and Score work; false schedules every pod on its own)",
    )
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the random choice between equally good nodes (default: random)")
    parser.add_argument(
        "--plugin", type=parse_plugin, action="append", default=[], metavar="NAME=MODULE:FACTORY",
        help="register a plugin written in Python under NAME, so that --config can enable it (repeatable)",
    )
    add_credential_flags(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # kube-scheduler's metrics have no "_created" series; prometheus-client adds them unless told not to.
    disable_created_metrics()
    registry = Registry(IN_TREE)
    try:
        for name, target in args.plugin:
            registry.register(name, target)
            # Load it now, enabled or not: a plugin asked for by name that cannot load is a mistake to
            # report at start, not when a config first enables it.
            registry.load(name)
        config = load_config(args.config, registry=registry)
        apply_feature_gates(config, args.feature_gates)
    except (ConfigError, PluginLoadError, ValueError) as exc:
        return _fail(str(exc), EXIT_USAGE)
    try:
        config.leader_election = leader_election_settings(config.leader_election, args)
    except ValueError as exc:
        return _fail(str(exc), EXIT_USAGE)
    if args.pod_max_in_unschedulable_pods_duration is not None:
        if not args.pod_max_in_unschedulable_pods_duration > 0:
            return _fail("--pod-max-in-unschedulable-pods-duration must be positive", EXIT_USAGE)
        config.pod_max_in_unschedulable_pods_seconds = args.pod_max_in_unschedulable_pods_duration
    try:
        credentials = credentials_from(args)
    except CredentialsError as exc:  # a file that cannot be used: an error, as kubectl's exit 1
        return _fail(str(exc), EXIT_FAILED)
    try:
        client = Client(server_address(args), credentials=credentials)
        # The LeaseCandidate's own connection: the leader's fence, which the scheduler's client attaches to
        # its deletes, must not ride on the candidate's delete at a graceful stop.
        candidate_client = Client(server_address(args), credentials=credentials)
    except ValueError as exc:  # a malformed --server or $PODSCHED_SERVER
        return _fail(str(exc), EXIT_USAGE)
    return eventloop.run(_serve(client, candidate_client, args, config, registry))


#: Flag → LeaderElectionConfig field, for the flags that override the config file.
_LEADER_ELECTION_FLAGS = {
    "leader_elect": "leader_elect",
    "leader_elect_lease_duration": "lease_duration_seconds",
    "leader_elect_renew_deadline": "renew_deadline_seconds",
    "leader_elect_retry_period": "retry_period_seconds",
    "leader_elect_resource_name": "resource_name",
    "leader_elect_resource_namespace": "resource_namespace",
    "leader_elect_resource_lock": "resource_lock",
}


def leader_election_settings(
    configured: LeaderElectionConfig, args: argparse.Namespace
) -> LeaderElectionConfig:
    """The config file's leaderElection section with the flags given on top; ValueError naming the flags
    when the result is a combination client-go refuses."""
    given = {field: getattr(args, flag) for flag, field in _LEADER_ELECTION_FLAGS.items()
             if getattr(args, flag) is not None}
    settings = dataclasses.replace(configured, **given)
    if settings.leader_elect:
        problems = validate_timings(settings.lease_duration_seconds, settings.renew_deadline_seconds,
                                    settings.retry_period_seconds)
        for field, flag in (("resource_name", "--leader-elect-resource-name"),
                            ("resource_namespace", "--leader-elect-resource-namespace")):
            if not getattr(settings, field):
                problems.append(f"{flag} must not be empty")
        if problems:
            raise ValueError("invalid leader election settings: " + "; ".join(problems))
    return settings


def _fail(message: str, code: int) -> int:
    _say(message)
    return code


async def _serve(
    client: Client, candidate_client: Client, args: argparse.Namespace, config: Any, registry: Registry
) -> int:
    with stop_signals() as signalled:
        async with client, candidate_client:
            try:
                scheduler = Scheduler(client, config, registry=registry, rng_seed=args.seed)
            except (SchedulerConfigError, ConfigError) as exc:
                return _fail(str(exc), EXIT_USAGE)
            settings = config.leader_election
            identity = (replica_identity(args.replica_name, os.getpid()) if args.replica_name
                        else default_identity())
            elector = None
            candidacy = None
            if settings.leader_elect:
                elector = LeaderElector(
                    LeaseLock(client, settings.resource_namespace, settings.resource_name, identity),
                    LeaderElectionTimings(settings.lease_duration_seconds, settings.renew_deadline_seconds,
                                          settings.retry_period_seconds),
                )
                scheduler.metrics.register(elector.collector())
                candidacy = Candidacy(
                    candidate_client, settings.resource_namespace, settings.resource_name, identity,
                    interval_s=settings.lease_duration_seconds, binary_version=PODSCHED_VERSION,
                )
            health = scheduler.health_server(args.metrics_addr)
            try:
                await health.start()
            except OSError as exc:
                return _fail(f"cannot serve metrics on {args.metrics_addr}: {exc}", EXIT_FAILED)
            profiles = ", ".join(scheduler.profile_names)
            print(
                f"podsched scheduler started (profiles: {profiles}; server {','.join(client.servers)}; "
                f"metrics {health.url}; identity {identity})", file=sys.stderr, flush=True,
            )
            # Its own task: writing the candidate never delays acquiring or renewing the Lease.
            candidate = asyncio.create_task(candidacy.run(), name="lease candidate") if candidacy else None
            try:
                return await _run(scheduler, elector, health, signalled, settings,
                                  clients=(client, candidate_client))
            finally:
                if candidate is not None:
                    # Deleted whenever the process ends on its own; a killed replica's goes stale.
                    candidate.cancel()
                    await asyncio.wait((candidate,))


async def _run(
    scheduler: Scheduler, elector: LeaderElector | None, health: HealthServer, signalled: asyncio.Event,
    settings: LeaderElectionConfig, *, clients: tuple[Client, ...],
) -> int:
    """Schedule until a signal (exit 0 after a clean stop) or a failure (exit 1). ``clients``: the
    scheduler's, which stop waiting for unreachable servers once it is told to stop."""
    running = asyncio.create_task(
        scheduler.run(health=health, elector=elector, on_leading=_say_leading), name="scheduler")
    stop = asyncio.create_task(signalled.wait(), name="scheduler-signal")
    try:
        await asyncio.wait((running, stop), return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.cancel()
    if not running.done():
        # The last writes (the lease's release, the LeaseCandidate's delete) may go to an API server
        # stopped along with this process (`kill %1 %2`): one that refuses the connection is given up on at
        # once, as client-go's release does, not retried for the renew deadline. A standby takes over when
        # the lease runs out.
        for client in clients:
            client.retry_policy = FAIL_FAST_POLICY
        running.cancel()
        done, _ = await asyncio.wait((running,), timeout=STOP_GRACE_S)
        if not done:
            return _fail(f"did not stop within {STOP_GRACE_S:g}s: {scheduler.describe_tasks()}",
                         EXIT_FAILED)
        if elector is not None and elector.released:
            _say(f"released the lease {settings.resource_namespace}/{settings.resource_name}")
        print("podsched scheduler stopped", file=sys.stderr, flush=True)
        return EXIT_OK
    error = running.exception()
    causes = error.exceptions if isinstance(error, BaseExceptionGroup) else [error]
    for cause in causes:
        if isinstance(cause, LeaseLost):
            _fail(f"leader election lost: {cause}", EXIT_FAILED)
        else:
            _fail(f"stopped: {type(cause).__name__}: {cause}", EXIT_FAILED)
    return EXIT_FAILED


def _say_leading(fence: Fence) -> None:
    _say(f"leading (lease {fence.lease_namespace}/{fence.lease_name}, fencing token {fence.token})")


def _say(message: str) -> None:
    print(f"podsched scheduler: {message}", file=sys.stderr, flush=True)
