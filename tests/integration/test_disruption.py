"""The disruption controller inside the real `podsched apiserver` process, on each store: budgets and pods
applied with the CLI, pods bound and deleted with the client, and the status read back with
`podsched get pdb` and `podsched describe pdb`. With `--controllers none` nobody writes the status."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cluster.client import Client
from cluster.launcher.process import ApiServerProcess
from tests.integration.conftest import own_apiserver
from tests.integration.helpers import CliResult, node_manifest, parse_table, pod_manifest, run_cli, write_yaml

Cli = Callable[..., CliResult]
#: How long a status may take to follow a change (the controller usually needs milliseconds).
SETTLE_TIMEOUT_S = 20.0


def pdb_manifest(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
    }


def allowed_disruptions(cli: Cli, namespace: str) -> dict[str, str]:
    """`podsched get pdb`: budget name -> its ALLOWED DISRUPTIONS column."""
    listed = cli("get", "pdb", "-n", namespace)
    assert listed.code == 0, listed.stderr
    return {row["NAME"]: row["ALLOWED DISRUPTIONS"] for row in parse_table(listed.stdout)}


async def until_allowed(cli: Cli, namespace: str, expected: dict[str, str]) -> None:
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while (seen := allowed_disruptions(cli, namespace)) != expected:
        assert time.monotonic() < deadline, f"get pdb shows {seen}, not {expected}"
        await asyncio.sleep(0.2)


def describe_status(cli: Cli, namespace: str, name: str) -> dict[str, int]:
    """The Status section of `podsched describe pdb`, as field -> number."""
    described = cli("describe", "pdb", name, "-n", namespace)
    assert described.code == 0, described.stderr
    status = described.stdout.split("Status:", 1)[1]
    return {field: int(value) for field, value in re.findall(r"^\s+([A-Za-z ]+):\s+(\d+)$", status, re.M)}


async def test_get_and_describe_pdb_follow_the_pods(
    cli: Cli, client: Client, namespace: str, unique: Callable[[str], str], tmp_path: Path
) -> None:
    node = unique("node")
    pods = [pod_manifest(f"web-{i}", namespace, labels={"app": "web"}) for i in range(4)]
    other = pod_manifest("db", namespace, labels={"app": "db"})
    manifests = write_yaml(
        tmp_path / "budgets.yaml",
        node_manifest(node),
        pdb_manifest("half", namespace, minAvailable="50%"),
        pdb_manifest("one-down", namespace, maxUnavailable=1),
        *pods,
        other,
    )
    applied = cli("apply", "-f", manifests)
    assert applied.code == 0, applied.stderr

    # Four matching pods, none bound: none healthy, so nothing may be disrupted.
    await until_allowed(cli, namespace, {"half": "0", "one-down": "0"})
    assert describe_status(cli, namespace, "half") == {
        "Allowed disruptions": 0, "Current": 0, "Desired": 2, "Total": 4,
    }

    for i in range(3):
        await client.bind(namespace, f"web-{i}", node)
    await client.bind(namespace, "db", node)
    await until_allowed(cli, namespace, {"half": "1", "one-down": "0"})

    await client.bind(namespace, "web-3", node)
    await until_allowed(cli, namespace, {"half": "2", "one-down": "1"})
    assert describe_status(cli, namespace, "half") == {
        "Allowed disruptions": 2, "Current": 4, "Desired": 2, "Total": 4,
    }
    assert describe_status(cli, namespace, "one-down") == {
        "Allowed disruptions": 1, "Current": 4, "Desired": 3, "Total": 4,
    }

    # A pod terminating gracefully is no longer healthy, but still expected.
    deleted = cli("delete", "pod", "web-0", "-n", namespace, "--grace-period", "60", "--no-wait")
    assert deleted.code == 0, deleted.stderr
    await until_allowed(cli, namespace, {"half": "1", "one-down": "0"})
    assert describe_status(cli, namespace, "one-down") == {
        "Allowed disruptions": 0, "Current": 3, "Desired": 3, "Total": 4,
    }

    # Gone: one pod fewer expected; desired follows the smaller scale.
    deleted = cli("delete", "pod", "web-0", "-n", namespace, "--grace-period", "0")
    assert deleted.code == 0, deleted.stderr
    await until_allowed(cli, namespace, {"half": "1", "one-down": "1"})
    assert describe_status(cli, namespace, "half") == {
        "Allowed disruptions": 1, "Current": 3, "Desired": 2, "Total": 3,
    }


@pytest.fixture
def bare_apiserver(backend: str, tmp_path: Path) -> Iterator[ApiServerProcess]:
    """An API server started with ``--controllers none``, on a store nobody else uses."""
    with own_apiserver(backend, tmp_path, name_prefix="bare", extra_args=["--controllers", "none"]) as server:
        yield server


async def test_without_controllers_nobody_writes_the_status(
    bare_apiserver: ApiServerProcess, tmp_path: Path
) -> None:
    await _apply_and_bind(bare_apiserver, tmp_path)
    # Give a controller, were one running, ample time to write.
    await asyncio.sleep(1.0)
    assert describe_status(_cli_of(bare_apiserver), "default", "web") == {
        "Allowed disruptions": 0, "Current": 0, "Desired": 0, "Total": 0,
    }
    assert "disruption controller" not in bare_apiserver.log()


async def test_the_controller_stops_cleanly_with_the_server(
    fresh_apiserver: ApiServerProcess, tmp_path: Path
) -> None:
    await _apply_and_bind(fresh_apiserver, tmp_path)
    await until_allowed(_cli_of(fresh_apiserver), "default", {"web": "1"})
    assert "disruption controller synced" in fresh_apiserver.log()
    assert fresh_apiserver.stop() == 0
    assert "Traceback" not in fresh_apiserver.log(), fresh_apiserver.log()


def _cli_of(server: ApiServerProcess) -> Cli:
    return lambda *args: run_cli(server.address, *args)


async def _apply_and_bind(server: ApiServerProcess, tmp_path: Path) -> None:
    manifests = write_yaml(
        tmp_path / "web.yaml",
        node_manifest("node-1"),
        pdb_manifest("web", "default", minAvailable=1),
        pod_manifest("web-a", "default", labels={"app": "web"}),
        pod_manifest("web-b", "default", labels={"app": "web"}),
    )
    applied = run_cli(server.address, "apply", "-f", manifests)
    assert applied.code == 0, applied.stderr
    async with Client(server.address) as client:
        await client.bind("default", "web-a", "node-1")
        await client.bind("default", "web-b", "node-1")
