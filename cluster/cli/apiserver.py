"""`podsched apiserver`: run the API server on the embedded store (default) or on etcd.

    podsched apiserver [--listen 127.0.0.1:7443] [--data-dir DIR | --etcd host:port,...]
                       [--compaction-interval 5m] [--controllers '*'] [--pod-gc-quarantine 40s]
                       [--resource-quota-sync-period 5m] [--volume-provisioners NAME,...]
                       [--tls-cert-file FILE --tls-private-key-file FILE] [--client-ca-file FILE]
                       [--token-auth-file FILE [--insecure-allow-plaintext-tokens]]
                       [--authorization-policy-file FILE]
                       [--etcd-cafile FILE --etcd-certfile FILE --etcd-keyfile FILE]

The security flags are kube-apiserver's: TLS with a serving certificate, client certificates verified
against ``--client-ca-file`` (CN = user, O = groups), bearer tokens from a static token file, roles from
a policy file (cluster/apiserver/auth). Without ``--token-auth-file`` or ``--client-ca-file`` nobody is
authenticated and the server serves loopback only. A token file without TLS is refused on a non-loopback
address unless ``--insecure-allow-plaintext-tokens`` accepts tokens in clear text. ``--etcd-*`` open
etcd over TLS with a client certificate (etcd's client-cert auth). `podsched certs` writes every one of
these files.
                       [--max-requests-inflight 60] [--max-mutating-requests-inflight 30]
                       [--request-timeout 1m] [--max-watches-per-user 100] [--max-page-size 5000]
                       [--metrics-addr 127.0.0.1:7444] [--http-listen 127.0.0.1:6443]
                       [--enforce-leader-fencing [--fenced-lease kube-system/kube-scheduler ...]]

The limits (cluster/apiserver/limits.py) each refuse with an error naming the limit: a unary call
running past ``--request-timeout`` (kube-apiserver's flag) ends DEADLINE_EXCEEDED, a user's watch past
``--max-watches-per-user`` RESOURCE_EXHAUSTED (admins are exempt), a List ``limit`` above
``--max-page-size`` INVALID_ARGUMENT.

``--enforce-leader-fencing`` (off by default, so that plain kube-scheduler clients work; on in
`podsched up`) makes the server enforce leadership (cluster/apiserver/leadership.py): a non-admin's
Bind, change of a pod's nominatedNodeName, and pod delete by a caller that may bind pods need a fence,
and a Lease changes holder only once released or expired by the server's own clock. A fence must then
name a Lease the schedulers elect their leader in: ``--fenced-lease NAMESPACE/NAME``, once per Lease
(default kube-system/kube-scheduler, kube-scheduler's), for schedulers run with another
``--leader-elect-resource-namespace/--leader-elect-resource-name``.

``--metrics-addr`` serves plain HTTP there: ``/metrics`` (kube-apiserver's request, watch and flow-control
metrics), ``/livez``, ``/healthz`` and ``/readyz``; without it there is no HTTP endpoint.

``--http-listen`` serves the Kubernetes HTTP API (JSON) there beside gRPC, for kubectl and the official
clients (cluster/apiserver/http): HTTPS with the TLS flags' certificate, client CA and tokens, plain HTTP
where gRPC serves plaintext. Its line comes before the serving line::

    podsched apiserver: Kubernetes HTTP API on https://127.0.0.1:6443

Once serving it prints one line to stderr, which scripts and tests wait for (with ``--listen
127.0.0.1:0`` it names the port picked), after the HTTP endpoints' line when there are some::

    podsched apiserver: metrics and health on http://127.0.0.1:7444
    podsched apiserver serving on 127.0.0.1:7443 (store: sqlite /home/me/.local/share/podsched)

Then it starts the controllers (``--controllers``, cluster/cli/controllers.py: ``*``, the default, is
all of them; ``disruption`` keeps every PodDisruptionBudget's status current, ``podgc`` deletes the pods
bound to a node that has been gone for ``--pod-gc-quarantine``, ``resourcequota`` recounts every
ResourceQuota's usage from its pods, at least every ``--resource-quota-sync-period``, ``podgroup`` keeps
every PodGroup's status current from its pods, ``leasecandidategc`` deletes the LeaseCandidates nobody
renewed for 30 minutes, ``resourceclaim`` makes pods' ResourceClaims from their templates and releases
those of pods that are gone or done, ``persistentvolume-binder`` binds PersistentVolumeClaims to
PersistentVolumes and reclaims released ones, ``ephemeral-volume`` makes the claims of pods' ephemeral
volumes, ``volume-provisioner`` makes the volumes of claims handed to the StorageClass provisioners it
serves: ``--volume-provisioners``, all but kubernetes.io/no-provisioner by default) as clients of its
own address, as
kube-controller-manager is a client of kube-apiserver, with the server's loopback identity
(cluster/cli/loopback.py); ``--controllers none`` runs the bare server.

SIGTERM or SIGINT stops it cleanly (exit 0): first the controllers, while the server still answers,
then the server: watches end, calls in flight get a few seconds, the store is closed. A store that
cannot be opened, an address that cannot be bound, or a security file that cannot be used (named with
its flag) is reported on one line and the exit code is 1; so is a controller that fails (the server is
stopped with it).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prometheus_client import disable_created_metrics

from cluster.api.fencing import SCHEDULER_LEASE, LeaseRef
from cluster.apiserver.auth.flagfiles import read_flag_file
from cluster.apiserver.flowcontrol import FlowControlConfig
from cluster.apiserver.flowcontrol.config import (
    DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT,
    DEFAULT_MAX_REQUESTS_INFLIGHT,
)
from cluster.apiserver.leadership import FENCED_LEASE_FLAG
from cluster.apiserver.limits import (
    DEFAULT_MAX_PAGE_SIZE,
    DEFAULT_MAX_WATCHES_PER_USER,
    DEFAULT_REQUEST_TIMEOUT_S,
    ApiLimits,
)
from cluster.apiserver.server import ALLOW_PLAINTEXT_TOKENS_FLAG, ApiServer, ApiServerOptions
from cluster.cli import eventloop
from cluster.cli.common import http_address, parse_duration, positive_duration, stop_signals
from cluster.cli.controllers import (
    CONTROLLERS,
    parse_controllers,
    parse_provisioners,
    run_controllers,
)
from cluster.cli.loopback import Loopback
from cluster.client import Client, ClientCredentials
from cluster.controllers import DEFAULT_QUARANTINE_S, DEFAULT_SYNC_PERIOD_S, ControllerSettings
from store.base import Store, StoreError
from store.factory import open_store

DEFAULT_LISTEN = "127.0.0.1:7443"
#: kube-apiserver's --etcd-compaction-interval default.
DEFAULT_COMPACTION_INTERVAL_S = 300.0
#: How long calls in flight may take to finish when the server is told to stop.
STOP_GRACE_S = 5.0
#: How long to wait for the store to answer at start before giving up with an error.
STORE_OPEN_TIMEOUT_S = 30.0
#: How long the controllers get to stop (close their watches) before the server stops anyway.
CONTROLLERS_STOP_S = 5.0
#: Next to the API port (kube-apiserver serves /metrics on its own HTTPS port; ours speaks gRPC).
EXAMPLE_METRICS_ADDRESS = "127.0.0.1:7444"

log = logging.getLogger(__name__)

def default_data_dir() -> str:
    """$XDG_DATA_HOME/podsched, else ~/.local/share/podsched."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "podsched")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "apiserver",
        help="run the API server",
        description="Serve the podsched API over gRPC, on the embedded store or on etcd.",
    )
    parser.add_argument(
        "--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT",
        help=f"address to serve on; port 0 picks a free port (default {DEFAULT_LISTEN})",
    )
    backend = parser.add_mutually_exclusive_group()
    backend.add_argument(
        "--data-dir", metavar="DIR",
        help="directory of the embedded store (default: $XDG_DATA_HOME/podsched or ~/.local/share/podsched)",
    )
    backend.add_argument(
        "--etcd", metavar="HOST:PORT[,HOST:PORT...]", help="use the etcd cluster at these endpoints"
    )
    parser.add_argument(
        "--compaction-interval", type=parse_duration, default=DEFAULT_COMPACTION_INTERVAL_S,
        metavar="DURATION", help="time between store compactions, like 5m or 30s (default 5m)",
    )
    parser.add_argument(
        "--controllers", type=parse_controllers, default=CONTROLLERS, metavar="LIST",
        help="controllers to run beside the server, as its clients, as a comma list: '*' for all, a "
        "name to turn one on, -name to turn one off ('*,-podgc'), or none. disruption keeps every "
        "PodDisruptionBudget's status current; podgc deletes the pods bound to a node that no longer "
        "exists; resourcequota recounts every ResourceQuota's usage from its pods; podgroup keeps every "
        "PodGroup's status current from its pods; leasecandidategc deletes the LeaseCandidates nobody "
        "renewed for 30 minutes; resourceclaim makes pods' ResourceClaims; persistentvolume-binder binds "
        "PersistentVolumeClaims to PersistentVolumes; ephemeral-volume makes the claims of pods' ephemeral "
        "volumes; volume-provisioner makes the volumes of claims handed to a provisioner (default '*')",
    )
    parser.add_argument(
        "--pod-gc-quarantine", type=parse_duration, default=DEFAULT_QUARANTINE_S,
        metavar="DURATION", help="how long a node must stay gone before podgc reads it once more and, still "
        f"gone, deletes the pods bound to it (default {DEFAULT_QUARANTINE_S:g}s)",
    )
    parser.add_argument(
        "--resource-quota-sync-period", type=positive_duration("resource quota sync period"),
        default=DEFAULT_SYNC_PERIOD_S, metavar="DURATION",
        help="how often resourcequota recounts every ResourceQuota's usage from its pods, besides the "
        f"recounts that quota and pod changes cause (default {DEFAULT_SYNC_PERIOD_S / 60:g}m)",
    )
    parser.add_argument(
        "--volume-provisioners", type=parse_provisioners, default=(), metavar="NAME,...",
        help="the StorageClass provisioners volume-provisioner makes volumes for, as a comma list "
        "(default: every provisioner but kubernetes.io/no-provisioner)",
    )
    # kube-apiserver's flags; as there with API Priority and Fairness, only their sum counts.
    parser.add_argument(
        "--max-requests-inflight", type=int, default=DEFAULT_MAX_REQUESTS_INFLIGHT, metavar="N",
        help="with --max-mutating-requests-inflight, summed into the server's concurrency limit, which "
        "flow control shares among its priority levels when authentication is on "
        f"(default {DEFAULT_MAX_REQUESTS_INFLIGHT})",
    )
    parser.add_argument(
        "--max-mutating-requests-inflight", type=int, default=DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT,
        metavar="N", help=f"see --max-requests-inflight (default {DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT})",
    )
    parser.add_argument(
        "--metrics-addr", type=http_address, default=None, metavar="HOST:PORT",
        help="serve /metrics, /livez, /healthz and /readyz over plain HTTP there, e.g. "
        f"{EXAMPLE_METRICS_ADDRESS}; port 0 picks a free port (default: none)",
    )
    parser.add_argument(
        "--http-listen", type=http_address, default=None, metavar="HOST:PORT",
        help="serve the Kubernetes HTTP API there too (kubectl, client-go, the Python client), with the "
        "same TLS, tokens and roles as gRPC; port 0 picks a free port (default: none)",
    )
    limits = parser.add_argument_group("limits (cluster/apiserver/limits.py)")
    limits.add_argument(
        "--request-timeout", type=positive_duration("request timeout"), default=DEFAULT_REQUEST_TIMEOUT_S,
        metavar="DURATION", help="longest a call other than a watch may run before it is cut with "
        "DEADLINE_EXCEEDED, like kube-apiserver's (default 1m)",
    )
    limits.add_argument(
        "--max-watches-per-user", type=_at_least_one("--max-watches-per-user"),
        default=DEFAULT_MAX_WATCHES_PER_USER, metavar="N",
        help="watches one user may hold open at once; system:masters is exempt "
        f"(default {DEFAULT_MAX_WATCHES_PER_USER})",
    )
    limits.add_argument(
        "--max-page-size", type=_at_least_one("--max-page-size"), default=DEFAULT_MAX_PAGE_SIZE,
        metavar="N", help=f"largest limit a List may ask for (default {DEFAULT_MAX_PAGE_SIZE})",
    )
    parser.add_argument(
        "--enforce-leader-fencing", action="store_true",
        help="enforce scheduler leadership: refuse a non-admin's unfenced Bind, nomination and pod delete "
        "by a caller that may bind pods, and let a Lease change holder only once it is released or has "
        "expired by this server's clock (default: off, as kube-apiserver)",
    )
    parser.add_argument(
        FENCED_LEASE_FLAG, dest="fenced_leases", action="append", type=_lease, default=None,
        metavar="NAMESPACE/NAME",
        help="with --enforce-leader-fencing, a Lease whose fences the server takes: the one the schedulers "
        "elect their leader in; repeat it for several (default: "
        f"{SCHEDULER_LEASE}, kube-scheduler's)",
    )
    security = parser.add_argument_group("security (kube-apiserver's flags)")
    for flag, text in (
        ("--tls-cert-file", "PEM certificate (chain) to serve TLS with"),
        ("--tls-private-key-file", "PEM private key of --tls-cert-file"),
        ("--client-ca-file", "PEM CA bundle: require client certificates it signed (CN = user, O = groups)"),
        ("--token-auth-file", 'static token file: token,user,uid,"group1,group2" per line'),
        ("--authorization-policy-file", "YAML roles and bindings (default: the built-in group bindings)"),
        ("--etcd-cafile", "PEM CA bundle that signed etcd's certificates; given, etcd is reached over TLS"),
        ("--etcd-certfile", "PEM client certificate for etcd (etcd's --client-cert-auth)"),
        ("--etcd-keyfile", "PEM private key of --etcd-certfile"),
    ):
        security.add_argument(flag, metavar="FILE", default=None, help=text)
    security.add_argument(
        ALLOW_PLAINTEXT_TOKENS_FLAG, dest="allow_plaintext_tokens", action="store_true",
        help="with --token-auth-file and no TLS, serve a non-loopback --listen address anyway, bearer "
        "tokens in clear text (refused without it)",
    )
    parser.set_defaults(func=run)



