"""`podsched delete KIND NAME...`: delete objects; a pod deleted gracefully is waited for until the API
server removes it at the end of its grace period, as kubectl waits (unless --no-wait)."""

from __future__ import annotations

import argparse
import asyncio

from google.protobuf.message import Message

from cluster.api import errors, kinds, timeutil
from cluster.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    UsageError,
    add_namespace_flag,
    add_server_flag,
    connect,
    error_line,
    parse_kind,
    print_error,
    resource_name,
    run_async,
)
from cluster.client import FAIL_FAST_POLICY, Client

# How long past the grace period to wait for a pod to disappear before giving up: the API server
# finishes graceful deletions itself, so this only covers its timer's slack and a restart of it.
WAIT_SLACK_S = 30.0
# The grace Kubernetes gives a pod that names none.
DEFAULT_GRACE_S = 30


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "delete", help="delete objects by name",
        description="Delete objects. Pods get their grace period: they show as Terminating until the "
        "API server removes them; the command waits for that unless --no-wait.",
    )
    parser.add_argument(
        "kind",
        help="pods, nodes, priorityclasses, poddisruptionbudgets, resourcequotas, podgroups, leases, events",
    )
    parser.add_argument("names", nargs="+", metavar="NAME")
    add_namespace_flag(parser)
    parser.add_argument(
        "--grace-period", type=int, default=-1,
        help="seconds a pod may take to terminate (0: at once; default: the pod's own, else 30)",
    )
    parser.add_argument(
        "--wait", action=argparse.BooleanOptionalAction, default=True,
        help="wait until a gracefully deleted pod is gone (default: wait)",
    )
    add_server_flag(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return run_async(args, lambda: _delete(args))


async def _delete(args: argparse.Namespace) -> int:
    kind = parse_kind(args.kind)
    if args.grace_period < -1:
        raise UsageError("--grace-period must be -1 (the pod's own) or a number of seconds >= 0")
    grace = None if args.grace_period == -1 else args.grace_period
    namespace = args.namespace if kind.namespaced else ""
    code = EXIT_OK
    async with connect(args, retry_policy=FAIL_FAST_POLICY) as client:
        for name in args.names:
            try:
                obj = await client.delete(kind, name, namespace, grace_period_seconds=grace)
            except errors.Unavailable:
                raise
            except errors.ApiError as exc:
                # kubectl goes on with the other names and exits 1 at the end.
                print_error(error_line(exc))
                code = EXIT_ERROR
                continue
            shown = resource_name(kind, kinds.as_api_object(obj).api_version)
            print(f'{shown} "{name}" deleted', flush=True)
            if args.wait and timeutil.is_set(kinds.metadata_of(obj).deletion_timestamp):
                if not await _wait_gone(client, kind, obj):
                    print_error(
                        f'error: timed out waiting for {shown} "{name}" to be deleted; '
                        "it is still Terminating"
                    )
                    code = EXIT_ERROR
    return code


async def _wait_gone(client: Client, kind: kinds.Kind, obj: Message) -> bool:
    """Follow the object from the version the delete returned until a DELETED event; False when it
    outlives its grace period by more than WAIT_SLACK_S."""
    meta = kinds.metadata_of(obj)
    grace = meta.deletion_grace_period_seconds if meta.HasField(
        "deletion_grace_period_seconds") else DEFAULT_GRACE_S
    try:
        async with asyncio.timeout(grace + WAIT_SLACK_S):
            resource_version = meta.resource_version
            while True:
                try:
                    async for event in client.watch(
                        kind, meta.namespace, resource_version=resource_version,
                        field_selector=f"metadata.name={meta.name}",
                    ):
                        if event.type == "DELETED":
                            return True
                        resource_version = kinds.metadata_of(event.object).resource_version
                except errors.Expired:
                    # History we wanted was compacted: read the present instead.
                    try:
                        current = await client.get(kind, meta.name, meta.namespace)
                    except errors.NotFound:
                        return True
                    resource_version = kinds.metadata_of(current).resource_version
    except TimeoutError:
        return False
