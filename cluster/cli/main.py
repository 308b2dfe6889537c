"""The `podsched` command: one subcommand per module, each adding its own parser with ``register`` and
doing its work in ``run(args) -> int`` (the process exit code).

Only the module of the command being run is imported (plus all of them for ``podsched --help``): the
commands pull in very different worlds (the API server, the scheduler, the HTTP client, plotting), and
every process would otherwise pay for all of them at start."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from cluster.api.version import PODSCHED_VERSION

#: The subcommands, in the order ``podsched --help`` lists them; each is the module cluster.cli.<name>.
COMMANDS = (
    "apiserver", "apply", "get", "describe", "delete", "demo", "bench", "scheduler", "simulate", "replay",
    "load", "healthcheck", "chaos", "up", "certs", "kubeconfig", "ui", "version",
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``command`` alone, or of every command when it is None or not one of them."""
    parser = argparse.ArgumentParser(
        prog="podsched",
        description="podsched: a Kubernetes-compatible pod-scheduling control plane.",
    )
    parser.add_argument("--version", action="version", version=f"podsched {PODSCHED_VERSION}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in (command,) if command in COMMANDS else COMMANDS:
        importlib.import_module(f"cluster.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv else None)
    try:
        args, extras = parser.parse_known_args(argv)
        _take_intermixed(parser, args, extras)
    except SystemExit as exc:
        # argparse exits 2 on a usage error and 0 after --help; return the code rather than raise.
        return exc.code if isinstance(exc.code, int) else 2
    return args.func(args)


def _take_intermixed(parser: argparse.ArgumentParser, args: argparse.Namespace, extras: list[str]) -> None:
    """Give names that follow options (`get pods -n ns web`) to the command's list of names: argparse
    fills an optional positional from the first run of positionals only. Anything else left over is an
    error, as parse_args would make it."""
    target = getattr(args, "intermixed", None)
    if extras and target is not None and not any(extra.startswith("-") for extra in extras):
        getattr(args, target).extend(extras)
    elif extras:
        parser.error(f"unrecognized arguments: {' '.join(extras)}")