def _at_least_one(flag: str) -> Callable[[str], int]:
    """An argparse type: a whole number of at least 1, ``flag`` named when it is not."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid {flag} {text!r}: not a whole number") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"invalid {flag} {text!r}: must be at least 1")
        return value

    return parse


def _lease(text: str) -> LeaseRef:
    """An argparse type: ``NAMESPACE/NAME``."""
    try:
        return LeaseRef.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # kube-apiserver's metrics have no "_created" series; prometheus-client adds them unless told not to.
    disable_created_metrics()
    data_dir = os.path.abspath(args.data_dir or default_data_dir())
    return eventloop.run(_serve(args, data_dir))


def _fail(message: str) -> int:
    print(f"podsched apiserver: {message}", file=sys.stderr, flush=True)
    return 1


@dataclass(frozen=True, slots=True)
class EtcdTlsFiles:
    """The PEM contents of --etcd-cafile, --etcd-certfile and --etcd-keyfile."""

    ca_cert: bytes
    cert_chain: bytes | None = None
    cert_key: bytes | None = None


def etcd_tls_files(args: argparse.Namespace) -> EtcdTlsFiles | None:
    """The etcd TLS flags' files, read; None without them; ValueError naming the flag and file."""
    given = {flag: getattr(args, flag.removeprefix("--").replace("-", "_"))
             for flag in ("--etcd-cafile", "--etcd-certfile", "--etcd-keyfile")}
    named = [flag for flag, path in given.items() if path is not None]
    if not named:
        return None
    if args.etcd is None:
        raise ValueError(f"{named[0]} applies to etcd only: add --etcd ENDPOINTS")
    if (given["--etcd-certfile"] is None) != (given["--etcd-keyfile"] is None):
        have, need = (("--etcd-certfile", "--etcd-keyfile") if given["--etcd-keyfile"] is None
                      else ("--etcd-keyfile", "--etcd-certfile"))
        raise ValueError(f"{have} needs {need}: the certificate and its private key go together")
    if given["--etcd-cafile"] is None:
        raise ValueError(f"{named[0]} needs --etcd-cafile, the CA that signed etcd's certificates")

    def read(flag: str) -> bytes | None:
        path = given[flag]
        if path is None:
            return None
        data = read_flag_file(flag, path, ValueError)
        marker = b"PRIVATE KEY-----" if flag == "--etcd-keyfile" else b"-----BEGIN CERTIFICATE-----"
        if marker not in data:
            what = "PEM private key" if flag == "--etcd-keyfile" else "PEM certificate"
            raise ValueError(f"{flag} {path}: holds no {what}")
        return data

    ca_cert = read("--etcd-cafile")
    assert ca_cert is not None
    return EtcdTlsFiles(ca_cert, read("--etcd-certfile"), read("--etcd-keyfile"))


