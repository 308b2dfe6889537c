"""`podsched load`: submit pods at a steady rate and report how many the scheduler has bound.

    podsched load [--rate 10] [--count N] [-n load] [--cpu 100m] [--memory 128Mi]
                  [--priority-class NAME] [--gang-fraction F [--gang-size 2-8] [--seed N]]
                  [--claim-template NAME] [--wait [--timeout DURATION]] [--progress-interval 2s]

Without ``--count`` it submits until stopped (SIGINT or SIGTERM: exit 0 after a last progress line).
With ``--count`` it exits 0 once that many pods are created, or with ``--wait`` once every one of them
is bound; 1 when the server refuses the pods, a pod is deleted before it is bound, ``--timeout`` passes,
or it is stopped first; 2 for bad flags. A progress line every ``--progress-interval``::

    12:00:05.123 load: submitted 50/100, bound 47, pending 3 (10.0 pods/s)

With ``--gang-fraction F`` that share of the submissions are gangs: a PodGroup whose minimum is its size
(drawn from ``--gang-size``), then its pods right after it, in upstream's or scheduler-plugins' spelling;
``--count`` and ``--rate`` count pods, gang members included. ``--seed`` repeats a run's draws. With
``--claim-template NAME`` every single pod (not a gang's) claims devices through a ResourceClaim the
resourceclaim controller makes from that ResourceClaimTemplate of the namespace.
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import datetime

from cluster.api import errors
from cluster.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    UsageError,
    add_server_flag,
    connect,
    parse_duration,
    print_error,
    run_async,
    stop_signals,
    until_done_or_stopped,
)
from cluster.client import DEFAULT_POLICY
from cluster.launcher.load import DEFAULT_GANG_SIZE, LoadFailed, LoadGenerator, LoadSpec, LoadSpecError

DEFAULT_RATE = 10.0
DEFAULT_PROGRESS_INTERVAL_S = 2.0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "load",
        help="submit pods at a rate and report how many are bound",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument("--rate", type=float, default=DEFAULT_RATE, metavar="PODS_PER_S",
                        help=f"pods submitted per second (default {DEFAULT_RATE:g})")
    parser.add_argument("--count", type=int, default=None, metavar="N",
                        help="how many pods to submit (default: until stopped)")
    parser.add_argument("-n", "--namespace", default="load", help="namespace of the pods (default: load)")
    parser.add_argument("--cpu", default="100m", help="each pod's cpu request (default 100m)")
    parser.add_argument("--memory", default="128Mi", help="each pod's memory request (default 128Mi)")
    parser.add_argument("--priority-class", default="", metavar="NAME",
                        help="the pods' priorityClassName (default: the cluster's default)")
    parser.add_argument("--gang-fraction", type=float, default=0.0, metavar="F",
                        help="share of the submissions (0 to 1) that are gangs: a PodGroup that needs all of "
                             "its pods placed together, then those pods (default 0: single pods only)")
    smallest, largest = DEFAULT_GANG_SIZE
    parser.add_argument("--gang-size", type=_gang_size, default=DEFAULT_GANG_SIZE, metavar="MIN-MAX",
                        help=f"pods per gang, drawn between MIN and MAX, or N for all (default "
                             f"{smallest}-{largest})")
    parser.add_argument("--seed", type=int, default=None, metavar="N",
                        help="seed of the gang draws, to repeat a run (default: random, printed first)")
    parser.add_argument("--claim-template", default="", metavar="NAME",
                        help="a ResourceClaimTemplate of the namespace from which every single pod (not a "
                             "gang's) makes a claim for devices (default: none)")
    parser.add_argument("--wait", action="store_true",
                        help="with --count: exit once every pod is bound, not once every pod is created")
    parser.add_argument("--timeout", type=parse_duration, default=None, metavar="DURATION",
                        help="with --wait: give up after this long, like 60s (default: wait forever)")
    parser.add_argument("--progress-interval", type=parse_duration, default=DEFAULT_PROGRESS_INTERVAL_S,
                        metavar="DURATION",
                        help=f"time between progress lines (default {DEFAULT_PROGRESS_INTERVAL_S:g}s)")
    add_server_flag(parser)
    parser.set_defaults(func=run)


def _gang_size(text: str) -> tuple[int, int]:
    """ "MIN-MAX" or "N"; whether MIN <= MAX is LoadSpec's to say."""
    smallest, dash, largest = text.partition("-")
    try:
        return int(smallest), int(largest if dash else smallest)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected MIN-MAX or N pods, like 2-8, got {text!r}") from None


