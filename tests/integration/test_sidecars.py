"""Sidecar containers with a real API server and a real `podsched scheduler`, on each backend: a sidecar's
requests run beside the app container's, so a pod that would fit with a classic init container waits
Insufficient cpu; a hostPort on a classic init container is free again once the pod runs, one on a sidecar
is held; and the API server refuses an init container restartPolicy other than Always, storing nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cluster.client import Client
from cluster.launcher.process import ApiServerProcess, SchedulerProcess
from tests.integration.conftest import own_apiserver_with
from tests.integration.helpers import node_manifest, pod_manifest, run_cli, write_yaml
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
    node = node_manifest("node-a", cpu="4")
    with own_apiserver_with(backend, tmp_path_factory.mktemp("sidecars-cluster"), node) as server:
        yield server


@pytest.fixture(scope="module")
def scheduler(cluster: ApiServerProcess) -> Iterator[SchedulerProcess]:
    with running_scheduler(cluster.address) as process:
        yield process


def with_init(name: str, namespace: str, *, app_cpu: str, init_cpu: str, sidecar: bool,
              host_port: int = 0, app_host_port: int = 0) -> dict[str, Any]:
    init: dict[str, Any] = {"name": "init", "image": "busybox:1.36",
                            "resources": {"requests": {"cpu": init_cpu, "memory": "64Mi"}}}
    if sidecar:
        init["restartPolicy"] = "Always"
    if host_port:
        init["ports"] = [{"containerPort": 80, "hostPort": host_port}]
    manifest = pod_manifest(name, namespace, cpu=app_cpu, initContainers=[init])
    if app_host_port:
        manifest["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": app_host_port}]
    return manifest


async def failed_scheduling(api: Client, namespace: str, name: str) -> str:
    (failed,) = await eventually(lambda: _nonempty(scheduling_events(api, namespace, name)),
                                 f"FailedScheduling for {name}")
    assert failed.reason == "FailedScheduling"
    return failed.message


async def test_a_sidecars_requests_and_host_ports_are_held_beside_the_app(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, ns: str, tmp_path: Path
) -> None:
    # Holds hostPort 8080 and 1 of the node's 4 CPUs.
    holder = pod_manifest("holder", ns, cpu="1")
    holder["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    apply(cluster.address, tmp_path, holder)
    await eventually(lambda: _bound(api, ns, "holder"), "holder bound")

    # A classic init container's hostPort is released before the pod runs: no conflict. It takes
    # max(1, 1) = 1 CPU, leaving 2.
    apply(cluster.address, tmp_path,
          with_init("classic-port", ns, app_cpu="1", init_cpu="1", sidecar=False, host_port=8080))
    await eventually(lambda: _bound(api, ns, "classic-port"), "classic-port bound")

    # The same port on a sidecar is held for the pod's life.
    apply(cluster.address, tmp_path,
          with_init("sidecar-port", ns, app_cpu="100m", init_cpu="100m", sidecar=True, host_port=8080))
    assert "didn't have free ports for the requested pod ports" in await failed_scheduling(
        api, ns, "sidecar-port")

    # App 1 CPU + sidecar 1500m = 2500m of the 2 CPUs left (as a classic init container, 1500m would fit).
    apply(cluster.address, tmp_path,
          with_init("big-sidecar", ns, app_cpu="1", init_cpu="1500m", sidecar=True))
    assert "Insufficient cpu" in await failed_scheduling(api, ns, "big-sidecar")
    apply(cluster.address, tmp_path,
          with_init("big-init", ns, app_cpu="1", init_cpu="1500m", sidecar=False))
    bound = await eventually(lambda: _bound(api, ns, "big-init"), "big-init bound")
    assert bound.spec.node_name == "node-a"


async def test_the_api_server_refuses_an_init_container_restart_policy_other_than_always(
    cluster: ApiServerProcess, api: Client, ns: str, tmp_path: Path
) -> None:
    manifest = with_init("on-failure", ns, app_cpu="100m", init_cpu="100m", sidecar=False)
    manifest["spec"]["initContainers"][0]["restartPolicy"] = "OnFailure"
    app_policy = pod_manifest("app-policy", ns)
    app_policy["spec"]["containers"][0]["restartPolicy"] = "Always"
    for bad, problem in (
        (manifest, 'spec.initContainers[0].restartPolicy: Unsupported value: "OnFailure": '
                   'supported values: "Always"'),
        (app_policy, "spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers"),
    ):
        path = write_yaml(tmp_path / f"{bad['metadata']['name']}.yaml", bad)
        result = run_cli(cluster.address, "apply", "-f", path)
        assert result.code != 0
        assert problem in result.stderr, result.stderr
    assert [p.metadata.name for p in (await api.list("pods", ns)).items] == []  # type: ignore[attr-defined]
