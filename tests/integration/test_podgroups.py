"""PodGroups through real API server processes on each store: both spellings through the client (create,
get, list, watch, update, updateStatus, delete), the CLI (apply, get, describe, delete, -o yaml in the
object's own apiVersion), the podgroup controller keeping a group's counts and phase current as its pods
come, are bound and go, and a Kubeflow-style worker set written for scheduler-plugins applied unchanged
and scheduled by a profile of that name."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster.api import errors, objects_pb2
from cluster.api.kinds import POD_GROUP
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess
from tests.integration.helpers import CliResult, node_manifest, parse_table, pod_manifest, write_yaml
from tests.integration.test_scheduler import eventually, running_scheduler

Cli = Callable[..., CliResult]
UPSTREAM = "scheduling.k8s.io/v1alpha3"
COSCHEDULING = "scheduling.x-k8s.io/v1alpha1"
GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


def upstream_group(name: str, namespace: str, min_count: int) -> dict[str, Any]:
    return {
        "apiVersion": UPSTREAM, "kind": "PodGroup", "metadata": {"name": name, "namespace": namespace},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
    }


def coscheduling_group(name: str, namespace: str, min_member: int) -> dict[str, Any]:
    return {
        "apiVersion": COSCHEDULING, "kind": "PodGroup", "metadata": {"name": name, "namespace": namespace},
        "spec": {"minMember": min_member, "scheduleTimeoutSeconds": 60},
    }


async def write_status(
    client: Client, namespace: str, name: str, change: Callable[[objects_pb2.PodGroup], object]
) -> objects_pb2.PodGroup:
    """UpdateStatus with ``change`` made to the stored group, again on a conflict (the controller writes
    the same status)."""
    while True:
        group = await client.get(POD_GROUP, name, namespace)
        assert isinstance(group, objects_pb2.PodGroup)
        change(group)
        try:
            return await client.update_status(group)
        except errors.Conflict:
            continue


async def test_both_spellings_through_the_client(client: Client, namespace: str) -> None:
    group = objects_pb2.PodGroup(metadata=objects_pb2.ObjectMeta(name="train", namespace=namespace))
    group.spec.scheduling_policy.gang.min_count = 2
    cosched = objects_pb2.PodGroup(api_version=COSCHEDULING,
                                   metadata=objects_pb2.ObjectMeta(name="ray", namespace=namespace))
    cosched.spec.min_member = 3

    created = await client.create(group)
    assert created.api_version == UPSTREAM and created.spec.priority == 0  # admission's, no default class
    created_cosched = await client.create(cosched)
    assert created_cosched.api_version == COSCHEDULING and not created_cosched.spec.HasField("priority")

    events: list[tuple[str, str]] = []

    async def watch() -> None:
        since = created.metadata.resource_version
        async for event in client.watch(POD_GROUP, namespace, resource_version=since):
            events.append((event.type, event.object.metadata.name))  # type: ignore[attr-defined]
            if event.type == "DELETED":
                return

    watching = asyncio.create_task(watch())
    listed = await client.list(POD_GROUP, namespace)
    assert sorted((g.metadata.name, g.api_version) for g in listed.items) == [
        ("ray", COSCHEDULING), ("train", UPSTREAM)
    ]

    # The podgroup controller writes their status meanwhile: these updates are unconditional.
    created_cosched.spec.min_member = 4  # Coscheduling's spec is not immutable
    created_cosched.metadata.resource_version = ""
    updated = await client.update(created_cosched)
    assert updated.spec.min_member == 4 and updated.api_version == COSCHEDULING
    # v1alpha3: a gang's minCount follows the workload's scale; the policy's kind stays.
    created.spec.scheduling_policy.gang.min_count = 5
    created.metadata.resource_version = ""  # unconditional: judged whatever the controller wrote
    scaled = await client.update(created)
    assert scaled.spec.scheduling_policy.gang.min_count == 5
    scaled.spec.scheduling_policy.ClearField("gang")
    scaled.spec.scheduling_policy.basic.SetInParent()
    scaled.metadata.resource_version = ""
    with pytest.raises(errors.Invalid, match=r'^PodGroup\.scheduling\.k8s\.io "train" is invalid: '
                                             r"\[spec\.schedulingPolicy\.basic: .*field is immutable"):
        await client.update(scaled)
    moved = objects_pb2.PodGroup()
    moved.CopyFrom(updated)
    moved.api_version = UPSTREAM
    moved.metadata.resource_version = ""
    with pytest.raises(errors.Invalid, match=re.escape(
        'apiVersion: Invalid value: "scheduling.k8s.io/v1alpha3": field is immutable'
    )):
        await client.update(moved)

    def unschedulable(group: objects_pb2.PodGroup) -> None:
        group.status.conditions.add(type="PodGroupInitiallyScheduled", status="False", reason="Unschedulable",
                                    message="0/3 nodes are available")

    with_status = await write_status(client, namespace, "train", unschedulable)
    assert [c.reason for c in with_status.status.conditions] == ["Unschedulable"]

    await client.delete(POD_GROUP, "ray", namespace)
    await asyncio.wait_for(watching, 30.0)
    # The podgroup controller may write train's status before ray is created: the watch from train's
    # creation then starts with that; of ray it sees the whole life, in order.
    of_ray = [event for event in events if event[1] == "ray"]
    assert of_ray[0] == ("ADDED", "ray") and of_ray[-1] == ("DELETED", "ray") == events[-1]
    assert ("MODIFIED", "ray") in of_ray
    with pytest.raises(errors.NotFound, match=r'^podgroups\.scheduling\.k8s\.io "ray" not found$'):
        await client.get(POD_GROUP, "ray", namespace)


async def test_the_other_spellings_fields_and_an_unknown_class_are_refused(
    cli: Cli, client: Client, namespace: str, tmp_path: Path
) -> None:
    mixed = upstream_group("g", namespace, 2)
    mixed["spec"]["minMember"] = 2
    refused = cli("apply", "-f", write_yaml(tmp_path / "mixed.yaml", mixed))
    assert refused.code != 0
    assert ('PodGroup.scheduling.k8s.io "g" is invalid: spec.minMember: Forbidden: not a field of '
            "scheduling.k8s.io/v1alpha3 PodGroup") in refused.stderr

    classed = upstream_group("h", namespace, 2)
    classed["spec"]["priorityClassName"] = "no-such-class"
    refused = cli("apply", "-f", write_yaml(tmp_path / "classed.yaml", classed))
    assert refused.code != 0
    assert ('podgroups.scheduling.k8s.io "h" is forbidden: no PriorityClass with name no-such-class was '
            "found") in refused.stderr
    assert (await client.list(POD_GROUP, namespace)).items == []


async def test_the_cli_gets_describes_and_deletes_pod_groups(
    cli: Cli, client: Client, namespace: str, tmp_path: Path, unique: Callable[[str], str]
) -> None:
    node = unique("node")
    path = write_yaml(
        tmp_path / "groups.yaml",
        node_manifest(node),
        upstream_group("train", namespace, 2),
        coscheduling_group("ray", namespace, 1),
        pod_manifest("train-0", namespace, schedulingGroup={"podGroupName": "train"}),
        pod_manifest("train-1", namespace, schedulingGroup={"podGroupName": "train"}),
    )
    applied = cli("apply", "-f", path)
    assert applied.code == 0, applied.stderr
    assert "podgroup.scheduling.k8s.io/train created" in applied.stdout.splitlines()
    await client.bind(namespace, "train-0", node)
    await client.create(objects_pb2.Event(
        metadata=objects_pb2.ObjectMeta(name="train.1", namespace=namespace),
        involved_object=objects_pb2.ObjectReference(kind="PodGroup", name="train", namespace=namespace),
        reason="FailedScheduling", message="1/2 pods placeable, minCount 2", type="Warning", count=1,
    ))

    async def counted() -> bool | None:
        rows = parse_table(cli("get", "pg", "-n", namespace).stdout)
        return True if rows and rows[-1]["SCHEDULED"] == "1" and rows[-1]["PHASE"] == "Scheduling" else None

    await eventually(counted, "the controller to count train's bound pod")
    table = cli("get", "pg", "-n", namespace)
    assert table.stdout.splitlines()[0].split() == ["NAME", "MIN", "SCHEDULED", "RUNNING", "PHASE", "AGE"]
    rows = {row["NAME"]: row for row in parse_table(table.stdout)}
    assert (rows["train"]["MIN"], rows["train"]["SCHEDULED"], rows["train"]["RUNNING"]) == ("2", "1", "1")
    assert (rows["ray"]["MIN"], rows["ray"]["SCHEDULED"], rows["ray"]["PHASE"]) == ("1", "0", "Pending")
    wide_table = cli("get", "podgroups", "-n", namespace, "-o", "wide").stdout
    wide = {row["NAME"]: row for row in parse_table(wide_table)}
    assert (wide["train"]["API VERSION"], wide["ray"]["API VERSION"]) == (UPSTREAM, COSCHEDULING)
    everywhere = parse_table(cli("get", "pg", "-A").stdout)
    assert {(r["NAMESPACE"], r["NAME"]) for r in everywhere} >= {(namespace, "train"), (namespace, "ray")}

    named = cli("get", "pg", "ray", "-n", namespace, "-o", "name").stdout
    assert named == "podgroup.scheduling.x-k8s.io/ray\n"
    as_yaml = yaml.safe_load(cli("get", "pg", "ray", "-n", namespace, "-o", "yaml").stdout)
    assert as_yaml["apiVersion"] == COSCHEDULING
    assert as_yaml["spec"] == {"minMember": 1, "scheduleTimeoutSeconds": 60}
    listed = yaml.safe_load(cli("get", "pg", "-n", namespace, "-o", "yaml").stdout)
    assert {item["metadata"]["name"]: item["apiVersion"] for item in listed["items"]} == {
        "train": UPSTREAM, "ray": COSCHEDULING
    }

    described = cli("describe", "pg", "train", "-n", namespace)
    assert described.code == 0, described.stderr
    lines = [line.split() for line in described.stdout.splitlines()]
    assert ["Scheduling", "Policy:", "Gang", "(minCount", "2)"] in lines
    assert ["Phase:", "Scheduling"] in lines and ["Scheduled:", "1"] in lines
    assert ["train-0", node, "Running"] in lines
    assert ["train-1", "<none>", "Pending"] in lines
    assert "1/2 pods placeable, minCount 2" in described.stdout.split("Events:")[1]

    reapplied = cli("apply", "-f", path)
    assert reapplied.code == 0, reapplied.stderr
    assert "podgroup.scheduling.k8s.io/train unchanged" in reapplied.stdout.splitlines()

    deleted = cli("delete", "pg", "ray", "-n", namespace)
    assert deleted.code == 0, deleted.stderr
    assert deleted.stdout == 'podgroup.scheduling.x-k8s.io "ray" deleted\n'
    missing = cli("get", "pg", "ray", "-n", namespace)
    assert missing.code != 0
    assert 'podgroups.scheduling.k8s.io "ray" not found' in missing.stderr


async def test_the_controller_keeps_counts_and_phase_current(
    client: Client, namespace: str, unique: Callable[[str], str], cli: Cli, tmp_path: Path
) -> None:
    node = unique("node")
    assert cli("apply", "-f", write_yaml(tmp_path / "node.yaml", node_manifest(node))).code == 0
    await client.create(objects_pb2.PodGroup(
        api_version=COSCHEDULING, metadata=objects_pb2.ObjectMeta(name="gang", namespace=namespace),
        spec=objects_pb2.PodGroupSpec(min_member=2),
    ))

    def status_is(*expected: object) -> Callable[[], Any]:
        """A probe: the group's (phase, scheduled, running) is ``expected``."""
        async def probe() -> bool | None:
            status = (await client.get(POD_GROUP, "gang", namespace)).status  # type: ignore[attr-defined]
            return True if (status.phase, status.scheduled, status.running) == expected else None
        return probe

    await eventually(status_is("Pending", 0, 0), "a new group to be Pending")
    for name in ("w-0", "w-1"):
        member = objects_pb2.Pod(metadata=objects_pb2.ObjectMeta(name=name, namespace=namespace,
                                                                 labels={GROUP_LABEL: "gang"}))
        member.spec.containers.add(name="app", image="busybox:1.36")
        await client.create(member)
    await eventually(status_is("Scheduling", 0, 0), "two pods to make the group Scheduling")
    stored = await client.get(POD_GROUP, "gang", namespace)
    assert stored.status.schedule_start_time.seconds > 0  # type: ignore[attr-defined]

    # A condition the scheduler writes stays through the controller's writes.
    await write_status(client, namespace, "gang", lambda group: group.status.conditions.add(
        type="PodGroupInitiallyScheduled", status="False", reason="Unschedulable"))
    await client.bind(namespace, "w-0", node)
    await eventually(status_is("Scheduling", 1, 1), "one bound pod to be counted")
    await client.bind(namespace, "w-1", node)
    await eventually(status_is("Running", 2, 2), "the group to run once both are bound")
    stored = await client.get(POD_GROUP, "gang", namespace)
    assert [c.type for c in stored.status.conditions] == ["PodGroupInitiallyScheduled"]  # type: ignore[attr-defined]

    await client.delete("Pod", "w-1", namespace, grace_period_seconds=0)
    await eventually(status_is("Pending", 1, 1), "a group short of minMember to go back to Pending")


