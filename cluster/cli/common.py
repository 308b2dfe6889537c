"""What every client command shares: the ``--server`` flag and the credential flags (kubectl's names:
``--token``, ``--certificate-authority``, ``--client-certificate``, ``--client-key``, each with a
PODSCHED_* environment variable), kubectl's error lines and exit codes, and the way a synchronous
``run(args)`` drives an async body.

Exit codes follow kubectl: 0 success, 1 an error (from the server, the server unreachable, a credential
file that cannot be used), 2 a usage error (argparse's own code for bad flags).

Each command says how long it waits for a server nobody serves (``connect``'s retry policy): a one-shot
command (get, describe, apply, delete) gives up at once, as kubectl does; a long-running one (ui, load,
chaos) waits out a restart within its --request-timeout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from cluster.api import errors
from cluster.api.kinds import Kind, kind_by_name
from cluster.client import (
    Client,
    ClientCredentials,
    CredentialsError,
    RequestTooLarge,
    RetryPolicy,
    ServerUnreachable,
    TlsError,
)
from cluster.client.credentials import CA_FILE_ENV, CLIENT_CERT_ENV, CLIENT_KEY_ENV, TOKEN_ENV
from cluster.healthserver import parse_address

DEFAULT_SERVER = "127.0.0.1:7443"
SERVER_ENV = "PODSCHED_SERVER"

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2

# How long one command waits for a server that does not answer: long enough to ride out an API server
# restart (the client retries UNAVAILABLE with backoff and fails over), short enough that a typo in
# --server does not look like a hang.
CLIENT_TIMEOUT_S = 10.0

#: kubectl's StatusReason for each error class, as printed in `Error from server (NotFound): ...`.
_REASONS: dict[type[errors.ApiError], str] = {
    errors.NotFound: "NotFound",
    errors.AlreadyExists: "AlreadyExists",
    errors.Conflict: "Conflict",
    errors.Invalid: "Invalid",
    errors.Forbidden: "Forbidden",
    errors.PermissionDenied: "Forbidden",
    errors.TooManyRequests: "TooManyRequests",
    errors.Timeout: "Timeout",
    errors.Expired: "Expired",
    errors.Unavailable: "ServiceUnavailable",
    errors.InternalError: "InternalError",
}


class UsageError(Exception):
    """A command line that makes no sense (exit code 2)."""


def add_server_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--server",
        default=None,
        help=f"API server address host:port, or a comma-separated list to fail over between "
        f"(default: ${SERVER_ENV}, else {DEFAULT_SERVER})",
    )
    parser.add_argument(
        "--request-timeout",
        type=float,
        default=CLIENT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"give up on a server that does not answer after this long (default {CLIENT_TIMEOUT_S:g})",
    )
    add_credential_flags(parser)


def add_credential_flags(parser: argparse.ArgumentParser) -> None:
    """kubectl's authentication flags; each defaults to its environment variable."""
    parser.add_argument("--token", default=None,
                        help=f"bearer token for authentication to the API server (default: ${TOKEN_ENV})")
    add_tls_flags(parser)


def add_tls_flags(parser: argparse.ArgumentParser) -> None:
    """kubectl's TLS flags (a command that sends no token, like healthcheck, takes only these)."""
    parser.add_argument(
        "--certificate-authority", default=None, metavar="FILE",
        help=f"PEM file of the CA that signed the API server's certificate; given, the connection uses TLS "
        f"(default: ${CA_FILE_ENV})",
    )
    parser.add_argument("--client-certificate", default=None, metavar="FILE",
                        help=f"PEM file of a client certificate for mutual TLS (default: ${CLIENT_CERT_ENV})")
    parser.add_argument("--client-key", default=None, metavar="FILE",
                        help=f"PEM file of the client certificate's key (default: ${CLIENT_KEY_ENV})")
    parser.add_argument(
        "--tls-server-name", default="", metavar="NAME",
        help="check the server's certificate for this name instead of the host in --server",
    )


def credentials_from(args: argparse.Namespace) -> ClientCredentials:
    """The credentials the flags (else the environment) give; CredentialsError naming the flag and file."""
    return ClientCredentials.from_env_and_flags(
        token=getattr(args, "token", None), ca_file=args.certificate_authority,
        client_cert_file=args.client_certificate, client_key_file=args.client_key,
        tls_server_name=args.tls_server_name,
    )


def add_namespace_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-n", "--namespace", default="default", help="namespace (default: default)")


def server_address(args: argparse.Namespace) -> str:
    """The server list a command talks to: the flag, else $PODSCHED_SERVER, else the default."""
    return args.server or os.environ.get(SERVER_ENV) or DEFAULT_SERVER


def connect(args: argparse.Namespace, *, retry_policy: RetryPolicy) -> Client:
    """The client of the servers the flags name, retrying as ``retry_policy`` says: FAIL_FAST_POLICY for
    a one-shot command, DEFAULT_POLICY for one that runs until stopped."""
    if not args.request_timeout > 0:
        raise UsageError(f"--request-timeout must be positive, got {args.request_timeout:g}")
    credentials = credentials_from(args)
    try:
        return Client(server_address(args), credentials=credentials, timeout_s=args.request_timeout,
                      retry_policy=retry_policy)
    except ValueError as exc:
        # A malformed --server or $PODSCHED_SERVER is the user's input, not a crash.
        raise UsageError(str(exc)) from exc


