"""Priority admission through the real server: classes resolve to priorities, unknown classes and
out-of-range values are refused with Kubernetes' words, the system classes exist from the start, and
the one globalDefault class applies to pods that name none."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cluster.api import errors
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess
from tests.integration.helpers import CliResult, parse_table, pod_manifest, run_cli, write_yaml

Cli = Callable[..., CliResult]


def priority_class(name: str, value: int, **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        **fields,
    }


async def test_class_resolves_priority_and_policy(
    cli: Cli, client: Client, namespace: str, tmp_path: Path, unique: Callable[[str], str]
) -> None:
    name = unique("batch")
    path = write_yaml(
        tmp_path / "objects.yaml",
        # The pod comes first in the file: apply creates classes before the pods that name them.
        pod_manifest("job", namespace, priorityClassName=name),
        priority_class(name, 5000, preemptionPolicy="Never"),
    )
    applied = cli("apply", "-f", path)
    assert applied.code == 0, applied.stderr
    assert applied.stdout == f"priorityclass.scheduling.k8s.io/{name} created\npod/job created\n"
    pod = await client.get("Pod", "job", namespace)
    assert (pod.spec.priority, pod.spec.preemption_policy) == (5000, "Never")
    priorities = cli("get", "pods", "-n", namespace, "-o", "custom-columns=PRIORITY:.spec.priority").stdout
    (row,) = parse_table(priorities)
    assert row["PRIORITY"] == "5000"


async def test_unknown_class_is_refused_naming_it(
    cli: Cli, client: Client, namespace: str, tmp_path: Path
) -> None:
    path = write_yaml(tmp_path / "pod.yaml", pod_manifest("vip", namespace, priorityClassName="platinum"))
    result = cli("apply", "-f", path)
    assert result.code == 1
    where = f'error when creating "{path}" (document 1)'
    assert result.stderr.startswith(f"Error from server (Forbidden): {where}: ")
    assert 'pods "vip" is forbidden: no PriorityClass with name platinum was found' in result.stderr
    assert (await client.list("Pod", namespace)).items == []


def test_user_class_above_one_billion_is_refused(
    cli: Cli, tmp_path: Path, unique: Callable[[str], str]
) -> None:
    name = unique("too-high")
    result = cli("apply", "-f", write_yaml(tmp_path / "pc.yaml", priority_class(name, 1_000_000_001)))
    assert result.code == 1
    assert "maximum allowed value of a user defined priority is 1000000000" in result.stderr
    assert cli("get", "priorityclass", name).code == 1


def test_system_classes_exist_and_cannot_be_deleted(cli: Cli) -> None:
    rows = {row["NAME"]: row for row in parse_table(cli("get", "priorityclasses").stdout)}
    assert rows["system-cluster-critical"]["VALUE"] == "2000000000"
    assert rows["system-node-critical"]["VALUE"] == "2000001000"
    refused = cli("delete", "priorityclass", "system-node-critical")
    assert refused.code == 1
    assert "cannot be deleted" in refused.stderr


async def test_global_default(fresh_apiserver: ApiServerProcess, tmp_path: Path) -> None:
    """On a store of its own: a globalDefault class changes every later pod that names no class."""
    address = fresh_apiserver.address
    first = write_yaml(tmp_path / "default.yaml", priority_class("standard", 700, globalDefault=True))
    assert run_cli(address, "apply", "-f", first).code == 0

    second = write_yaml(tmp_path / "second.yaml", priority_class("another", 800, globalDefault=True))
    refused = run_cli(address, "apply", "-f", second)
    assert refused.code == 1
    assert "PriorityClass standard is already marked as default. Only one default can exist" in refused.stderr

    pod = write_yaml(tmp_path / "pod.yaml", pod_manifest("plain", "default"))
    assert run_cli(address, "apply", "-f", pod).code == 0
    async with Client(address) as client:
        stored = await client.get("Pod", "plain", "default")
        assert (stored.spec.priority, stored.spec.priority_class_name) == (700, "standard")
        try:
            await client.get("PriorityClass", "another")
        except errors.NotFound:
            pass
        else:
            raise AssertionError("the second globalDefault class was created")
    # Applying the pod's manifest again keeps the class admission gave it.
    assert run_cli(address, "apply", "-f", pod).stdout == "pod/plain unchanged\n"
