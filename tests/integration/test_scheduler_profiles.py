"""One `podsched scheduler` process serving two profiles, one of which enables the example user plugin
(examples/plugins/node_cost.py, registered with --plugin), on each backend."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from cluster.client import Client
from cluster.launcher.process import ApiServerProcess, SchedulerProcess
from tests.integration.conftest import own_apiserver
from tests.integration.helpers import node_manifest, pod_manifest, run_cli, write_yaml
from tests.integration.test_scheduler import (
    _nonempty,
    all_bound,
    apply,
    delete_namespace_pods,
    eventually,
    no_node_overcommitted,
    running_scheduler,
    scheduling_events,
)

CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {"schedulerName": "default-scheduler"},
        {
            "schedulerName": "cost-scheduler",
            "plugins": {"score": {"enabled": [{"name": "NodeCost", "weight": 20}]}},
            "pluginConfig": [{"name": "NodeCost", "args": {"label": "example.com/hourly-cost"}}],
        },
    ],
}


def priced_node(name: str, price: str) -> dict:
    node = node_manifest(name, cpu="2")
    node["metadata"]["labels"]["example.com/hourly-cost"] = price
    return node


@pytest.fixture(scope="module")
def cluster(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    with own_apiserver(backend, tmp_path_factory.mktemp("profiles-cluster")) as server:
        path = write_yaml(tmp_path_factory.mktemp("nodes") / "nodes.yaml",
                          priced_node("node-cheap", "0.10"), priced_node("node-dear", "0.90"))
        result = run_cli(server.address, "apply", "-f", path)
        assert result.code == 0, result.stderr
        yield server


@pytest.fixture(scope="module")
def scheduler(
    cluster: ApiServerProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SchedulerProcess]:
    config = tmp_path_factory.mktemp("config") / "scheduler.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    with running_scheduler(cluster.address, "--config", str(config),
                           "--plugin", "NodeCost=examples.plugins.node_cost") as process:
        yield process


def test_the_startup_line_names_both_profiles(scheduler: SchedulerProcess) -> None:
    assert "profiles: default-scheduler, cost-scheduler;" in scheduler.log()


async def test_each_profile_schedules_its_pods_and_the_user_plugin_changes_placement(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, namespace: str, tmp_path: Path
) -> None:
    spread_ns, cost_ns = f"{namespace}-spread", f"{namespace}-cost"
    try:
        # kube-scheduler's default profile spreads pods (LeastAllocated, BalancedAllocation)...
        apply(cluster.address, tmp_path, *(pod_manifest(f"p{i}", spread_ns) for i in range(4)))
        spread = await eventually(lambda: all_bound(api, spread_ns, 4), "default-scheduler pods bound")
        assert Counter(p.spec.node_name for p in spread) == {"node-cheap": 2, "node-dear": 2}
        # ...the profile with NodeCost (weight 20) puts every pod that fits on the cheapest node.
        apply(cluster.address, tmp_path,
              *(pod_manifest(f"p{i}", cost_ns, schedulerName="cost-scheduler") for i in range(4)))
        cost = await eventually(lambda: all_bound(api, cost_ns, 4), "cost-scheduler pods bound")
        assert {p.spec.node_name for p in cost} == {"node-cheap"}
        await no_node_overcommitted(api)
        # Events are recorded after the bind: wait for it rather than race it.
        (event,) = await eventually(lambda: _nonempty(scheduling_events(api, cost_ns, "p0")),
                                    "the Scheduled event")
        assert (event.reason, event.source.component) == ("Scheduled", "cost-scheduler")
    finally:
        for ns in (spread_ns, cost_ns):
            await delete_namespace_pods(cluster.address, api, ns)


async def test_a_pod_for_another_scheduler_is_left_alone(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, namespace: str, tmp_path: Path
) -> None:
    try:
        apply(cluster.address, tmp_path, pod_manifest("theirs", namespace, schedulerName="other-scheduler"),
              pod_manifest("ours", namespace))
        # Once our pod, applied in the same batch, is bound, the scheduler has seen both.
        await eventually(lambda: _bound(api, namespace, "ours"), "our pod bound")
        await asyncio.sleep(1.0)
        theirs = await api.get("pods", "theirs", namespace)
        assert theirs.spec.node_name == ""  # type: ignore[attr-defined]
        assert not theirs.status.conditions  # type: ignore[attr-defined]
        assert await scheduling_events(api, namespace, "theirs") == []
    finally:
        await delete_namespace_pods(cluster.address, api, namespace)


async def _bound(api: Client, namespace: str, name: str) -> bool | None:
    pod = await api.get("pods", name, namespace)
    return True if pod.spec.node_name else None  # type: ignore[attr-defined]
