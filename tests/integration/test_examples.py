"""The programs and manifests in examples/, run as a user runs them (`podsched demo` has
tests/integration/test_demo.py)."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cluster.api import kinds, objects_pb2
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess, cli_env
from tests.integration.helpers import (
    EXAMPLES,
    REPO,
    node_manifest,
    parse_table,
    pod_manifest,
    run_cli_async,
    write_yaml,
)
from tests.integration.test_scheduler import eventually, running_scheduler

SUBMIT_TIMEOUT_S = 60.0
#: How long the gang of a training job example may take to be bound by a running scheduler.
GANG_TIMEOUT_S = 30.0


async def _play_scheduler(client: Client, namespace: str, node: str) -> None:
    """Bind every pod that appears unbound in ``namespace`` to ``node``, as a scheduler would."""
    async for event in client.watch("Pod", namespace):
        pod = event.object
        if event.type != "DELETED" and not pod.spec.node_name:
            await client.bind(namespace, pod.metadata.name, node)


async def test_submit_pods_waits_until_bound(
    apiserver: ApiServerProcess, client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    node = unique("node")
    await client.create(objects_pb2.Node(metadata=objects_pb2.ObjectMeta(name=node)))
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(EXAMPLES / "submit_pods.py"),
        "--count", "3", "--namespace", namespace, "--timeout", "30",
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(apiserver.address), cwd=REPO,
    )
    scheduler = asyncio.create_task(_play_scheduler(client, namespace, node))
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), SUBMIT_TIMEOUT_S)
    finally:
        scheduler.cancel()
        await asyncio.gather(scheduler, return_exceptions=True)
    assert process.returncode == 0, stderr.decode()
    lines = stdout.decode().splitlines()
    created = [line for line in lines if line.endswith(" created")]
    bound = [line for line in lines if " bound to " in line]
    assert len(created) == 3
    assert sorted(bound) == sorted(f"{line.removesuffix(' created')} bound to {node}" for line in created)
    pods = (await client.list("Pod", namespace)).items
    assert len(pods) == 3 and all(pod.spec.node_name == node for pod in pods)


def test_submit_pods_times_out_naming_unbound_pods(apiserver: ApiServerProcess, namespace: str) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "submit_pods.py"), "--count", "2", "--namespace", namespace,
         "--timeout", "1"],
        capture_output=True, text=True, env=cli_env(apiserver.address), cwd=REPO, timeout=SUBMIT_TIMEOUT_S,
    )
    assert done.returncode == 1
    assert re.search(r"timed out after 1s; not bound: submit-\w+-0, submit-\w+-1", done.stderr)


async def _bind_versions(client: Client, namespace: str, count: int) -> dict[str, str]:
    """Per pod of ``namespace``, the resourceVersion of the change that bound it, once ``count`` are."""
    seen: dict[str, str] = {}
    async for event in client.watch(kinds.POD, namespace):
        pod = event.object
        if event.type != "DELETED" and pod.spec.node_name:
            seen.setdefault(pod.metadata.name, pod.metadata.resource_version)
            if len(seen) == count:
                break
    return seen


@pytest.mark.parametrize(
    ("example", "group"),
    [
        ("training-job.yaml", "resnet-training"),
        # Kubeflow's pods name scheduler-plugins' scheduler, which podsched's serves without --config.
        ("training-job-coscheduling.yaml", "mnist-mpi"),
    ],
    ids=["scheduling.k8s.io", "scheduling.x-k8s.io"],
)
async def test_training_job_gang_is_bound_whole_at_one_resource_version(
    fresh_apiserver: ApiServerProcess, tmp_path: Path, example: str, group: str,
) -> None:
    """The example applies unchanged, and its launcher and eight workers are bound by a real scheduler
    process in one group bind: all nine at the same resourceVersion."""
    server = fresh_apiserver.address
    nodes = write_yaml(tmp_path / "nodes.yaml", node_manifest("node-a", cpu="4", memory="8Gi"),
                       node_manifest("node-b", cpu="4", memory="8Gi"))
    assert (await run_cli_async(server, "apply", "-f", nodes)).code == 0

    async with Client(server, timeout_s=30.0) as client:

        async def scheduled_condition() -> list[tuple[str, str]] | None:
            pod_group = await client.get(kinds.POD_GROUP, group, "default")
            assert isinstance(pod_group, objects_pb2.PodGroup)
            return [(c.type, c.status) for c in pod_group.status.conditions] or None

        watcher = asyncio.create_task(_bind_versions(client, "default", 9))
        try:
            with running_scheduler(server):
                applied = await run_cli_async(server, "apply", "-f", str(EXAMPLES / example))
                assert applied.code == 0, applied.stderr
                assert re.search(rf"^podgroup\S*/{group} created$", applied.stdout, re.MULTILINE)
                # Every field of both examples (owner references included) is one podsched keeps.
                assert "unknown field" not in applied.stderr, applied.stderr
                assert "does not model" not in applied.stderr, applied.stderr
                seen = await asyncio.wait_for(watcher, GANG_TIMEOUT_S)
                # The scheduler writes the group's condition right after the bind.
                condition = await eventually(scheduled_condition, "the PodGroupInitiallyScheduled condition")
        finally:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
        pods = (await client.list(kinds.POD, "default")).items
    assert len(pods) == 9 and all(pod.spec.node_name for pod in pods)
    assert sorted(seen) == sorted(pod.metadata.name for pod in pods)
    assert sum(1 for name in seen if name.endswith("-launcher")) == 1
    # One group bind: every pod of the gang bound by the same store transaction.
    assert len(set(seen.values())) == 1, seen
    assert condition == [("PodGroupInitiallyScheduled", "True")]


DRA_EXAMPLE = EXAMPLES / "dra"
#: examples/dra/: the trainers get node-1's two GPUs whole, the inference pods 30Gi shares of node-2's.
DRA_PLACEMENT = {"trainer-0": "node-1", "trainer-1": "node-1",
                 "inference-0": "node-2", "inference-1": "node-2"}


def _check_dra_allocations(devices: dict[str, list[tuple[str, str, str | None, dict[str, str]]]]) -> None:
    """``devices``: per pod, each device its claim got as (pool, device, shareID, consumedCapacity)."""
    trainers = [devices[f"trainer-{i}"] for i in range(2)]
    assert all(len(got) == 1 and got[0][0] == "node-1" and got[0][2] is None for got in trainers), trainers
    assert {got[0][1] for got in trainers} == {"gpu-0", "gpu-1"}
    shares = [devices[f"inference-{i}"] for i in range(2)]
    assert all(len(got) == 1 and got[0][:2] == ("node-2", "gpu-0") for got in shares), shares
    assert all(got[0][3] == {"memory": "30Gi"} for got in shares), shares
    share_ids = {got[0][2] for got in shares}
    assert None not in share_ids and len(share_ids) == 2, shares


def test_dra_example_simulates() -> None:
    """`podsched simulate -f examples/dra/`: every pod placed where its device is, the shared GPU's
    consumers each with their own share."""
    done = subprocess.run(
        [sys.executable, "-m", "cluster.cli", "simulate", "-f", str(DRA_EXAMPLE), "-o", "json"],
        capture_output=True, text=True, cwd=REPO, timeout=SUBMIT_TIMEOUT_S, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr
    pods = json.loads(done.stdout)["pods"]
    assert {pod["name"]: pod["node"] for pod in pods} == DRA_PLACEMENT
    _check_dra_allocations({
        pod["name"]: [(d["pool"], d["device"], d["shareID"], d["consumedCapacity"])
                      for claim in pod["claims"] for d in claim["devices"]]
        for pod in pods
    })


async def test_dra_example_applies_and_a_scheduler_places_it(
    fresh_apiserver: ApiServerProcess, tmp_path: Path
) -> None:
    """`podsched apply -f examples/dra/` against a control plane whose two nodes are `podsched up --nodes
    2`'s: the API server's resourceclaim controller makes the claims, a scheduler process allocates them."""
    server = fresh_apiserver.address
    async with Client(server, timeout_s=30.0) as client:
        with running_scheduler(server):
            applied = await run_cli_async(server, "apply", "-f", str(DRA_EXAMPLE))
            assert applied.code == 0, applied.stderr
            assert "unknown field" not in applied.stderr and "does not model" not in applied.stderr

            async def all_bound() -> list[objects_pb2.Pod] | None:
                pods = (await client.list(kinds.POD, "default")).items
                done = len(pods) == len(DRA_PLACEMENT) and all(pod.spec.node_name for pod in pods)
                return pods if done else None  # type: ignore[return-value]

            pods = await eventually(all_bound, "the example's pods to be bound", within=GANG_TIMEOUT_S)
        listed = (await client.list(kinds.RESOURCE_CLAIM, "default")).items
    claims = {claim.metadata.name: claim for claim in listed}
    assert {pod.metadata.name: pod.spec.node_name for pod in pods} == DRA_PLACEMENT
    devices = {}
    for pod in pods:
        (status,) = pod.status.resource_claim_statuses
        claim = claims[status.resource_claim_name]
        assert [consumer.name for consumer in claim.status.reserved_for] == [pod.metadata.name]
        devices[pod.metadata.name] = [
            (r.pool, r.device, r.share_id if r.HasField("share_id") else None, dict(r.consumed_capacity))
            for r in claim.status.allocation.devices.results]
    _check_dra_allocations(devices)


STORAGE_EXAMPLE = EXAMPLES / "storage"
#: examples/storage/: the web pods where their local volumes are (node-3's is too small), the database in
#: the one zone its class allows.
STORAGE_PLACEMENT = {"web-0": "node-1", "web-1": "node-2", "db-0": "node-3"}
STORAGE_VOLUMES = {"www-web-0": "local-node-1", "www-web-1": "local-node-2"}


def test_storage_example_simulates() -> None:
    """`podsched simulate -f examples/storage/ -o table`: each pod where its volume is, each claim bound,
    the database's volume provisioned for it."""
    done = subprocess.run(
        [sys.executable, "-m", "cluster.cli", "simulate", "-f", str(STORAGE_EXAMPLE), "-o", "table"],
        capture_output=True, text=True, cwd=REPO, timeout=SUBMIT_TIMEOUT_S, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr
    pods_table, volumes_table = done.stdout.split("\n\n")
    assert {row["NAME"]: row["NODE"] for row in parse_table(pods_table)} == STORAGE_PLACEMENT
    volumes = {row["PERSISTENTVOLUMECLAIM"]: row for row in parse_table(volumes_table)}
    assert {claim: row["PERSISTENTVOLUME"] for claim, row in volumes.items() if claim != "db-0-data"} == (
        STORAGE_VOLUMES)
    assert volumes["db-0-data"]["PERSISTENTVOLUME"].startswith("pvc-")
    assert {row["STATUS"] for row in volumes.values()} == {"Bound"}


async def test_storage_example_applies_and_a_scheduler_places_it(
    fresh_apiserver: ApiServerProcess,
) -> None:
    """`podsched apply -f examples/storage/` against a control plane: the scheduler binds each web pod's
    claim to the local volume of the node it picks, the API server's PV controller completes the
    bindings, the ephemeral volume controller makes the database's claim and the provisioner a volume in
    zone-b for it."""
    server = fresh_apiserver.address
    async with Client(server, timeout_s=30.0) as client:
        with running_scheduler(server):
            applied = await run_cli_async(server, "apply", "-f", str(STORAGE_EXAMPLE))
            assert applied.code == 0, applied.stderr
            assert "unknown field" not in applied.stderr and "does not model" not in applied.stderr

            async def all_bound() -> list[objects_pb2.PersistentVolumeClaim] | None:
                pods = (await client.list(kinds.POD, "default")).items
                claims = (await client.list(kinds.PERSISTENT_VOLUME_CLAIM, "default")).items
                done = (len(pods) == len(STORAGE_PLACEMENT) and all(pod.spec.node_name for pod in pods)
                        and len(claims) == 3 and all(claim.status.phase == "Bound" for claim in claims))
                return claims if done else None  # type: ignore[return-value]

            claims = await eventually(all_bound, "the example's pods and claims to be bound",
                                      within=GANG_TIMEOUT_S)
            pods = (await client.list(kinds.POD, "default")).items
        volumes = {claim.metadata.name: claim.spec.volume_name for claim in claims}
        provisioned = await client.get(kinds.PERSISTENT_VOLUME, volumes.pop("db-0-data"))
    assert {pod.metadata.name: pod.spec.node_name for pod in pods} == STORAGE_PLACEMENT
    assert volumes == STORAGE_VOLUMES
    assert provisioned.spec.csi.driver == "disk.csi.example.com"
    (term,) = provisioned.spec.node_affinity.required.node_selector_terms
    assert [(r.key, list(r.values)) for r in term.match_expressions] == [
        ("topology.kubernetes.io/zone", ["zone-b"])]


def test_gpu_share_example_simulates() -> None:
    """`podsched simulate -f examples/gpu-share/`: the trainer takes a GPU whole, the shares fill the other,
    and the last quarter waits rather than join the trainer's."""
    done = subprocess.run(
        [sys.executable, "-m", "cluster.cli", "simulate", "-f", str(EXAMPLES / "gpu-share"), "-o", "json"],
        capture_output=True, text=True, cwd=REPO, timeout=SUBMIT_TIMEOUT_S, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    pods = json.loads(done.stdout)["pods"]
    devices = {pod["name"]: [(d["device"], d["consumedCapacity"]) for claim in pod["claims"]
                             for d in claim["devices"]] for pod in pods}
    assert devices == {
        "trainer": [("gpu-0", {"milli": "1000"})],
        "inference": [("gpu-1", {"milli": "500"})],
        "notebook-0": [("gpu-1", {"milli": "250"})],
        "notebook-1": [("gpu-1", {"milli": "250"})],
        "notebook-2": [],
    }
    assert {pod["name"]: pod["node"] for pod in pods}["notebook-2"] is None


WORKLOAD_EXAMPLE = EXAMPLES / "workloads" / "training-workload.yaml"
#: examples/workloads/training-workload.yaml's groups and their pods.
WORKLOAD_GROUPS = {"llm-training-driver": ["llm-training-driver-0"],
                   "llm-training-workers": [f"llm-training-worker-{i}" for i in range(4)]}


async def test_workload_example_applies_and_its_gangs_are_bound(
    fresh_apiserver: ApiServerProcess, tmp_path: Path
) -> None:
    """examples/workloads/: the Workload, the PodGroups made from its templates and their pods apply
    unchanged; a real scheduler process binds each gang whole (the workers in one group bind); a group
    naming a template the Workload lacks is refused, naming the group and the template."""
    server = fresh_apiserver.address
    nodes = write_yaml(tmp_path / "nodes.yaml", node_manifest("node-a", cpu="4", memory="8Gi"),
                       node_manifest("node-b", cpu="4", memory="8Gi"))
    assert (await run_cli_async(server, "apply", "-f", nodes)).code == 0
    async with Client(server, timeout_s=30.0) as client:
        watcher = asyncio.create_task(_bind_versions(client, "default", 5))
        try:
            with running_scheduler(server):
                applied = await run_cli_async(server, "apply", "-f", str(WORKLOAD_EXAMPLE))
                assert applied.code == 0, applied.stderr
                assert "unknown field" not in applied.stderr and "does not model" not in applied.stderr
                assert re.search(r"^workload\S*/llm-training created$", applied.stdout, re.MULTILINE)
                seen = await asyncio.wait_for(watcher, GANG_TIMEOUT_S)
        finally:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
    assert sorted(seen) == sorted(name for pods in WORKLOAD_GROUPS.values() for name in pods)
    assert len({seen[name] for name in WORKLOAD_GROUPS["llm-training-workers"]}) == 1, seen

    listed = await run_cli_async(server, "get", "workloads")
    assert listed.code == 0, listed.stderr
    (row,) = parse_table(listed.stdout)
    assert (row["NAME"], row["PODGROUP TEMPLATES"], row["CONTROLLER"]) == ("llm-training", "2",
                                                                          "Job.batch/llm-training")
    described = await run_cli_async(server, "describe", "podgroup", "llm-training-workers")
    assert re.search(r"^Workload Template:\s+llm-training/workers$", described.stdout, re.MULTILINE)

    stray = write_yaml(tmp_path / "stray.yaml", {
        "apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup", "metadata": {"name": "stray"},
        "spec": {"workloadRef": {"workloadName": "llm-training", "templateName": "evaluators"},
                 "schedulingPolicy": {"basic": {}}}})
    refused = await run_cli_async(server, "apply", "-f", stray)
    assert refused.code != 0
    assert ('podgroups.scheduling.k8s.io "stray" is forbidden: PodGroup rejected: PodGroupTemplate '
            '"evaluators" not found in Workload "llm-training"') in refused.stderr, refused.stderr
    deleted = await run_cli_async(server, "delete", "workload", "llm-training")
    assert deleted.code == 0, deleted.stderr
    assert parse_table((await run_cli_async(server, "get", "workloads")).stdout) == []


def test_workload_example_simulates(tmp_path: Path) -> None:
    """`podsched simulate` of the example next to two nodes: every pod placed, each group admitted."""
    nodes = write_yaml(tmp_path / "nodes.yaml", node_manifest("node-a", cpu="4", memory="8Gi"),
                       node_manifest("node-b", cpu="4", memory="8Gi"))
    done = subprocess.run(
        [sys.executable, "-m", "cluster.cli", "simulate", "-f", nodes, "-f", str(WORKLOAD_EXAMPLE),
         "-o", "json"],
        capture_output=True, text=True, cwd=REPO, timeout=SUBMIT_TIMEOUT_S, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert all(pod["node"] for pod in result["pods"]) and len(result["pods"]) == 5
    assert {group["name"]: (group["bound"], group["admitted"]) for group in result["podGroups"]} == {
        "llm-training-driver": (1, True), "llm-training-workers": (4, True)}


GROUP_CLAIM_EXAMPLE = EXAMPLES / "workloads" / "group-claim.yaml"
GROUP_CLAIM_PODS = ["tp-shard-0", "tp-shard-1", "tp-shard-2"]


def test_group_claim_example_simulates() -> None:
    """`podsched simulate -f examples/workloads/group-claim.yaml`: the three pods share the one claim made
    for their PodGroup, and run on node-2, where its GPU is."""
    done = subprocess.run(
        [sys.executable, "-m", "cluster.cli", "simulate", "-f", str(GROUP_CLAIM_EXAMPLE), "-o", "json"],
        capture_output=True, text=True, cwd=REPO, timeout=SUBMIT_TIMEOUT_S, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr.upper(), done.stderr
    pods = json.loads(done.stdout)["pods"]
    assert {pod["name"]: pod["node"] for pod in pods} == dict.fromkeys(GROUP_CLAIM_PODS, "node-2")
    claims = {(claim["resourceClaim"], device["device"]) for pod in pods for claim in pod["claims"]
              for device in claim["devices"]}
    (claim_name, device), = claims
    assert claim_name.startswith("tp-shard-gpu-") and device == "gpu-0"


async def _allocations(client: Client, namespace: str, seen: list[str]) -> None:
    """Note each claim's every change from unallocated to allocated."""
    allocated: set[str] = set()
    async for event in client.watch(kinds.RESOURCE_CLAIM.name, namespace):
        claim = event.object
        now = event.type != "DELETED" and claim.status.HasField("allocation")
        if now and claim.metadata.name not in allocated:
            seen.append(claim.metadata.name)
        (allocated.add if now else allocated.discard)(claim.metadata.name)


async def test_group_claim_example_applies_and_a_scheduler_places_it(
    fresh_apiserver: ApiServerProcess,
) -> None:
    """`podsched apply -f examples/workloads/group-claim.yaml` on a real API server (on etcd) and a
    scheduler process: the resourceclaim controller makes one claim for the PodGroup, the scheduler
    allocates it once and reserves it for the PodGroup, every pod's status names it; deleting the
    PodGroup and its pods releases the claim."""
    server = fresh_apiserver.address
    allocations: list[str] = []
    async with Client(server, timeout_s=30.0) as client:
        watcher = asyncio.create_task(_allocations(client, "default", allocations))
        try:
            with running_scheduler(server):
                applied = await run_cli_async(server, "apply", "-f", str(GROUP_CLAIM_EXAMPLE))
                assert applied.code == 0, applied.stderr
                assert "unknown field" not in applied.stderr and "does not model" not in applied.stderr

                async def all_bound() -> list[objects_pb2.Pod] | None:
                    pods = (await client.list(kinds.POD, "default")).items
                    done = len(pods) == len(GROUP_CLAIM_PODS) and all(pod.spec.node_name for pod in pods)
                    return pods if done else None  # type: ignore[return-value]

                pods = await eventually(all_bound, "the example's pods to be bound", within=GANG_TIMEOUT_S)
                group = await client.get(kinds.POD_GROUP, "tp-shard", "default")
                assert isinstance(group, objects_pb2.PodGroup)
                (claim,) = (await client.list(kinds.RESOURCE_CLAIM, "default")).items
                assert isinstance(claim, objects_pb2.ResourceClaim)

                # One claim, the group's: owned by the PodGroup, recorded in its status and every pod's.
                (owner,) = claim.metadata.owner_references
                assert (owner.kind, owner.name, owner.uid, owner.controller) == (
                    "PodGroup", "tp-shard", group.metadata.uid, True)
                assert [(s.name, s.resource_claim_name) for s in group.status.resource_claim_statuses] == [
                    ("gpu", claim.metadata.name)]
                for pod in pods:
                    assert [(s.name, s.resource_claim_name) for s in pod.status.resource_claim_statuses] == [
                        ("gpu", claim.metadata.name)], pod.metadata.name
                    assert pod.spec.node_name == "node-2", pod.metadata.name
                # Allocated once, reserved for the PodGroup rather than for each pod.
                assert [(r.pool, r.device) for r in claim.status.allocation.devices.results] == [
                    ("node-2", "gpu-0")]
                assert [(c.api_group, c.resource, c.name, c.uid) for c in claim.status.reserved_for] == [
                    ("scheduling.k8s.io", "podgroups", "tp-shard", group.metadata.uid)]
                assert allocations == [claim.metadata.name]

                await client.delete(kinds.POD_GROUP, "tp-shard", "default")
                for name in GROUP_CLAIM_PODS:
                    await client.delete(kinds.POD, name, "default")

                async def claims_gone() -> bool | None:
                    return True if not (await client.list(kinds.RESOURCE_CLAIM, "default")).items else None

                await eventually(claims_gone, "the group's claim to be released and deleted")
        finally:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
    assert allocations == [claim.metadata.name]


KUBERNETES_IO = REPO / "tests" / "data" / "kubernetes_io"


async def test_kubernetes_io_podgroups_apply_unchanged_and_their_gang_is_bound(
    fresh_apiserver: ApiServerProcess, tmp_path: Path,
) -> None:
    """kubernetes.io's scheduling.k8s.io/v1alpha2 PodGroups apply unchanged with `podsched apply` and
    are stored as v1alpha3; a real scheduler process binds the four pods of the page's gang together."""
    server = fresh_apiserver.address
    nodes = write_yaml(tmp_path / "nodes.yaml", node_manifest("node-a", cpu="2"),
                       node_manifest("node-b", cpu="2"))
    # The pages show the group, not its pods: four members, a core each, so the gang needs both nodes.
    members = write_yaml(tmp_path / "members.yaml", *(
        pod_manifest(f"worker-{index}", "default", cpu="1",
                     schedulingGroup={"podGroupName": "training-worker-0"})
        for index in range(4)))
    assert (await run_cli_async(server, "apply", "-f", nodes)).code == 0
    async with Client(server, timeout_s=30.0) as client:
        watcher = asyncio.create_task(_bind_versions(client, "default", 4))
        try:
            with running_scheduler(server):
                applied = await run_cli_async(
                    server, "apply", "-f", str(KUBERNETES_IO / "podgroup-api-gang.yaml"),
                    "-f", str(KUBERNETES_IO / "topology-aware-scheduling-podgroup.yaml"), "-f", members)
                assert applied.code == 0, applied.stderr
                assert applied.stderr == ""
                assert re.search(r"^podgroup\S*/training-worker-0 created$", applied.stdout, re.MULTILINE)
                seen = await asyncio.wait_for(watcher, GANG_TIMEOUT_S)
        finally:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
        group = await client.get(kinds.POD_GROUP, "training-worker-0", "default")
        constrained = await client.get(kinds.POD_GROUP, "example-podgroup", "default")
        shown = await run_cli_async(server, "get", "podgroup", "training-worker-0", "-o", "yaml")
    assert shown.stdout.startswith("apiVersion: scheduling.k8s.io/v1alpha3\nkind: PodGroup\n"), shown.stdout
    assert sorted(seen) == [f"worker-{index}" for index in range(4)]
    assert len(set(seen.values())) == 1, seen  # one group bind
    assert isinstance(group, objects_pb2.PodGroup) and isinstance(constrained, objects_pb2.PodGroup)
    assert group.api_version == "scheduling.k8s.io/v1alpha3"
    assert group.spec.scheduling_policy.gang.min_count == 4
    assert [c.key for c in constrained.spec.scheduling_constraints.topology] == [
        "topology.kubernetes.io/rack"]