def run(args: argparse.Namespace) -> int:
    return run_async(args, lambda: _load(args))


def _spec(args: argparse.Namespace) -> LoadSpec:
    if args.wait and args.count is None:
        raise UsageError("--wait needs --count: a load without an end is never all bound")
    if args.timeout is not None and not args.wait:
        raise UsageError("--timeout applies to --wait only")
    if args.timeout is not None and not args.timeout > 0:
        raise UsageError(f"--timeout must be positive, got {args.timeout:g}s")
    if not args.progress_interval > 0:
        raise UsageError(f"--progress-interval must be positive, got {args.progress_interval:g}s")
    try:
        seed = {} if args.seed is None else {"seed": args.seed}
        return LoadSpec(rate=args.rate, count=args.count, namespace=args.namespace, cpu=args.cpu,
                        memory=args.memory, priority_class=args.priority_class,
                        gang_fraction=args.gang_fraction, gang_size=args.gang_size,
                        claim_template=args.claim_template, **seed)
    except LoadSpecError as exc:
        raise UsageError(f"--{exc.field.replace('_', '-')}: {exc.problem}") from None


def _say(text: str) -> None:
    stamp = datetime.now().strftime("%H:%M:%S.%f")[:-3]
    print(f"{stamp} load: {text}", flush=True)


async def _load(args: argparse.Namespace) -> int:
    # Signals are caught from here on: one that comes while connecting still ends the run cleanly.
    with stop_signals() as stop:
        return await _submit(args, stop)


async def _submit(args: argparse.Namespace, stop: asyncio.Event) -> int:
    spec = _spec(args)
    async with connect(args, retry_policy=DEFAULT_POLICY) as client:
        if spec.priority_class:
            try:
                await client.get("PriorityClass", spec.priority_class)
            except errors.NotFound:
                print_error(f'error: priority class "{spec.priority_class}" does not exist '
                            "(`podsched get priorityclasses` lists them)")
                return EXIT_ERROR
        goal = f"{spec.count} pods" if spec.count is not None else "pods until stopped"
        gangs = ""
        if spec.gang_fraction > 0:
            gangs = (f", {spec.gang_fraction:.0%} of them gangs of {spec.gang_size[0]}-{spec.gang_size[1]} "
                     f"pods (seed {spec.seed})")
        _say(f"run {spec.run_id}: submitting {goal} at {spec.rate:g}/s to namespace {spec.namespace} "
             f"(label {spec.selector}){gangs}")
        generator = LoadGenerator(client, spec)
        running = asyncio.create_task(generator.run(
            wait=args.wait, wait_timeout_s=args.timeout, progress_every_s=args.progress_interval,
            on_progress=lambda progress: _say(progress.line(spec.count)),
        ))
        stopped = await until_done_or_stopped(running, stop)
        final = generator.progress()
        if stopped:
            _say(f"stopped: {final.line(spec.count)}")
            return EXIT_OK if spec.count is None else EXIT_ERROR
        try:
            running.result()
        except LoadFailed as exc:
            _say(final.line(spec.count))
            print_error(f"error: {exc}")
            return EXIT_ERROR
        _say(f"done: {final.line(spec.count)}")
        return EXIT_OK