# A PyTorchJob's pods as Kubeflow's training operator creates them with --gang-scheduler-name
# scheduler-plugins-scheduler: a Coscheduling PodGroup named after the job, the pods labelled with it and
# handed to the scheduler of that name, with owner references and fields podsched does not model.
def pytorchjob_manifests(namespace: str) -> list[dict[str, Any]]:
    owner = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": "mnist", "controller": True,
             "blockOwnerDeletion": True, "uid": "0c6b9f6e-3a5d-4b8e-9d0f-1c2b3a4d5e6f"}
    documents: list[dict[str, Any]] = [{
        "apiVersion": COSCHEDULING, "kind": "PodGroup",
        "metadata": {"name": "mnist", "namespace": namespace, "ownerReferences": [owner]},
        "spec": {"minMember": 3, "minResources": {"cpu": "750m", "memory": "192Mi"},
                 "scheduleTimeoutSeconds": 120},
    }]
    for replica_type, index in (("master", 0), ("worker", 0), ("worker", 1)):
        name = f"mnist-{replica_type}-{index}"
        documents.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": name, "namespace": namespace, "ownerReferences": [owner],
                "labels": {
                    "training.kubeflow.org/job-name": "mnist",
                    "training.kubeflow.org/operator-name": "pytorchjob-controller",
                    "training.kubeflow.org/replica-type": replica_type,
                    "training.kubeflow.org/replica-index": str(index),
                    GROUP_LABEL: "mnist",
                },
                "annotations": {GROUP_LABEL: "mnist"},
            },
            "spec": {
                "schedulerName": "scheduler-plugins-scheduler",
                "restartPolicy": "OnFailure",
                "containers": [{
                    "name": "pytorch", "image": "kubeflow/pytorch-dist-mnist:latest",
                    "args": ["--backend", "gloo"],
                    "ports": [{"name": "pytorchjob-port", "containerPort": 23456, "protocol": "TCP"}],
                    "env": [{"name": "MASTER_PORT", "value": "23456"}, {"name": "WORLD_SIZE", "value": "3"},
                            {"name": "RANK", "value": str(0 if replica_type == "master" else index + 1)}],
                    "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}},
                    "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
                }],
                "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
            },
        })
    return documents


