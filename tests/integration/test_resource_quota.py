"""ResourceQuota through a real `podsched apiserver` process, on each store: a quota counts the pods of
its namespace that its PriorityClass scopes select, refuses the pod past its limit in kube-apiserver's
words, never lets concurrent creates pass it, and gets its usage back when a pod is deleted (at once, or
at the end of its grace period); the system priority classes are usable only where a quota opens them,
which kube-system's quota, created at start, does."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cluster.api import errors, objects_pb2
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess
from tests import builders
from tests.builders import IMAGE, pod
from tests.integration.helpers import CliResult, parse_table, pod_manifest, write_yaml

Cli = Callable[..., CliResult]
INSUFFICIENT = (
    "insufficient quota to match these scopes: "
    "[{PriorityClass In [system-node-critical system-cluster-critical]}]"
)


def quota_manifest(name: str, namespace: str, hard: dict[str, str], *classes: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"hard": hard}
    if classes:
        spec["scopeSelector"] = {
            "matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": list(classes)}]
        }
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name, "namespace": namespace},
            "spec": spec}


def classed_pod(name: str, namespace: str, priority_class: str = "", node: str = "") -> objects_pb2.Pod:
    return pod(name, namespace, image=IMAGE, priority_class=priority_class, node_name=node)


async def used(client: Client, namespace: str, name: str) -> dict[str, str]:
    quota = await client.get("ResourceQuota", name, namespace)
    return dict(quota.status.used)  # type: ignore[attr-defined]


async def test_a_scoped_quota_counts_its_pods_and_refuses_the_one_too_many(
    cli: Cli, client: Client, namespace: str, tmp_path: Path
) -> None:
    path = write_yaml(
        tmp_path / "objects.yaml",
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": f"{namespace}-hi"}, "value": 1000},
        quota_manifest("high", namespace, {"pods": "2", "count/pods": "5"}, f"{namespace}-hi"),
        pod_manifest("before", namespace, priorityClassName=f"{namespace}-hi"),
    )
    applied = cli("apply", "-f", path)
    assert applied.code == 0, applied.stderr
    # Created before the pod (apply's kind order): the pod was charged at admission.
    assert await used(client, namespace, "high") == {"pods": "1", "count/pods": "1"}

    await client.create(classed_pod("second", namespace, f"{namespace}-hi"))
    await client.create(classed_pod("unscoped", namespace))  # no class: the quota does not count it
    with pytest.raises(errors.Forbidden) as refused:
        await client.create(classed_pod("third", namespace, f"{namespace}-hi"))
    assert refused.value.message == (
        'pods "third" is forbidden: exceeded quota: high, requested: pods=1, used: pods=2, limited: pods=2'
    )
    assert await used(client, namespace, "high") == {"pods": "2", "count/pods": "2"}
    names = {pod.metadata.name for pod in (await client.list("Pod", namespace)).items}  # type: ignore[attr-defined]
    assert names == {"before", "second", "unscoped"}

    (row,) = parse_table(cli("get", "quota", "-n", namespace).stdout)
    assert (row["NAME"], row["REQUEST"]) == ("high", "count/pods: 2/5, pods: 2/2")
    described = cli("describe", "resourcequota", "high", "-n", namespace).stdout
    assert f"Scope Selector:  [{{PriorityClass In [{namespace}-hi]}}]" in described
    assert "pods        2     2" in described


async def test_a_new_quota_counts_the_pods_already_there(client: Client, namespace: str) -> None:
    for name in ("a", "b", "c"):
        await client.create(classed_pod(name, namespace))
    quota = objects_pb2.ResourceQuota()
    quota.metadata.name, quota.metadata.namespace = "all", namespace
    quota.spec.hard["pods"] = "3"
    quota.status.used["pods"] = "0"  # the server's to set
    created = await client.create(quota)
    assert dict(created.status.used) == {"pods": "3"}
    assert dict(created.status.hard) == {"pods": "3"}
    with pytest.raises(errors.Forbidden, match="exceeded quota: all, requested: pods=1, used: pods=3"):
        await client.create(classed_pod("d", namespace))
    created.spec.hard["pods"] = "4"
    raised = await client.update(created)
    assert (dict(raised.status.hard), dict(raised.status.used)) == ({"pods": "4"}, {"pods": "3"})
    await client.create(classed_pod("d", namespace))


async def test_concurrent_creates_never_pass_the_limit(client: Client, namespace: str) -> None:
    quota = objects_pb2.ResourceQuota()
    quota.metadata.name, quota.metadata.namespace = "five", namespace
    quota.spec.hard["pods"] = "5"
    await client.create(quota)

    async def create(index: int) -> bool:
        try:
            await client.create(classed_pod(f"p{index}", namespace))
        except errors.Forbidden as exc:
            assert "exceeded quota: five, requested: pods=1, used: pods=5, limited: pods=5" in exc.message
            return False
        return True

    outcomes = await asyncio.gather(*(create(index) for index in range(24)))
    assert sum(outcomes) == 5
    assert len((await client.list("Pod", namespace)).items) == 5
    assert await used(client, namespace, "five") == {"pods": "5"}


@pytest.mark.etcd
async def test_creates_through_two_api_servers_on_one_etcd_never_pass_the_limit(
    etcd_endpoints: list[str], namespace: str
) -> None:
    store_args = ["--etcd", ",".join(etcd_endpoints)]
    with ApiServerProcess(store_args) as first, ApiServerProcess(store_args) as second:
        async with Client(first.address) as one, Client(second.address) as other:
            quota = objects_pb2.ResourceQuota()
            quota.metadata.name, quota.metadata.namespace = "seven", namespace
            quota.spec.hard["pods"] = "7"
            await one.create(quota)

            async def create(client: Client, index: int) -> bool:
                try:
                    await client.create(classed_pod(f"p{index}", namespace))
                except errors.Forbidden:
                    return False
                return True

            outcomes = await asyncio.gather(
                *(create(one if index % 2 else other, index) for index in range(30))
            )
            assert sum(outcomes) == 7
            assert len((await other.list("Pod", namespace)).items) == 7
            assert await used(one, namespace, "seven") == {"pods": "7"}


async def test_deleting_a_pod_gives_its_usage_back(
    client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    node = builders.node(unique("node"), allocatable=builders.ROOMY)
    await client.create(node)
    quota = objects_pb2.ResourceQuota()
    quota.metadata.name, quota.metadata.namespace = "two", namespace
    quota.spec.hard["pods"] = "2"
    await client.create(quota)
    await client.create(classed_pod("pending", namespace))
    running = classed_pod("running", namespace, node=node.metadata.name)
    running.spec.termination_grace_period_seconds = 1
    await client.create(running)

    await client.delete("Pod", "pending", namespace)  # never bound: gone at once
    assert await used(client, namespace, "two") == {"pods": "1"}
    await client.delete("Pod", "running", namespace)  # bound: gone when its 1 s grace period ends
    terminating = await client.get("ResourceQuota", "two", namespace)
    assert dict(terminating.status.used) == {"pods": "1"}, "a terminating pod still counts"  # type: ignore[attr-defined]
    async with asyncio.timeout(20):
        async for event in client.watch(
            "resourcequotas", namespace, resource_version=terminating.metadata.resource_version  # type: ignore[attr-defined]
        ):
            if dict(event.object.status.used) == {"pods": "0"}:  # type: ignore[attr-defined]
                break
    assert (await client.list("Pod", namespace)).items == []
    for name in ("again-1", "again-2"):
        await client.create(classed_pod(name, namespace))


async def test_a_finished_pod_gives_its_usage_back_once(client: Client, namespace: str) -> None:
    quota = objects_pb2.ResourceQuota()
    quota.metadata.name, quota.metadata.namespace = "two", namespace
    quota.spec.hard["pods"] = "2"
    await client.create(quota)
    done = await client.create(classed_pod("done", namespace))
    await client.create(classed_pod("busy", namespace))
    assert isinstance(done, objects_pb2.Pod)

    done.status.phase = "Succeeded"
    done = await client.update_status(done)
    assert await used(client, namespace, "two") == {"pods": "1"}, "a finished pod uses no quota"
    # Nor may it come back to run again, uncounted.
    assert isinstance(done, objects_pb2.Pod)
    done.status.phase = "Running"
    with pytest.raises(errors.Invalid) as refused:
        await client.update_status(done)
    assert refused.value.message == (
        'Pod "done" is invalid: status.phase: Forbidden: may not be transitioned from terminal phase '
        '"Succeeded" to "Running"'
    )
    assert (await client.get("Pod", "done", namespace)).status.phase == "Succeeded"  # type: ignore[attr-defined]
    await client.create(classed_pod("next", namespace))
    assert await used(client, namespace, "two") == {"pods": "2"}
    fresh = objects_pb2.ResourceQuota()
    fresh.metadata.name, fresh.metadata.namespace = "fresh", namespace
    fresh.spec.hard["pods"] = "5"
    await client.create(fresh)
    assert await used(client, namespace, "fresh") == {"pods": "2"}, "a new quota does not count it either"

    await client.delete("Pod", "done", namespace)
    assert await used(client, namespace, "two") == {"pods": "2"}, "its deletion takes nothing more off"
    assert await used(client, namespace, "fresh") == {"pods": "2"}


async def test_system_classes_need_a_quota_and_kube_system_has_one(client: Client, namespace: str) -> None:
    system = await client.get("ResourceQuota", "system-critical-pods", "kube-system")
    selector = system.spec.scope_selector.match_expressions  # type: ignore[attr-defined]
    assert [(e.scope_name, e.operator, list(e.values)) for e in selector] == [
        ("PriorityClass", "In", ["system-node-critical", "system-cluster-critical"])
    ]
    for priority_class in ("system-node-critical", "system-cluster-critical"):
        with pytest.raises(errors.Forbidden) as refused:
            await client.create(classed_pod("critical", namespace, priority_class))
        assert refused.value.message == f'pods "critical" is forbidden: {INSUFFICIENT}'
    assert (await client.list("Pod", namespace)).items == []

    name = f"critical-{namespace}"
    before = int((await used(client, "kube-system", "system-critical-pods"))["pods"])
    created = await client.create(classed_pod(name, "kube-system", "system-node-critical"))
    assert created.spec.priority == 2_000_001_000
    assert int((await used(client, "kube-system", "system-critical-pods"))["pods"]) >= before + 1
    await client.delete("Pod", name, "kube-system")

    # A quota of one's own that covers a system class opens it in that namespace.
    quota = objects_pb2.ResourceQuota()
    quota.metadata.name, quota.metadata.namespace = "critical", namespace
    quota.spec.hard["pods"] = "1"
    quota.spec.scope_selector.match_expressions.add(
        scope_name="PriorityClass", operator="In", values=["system-cluster-critical"]
    )
    await client.create(quota)
    await client.create(classed_pod("critical", namespace, "system-cluster-critical"))
    with pytest.raises(errors.Forbidden, match=r"insufficient quota to match these scopes"):
        await client.create(classed_pod("node-critical", namespace, "system-node-critical"))


def test_bad_quotas_are_refused_naming_the_field(cli: Cli, namespace: str, tmp_path: Path) -> None:
    path = write_yaml(
        tmp_path / "quota.yaml",
        {**quota_manifest("bad", namespace, {"pods": "2"}),
         "spec": {"hard": {"pods": "2"},
                  "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In"}]}}},
    )
    result = cli("apply", "-f", path)
    assert result.code == 1
    assert (
        'ResourceQuota "bad" is invalid: spec.scopeSelector.matchExpressions[0].values: Required value: '
        "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"
    ) in result.stderr, result.stderr
    assert "nothing was applied" in result.stderr


def test_one_apply_may_bring_a_quota_and_the_system_pods_it_admits(
    cli: Cli, namespace: str, tmp_path: Path
) -> None:
    path = write_yaml(
        tmp_path / "critical.yaml",
        pod_manifest("agent", namespace, priorityClassName="system-node-critical"),
        quota_manifest("critical", namespace, {"pods": "1"}, "system-node-critical"),
    )
    result = cli("apply", "-f", path)
    assert result.code == 0, result.stderr
    assert result.stdout == "resourcequota/critical created\npod/agent created\n"
    (row,) = parse_table(cli("get", "quota", "critical", "-n", namespace).stdout)
    assert row["REQUEST"] == "pods: 1/1"


def test_an_apply_with_more_pods_than_its_quota_admits_writes_nothing(
    cli: Cli, namespace: str, tmp_path: Path
) -> None:
    quota_path = write_yaml(tmp_path / "quota.yaml", quota_manifest("two", namespace, {"pods": "2"}))
    created = cli("apply", "-f", quota_path)
    assert created.code == 0, created.stderr
    path = write_yaml(tmp_path / "pods.yaml", *(pod_manifest(name, namespace) for name in ("a", "b", "c")))
    for dry_run in ("--dry-run=server", "--dry-run=none"):
        result = cli("apply", "-f", path, dry_run)
        assert result.code == 1, result.stdout
        assert result.stdout == ""
        assert result.stderr == (
            f'Error from server (Forbidden): error when creating "{path}" (document 3): '
            'pods "c" is forbidden: exceeded quota: two, requested: pods=1, used: pods=2, limited: pods=2\n'
            "error: 1 of 3 objects were rejected; nothing was applied\n"
        )
    assert parse_table(cli("get", "pods", "-n", namespace).stdout) == []
    (row,) = parse_table(cli("get", "quota", "two", "-n", namespace).stdout)
    assert row["REQUEST"] == "pods: 0/2"


def test_an_apply_whose_pods_overfill_the_quota_it_brings_writes_nothing(
    cli: Cli, namespace: str, tmp_path: Path
) -> None:
    path = write_yaml(
        tmp_path / "all.yaml",
        pod_manifest("a", namespace, priorityClassName="system-node-critical"),
        pod_manifest("b", namespace, priorityClassName="system-node-critical"),
        quota_manifest("critical", namespace, {"pods": "1"}, "system-node-critical"),
    )
    result = cli("apply", "-f", path)
    assert result.code == 1, result.stdout
    assert (
        f'error when creating "{path}" (document 2): pods "b" is forbidden: exceeded quota: critical, '
        "requested: pods=1, used: pods=1, limited: pods=1\n"
    ) in result.stderr
    assert result.stdout == ""
    assert parse_table(cli("get", "quota", "-n", namespace).stdout) == []
    assert parse_table(cli("get", "pods", "-n", namespace).stdout) == []


def test_an_apply_whose_new_quota_does_not_open_its_pods_class_writes_nothing(
    cli: Cli, namespace: str, tmp_path: Path
) -> None:
    path = write_yaml(
        tmp_path / "wrong-class.yaml",
        quota_manifest("cluster-critical", namespace, {"pods": "5"}, "system-cluster-critical"),
        pod_manifest("agent", namespace, priorityClassName="system-node-critical"),
    )
    result = cli("apply", "-f", path)
    assert result.code == 1, result.stdout
    assert (
        f'error when creating "{path}" (document 2): pods "agent" is forbidden: {INSUFFICIENT}\n'
    ) in result.stderr
    assert result.stdout == ""
    assert parse_table(cli("get", "quota", "-n", namespace).stdout) == []


def group_manifest(name: str, namespace: str, priority_class: str) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "priorityClassName": priority_class}}


def test_a_system_class_pod_group_is_refused_where_its_pods_would_be(
    cli: Cli, namespace: str, tmp_path: Path
) -> None:
    path = write_yaml(tmp_path / "gang.yaml", group_manifest("gang", namespace, "system-node-critical"))
    result = cli("apply", "-f", path)
    assert result.code == 1, result.stdout
    assert result.stderr == (
        f'Error from server (Forbidden): error when creating "{path}" (document 1): '
        f'podgroups.scheduling.k8s.io "gang" is forbidden: {INSUFFICIENT}\n'
        "error: 1 of 1 objects were rejected; nothing was applied\n"
    )
    assert parse_table(cli("get", "pg", "-n", namespace).stdout) == []

    # As for pods, a quota in the same apply may open the class, for the group and its pods.
    path = write_yaml(
        tmp_path / "opened.yaml",
        group_manifest("gang", namespace, "system-node-critical"),
        quota_manifest("critical", namespace, {"pods": "1"}, "system-node-critical"),
        pod_manifest("agent", namespace, priorityClassName="system-node-critical"),
    )
    result = cli("apply", "-f", path)
    assert result.code == 0, result.stderr
    assert result.stdout == (
        "resourcequota/critical created\npodgroup.scheduling.k8s.io/gang created\npod/agent created\n"
    )
