"""Helpers for integration tests: run the real `podsched` CLI, write manifests."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import yaml
from prometheus_client.parser import text_string_to_metric_families

from cluster.launcher.process import ApiServerProcess, cli_env

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
MANIFESTS = EXAMPLES / "manifests"

# A CLI command that takes longer than this is hung, not slow.
CLI_TIMEOUT_S = 60.0


class CliResult(NamedTuple):
    code: int
    stdout: str
    stderr: str


def run_cli(
    address: str,
    *args: str,
    input: str | None = None,
    timeout: float = CLI_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
) -> CliResult:
    """Run `podsched ARGS` as a user would (a new process), with PODSCHED_SERVER=address and ``env``'s
    variables set over the test's own."""
    done = subprocess.run(
        [sys.executable, "-m", "cluster.cli", *args],
        input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**cli_env(address), **(env or {})},
        cwd=REPO,
        timeout=timeout,
    )
    return CliResult(done.returncode, done.stdout, done.stderr)


async def run_cli_async(address: str, *args: str, input: str | None = None) -> CliResult:
    """run_cli without blocking the test's event loop (for tests that act while the command runs)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cluster.cli", *args,
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(address), cwd=REPO,
    )
    stdout, stderr = await asyncio.wait_for(
        process.communicate(input.encode() if input is not None else None), CLI_TIMEOUT_S
    )
    assert process.returncode is not None
    return CliResult(process.returncode, stdout.decode(), stderr.decode())


def pod_manifest(
    name: str,
    namespace: str,
    *,
    labels: dict[str, str] | None = None,
    cpu: str = "250m",
    memory: str = "64Mi",
    **spec: Any,
) -> dict[str, Any]:
    """A Pod manifest as YAML data, one container with requests; ``spec`` adds spec fields."""
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = labels
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "containers": [
                {"name": "app", "image": "busybox:1.36",
                 "resources": {"requests": {"cpu": cpu, "memory": memory}}}
            ],
            **spec,
        },
    }


def node_manifest(name: str, *, cpu: str = "4", memory: str = "8Gi", pods: str = "110",
                  labels: dict[str, str] | None = None) -> dict[str, Any]:
    allocatable = {"cpu": cpu, "memory": memory, "pods": pods}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {"kubernetes.io/hostname": name}},
        "status": {
            "capacity": dict(allocatable),
            "allocatable": allocatable,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def write_yaml(path: Path, *documents: dict[str, Any]) -> str:
    """Write ``documents`` as one multi-document YAML file; its path as a string."""
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return str(path)


_COLUMN_GAP = re.compile(r"\S+(?: \S+)*")


def parse_table(text: str) -> list[dict[str, str]]:
    """The rows of a kubectl-style table as dicts keyed by header (columns start where headers do)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return []
    header = lines[0]
    starts = [(match.start(), match.group()) for match in _COLUMN_GAP.finditer(header)]
    rows = []
    for line in lines[1:]:
        row = {}
        for i, (start, name) in enumerate(starts):
            end = starts[i + 1][0] if i + 1 < len(starts) else None
            row[name] = line[start:end].strip()
        rows.append(row)
    return rows


def scrape(server: ApiServerProcess) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of the server's /metrics (it must run with --metrics-addr), by name and labels."""
    assert server.metrics_url is not None
    with urllib.request.urlopen(f"{server.metrics_url}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def requests_total(server: ApiServerProcess, verb: str, resource: str, code: str) -> float:
    """How many calls the server answered with this verb, resource and code (needs --metrics-addr)."""
    labels = frozenset({"verb": verb, "resource": resource, "subresource": "", "code": code}.items())
    return scrape(server).get(("apiserver_request_total", labels), 0.0)


def open_watches(server: ApiServerProcess) -> float:
    """Watches of pods the server holds open (it must run with --metrics-addr)."""
    labels = frozenset({"verb": "WATCH", "resource": "pods"}.items())
    return scrape(server).get(("apiserver_longrunning_requests", labels), 0.0)


#: How long a process's start, a renewal or a takeover may take on a loaded 2-core box.
SETTLE_TIMEOUT_S = 30.0


async def settle(
    what: str, probe: Callable[[], Awaitable[bool]], timeout_s: float = SETTLE_TIMEOUT_S
) -> None:
    """Wait until ``probe`` says yes (asked every 0.1 s); fail naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not await probe():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout_s:g}s")
        await asyncio.sleep(0.1)
