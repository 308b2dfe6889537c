"""System default topology spreading with a real API server and a real `podsched scheduler`, on each
backend: a pod that a Service (or its ReplicaSet) selects is spread away from the node where that
selector's pods run, although the node has more free room; a pod nothing selects is not. `podsched
get/describe` of Services and ReplicaSets as kubectl shows them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.client import Client
from cluster.launcher.process import ApiServerProcess, SchedulerProcess
from tests.integration.conftest import own_apiserver_with
from tests.integration.helpers import node_manifest, parse_table, pod_manifest, run_cli, write_yaml
from tests.integration.test_scheduler import _bound, apply, eventually, running_scheduler

ZONE = "topology.kubernetes.io/zone"


@pytest.fixture(scope="module")
def cluster(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    nodes = [
        node_manifest(name, cpu="4", labels={"kubernetes.io/hostname": name, ZONE: zone})
        for name, zone in (("node-a", "zone-a"), ("node-b", "zone-b"))
    ]
    with own_apiserver_with(backend, tmp_path_factory.mktemp("spreading-cluster"), *nodes) as server:
        yield server


@pytest.fixture(scope="module")
def scheduler(cluster: ApiServerProcess) -> Iterator[SchedulerProcess]:
    with running_scheduler(cluster.address) as process:
        yield process


def service_manifest(name: str, namespace: str, selector: dict[str, str]) -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": selector, "ports": [{"port": 80}]}}


def replica_set_manifest(name: str, namespace: str, app: str) -> dict:
    return {
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": app}}, "template": {
            "metadata": {"labels": {"app": app}},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]},
        }},
    }


def owned_by(manifest: dict, kind: str, name: str) -> dict:
    manifest["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": f"{name}-uid", "controller": True}
    ]
    return manifest


async def test_pods_a_service_or_replicaset_selects_are_spread(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, ns: str, tmp_path: Path
) -> None:
    # node-a runs three web and two api pods (500m); node-b one other pod of 700m: without spreading,
    # node-a, the emptier node, would win.
    placed = [pod_manifest(f"web-{i}", ns, labels={"app": "web"}, cpu="100m", nodeName="node-a")
              for i in range(3)]
    placed += [owned_by(pod_manifest(f"api-{i}", ns, labels={"app": "api"}, cpu="100m", nodeName="node-a"),
                        "ReplicaSet", "api") for i in range(2)]
    placed.append(pod_manifest("other", ns, labels={"app": "other"}, cpu="700m", nodeName="node-b"))
    apply(cluster.address, tmp_path, service_manifest("web", ns, {"app": "web"}),
          replica_set_manifest("api", ns, "api"), *placed)

    apply(cluster.address, tmp_path, pod_manifest("web-new", ns, labels={"app": "web"}, cpu="100m"))
    web = await eventually(lambda: _bound(api, ns, "web-new"), "web-new bound")
    assert web.spec.node_name == "node-b"

    apply(cluster.address, tmp_path,
          owned_by(pod_manifest("api-new", ns, labels={"app": "api"}, cpu="100m"), "ReplicaSet", "api"))
    api_pod = await eventually(lambda: _bound(api, ns, "api-new"), "api-new bound")
    assert api_pod.spec.node_name == "node-b"

    # Nothing selects this one: it takes the emptier node (500m used against 900m).
    apply(cluster.address, tmp_path, pod_manifest("batch", ns, labels={"app": "batch"}, cpu="100m"))
    batch = await eventually(lambda: _bound(api, ns, "batch"), "batch bound")
    assert batch.spec.node_name == "node-a"


def test_get_and_describe_services_and_replicasets(
    cluster: ApiServerProcess, ns: str, tmp_path: Path
) -> None:
    path = write_yaml(tmp_path / "objects.yaml", service_manifest("web", ns, {"app": "web"}),
                      replica_set_manifest("api", ns, "api"),
                      pod_manifest("api-1", ns, labels={"app": "api"}, nodeName="node-a"))
    applied = run_cli(cluster.address, "apply", "-f", path)
    assert applied.code == 0, applied.stderr
    assert "service/web created" in applied.stdout
    assert "replicaset.apps/api created" in applied.stdout

    services = parse_table(run_cli(cluster.address, "get", "svc", "-n", ns).stdout)
    assert services == [{"NAME": "web", "TYPE": "ClusterIP", "CLUSTER-IP": "<none>", "EXTERNAL-IP": "<none>",
                         "PORT(S)": "80/TCP", "AGE": services[0]["AGE"]}]
    sets = parse_table(run_cli(cluster.address, "get", "rs", "-n", ns, "-o", "wide").stdout)
    assert [(r["NAME"], r["DESIRED"], r["SELECTOR"]) for r in sets] == [("api", "3", "app=api")]

    described = run_cli(cluster.address, "describe", "rs", "api", "-n", ns)
    assert described.code == 0, described.stderr
    assert "1 current / 3 desired" in described.stdout

    bad = write_yaml(tmp_path / "bad.yaml", {**replica_set_manifest("bad", ns, "api"),
                                             "spec": {"selector": {"matchLabels": {"app": "x"}}}})
    refused = run_cli(cluster.address, "apply", "-f", bad)
    assert refused.code != 0
    assert "`selector` does not match template `labels`" in refused.stderr
    deleted = run_cli(cluster.address, "delete", "svc", "web", "-n", ns)
    assert deleted.code == 0, deleted.stderr
