"""`podsched ui`: a read-only live web view of the cluster (docs/ui.md), served over HTTP on loopback by
default. It lists and watches as any client does, so the ``readonly`` role is all its credential needs."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING

from cluster.api import kinds
from cluster.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    add_server_flag,
    connect,
    print_error,
    run_async,
    server_address,
    stop_signals,
    until_done_or_stopped,
)
from cluster.client import DEFAULT_POLICY, Client

if TYPE_CHECKING:
    from cluster.ui.server import UiServer
from cluster.healthserver import parse_address
from cluster.ui.hosts import DEFAULT_LISTEN, HostCheck, split_host


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ui", help="serve a read-only live web view of the cluster",
        description="Serve a live web view of the cluster: nodes and their allocation, pending pods and why, "
        "the scheduler's leader and its changes, PodDisruptionBudgets, PodGroups, preemptions and events. "
        "It only reads (the readonly role is enough).",
    )
    add_server_flag(parser)
    parser.add_argument(
        "--listen", default=DEFAULT_LISTEN, type=_listen_address, metavar="HOST:PORT",
        help=f"address to serve the page on (default {DEFAULT_LISTEN}: this machine only; port 0 picks a "
        "free port)",
    )
    parser.add_argument(
        "--allowed-host", dest="allowed_hosts", action="append", default=[], type=allowed_host,
        metavar="NAME[:PORT]",
        help="a name the page is reached by besides the --listen address (and, on loopback, localhost): "
        "the Host a browser or proxy sends; any port unless given; repeatable. Other names are refused "
        "(421) against DNS rebinding",
    )
    parser.set_defaults(func=run)


def _listen_address(text: str) -> tuple[str, int]:
    try:
        return parse_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def allowed_host(text: str) -> tuple[str, int | None]:
    """An argparse type: ``NAME`` or ``NAME:PORT`` (``[V6]`` in brackets) as (name, port or None)."""
    parsed = split_host(text)
    if parsed is None:
        raise argparse.ArgumentTypeError(f"expected NAME or NAME:PORT, got {text!r}")
    return parsed


def run(args: argparse.Namespace) -> int:
    return run_async(args, lambda: _serve(args))


async def _serve(args: argparse.Namespace) -> int:
    # Imported here: `podsched --help` and the other commands do not pay for aiohttp and the model.
    from cluster.ui.server import UiServer

    server = server_address(args)
    with stop_signals() as stop:
        async with connect(args, retry_policy=DEFAULT_POLICY) as client:
            ui = UiServer(client, server, host_check=HostCheck(args.listen[0], args.allowed_hosts))
            # A signal while the first lists are read stops the command too.
            starting = asyncio.create_task(_start(client, ui))
            try:
                if await until_done_or_stopped(starting, stop):
                    return EXIT_OK
                starting.result()
                return await _serve_http(ui, args.listen, server, stop)
            finally:
                await ui.stop()


async def _serve_http(ui: UiServer, listen: tuple[str, int], server: str, stop: asyncio.Event) -> int:
    """Serve the web view on ``listen`` until ``stop``; say where once it serves."""
    from aiohttp import web

    host, port = listen
    runner = web.AppRunner(ui.app(), handle_signals=False, shutdown_timeout=1.0)
    await runner.setup()
    try:
        try:
            await web.TCPSite(runner, host, port).start()
        except OSError as exc:
            print_error(f"error: cannot serve on --listen {host}:{port}: {exc.strerror or exc}")
            return EXIT_ERROR
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{runner.addresses[0][1]}/"
        print(f"podsched ui: serving {url} (watching {server})", flush=True)
        await stop.wait()
        return EXIT_OK
    finally:
        ui.hub.close()  # the streams end now, instead of holding the shutdown for its timeout
        await runner.cleanup()


async def _start(client: Client, ui: UiServer) -> None:
    # One read first: an unreachable server or a refused credential is an error now, not an informer
    # retrying forever.
    await client.list(kinds.NODE, limit=1)
    await ui.start()
