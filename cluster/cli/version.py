"""`podsched version`: this client's release and, when the API server answers, the server's, as
`kubectl version` prints them. The client's line comes first, so it is printed even when the server
cannot be reached (the command then fails as any other that cannot reach it)."""

from __future__ import annotations

import argparse

from cluster.api.version import PODSCHED_VERSION
from cluster.cli.common import EXIT_OK, add_server_flag, connect, run_async
from cluster.client import FAIL_FAST_POLICY


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "version",
        help="print the client's and the server's version",
        description="Print the version of this client and of the API server it reaches.",
    )
    parser.add_argument("--client", action="store_true", help="the client's version only; ask no server")
    add_server_flag(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    print(f"Client Version: {PODSCHED_VERSION}", flush=True)
    if args.client:
        return EXIT_OK
    return run_async(args, lambda: _server_version(args))


async def _server_version(args: argparse.Namespace) -> int:
    async with connect(args, retry_policy=FAIL_FAST_POLICY) as client:
        print(f"Server Version: {await client.version()}", flush=True)
    return EXIT_OK