def _options(args: argparse.Namespace) -> ApiServerOptions:
    if args.fenced_leases and not args.enforce_leader_fencing:
        raise ValueError(f"{FENCED_LEASE_FLAG} applies with --enforce-leader-fencing only")
    flow_control = FlowControlConfig(
        max_requests_inflight=args.max_requests_inflight,
        max_mutating_requests_inflight=args.max_mutating_requests_inflight,
    )
    return ApiServerOptions(
        listen=args.listen,
        compaction_interval_s=args.compaction_interval,
        flow_control=flow_control,
        limits=ApiLimits(
            request_timeout_s=args.request_timeout,
            max_watches_per_user=args.max_watches_per_user,
            max_page_size=args.max_page_size,
        ),
        tls_cert_file=args.tls_cert_file,
        tls_private_key_file=args.tls_private_key_file,
        client_ca_file=args.client_ca_file,
        token_auth_file=args.token_auth_file,
        authorization_policy_file=args.authorization_policy_file,
        allow_plaintext_tokens=args.allow_plaintext_tokens,
        metrics_listen=args.metrics_addr,
        http_listen=args.http_listen,
        enforce_leader_fencing=args.enforce_leader_fencing,
        fenced_leases=tuple(args.fenced_leases or (SCHEDULER_LEASE,)),
    )