def parse_kind(text: str) -> Kind:
    try:
        return kind_by_name(text)
    except errors.Invalid as exc:
        raise UsageError(f'the server doesn\'t have a resource type "{text}" ({exc.message})') from exc


def resource_name(kind: Kind, api_version: str = "") -> str:
    """kubectl's name of a kind in output lines: "pod", "priorityclass.scheduling.k8s.io"; in the group of
    ``api_version`` when it is one the kind is served in (a PodGroup written as scheduling.x-k8s.io's)."""
    version = api_version if api_version in kind.api_versions else kind.api_version
    group = version.rpartition("/")[0]
    return f"{kind.name.lower()}.{group}" if group else kind.name.lower()


def resource_ref(kind: Kind, name: str, api_version: str = "") -> str:
    """`pod/web`, as kubectl's -o name and apply lines print an object."""
    return f"{resource_name(kind, api_version)}/{name}"


def error_line(exc: errors.ApiError) -> str:
    if isinstance(exc, errors.Unauthorized):
        # kubectl's words for a 401, and the server's reason when it gave more than the word.
        detail = "" if exc.message in ("", "Unauthorized") else f": {exc.message}"
        return f"error: You must be logged in to the server (Unauthorized){detail}"
    reason = _REASONS.get(type(exc), "InternalError")
    return f"Error from server ({reason}): {exc.message}"


def print_error(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run_async(args: argparse.Namespace, body: Callable[[], Awaitable[int]]) -> int:
    """Run a command's async body and turn what escapes it into kubectl's messages and exit codes."""
    try:
        return asyncio.run(_guarded(args, body))
    except KeyboardInterrupt:
        # Ctrl-C: the user asked to stop; say nothing more (kubectl exits quietly too).
        return 130


async def _guarded(args: argparse.Namespace, body: Callable[[], Awaitable[int]]) -> int:
    try:
        return await body()
    except UsageError as exc:
        print_error(f"error: {exc}")
        return EXIT_USAGE
    except (CredentialsError, RequestTooLarge) as exc:
        print_error(f"error: {exc}")
        return EXIT_ERROR
    except ServerUnreachable as exc:
        print_error(f"error: {exc.message}{_NOT_RUNNING_HINT}")
        return EXIT_ERROR
    except errors.Unavailable as exc:
        # A TLS failure names its own fix, and a connection closed during its handshake carries the
        # client's TLS hint: neither gets the hint that the server may not be running.
        hint = "" if isinstance(exc, TlsError) or "Socket closed" in exc.message else _NOT_RUNNING_HINT
        print_error(f"Unable to connect to the server at {server_address(args)}: {exc.message}{hint}")
        return EXIT_ERROR
    except errors.ApiError as exc:
        print_error(error_line(exc))
        return EXIT_ERROR


_NOT_RUNNING_HINT = f" (is `podsched apiserver` running there? set --server or ${SERVER_ENV})"

#: The signals that stop a long-running command cleanly (Ctrl-C, and a supervisor's or Docker's stop).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def stop_signals() -> Iterator[asyncio.Event]:
    """An event that SIGINT and SIGTERM set while the block runs (on the running loop). Installed before
    anything starts, so a signal during start-up stops the command instead of killing it half-way; and
    as PID 1 of a container a process must handle SIGTERM itself (the kernel drops it otherwise)."""
    signalled = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, signalled.set)
    try:
        yield signalled
    finally:
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)


async def until_done_or_stopped(running: asyncio.Task[Any], stop: asyncio.Event) -> bool:
    """Wait for ``running``, or for ``stop``, which cancels it (and waits for it to finish); whether
    ``stop`` came first."""
    stopping = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({running, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        if not running.done():
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
    return stop.is_set()


# ------------------------------------------------------------------------------------------ durations

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """Seconds in a Go-style duration: "5m", "30s", "300ms", "1h30m", "1.5s"."""
    position, total = 0, 0.0
    while position < len(text):
        part = _DURATION_PART.match(text, position)
        if part is None:
            break
        total += float(part.group(1)) * _UNIT_SECONDS[part.group(2)]
        position = part.end()
    if not text or position != len(text):
        raise argparse.ArgumentTypeError(
            f"invalid duration {text!r}: use a number with a unit, like 5m, 30s, 300ms or 1h30m"
        )
    return total


def http_address(text: str) -> str:
    """An argparse type: a ``host:port`` to serve HTTP endpoints on (``--metrics-addr``)."""
    try:
        parse_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def positive_duration(noun: str = "duration") -> Callable[[str], float]:
    """An argparse type: a Go-style duration that must be above zero; ``noun`` names it in the error
    ("invalid timeout '0s': must be positive")."""

    def parse(text: str) -> float:
        seconds = parse_duration(text)
        if not seconds > 0:
            raise argparse.ArgumentTypeError(f"invalid {noun} {text!r}: must be positive")
        return seconds

    return parse
