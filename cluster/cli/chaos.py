"""`podsched chaos kill-leader`: kill the scheduler leader's container every so often, through Docker.

    podsched chaos kill-leader --every 30s [--signal KILL|TERM|STOP] [--lease kube-system/kube-scheduler]
                               [--docker-socket /var/run/docker.sock] [--count N] [--handover-timeout 60s]
                               [--server ADDR[,ADDR...]]

Every ``--every`` it reads the Lease's holder through the API, finds the container whose hostname is
the holder's, sends it the signal through the Docker Engine API, and waits for the Lease to change
hands (see `cluster.chaos.leaderkill`). One line per round::

    12:00:30.101 chaos: round 1: SIGKILL to 3f2a9c1b7d4e (podsched-scheduler-2), leader 3f2a9c1b7d4e_9b1c...;
                 the lease changed hands after 15.84s (new holder 7d0e5a4b3c2f_41aa...)
    12:01:00.230 chaos: round 2: skipped: the lease kube-system/kube-scheduler has no holder (...)

and a summary when it ends (handover min/median/max). It runs until stopped (SIGTERM or SIGINT: exit 0),
or for ``--count`` rounds: then exit 0 if every round signalled a leader and saw a new one, else 1. A
Docker socket it cannot use is reported at start (exit 1); bad flags exit 2.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from datetime import datetime
from typing import Any

from cluster.chaos import (
    DEFAULT_LEASE,
    DEFAULT_SOCKET,
    SIGNALS,
    DockerEngine,
    DockerError,
    KillResult,
    LeaderKiller,
    LeaseRef,
    Skipped,
    signal_name,
)
from cluster.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    add_server_flag,
    connect,
    positive_duration,
    print_error,
    run_async,
    server_address,
    stop_signals,
    until_done_or_stopped,
)
from cluster.client import DEFAULT_POLICY

#: How long a round waits for a new leader. kube-scheduler's failover after a SIGKILL takes up to the
#: lease duration (15 s) plus a retry period; 60 s leaves room for slow starts without hiding a hang.
DEFAULT_HANDOVER_TIMEOUT_S = 60.0


def _signal(text: str) -> str:
    try:
        return signal_name(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _lease(text: str) -> LeaseRef:
    try:
        return LeaseRef.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid count {text!r}: expected a number of rounds") from None
    if count < 1:
        raise argparse.ArgumentTypeError(f"invalid count {text!r}: at least 1 round")
    return count


def _socket(text: str) -> str:
    if not text:
        raise argparse.ArgumentTypeError("the Docker socket path is empty")
    return text


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "chaos",
        help="inject faults into a running deployment (Docker)",
        description="Fault injection against podsched running in Docker.",
    )
    actions = parser.add_subparsers(dest="chaos_action", metavar="ACTION", required=True)
    kill = actions.add_parser(
        "kill-leader",
        help="signal the scheduler leader's container every so often",
        description="Every --every, find the container of the scheduler Lease's holder and signal it "
        "through the Docker Engine API; print how long the Lease took to change hands.",
    )
    kill.add_argument("--every", type=positive_duration(), required=True, metavar="DURATION",
                      help="time between rounds, like 30s or 2m (the first round comes after one period)")
    kill.add_argument("--signal", type=_signal, default="SIGKILL", metavar="|".join(SIGNALS),
                      help="KILL (a crash), TERM (a graceful handoff) or STOP (a frozen leader, thawed "
                      "with SIGCONT once the lease has moved on); default KILL")
    kill.add_argument("--lease", type=_lease, default=LeaseRef.parse(DEFAULT_LEASE), metavar="NAMESPACE/NAME",
                      help=f"the schedulers' Lease (default {DEFAULT_LEASE})")
    kill.add_argument("--docker-socket", type=_socket, default=DEFAULT_SOCKET, metavar="PATH",
                      help=f"the Docker engine's unix socket (default {DEFAULT_SOCKET})")
    kill.add_argument("--count", type=_count, default=None, metavar="N",
                      help="stop after N rounds (default: until stopped)")
    kill.add_argument("--handover-timeout", type=positive_duration(), default=DEFAULT_HANDOVER_TIMEOUT_S,
                      metavar="DURATION",
                      help="how long a round waits for a new leader "
                      f"(default {DEFAULT_HANDOVER_TIMEOUT_S:g}s)")
    add_server_flag(kill)
    kill.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return run_async(args, lambda: _kill_leader(args))


def _say(text: str) -> None:
    stamp = datetime.now().strftime("%H:%M:%S.%f")[:-3]
    print(f"{stamp} chaos: {text}", flush=True)


def describe(result: KillResult) -> str:
    """The line of a round that signalled a leader."""
    container = result.container
    sent = f"{result.signal} to {container.short_id} ({container.name}), leader {result.holder}"
    if result.new_holder is None:
        outcome = "no new holder took the lease within the handover timeout"
    else:
        outcome = f"the lease changed hands after {result.handover_s:.2f}s (new holder {result.new_holder})"
    line = f"{sent}; {outcome}"
    if result.resume_error is not None:
        line += f"; SIGCONT failed, the container may still be stopped: {result.resume_error}"
    return line


class Rounds:
    """The rounds of one run and what became of them."""

    def __init__(self, killer: LeaderKiller, every_s: float, count: int | None) -> None:
        self._killer = killer
        self._every_s = every_s
        self._count = count
        self.done = 0
        self.succeeded = 0
        self.handovers: list[float] = []

    async def run(self) -> None:
        while self._count is None or self.done < self._count:
            await asyncio.sleep(self._every_s)
            number = self.done + 1
            try:
                result = await self._killer.kill_once()
            except Skipped as exc:
                _say(f"round {number}: skipped: {exc}")
            except DockerError as exc:
                _say(f"round {number}: failed: {exc}")
            else:
                _say(f"round {number}: {describe(result)}")
                if result.handover_s is not None and result.resume_error is None:
                    self.succeeded += 1
                    self.handovers.append(result.handover_s)
            self.done = number

    def summary(self) -> str:
        line = f"{self.succeeded} of {self.done} rounds signalled a leader and saw a new one"
        if self.handovers:
            line += (
                f"; handover min {min(self.handovers):.2f}s / median {statistics.median(self.handovers):.2f}s"
                f" / max {max(self.handovers):.2f}s"
            )
        return line


async def _kill_leader(args: argparse.Namespace) -> int:
    docker = DockerEngine(args.docker_socket)
    try:
        await docker.ping()
    except DockerError as exc:
        print_error(f"error: {exc}")
        return EXIT_ERROR
    async with connect(args, retry_policy=DEFAULT_POLICY) as client:
        killer = LeaderKiller(
            client, docker, lease=args.lease, signal=args.signal, handover_timeout_s=args.handover_timeout
        )
        _say(
            f"signalling the leader of lease {args.lease} with {killer.signal} every {args.every:g}s "
            f"(Docker {args.docker_socket}, API {server_address(args)})"
        )
        rounds = Rounds(killer, args.every, args.count)
        running = asyncio.create_task(rounds.run(), name="chaos-rounds")
        with stop_signals() as stop:
            # A round in flight, when stopped, still thaws a container it stopped.
            stopped = await until_done_or_stopped(running, stop)
        _say(f"{'stopped' if stopped else 'done'}: {rounds.summary()}")
        if stopped:
            return EXIT_OK if args.count is None else EXIT_ERROR
        running.result()
        return EXIT_OK if rounds.succeeded == rounds.done else EXIT_ERROR