async def _serve(args: argparse.Namespace, data_dir: str) -> int:
    """Serve until signalled; ``data_dir`` is used unless ``--etcd`` is given."""
    try:
        options = _options(args)
        etcd_tls = etcd_tls_files(args)
    except ValueError as exc:
        return _fail(str(exc))
    if args.etcd is not None:
        endpoints = [endpoint.strip() for endpoint in args.etcd.split(",") if endpoint.strip()]
        if not endpoints:
            return _fail("--etcd needs at least one host:port")
        description = "etcd " + ",".join(endpoints) + (" (TLS)" if etcd_tls is not None else "")
        opening = open_store(
            etcd_endpoints=endpoints,
            ca_cert=etcd_tls.ca_cert if etcd_tls is not None else None,
            cert_chain=etcd_tls.cert_chain if etcd_tls is not None else None,
            cert_key=etcd_tls.cert_key if etcd_tls is not None else None,
        )
    else:
        description = f"sqlite {data_dir}"
        opening = open_store(data_dir=data_dir)

    with stop_signals() as signalled:
        try:
            store = await asyncio.wait_for(opening, STORE_OPEN_TIMEOUT_S)
        except (StoreError, OSError, ValueError, TimeoutError) as exc:
            why = f"{exc or type(exc).__name__}{_etcd_tls_hint(str(exc), etcd_tls, args)}"
            return _fail(f"cannot open the store ({description}): {why}")
        loopback = Loopback.prepare(options)
        try:
            return await _serve_on(store, loopback, description, signalled, args)
        finally:
            await store.close()
            if loopback.workdir is not None:
                shutil.rmtree(loopback.workdir, ignore_errors=True)


