"""The `podsched` command: one subcommand per module, each adding its own parser with ``register`` and
doing its work in ``run(args) -> int`` (the process exit code)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from cluster.cli import (
    apiserver,
    apply,
    bench,
    chaos,
    delete,
    demo,
    describe,
    get,
    healthcheck,
    load,
    scheduler,
    simulate,
    up,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="podsched",
        description="podsched: a Kubernetes-compatible pod-scheduling control plane.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in (
        apiserver,
        apply,
        get,
        describe,
        delete,
        demo,
        bench,
        scheduler,
        simulate,
        load,
        healthcheck,
        chaos,
        up,
    ):
        command.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
