"""`podsched get KIND [NAME]`: kubectl's tables, -o wide|yaml|json|name|jsonpath=...|custom-columns=...,
selectors, and -w to follow changes live."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Coroutine
from typing import Any

from google.protobuf.message import Message

from cluster.api import errors
from cluster.api.kinds import Kind
from cluster.cli import output
from cluster.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    STOP_SIGNALS,
    UsageError,
    add_namespace_flag,
    add_server_flag,
    connect,
    error_line,
    parse_kind,
    print_error,
    run_async,
)
from cluster.cli.jsonpath import JsonPathError
from cluster.client import FAIL_FAST_POLICY, Client
from cluster.printers import catalog
from cluster.printers.table import TableWriter


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "get",
        help="list objects, or show one",
        description="Print objects of a kind as a table (as kubectl does), or as YAML/JSON.",
    )
    parser.add_argument(
        "kind",
        help="pods, nodes, priorityclasses, poddisruptionbudgets, resourcequotas, podgroups, leases, events",
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="objects' names (default: all)")
    add_namespace_flag(parser)
    parser.add_argument("-A", "--all-namespaces", action="store_true", help="every namespace")
    parser.add_argument(
        "-o", "--output", type=output.parse_format, metavar="FORMAT",
        help="wide, yaml, json, name, jsonpath=TEMPLATE or custom-columns=HEADER:PATH,... (as kubectl's)",
    )
    parser.add_argument("-l", "--selector", default="", help="label selector, e.g. app=web,tier!=db")
    parser.add_argument("--field-selector", default="", help="field selector, e.g. spec.nodeName=node-1")
    parser.add_argument("-w", "--watch", action="store_true", help="after listing, print each change")
    parser.add_argument(
        "--output-watch-events",
        action="store_true",
        help="with -w: prefix each row with the event type (ADDED, MODIFIED, DELETED)",
    )
    add_server_flag(parser)
    # Names may follow options (`get pods -n ns web`); argparse leaves those to main, which adds them here.
    parser.set_defaults(func=run, intermixed="names")


def run(args: argparse.Namespace) -> int:
    return run_async(args, lambda: _get(args))


async def _get(args: argparse.Namespace) -> int:
    kind = parse_kind(args.kind)
    if args.all_namespaces and args.names:
        raise UsageError("a resource cannot be retrieved by name across all namespaces")
    if args.watch and len(args.names) > 1:
        raise UsageError("watch is only supported on individual resources and resource collections")
    namespace = "" if args.all_namespaces or not kind.namespaced else args.namespace
    all_namespaces = args.all_namespaces and kind.namespaced
    field_selector = args.field_selector
    if args.names and args.watch:
        # A watch of one name is a watch of the kind narrowed to that name; nothing is printed until it
        # exists, as with kubectl.
        field_selector = ",".join(s for s in (field_selector, f"metadata.name={args.names[0]}") if s)

    try:
        printer = _Printer(kind, args.output, all_namespaces=all_namespaces, watch=args.watch,
                           events=args.output_watch_events)
        return await _print(args, kind, namespace, field_selector, printer)
    except JsonPathError as exc:
        print_error(f"error: {exc}")
        return EXIT_ERROR


async def _print(
    args: argparse.Namespace, kind: Kind, namespace: str, field_selector: str, printer: _Printer
) -> int:
    async with connect(args, retry_policy=FAIL_FAST_POLICY) as client:
        if args.names and not args.watch:
            found, code = [], EXIT_OK
            for name in args.names:
                try:
                    found.append(await client.get(kind, name, namespace))
                except errors.NotFound as exc:
                    # kubectl prints what it found and reports each missing name.
                    print_error(error_line(exc))
                    code = EXIT_ERROR
            if found:
                printer.initial(found, single=len(args.names) == 1)
            return code
        listed = await client.list_all(
            kind, namespace, label_selector=args.selector, field_selector=field_selector
        )
        if not listed.items and not args.watch and printer.human_readable:
            print(_nothing_found(kind, namespace), file=sys.stderr)
            return EXIT_OK
        printer.initial(listed.items, single=False)
        if args.watch:
            await _until_interrupted(
                _follow(client, kind, namespace, args.selector, field_selector, listed.resource_version,
                        printer)
            )
    return EXIT_OK


async def _until_interrupted(follow: Coroutine[Any, Any, None]) -> None:
    """Run a watch until SIGINT (Ctrl-C) or SIGTERM, either of which ends it quietly.

    The handlers are installed here rather than relying on KeyboardInterrupt, which a process started in
    the background of a non-interactive shell never gets (SIGINT is ignored there). Once asked to stop,
    the process ignores further signals: a second Ctrl-C would only interrupt the gRPC teardown and
    print its traceback.
    """
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()

    def request_stop(signum: int, frame: object) -> None:
        for ignored in STOP_SIGNALS:
            signal.signal(ignored, signal.SIG_IGN)
        loop.call_soon_threadsafe(stop.set)

    previous = {signum: signal.signal(signum, request_stop) for signum in STOP_SIGNALS}
    watching = asyncio.create_task(follow)
    stopping = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({watching, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (watching, stopping):
            task.cancel()
        await asyncio.gather(watching, stopping, return_exceptions=True)
        if not stop.is_set():
            for signum, handler in previous.items():
                signal.signal(signum, handler)
    error = watching.exception() if watching.done() and not watching.cancelled() else None
    if error is not None:
        raise error


async def _follow(
    client: Client,
    kind: Kind,
    namespace: str,
    label_selector: str,
    field_selector: str,
    resource_version: str,
    printer: _Printer,
) -> None:
    """Print every change after the listed version until interrupted."""
    async for event in client.watch(
        kind,
        namespace,
        resource_version=resource_version,
        label_selector=label_selector,
        field_selector=field_selector,
    ):
        printer.change(event.type, event.object)


def _nothing_found(kind: Kind, namespace: str) -> str:
    if kind.namespaced and namespace:
        return f"No resources found in {namespace} namespace."
    return "No resources found"


class _Printer:
    """Prints the first listing and then, for a watch, one entry per change in the same format. Makes
    the format's renderer first: a template that does not parse is refused before the server is asked."""

    def __init__(
        self, kind: Kind, fmt: output.OutputFormat | None, *, all_namespaces: bool, watch: bool, events: bool
    ) -> None:
        self._kind = kind
        self._watch = watch
        self._all_namespaces = all_namespaces
        self._events = events
        self._wide = fmt is not None and fmt.name == "wide"
        self._renderer = output.Renderer(fmt) if fmt is not None and not self._wide else None
        self._columns = self._renderer.columns if self._renderer is not None else None
        self._table: TableWriter | None = None
        self._documents = 0

    @property
    def human_readable(self) -> bool:
        """kubectl's own tables (default and wide): only they say "No resources found"."""
        return self._renderer is None

    @property
    def _tabular(self) -> bool:
        return self._renderer is None or self._columns is not None

    def _cells(self, obj: Message) -> list[str]:
        if self._columns is not None:
            return self._columns.cells(obj)
        return catalog.row(self._kind, obj, wide=self._wide, all_namespaces=self._all_namespaces)

    def _writer(self) -> TableWriter:
        if self._table is None:
            header = self._columns.headers if self._columns is not None else catalog.header(
                self._kind, wide=self._wide, all_namespaces=self._all_namespaces
            )
            self._table = TableWriter(["EVENT", *header] if self._events else header)
        return self._table

    def initial(self, objs: list[Message], *, single: bool) -> None:
        if self._tabular:
            # Custom columns print their header even over no objects, as kubectl's do.
            if objs or self._columns is not None:
                prefix = ["ADDED"] if self._events else []
                lines = self._writer().table([prefix + self._cells(obj) for obj in objs])
                _emit("\n".join(lines) + "\n")
        elif self._watch:
            for obj in objs:
                self.change("ADDED", obj)
        else:
            assert self._renderer is not None, "a listing that is no table has a renderer"
            _emit(self._renderer.one(objs[0]) if single else self._renderer.listing(objs))

    def change(self, event_type: str, obj: Message) -> None:
        if self._tabular:
            cells = self._cells(obj)
            if self._events:
                cells = [event_type, *cells]
            if self._table is None:
                # The first row after an empty listing brings the header with it.
                _emit(self._writer().table([cells])[0] + "\n")
            _emit(self._writer().row(cells) + "\n")
            return
        assert self._renderer is not None, "a change that is no table row has a renderer"
        fmt = self._renderer.fmt.name
        if fmt in ("name", "jsonpath"):
            _emit(self._renderer.one(obj))
        elif self._events:
            # kubectl's --output-watch-events shape: {"type": ..., "object": ...}.
            data = {"type": event_type, "object": output.object_data(obj)}
            self._document(output.dump_yaml(data) if fmt == "yaml" else output.dump_json(data))
        else:
            self._document(self._renderer.one(obj))

    def _document(self, text: str) -> None:
        assert self._renderer is not None, "a document has a renderer"
        if self._renderer.fmt.name == "yaml" and self._documents:
            text = "---\n" + text
        _emit(text)
        self._documents += 1


def _emit(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()