def _etcd_tls_hint(failure: str, etcd_tls: EtcdTlsFiles | None, args: argparse.Namespace) -> str:
    """What a failure to reach etcd that looks like a TLS refusal may mean, given the flags."""
    if "CERTIFICATE_VERIFY_FAILED" in failure and etcd_tls is not None:
        return f" (etcd's certificate is not signed by the CA in --etcd-cafile {args.etcd_cafile})"
    if not any(marker in failure for marker in ("Socket closed", "TSI_", "andshake")):
        return ""
    if etcd_tls is None:
        return " (if etcd serves TLS, give --etcd-cafile, and --etcd-certfile and --etcd-keyfile if it " \
               "requires client certificates)"
    if etcd_tls.cert_chain is None:
        return " (etcd may require a client certificate: give --etcd-certfile and --etcd-keyfile)"
    return (f" (etcd refused the client certificate --etcd-certfile {args.etcd_certfile}: is it signed by "
            "the CA etcd trusts (its --trusted-ca-file)?)")


async def _serve_on(
    store: Store, loopback: Loopback, description: str, signalled: asyncio.Event, args: argparse.Namespace
) -> int:
    server = ApiServer(store, loopback.options)
    try:
        await asyncio.wait_for(server.start(), STORE_OPEN_TIMEOUT_S)
    except (StoreError, TimeoutError) as exc:
        await server.stop()
        return _fail(f"the store ({description}) does not answer: {exc or type(exc).__name__}")
    except OSError as exc:
        return _fail(str(exc))
    if server.metrics_url is not None:
        print(f"podsched apiserver: metrics and health on {server.metrics_url}", file=sys.stderr, flush=True)
    if server.http_url is not None:
        print(f"podsched apiserver: Kubernetes HTTP API on {server.http_url}", file=sys.stderr, flush=True)
    print(
        f"podsched apiserver serving on {server.address} (store: {description})", file=sys.stderr, flush=True
    )
    running = None
    if args.controllers:
        credentials = loopback.credentials(server.loopback_token)
        running = asyncio.create_task(
            _run_controllers(server.address, credentials, args), name="apiserver-controllers"
        )
    closed = asyncio.create_task(server.wait_closed(), name="apiserver-closed")
    signal_wait = asyncio.create_task(signalled.wait(), name="apiserver-signal")
    try:
        waiting = [closed, signal_wait] + ([running] if running is not None else [])
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        failure = await _stop_controllers(running)
        if signalled.is_set() or failure is not None:
            await server.stop(STOP_GRACE_S)
        await closed
    except Exception as exc:  # the server's background work failed: it has stopped itself
        return _fail(f"stopped: {type(exc).__name__}: {exc}")
    finally:
        signal_wait.cancel()
        if running is not None:
            running.cancel()
    if failure is not None:
        return _fail(f"stopped: the controllers failed: {failure}")
    return 0


