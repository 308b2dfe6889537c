"""`podsched describe KIND NAME`: kubectl's human-readable report of one object and its events. The
sections of each kind are its printer's (cluster/printers); this adds the scheduler's explanations and the
events, which it reads through the client."""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterable

from google.protobuf.message import Message

from cluster.api import errors, kinds, objects_pb2
from cluster.cli.common import EXIT_OK, add_namespace_flag, add_server_flag, connect, parse_kind, run_async
from cluster.cli.leasehint import no_scheduler_hint, read_scheduler_lease
from cluster.client import FAIL_FAST_POLICY, Client
from cluster.printers.catalog import PRINTERS
from cluster.printers.describe import DescribeText, by_text, events_section, pods_named
from cluster.printers.printer import Explained
from cluster.printers.values import event_time
from scheduler.framework.explanation import group_attempt, last_attempt


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "describe", help="show one object in detail, with its events",
        description="Show one object as kubectl describe does, followed by the events about it.",
    )
    parser.add_argument(
        "kind",
        help="pod, node, priorityclass, poddisruptionbudget, resourcequota, podgroup, lease, leasecandidate, "
             "event",
    )
    parser.add_argument("name")
    add_namespace_flag(parser)
    add_server_flag(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return run_async(args, lambda: _describe(args))


async def _describe(args: argparse.Namespace) -> int:
    kind = parse_kind(args.kind)
    namespace = args.namespace if kind.namespaced else ""
    async with connect(args, retry_policy=FAIL_FAST_POLICY) as client:
        obj = await client.get(kind, args.name, namespace)
        printer = PRINTERS[kind]
        text = DescribeText()
        await printer.describe(client, obj, text)
        if printer.with_events:
            events = await _events_about(client, kind, obj)
            hint = None
            if printer.explained is Explained.GROUP_ATTEMPT:
                _group_attempt(text, events)
            elif printer.explained is Explained.POD_ATTEMPT:
                _scheduling_explanation(text, events)
                if not obj.spec.node_name and not events:
                    hint = await _no_scheduler_hint(client)
            events_section(text, events, hint)
    print(text.render(), end="", flush=True)
    return EXIT_OK


async def _events_about(client: Client, kind: kinds.Kind, obj: Message) -> list[objects_pb2.Event]:
    """The events whose involvedObject is ``obj``: in its namespace, or anywhere for a cluster-scoped
    object (kubectl finds a node's events in whatever namespace their writer chose)."""
    selector = f"involvedObject.name={obj.metadata.name},involvedObject.kind={kind.name}"
    listed = await client.list_all(kinds.EVENT, obj.metadata.namespace, field_selector=selector)
    return sorted(listed.items, key=_event_time)


def _event_time(event: objects_pb2.Event) -> tuple[int, int]:
    ts = event_time(event)
    return (ts.seconds, ts.nanos)


def _scheduling_explanation(text: DescribeText, events: Iterable[objects_pb2.Event]) -> None:
    """The scheduler's account of its last attempt at the pod (per-plugin filter verdicts, the best
    nodes' per-plugin scores), from the newest scheduling event that carries one."""
    try:
        explanation = last_attempt(events)
    except ValueError as exc:
        text.field("Scheduling explanation (last attempt)", f"<unreadable: {exc}>")
        return
    if explanation is None:
        return
    text.section("Scheduling explanation (last attempt)")
    for line in explanation.render().split("\n"):
        text.line(line, 1)


def _group_attempt(text: DescribeText, events: Iterable[objects_pb2.Event]) -> None:
    """Per member, where the scheduler's last whole-group attempt could place it or why it could place it
    nowhere (nothing once the group was bound since)."""
    try:
        attempt = group_attempt(events)
    except ValueError as exc:
        text.field("Last scheduling attempt", f"<unreadable: {exc}>")
        return
    if attempt is None:
        return
    text.section("Last scheduling attempt")
    text.line(attempt.message, 1)
    text.table(["Pod", "Placement"], [[pods_named(names), placement]
                                      for names, placement in by_text(attempt.placements)])


async def _no_scheduler_hint(client: Client) -> str | None:
    """For an unbound pod no scheduler has written about: whether any scheduler holds the Lease (see
    leasehint). A pod with scheduling events was seen by a scheduler, and they say why it waits."""
    try:
        lease = await read_scheduler_lease(client)
    except errors.PermissionDenied:
        return None
    return no_scheduler_hint(lease, time.time())
