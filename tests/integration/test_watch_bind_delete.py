"""Watches (the CLI's -w and the client's), Bind, and graceful deletion against the real server."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from cluster.api import errors, objects_pb2, timeutil
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess, cli_env
from tests import builders
from tests.integration.helpers import (
    REPO,
    CliResult,
    node_manifest,
    parse_table,
    pod_manifest,
    requests_total,
    write_yaml,
)
from tests.integration.test_scheduler import eventually

Cli = Callable[..., CliResult]
EVENT_TIMEOUT_S = 20.0


def _pod(name: str, namespace: str, **spec: object) -> objects_pb2.Pod:
    result = builders.pod(name, namespace, image="busybox")
    for field, value in spec.items():
        setattr(result.spec, field, value)
    return result


async def _node(client: Client, name: str) -> None:
    await client.create(builders.node(name, allocatable=builders.ROOMY))


async def _read_line(stream: asyncio.StreamReader) -> str:
    line = await asyncio.wait_for(stream.readline(), EVENT_TIMEOUT_S)
    assert line, "the watch ended early"
    return line.decode().rstrip("\n")


async def test_cli_watch_sees_added_modified_deleted(
    apiserver: ApiServerProcess, client: Client, namespace: str
) -> None:
    await client.create(_pod("early", namespace))
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cluster.cli", "get", "pods", "-n", namespace, "-w", "--output-watch-events",
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(apiserver.address), cwd=REPO,
    )
    try:
        assert process.stdout is not None
        header = await _read_line(process.stdout)
        assert header.split()[:3] == ["EVENT", "NAME", "READY"]
        # The listing: once printed, every later change reaches the watch (it starts at the list's version).
        assert (await _read_line(process.stdout)).split()[:2] == ["ADDED", "early"]

        created = await client.create(_pod("late", namespace))
        assert (await _read_line(process.stdout)).split()[:4] == ["ADDED", "late", "0/1", "Pending"]
        created.metadata.labels["touched"] = "yes"
        await client.update(created)
        assert (await _read_line(process.stdout)).split()[:2] == ["MODIFIED", "late"]
        await client.delete("Pod", "late", namespace, grace_period_seconds=0)
        assert (await _read_line(process.stdout)).split()[:2] == ["DELETED", "late"]
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
        code = await asyncio.wait_for(process.wait(), EVENT_TIMEOUT_S)
    assert code == 0, (await process.stderr.read()).decode() if process.stderr else ""


def _pod_lists(server: ApiServerProcess) -> float:
    return requests_total(server, "LIST", "pods", "OK")


def _listed(server: ApiServerProcess, before: float) -> Callable[[], Awaitable[bool | None]]:
    async def probe() -> bool | None:
        return True if _pod_lists(server) > before else None

    return probe


async def test_cli_watch_of_one_name_waits_for_it(
    apiserver: ApiServerProcess, client: Client, namespace: str
) -> None:
    lists = _pod_lists(apiserver)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cluster.cli", "get", "pod", "solo", "-n", namespace, "-w", "-o", "name",
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(apiserver.address), cwd=REPO,
    )
    try:
        assert process.stdout is not None
        # Nothing exists yet, so nothing is printed. Once its list is answered, the watch the command opens
        # starts at the list's version: what is created from then on reaches it through the watch.
        await eventually(_listed(apiserver, lists), "the command's list of pods", EVENT_TIMEOUT_S)
        await client.create(_pod("other", namespace))
        await client.create(_pod("solo", namespace))
        assert await _read_line(process.stdout) == "pod/solo"
    finally:
        process.send_signal(signal.SIGINT)
        code = await asyncio.wait_for(process.wait(), EVENT_TIMEOUT_S)
    assert code == 0


async def test_client_watch_from_resource_version(client: Client, namespace: str) -> None:
    created = await client.create(_pod("history", namespace))
    created.metadata.labels["step"] = "2"
    updated = await client.update(created)
    deleted = await client.delete("Pod", "history", namespace, grace_period_seconds=0)

    seen: list[tuple[str, str, str]] = []
    async with asyncio.timeout(EVENT_TIMEOUT_S):
        async for event in client.watch(
            "Pod", namespace, resource_version=created.metadata.resource_version
        ):
            meta = event.object.metadata
            seen.append((event.type, meta.name, meta.resource_version))
            if event.type == "DELETED":
                break
    assert seen[0] == ("MODIFIED", "history", updated.metadata.resource_version)
    assert seen[1][:2] == ("DELETED", "history")
    assert int(seen[1][2]) > int(updated.metadata.resource_version)
    assert deleted.metadata.name == "history"


async def test_bind(client: Client, namespace: str, unique: Callable[[str], str]) -> None:
    node, other = unique("node"), unique("node")
    await _node(client, node)
    await _node(client, other)
    await client.create(_pod("bindme", namespace))

    bound = await client.bind(namespace, "bindme", node)
    assert bound.spec.node_name == node
    stored = await client.get("Pod", "bindme", namespace)
    assert stored.spec.node_name == node
    assert stored.status.phase == "Running"

    try:
        await client.bind(namespace, "bindme", other)
    except errors.Conflict as exc:
        assert "bindme" in exc.message
    else:
        raise AssertionError("binding a bound pod succeeded")
    assert (await client.get("Pod", "bindme", namespace)).spec.node_name == node

    await client.create(_pod("nowhere", namespace))
    try:
        await client.bind(namespace, "nowhere", "no-such-node")
    except errors.NotFound as exc:
        assert exc.message == 'nodes "no-such-node" not found'
    else:
        raise AssertionError("binding to a node that does not exist succeeded")
    assert (await client.get("Pod", "nowhere", namespace)).spec.node_name == ""

    try:
        await client.bind(namespace, "ghost", node)
    except errors.NotFound as exc:
        assert exc.message == 'pods "ghost" not found'
    else:
        raise AssertionError("binding a pod that does not exist succeeded")


# Wall-clock bounds: the wait lasts the grace period, and a pod with no node goes at once (within 10 s).
@pytest.mark.timing
async def test_graceful_delete(
    cli: Cli, client: Client, namespace: str, tmp_path: Path, unique: Callable[[str], str]
) -> None:
    node = unique("node")
    path = write_yaml(
        tmp_path / "pods.yaml",
        node_manifest(node),
        pod_manifest("slow", namespace, nodeName=node, terminationGracePeriodSeconds=2),
        pod_manifest("waited", namespace, nodeName=node, terminationGracePeriodSeconds=2),
        pod_manifest("unbound", namespace, terminationGracePeriodSeconds=30),
    )
    assert cli("apply", "-f", path).code == 0

    marked = cli("delete", "pod", "slow", "-n", namespace, "--no-wait")
    assert (marked.code, marked.stdout) == (0, 'pod "slow" deleted\n'), marked.stderr
    pod = await client.get("Pod", "slow", namespace)
    assert timeutil.is_set(pod.metadata.deletion_timestamp)
    assert pod.metadata.deletion_grace_period_seconds == 2
    (row,) = parse_table(cli("get", "pod", "slow", "-n", namespace).stdout)
    assert row["STATUS"] == "Terminating"

    # Without --no-wait the command returns once the pod is gone: after its grace period.
    started = time.monotonic()
    waited = cli("delete", "pod", "waited", "-n", namespace)
    assert (waited.code, waited.stdout) == (0, 'pod "waited" deleted\n'), waited.stderr
    assert time.monotonic() - started >= 1.0
    for name in ("slow", "waited"):
        try:
            await client.get("Pod", name, namespace)
        except errors.NotFound:
            continue
        raise AssertionError(f"pod {name} outlived its grace period")

    # A pod that never got a node has nothing to stop: it goes at once.
    started = time.monotonic()
    assert cli("delete", "pod", "unbound", "-n", namespace).code == 0
    assert time.monotonic() - started < 10
    assert (await client.list("Pod", namespace)).items == []