def _own_address(address: str) -> str:
    """Where this process reaches its own server: a wildcard listen address means loopback."""
    host, _, port = address.rpartition(":")
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host in ("[::]", "::"):
        host = "[::1]"
    return f"{host}:{port}"


async def _run_controllers(address: str, credentials: ClientCredentials, args: argparse.Namespace) -> None:
    """The controllers, as clients of the server at ``address`` (never of its store): until cancelled."""
    async with Client(_own_address(address), credentials=credentials) as client:
        settings = ControllerSettings(pod_gc_quarantine_s=args.pod_gc_quarantine,
                                      resource_quota_sync_period_s=args.resource_quota_sync_period,
                                      volume_provisioners=args.volume_provisioners)
        await run_controllers(client, args.controllers, settings)


async def _stop_controllers(running: asyncio.Task[None] | None) -> str | None:
    """Cancel the controllers and give them CONTROLLERS_STOP_S to end; why they had ended on their own
    (None when they were still running, or never started)."""
    if running is None:
        return None
    if running.done():
        error = None if running.cancelled() else running.exception()
        if error is None:
            return "they ended without an error"
        log.error("the controllers failed", exc_info=error)
        return f"{type(error).__name__}: {error}"
    running.cancel()
    done, _ = await asyncio.wait([running], timeout=CONTROLLERS_STOP_S)
    if not done:
        log.warning("the controllers did not stop within %gs; stopping the server anyway", CONTROLLERS_STOP_S)
    return None
