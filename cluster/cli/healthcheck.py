"""`podsched healthcheck`: ask one API server's standard gRPC health service whether it serves.

    podsched healthcheck [--server HOST:PORT] [--service NAME] [--timeout 3s] [--wait DURATION]
                         [--certificate-authority FILE [--client-certificate FILE --client-key FILE]]

Exit 0 when the answer is SERVING, 1 otherwise (NOT_SERVING, an unknown service, no answer), 2 for a
bad command line: what a container healthcheck needs, without grpc_health_probe in the image. It
prints one line either way, which `docker inspect` keeps in the container's health log::

    podsched healthcheck: 127.0.0.1:7443 is SERVING
    podsched healthcheck: cannot reach 127.0.0.1:7444: failed to connect to all addresses; ...

With ``--wait`` it asks again until the answer is SERVING or the duration has passed, for a script that
has just started a server in the background and goes on once it serves (one-shot client commands fail at
once on a refused connection, as kubectl does, rather than wait for a server to come up).

It checks exactly one server: a healthcheck answers for the container it runs in, and a list would
hide which member is down. The health service needs no identity, but a server serving TLS needs a TLS
client: ``--certificate-authority``, or its PODSCHED_* variable, as for every client command. A server
with ``--client-ca-file`` requires a client certificate from that CA on every connection, the health
service's included (gRPC Python cannot ask for one without requiring it); without one the check fails
saying so.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cluster.api import apiserver_pb2
from cluster.cli.common import (
    DEFAULT_SERVER,
    EXIT_ERROR,
    EXIT_OK,
    EXIT_USAGE,
    SERVER_ENV,
    add_tls_flags,
    credentials_from,
    positive_duration,
)
from cluster.client import ClientCredentials, CredentialsError
from cluster.client.handshake import CLOSED_AFTER_HANDSHAKE, refused_client

#: The health entry of the API alone (the server's "" entry covers the whole process).
API_SERVICE = apiserver_pb2.DESCRIPTOR.services_by_name["ApiServer"].full_name
#: One deadline for connecting and asking. A server that answers at all answers health checks in
#: milliseconds; 3 s leaves room for a loaded machine and stays under Docker's default 30 s timeout.
DEFAULT_TIMEOUT_S = 3.0
#: How long ``--wait`` leaves between two checks: a server starting up binds its port within a second.
WAIT_INTERVAL_S = 0.2


def _single_address(text: str) -> str:
    host, _, port = text.rpartition(":")
    if "," in text:
        raise argparse.ArgumentTypeError(
            f"one address only, got {text!r}: a healthcheck checks the one server it runs beside"
        )
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"invalid server address {text!r}: expected host:port")
    return text


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "healthcheck",
        help="check that an API server serves (gRPC health service)",
        description="Ask an API server's grpc.health.v1 service for its status: exit 0 when SERVING, "
        "1 otherwise. For container healthchecks.",
    )
    parser.add_argument(
        "--server", type=_single_address, default=None, metavar="HOST:PORT",
        help=f"the API server to check (default: ${SERVER_ENV} when it names one server, "
        f"else {DEFAULT_SERVER})",
    )
    parser.add_argument(
        "--service", default="", metavar="NAME",
        help=f'the health service entry to ask about; "" (the default) is the server as a whole, '
        f"{API_SERVICE} the API alone",
    )
    parser.add_argument(
        "--timeout", type=positive_duration("timeout"), default=DEFAULT_TIMEOUT_S, metavar="DURATION",
        help=f"give up after this long, connecting included (default {DEFAULT_TIMEOUT_S:g}s)",
    )
    parser.add_argument(
        "--wait", type=positive_duration("wait"), default=None, metavar="DURATION",
        help="ask again until the server is SERVING or this long has passed (default: ask once)",
    )
    add_tls_flags(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    server = args.server
    if server is None:
        try:
            server = _single_address(os.environ.get(SERVER_ENV) or DEFAULT_SERVER)
        except argparse.ArgumentTypeError as exc:
            print(f"podsched healthcheck: ${SERVER_ENV}: {exc}; pass --server", file=sys.stderr, flush=True)
            return EXIT_USAGE
    try:
        credentials = credentials_from(args)
    except CredentialsError as exc:
        print(f"podsched healthcheck: {exc}", file=sys.stderr, flush=True)
        return EXIT_ERROR
    code, line = asyncio.run(check_until_serving(server, args.service, args.timeout, args.wait, credentials))
    print(f"podsched healthcheck: {line}", file=sys.stdout if code == EXIT_OK else sys.stderr, flush=True)
    return code


async def check_until_serving(
    server: str, service: str, timeout_s: float, wait_s: float | None, credentials: ClientCredentials | None
) -> tuple[int, str]:
    """``check`` once, or with ``wait_s`` again every WAIT_INTERVAL_S until SERVING or ``wait_s`` has
    passed (each check still bounded by ``timeout_s``): the last answer."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + (wait_s or 0.0)
    while True:
        code, line = await check(server, service, timeout_s, credentials)
        if code == EXIT_OK or loop.time() + WAIT_INTERVAL_S > deadline:
            return code, line
        await asyncio.sleep(WAIT_INTERVAL_S)


async def check(
    server: str, service: str, timeout_s: float, credentials: ClientCredentials | None = None
) -> tuple[int, str]:
    """The exit code and the line to print for one health check of ``server``."""
    what = f"{server} (service {service!r})" if service else server
    credentials = credentials or ClientCredentials()
    async with credentials.channel(server) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            # The stubs of grpcio-health-checking leave out the methods HealthStub sets up when created.
            answer = await stub.Check(  # type: ignore[attr-defined]
                health_pb2.HealthCheckRequest(service=service), timeout=timeout_s)
        except grpc.aio.AioRpcError as err:
            refused = await refused_client(server, err, credentials)
            if refused is not None:
                return EXIT_ERROR, f"{what} {CLOSED_AFTER_HANDSHAKE}: {refused}"
            return EXIT_ERROR, _failure(what, err, timeout_s)
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status)
    serving = answer.status == health_pb2.HealthCheckResponse.SERVING
    return (EXIT_OK if serving else EXIT_ERROR), f"{what} is {status}"


def _failure(what: str, err: grpc.aio.AioRpcError, timeout_s: float) -> str:
    code = err.code()
    if code == grpc.StatusCode.NOT_FOUND:
        return f"{what}: the server does not know this service"
    if code == grpc.StatusCode.UNIMPLEMENTED:
        return f"{what} does not serve the gRPC health service (grpc.health.v1)"
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return f"{what} did not answer within {timeout_s:g}s"
    return f"cannot reach {what}: {err.details() or code.name}"
