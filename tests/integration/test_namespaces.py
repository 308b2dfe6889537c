"""Namespaces with a real API server and a real `podsched scheduler`, on each backend: a pod whose
required affinity selects namespaces by label waits until a Namespace with that label exists, and is
scheduled as soon as it does (well before the unschedulable flush); `podsched get/describe/delete` of
Namespaces as kubectl shows them."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.client import Client
from cluster.launcher.process import ApiServerProcess, SchedulerProcess
from tests.integration.conftest import own_apiserver_with
from tests.integration.helpers import node_manifest, parse_table, pod_manifest, run_cli, write_yaml
from tests.integration.test_scheduler import (
    _bound,
    _nonempty,
    apply,
    eventually,
    running_scheduler,
    scheduling_events,
)


@pytest.fixture(scope="module")
def cluster(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    nodes = (node_manifest("node-a", cpu="2"), node_manifest("node-b", cpu="2"))
    with own_apiserver_with(backend, tmp_path_factory.mktemp("namespaces-cluster"), *nodes) as server:
        yield server


@pytest.fixture(scope="module")
def scheduler(cluster: ApiServerProcess) -> Iterator[SchedulerProcess]:
    with running_scheduler(cluster.address) as process:
        yield process


def namespace_manifest(name: str, labels: dict[str, str] | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels or {}}}


async def test_a_pod_waits_for_a_namespace_its_affinity_selects_then_is_scheduled(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, ns: str, tmp_path: Path
) -> None:
    data_ns = f"{ns}-data"
    team = f"team-{ns}"
    apply(cluster.address, tmp_path, pod_manifest("db", data_ns, labels={"app": "db"}))
    db = await eventually(lambda: _bound(api, data_ns, "db"), "db bound")
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"app": "db"}},
        "namespaceSelector": {"matchLabels": {"team": team}},
        "topologyKey": "kubernetes.io/hostname",
    }]}}
    try:
        apply(cluster.address, tmp_path, pod_manifest("web", ns, labels={"app": "web"}, affinity=affinity))
        (failed,) = await eventually(lambda: _nonempty(scheduling_events(api, ns, "web")), "FailedScheduling")
        assert failed.reason == "FailedScheduling"
        assert "didn't match pod affinity rules" in failed.message
        # The db pod's namespace exists now, but without the team label: still nothing to join.
        apply(cluster.address, tmp_path, namespace_manifest(data_ns))
        began = time.monotonic()
        apply(cluster.address, tmp_path, namespace_manifest(data_ns, {"team": team}))
        web = await eventually(lambda: _bound(api, ns, "web"), "web bound after the namespace was labelled",
                               within=30)
        assert web.spec.node_name == db.spec.node_name
        elapsed = time.monotonic() - began
        # Requeued by the Namespace update, not by the 5-minute flush of unschedulable pods.
        assert elapsed < 60, f"took {elapsed:.1f}s"
    finally:
        for name, namespace in (("web", ns), ("db", data_ns)):
            run_cli(cluster.address, "delete", "pod", name, "-n", namespace, "--grace-period", "0")
        run_cli(cluster.address, "delete", "namespace", data_ns)


def test_get_describe_and_delete_namespaces(cluster: ApiServerProcess, ns: str, tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "ns.yaml", namespace_manifest(ns, {"team": "a"}))
    applied = run_cli(cluster.address, "apply", "-f", path)
    assert applied.code == 0, applied.stderr
    assert f"namespace/{ns} created" in applied.stdout
    again = run_cli(cluster.address, "apply", "-f", path)
    assert f"namespace/{ns} unchanged" in again.stdout

    listed = run_cli(cluster.address, "get", "ns")
    assert listed.code == 0, listed.stderr
    rows = {row["NAME"]: row for row in parse_table(listed.stdout)}
    assert list(parse_table(listed.stdout)[0]) == ["NAME", "STATUS", "AGE"]
    for name in ("default", "kube-system", "kube-public", "kube-node-lease", ns):
        assert rows[name]["STATUS"] == "Active"

    described = run_cli(cluster.address, "describe", "namespace", ns)
    assert described.code == 0, described.stderr
    assert f"kubernetes.io/metadata.name={ns}" in described.stdout
    assert "team=a" in described.stdout
    assert "Active" in described.stdout

    refused = run_cli(cluster.address, "delete", "ns", "default")
    assert refused.code != 0
    assert 'namespaces "default" is forbidden: this namespace may not be deleted' in refused.stderr
    deleted = run_cli(cluster.address, "delete", "ns", ns)
    assert deleted.code == 0, deleted.stderr
    assert ns not in {row["NAME"] for row in parse_table(run_cli(cluster.address, "get", "ns").stdout)}