async def test_a_kubeflow_worker_set_applies_unchanged_and_is_scheduled(
    cli: Cli, client: Client, apiserver: ApiServerProcess, namespace: str, tmp_path: Path,
    unique: Callable[[str], str],
) -> None:
    node = unique("node")
    assert cli("apply", "-f", write_yaml(tmp_path / "node.yaml", node_manifest(node))).code == 0
    applied = cli("apply", "-f", write_yaml(tmp_path / "mnist.yaml", *pytorchjob_manifests(namespace)))
    assert applied.code == 0, applied.stderr
    # Named in its own group, as kubectl names it, and created before its pods.
    assert applied.stdout.splitlines()[0] == "podgroup.scheduling.x-k8s.io/mnist created"

    stored = await client.get(POD_GROUP, "mnist", namespace)
    assert stored.api_version == COSCHEDULING and stored.spec.min_member == 3  # type: ignore[attr-defined]
    read_back = yaml.safe_load(cli("get", "pg", "mnist", "-n", namespace, "-o", "yaml").stdout)
    assert read_back["apiVersion"] == COSCHEDULING
    assert read_back["spec"] == {"minMember": 3, "minResources": {"cpu": "750m", "memory": "192Mi"},
                                 "scheduleTimeoutSeconds": 120}

    # A scheduler started with no configuration serves the name the operators write.
    with running_scheduler(apiserver.address):
        async def all_running() -> bool | None:
            group = await client.get(POD_GROUP, "mnist", namespace)
            status = group.status  # type: ignore[attr-defined]
            return True if (status.phase, status.scheduled) == ("Running", 3) else None

        await eventually(all_running, "the scheduler-plugins-scheduler profile to place the worker set")
    pods = (await client.list("Pod", namespace)).items
    assert len(pods) == 3 and all(pod.spec.node_name for pod in pods)  # type: ignore[attr-defined]
