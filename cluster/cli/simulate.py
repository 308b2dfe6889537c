"""`podsched simulate -f FILE [-f FILE ...] [-o json|table] [--seed N] [--config FILE]`: run a scenario
(docs/scenario-format.md) through an in-process control plane until nothing more can happen, and
print what became of every pod (and of every PodGroup, when the scenario has any).

stdout holds only the result (JSON, or a table with ``-o table``); warnings (fields of the manifests
that scheduling does not model), errors and, with ``-v``, logs go to stderr. The same files, config
and seed always print the same result (but for the random shareID of a shared device's allocation).

Exit codes: 0 done; 2 the scenario, the config or the command line is invalid (the message names the
file, document, object and field); 1 the simulation itself failed (it timed out, or a component broke).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Sequence
from typing import Any

from cluster.api import errors
from cluster.printers.table import TableWriter
from cluster.printers.values import NONE
from cluster.simulate import (
    DEFAULT_TIMEOUT_S,
    BackgroundTaskEnded,
    ScenarioError,
    SimulationTimeout,
    load_scenario,
    simulate,
)
from scheduler.config import ConfigError, load_config
from scheduler.config.feature_gates import apply_feature_gates
from scheduler.framework.registry import Registry
from scheduler.plugins.registry import IN_TREE
from scheduler.scheduler import SchedulerConfigError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INVALID = 2
#: The seed when none is given: a fixed one, so that a simulation is repeatable by default.
DEFAULT_SEED = 0
TABLE_HEADER = ("NAMESPACE", "NAME", "NODE", "NOMINATED NODE", "DELETED", "REASON")
GROUP_TABLE_HEADER = ("NAMESPACE", "PODGROUP", "MIN COUNT", "MEMBERS", "BOUND", "ADMITTED", "REASON")
CLAIM_TABLE_HEADER = ("NAMESPACE", "POD", "CLAIM", "RESOURCECLAIM", "DEVICES")
VOLUME_TABLE_HEADER = ("NAMESPACE", "POD", "VOLUME", "PERSISTENTVOLUMECLAIM", "STATUS", "PERSISTENTVOLUME")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="run a scenario through an in-process scheduler and print where every pod lands",
        description="Create the scenario's PriorityClasses, Nodes, PodDisruptionBudgets, PodGroups, DRA "
        "objects (DeviceClasses, ResourceSlices, ResourceClaimTemplates, ResourceClaims), running pods and "
        "pending pods (in file order) in an in-process control plane, schedule on a virtual clock until "
        "nothing more can happen, and print every pod's outcome (with its claims' devices) and every "
        "PodGroup's.",
    )
    parser.add_argument("-f", "--filename", action="append", required=True, metavar="FILE",
                        help="a scenario file, a directory of them, or - for stdin (repeatable)")
    parser.add_argument("-o", "--output", choices=("json", "table"), default="json",
                        help="json (default): the documented result; table: one aligned row per pod "
                        "(then one per PodGroup)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help=f"seed of the choice between equally good nodes (default {DEFAULT_SEED})")
    parser.add_argument(
        "--config", metavar="FILE",
        help="a KubeSchedulerConfiguration YAML file (default: kube-scheduler's default profile)",
    )
    parser.add_argument(
        "--feature-gates", default="", metavar="NAME=BOOL,...",
        help="kube-scheduler feature gates podsched has: SchedulerOpportunisticBatching (default true: pods "
        "signed alike reuse each other's Filter and Score work; false schedules every pod on its own)",
    )
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                        help=f"give up after this much wall time (default {DEFAULT_TIMEOUT_S:g})")
    parser.add_argument("-v", "--verbose", action="store_true", help="log the control plane's work to stderr")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not args.timeout > 0:
        return _fail(f"--timeout must be positive, got {args.timeout:g}", EXIT_INVALID)
    registry = Registry(IN_TREE)
    try:
        config = load_config(args.config, registry=registry)
        apply_feature_gates(config, args.feature_gates)
    except (ConfigError, ValueError) as exc:
        return _fail(str(exc), EXIT_INVALID)
    try:
        scenario = load_scenario(args.filename)
    except ScenarioError as exc:
        return _fail_all(exc.problems)
    for warning in scenario.warnings:
        print(f"Warning: {warning}", file=sys.stderr)
    try:
        result = asyncio.run(simulate(scenario, config, registry, seed=args.seed, timeout_s=args.timeout))
    except ScenarioError as exc:
        return _fail_all(exc.problems)
    except SchedulerConfigError as exc:
        return _fail(str(exc), EXIT_INVALID)
    except (SimulationTimeout, BackgroundTaskEnded) as exc:
        return _fail(str(exc), EXIT_FAILED)
    except errors.ApiError as exc:
        return _fail(f"the in-process API server failed: {exc.message}", EXIT_FAILED)
    except KeyboardInterrupt:
        return 130
    document = result.to_json()
    sys.stdout.write(render_json(document) if args.output == "json" else render_table(document))
    sys.stdout.flush()
    return EXIT_OK


def render_json(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2) + "\n"


def render_table(document: dict[str, Any]) -> str:
    rows = [
        [
            pod["namespace"],
            pod["name"],
            pod["node"] or NONE,
            pod["nominatedNode"] or NONE,
            "true" if pod["deleted"] else "false",
            pod["reason"] or NONE,
        ]
        for pod in document["pods"]
    ]
    text = "".join(line + "\n" for line in TableWriter(TABLE_HEADER).table(rows))
    if "podGroups" in document:
        text += "\n" + _render_groups(document["podGroups"])
    if any("claims" in pod for pod in document["pods"]):
        text += "\n" + _render_claims(document["pods"])
    if any("volumes" in pod for pod in document["pods"]):
        text += "\n" + _render_volumes(document["pods"])
    return text


def _render_volumes(pods: list[dict[str, Any]]) -> str:
    """The volumes section: one row per volume of a pod that uses a claim, with the claim's phase and
    its PersistentVolume, after a blank line."""
    rows = [
        [pod["namespace"], pod["name"], volume["name"], volume["claim"], volume["phase"] or NONE,
         volume["persistentVolume"] or NONE]
        for pod in pods
        for volume in pod.get("volumes", ())
    ]
    return "".join(line + "\n" for line in TableWriter(VOLUME_TABLE_HEADER).table(rows))


def _render_claims(pods: list[dict[str, Any]]) -> str:
    """The claims section: one row per resource claim of a pod, with its devices as
    driver/pool/device (and the share of a shared device), after a blank line."""
    rows = [
        [
            pod["namespace"],
            pod["name"],
            claim["name"],
            claim["resourceClaim"] or NONE,
            ",".join(_device(device) for device in claim["devices"]) or NONE,
        ]
        for pod in pods
        for claim in pod.get("claims", ())
    ]
    return "".join(line + "\n" for line in TableWriter(CLAIM_TABLE_HEADER).table(rows))


def _device(device: dict[str, Any]) -> str:
    name = f"{device['driver']}/{device['pool']}/{device['device']}"
    return name if device["shareID"] is None else f"{name} (share {device['shareID']})"


def _render_groups(groups: list[dict[str, Any]]) -> str:
    """The podGroups section: one row per group, after a blank line."""
    rows = [
        [
            group["namespace"],
            group["name"],
            NONE if group["minCount"] is None else str(group["minCount"]),
            str(group["members"]),
            str(group["bound"]),
            NONE if group["admitted"] is None else str(group["admitted"]).lower(),
            group["reason"] or NONE,
        ]
        for group in groups
    ]
    return "".join(line + "\n" for line in TableWriter(GROUP_TABLE_HEADER).table(rows))


def _fail(message: str, code: int) -> int:
    print(f"podsched simulate: {message}", file=sys.stderr, flush=True)
    return code


def _fail_all(problems: Sequence[str]) -> int:
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    print("error: nothing was simulated", file=sys.stderr, flush=True)
    return EXIT_INVALID
