"""RuntimeClasses with a real API server and a real `podsched scheduler`, on each backend: `podsched
apply` of a class and a pod that names it in one file (the class goes first), the pod stored with the
class's overhead, nodeSelector and toleration and scheduled onto the tainted node they lead to; a pod
naming a missing class refused in kube-apiserver's words; `podsched get/describe/delete` of
RuntimeClasses as kubectl shows them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cluster.client import Client
from cluster.launcher.process import ApiServerProcess, SchedulerProcess
from tests.integration.conftest import own_apiserver_with
from tests.integration.helpers import node_manifest, parse_table, pod_manifest, run_cli, write_yaml
from tests.integration.test_scheduler import (
    _bound,
    _nonempty,
    eventually,
    running_scheduler,
    scheduling_events,
)

TAINT = {"key": "runtime", "value": "kata", "effect": "NoSchedule"}


@pytest.fixture(scope="module")
def cluster(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    kata = node_manifest("kata-node", cpu="1", labels={"kubernetes.io/hostname": "kata-node",
                                                       "runtime": "kata"})
    kata["spec"] = {"taints": [TAINT]}
    with own_apiserver_with(backend, tmp_path_factory.mktemp("runtimeclass-cluster"), kata,
                            node_manifest("plain-node", cpu="8")) as server:
        yield server


@pytest.fixture(scope="module")
def scheduler(cluster: ApiServerProcess) -> Iterator[SchedulerProcess]:
    with running_scheduler(cluster.address) as process:
        yield process


def runtime_class_manifest(name: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name},
            "handler": "kata", **fields}


async def test_a_pod_gets_its_class_overhead_and_scheduling_and_lands_on_the_tainted_node(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, ns: str, tmp_path: Path
) -> None:
    name = f"kata-{ns}"
    path = write_yaml(
        tmp_path / "kata.yaml",
        pod_manifest("sandboxed", ns, cpu="500m", runtimeClassName=name),
        runtime_class_manifest(name, overhead={"podFixed": {"cpu": "250m", "memory": "64Mi"}},
                               scheduling={"nodeSelector": {"runtime": "kata"},
                                           "tolerations": [{**TAINT, "operator": "Equal"}]}),
    )
    try:
        applied = run_cli(cluster.address, "apply", "-f", path)
        assert applied.code == 0, applied.stderr
        assert applied.stdout.index(f"runtimeclass.node.k8s.io/{name} created") < applied.stdout.index(
            "pod/sandboxed created"), applied.stdout
        # Applied again, the file changes nothing: what admission merged into the pod stays.
        again = run_cli(cluster.address, "apply", "-f", path)
        assert again.code == 0, again.stderr
        assert "pod/sandboxed unchanged" in again.stdout, again.stdout
        pod = await eventually(lambda: _bound(api, ns, "sandboxed"), "sandboxed bound")
        assert pod.spec.node_name == "kata-node"
        assert dict(pod.spec.overhead) == {"cpu": "250m", "memory": "64Mi"}
        assert dict(pod.spec.node_selector) == {"runtime": "kata"}
        tolerations = [(t.key, t.value, t.effect) for t in pod.spec.tolerations]
        assert tolerations == [("runtime", "kata", "NoSchedule")]
        # 500m + 250m overhead leaves 250m of the kata node's 1 CPU: a second such pod does not fit there,
        # and its nodeSelector keeps it off the big node.
        second = write_yaml(tmp_path / "second.yaml",
                            pod_manifest("second", ns, cpu="500m", runtimeClassName=name))
        assert run_cli(cluster.address, "apply", "-f", second).code == 0
        (failed,) = await eventually(lambda: _nonempty(scheduling_events(api, ns, "second")),
                                     "FailedScheduling of second")
        assert "Insufficient cpu" in failed.message, failed.message
    finally:
        for pod_name in ("sandboxed", "second"):
            run_cli(cluster.address, "delete", "pod", pod_name, "-n", ns, "--grace-period", "0")
        run_cli(cluster.address, "delete", "runtimeclass", name)


def test_a_pod_naming_a_missing_class_is_refused(cluster: ApiServerProcess, ns: str, tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "pod.yaml", pod_manifest("orphan", ns, runtimeClassName="nowhere"))
    refused = run_cli(cluster.address, "apply", "-f", path)
    assert refused.code != 0
    assert 'pods "orphan" is forbidden: pod rejected: RuntimeClass "nowhere" not found' in refused.stderr
    assert run_cli(cluster.address, "get", "pod", "orphan", "-n", ns).code != 0


def test_a_pod_its_new_class_refuses_is_refused_with_nothing_applied(
    cluster: ApiServerProcess, ns: str, tmp_path: Path
) -> None:
    name = f"strict-{ns}"
    path = write_yaml(
        tmp_path / "both.yaml",
        runtime_class_manifest(name, scheduling={"nodeSelector": {"runtime": "kata"}}),
        pod_manifest("misfit", ns, runtimeClassName=name, nodeSelector={"runtime": "runc"}),
    )
    refused = run_cli(cluster.address, "apply", "-f", path)
    assert refused.code != 0
    assert ('pods "misfit" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; '
            "pod.spec.nodeSelector[runtime] = runc") in refused.stderr, refused.stderr
    assert "nothing was applied" in refused.stderr
    assert run_cli(cluster.address, "get", "runtimeclass", name).code != 0


def test_get_describe_and_delete_runtime_classes(cluster: ApiServerProcess, ns: str, tmp_path: Path) -> None:
    name = f"gvisor-{ns}"
    path = write_yaml(tmp_path / "rc.yaml", runtime_class_manifest(
        name, handler="runsc", overhead={"podFixed": {"cpu": "100m"}},
        scheduling={"nodeSelector": {"runtime": "gvisor"}}))
    applied = run_cli(cluster.address, "apply", "-f", path)
    assert applied.code == 0, applied.stderr
    assert f"runtimeclass.node.k8s.io/{name} created" in applied.stdout

    listed = run_cli(cluster.address, "get", "runtimeclasses")
    assert listed.code == 0, listed.stderr
    rows = parse_table(listed.stdout)
    assert list(rows[0]) == ["NAME", "HANDLER", "AGE"]
    assert {row["NAME"]: row["HANDLER"] for row in rows}[name] == "runsc"

    described = run_cli(cluster.address, "describe", "runtimeclass", name)
    assert described.code == 0, described.stderr
    assert "runsc" in described.stdout
    assert "cpu: 100m" in described.stdout
    assert "runtime=gvisor" in described.stdout

    changed = write_yaml(tmp_path / "rc2.yaml", runtime_class_manifest(name, handler="runc"))
    refused = run_cli(cluster.address, "apply", "-f", changed)
    assert refused.code != 0
    assert 'handler: Invalid value: "runc": field is immutable' in refused.stderr

    deleted = run_cli(cluster.address, "delete", "runtimeclass", name)
    assert deleted.code == 0, deleted.stderr
    remaining = parse_table(run_cli(cluster.address, "get", "runtimeclass").stdout)
    assert name not in {row["NAME"] for row in remaining}
