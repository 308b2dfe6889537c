"""`podsched scheduler` as a real process against a real API server process, on each backend.

Each module-scoped cluster is an API server on a store of its own (so that node counts in messages are
exact) with one scheduler process; tests create what they need in their own namespace and leave the
cluster with the two nodes it started with. Pods are submitted with `podsched apply`, as a user would.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

from cluster.api import errors, objects_pb2, quantity
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess, SchedulerProcess, cli_env
from tests.chaos.history import pod_need
from tests.integration.conftest import own_apiserver_with
from tests.integration.helpers import REPO, node_manifest, pod_manifest, run_cli, write_yaml

T = TypeVar("T")

#: How long a pod may take to be bound (or reported) by a running scheduler: seconds at most, when
#: everything works; generous for a loaded 2-core box.
SETTLE_TIMEOUT_S = 20.0
NODE_CPU = "2"


def scheduler_process(server: str, *args: str) -> SchedulerProcess:
    """A `podsched scheduler` of ``server`` with the tests' flags: no leader election, a free metrics port
    (run from the repository, so that ``--plugin`` finds examples/)."""
    return SchedulerProcess(
        ["--server", server, "--leader-elect=false", "--metrics-addr", "127.0.0.1:0", *args],
        env=cli_env(""), cwd=REPO,
    )


@contextlib.contextmanager
def running_scheduler(server: str, *args: str) -> Iterator[SchedulerProcess]:
    scheduler = scheduler_process(server, *args)
    scheduler.start()
    try:
        scheduler.wait_ready()
        yield scheduler
    finally:
        scheduler.stop()


async def eventually(probe: Callable[[], Awaitable[T | None]], what: str,
                     within: float = SETTLE_TIMEOUT_S) -> T:
    """Poll ``probe`` until it returns something other than None."""
    deadline = time.monotonic() + within
    while True:
        result = await probe()
        if result is not None:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within:g}s waiting for {what}")
        await asyncio.sleep(0.1)


def apply(server: str, tmp_path: Path, *documents: dict[str, Any]) -> None:
    path = write_yaml(tmp_path / f"objects-{time.monotonic_ns()}.yaml", *documents)
    result = run_cli(server, "apply", "-f", path)
    assert result.code == 0, result.stderr


async def pods_in(client: Client, namespace: str) -> list[objects_pb2.Pod]:
    return list((await client.list("pods", namespace)).items)  # type: ignore[arg-type]


async def all_bound(client: Client, namespace: str, count: int) -> list[objects_pb2.Pod] | None:
    pods = await pods_in(client, namespace)
    return pods if len(pods) == count and all(p.spec.node_name for p in pods) else None


async def scheduling_events(client: Client, namespace: str, pod: str) -> list[objects_pb2.Event]:
    listed = await client.list("events", namespace, field_selector=f"involvedObject.name={pod}")
    return [e for e in listed.items if e.reason in ("Scheduled", "FailedScheduling")]  # type: ignore[attr-defined]


async def no_node_overcommitted(client: Client) -> None:
    nodes = {n.metadata.name: n for n in (await client.list("nodes")).items}  # type: ignore[attr-defined]
    used: dict[str, int] = {}
    for pod in (await client.list("pods")).items:
        if pod.spec.node_name:  # type: ignore[attr-defined]
            milli = pod_need(pod)["cpu"]  # type: ignore[arg-type]
            used[pod.spec.node_name] = used.get(pod.spec.node_name, 0) + milli  # type: ignore[attr-defined]
    for name, milli in used.items():
        allocatable = int(quantity.parse_quantity(nodes[name].status.allocatable["cpu"]) * 1000)
        assert milli <= allocatable, f"node {name} has {milli}m cpu requested of {allocatable}m"


async def delete_namespace_pods(server: str, client: Client, namespace: str) -> None:
    names = [p.metadata.name for p in await pods_in(client, namespace)]
    if names:
        result = run_cli(server, "delete", "pod", *names, "-n", namespace, "--grace-period", "0")
        assert result.code == 0, result.stderr


# ---------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def cluster(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    """An API server on a store of its own, with two nodes of 2 CPUs."""
    nodes = (node_manifest("node-a", cpu=NODE_CPU), node_manifest("node-b", cpu=NODE_CPU))
    with own_apiserver_with(backend, tmp_path_factory.mktemp("scheduler-cluster"), *nodes) as server:
        yield server


@pytest.fixture(scope="module")
def scheduler(cluster: ApiServerProcess) -> Iterator[SchedulerProcess]:
    with running_scheduler(cluster.address) as process:
        yield process


# ------------------------------------------------------------------------------------------- tests


async def test_applied_pods_get_bound_without_overcommitting(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, ns: str, tmp_path: Path
) -> None:
    apply(cluster.address, tmp_path, *(pod_manifest(f"web-{i}", ns, cpu="500m") for i in range(6)))
    pods = await eventually(lambda: all_bound(api, ns, 6), "six pods bound")
    assert {p.spec.node_name for p in pods} == {"node-a", "node-b"}  # LeastAllocated spreads them
    await no_node_overcommitted(api)
    events = await eventually(lambda: _nonempty(scheduling_events(api, ns, "web-0")), "the Scheduled event")
    (scheduled,) = events
    node = next(p.spec.node_name for p in pods if p.metadata.name == "web-0")
    assert (scheduled.type, scheduled.reason, scheduled.message) == (
        "Normal", "Scheduled", f"Successfully assigned {ns}/web-0 to {node}")
    assert scheduled.source.component == "default-scheduler"
    explanation = json.loads(scheduled.metadata.annotations["podsched.io/explanation"])
    assert explanation


async def test_an_unschedulable_pod_gets_event_condition_and_explanation(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, ns: str, tmp_path: Path
) -> None:
    apply(cluster.address, tmp_path, pod_manifest("huge", ns, cpu="3"))
    # Preemption (PostFilter) cannot help either: 3 CPUs exceed both nodes' allocatable.
    message = ("0/2 nodes are available: 2 Insufficient cpu. "
               "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")

    async def condition() -> objects_pb2.PodCondition | None:
        pod = await api.get("pods", "huge", ns)
        return next((c for c in pod.status.conditions if c.type == "PodScheduled"), None)  # type: ignore[attr-defined]

    scheduled = await eventually(condition, "the PodScheduled condition")
    assert (scheduled.status, scheduled.reason, scheduled.message) == ("False", "Unschedulable", message)
    (event,) = await eventually(lambda: _nonempty(scheduling_events(api, ns, "huge")), "FailedScheduling")
    assert (event.type, event.reason, event.message) == ("Warning", "FailedScheduling", message)
    assert (await api.get("pods", "huge", ns)).spec.node_name == ""  # type: ignore[attr-defined]

    described = run_cli(cluster.address, "describe", "pod", "huge", "-n", ns)
    assert described.code == 0, described.stderr
    text = described.stdout
    assert "FailedScheduling" in text and message in text
    assert "Scheduling explanation (last attempt):" in text
    section = text.split("Scheduling explanation (last attempt):", 1)[1]
    for expected in ("node-a", "node-b", "NodeResourcesFit", "Insufficient cpu"):
        assert expected in section, f"{expected!r} missing from:\n{section}"


async def test_adding_a_node_schedules_a_waiting_pod_at_once(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, ns: str, tmp_path: Path
) -> None:
    apply(cluster.address, tmp_path, pod_manifest("waiting", ns, cpu="3"))
    await eventually(lambda: _nonempty(scheduling_events(api, ns, "waiting")), "FailedScheduling")
    big = f"node-big-{ns}"
    began = time.monotonic()
    apply(cluster.address, tmp_path, node_manifest(big, cpu="4"))
    try:
        pod = await eventually(lambda: _bound(api, ns, "waiting"), "the waiting pod bound", within=30)
        elapsed = time.monotonic() - began
        assert pod.spec.node_name == big
        # Well under the 5-minute leftover flush, and under the 10 s backoff cap plus slack.
        assert elapsed < 15, f"took {elapsed:.1f}s"
    finally:
        await delete_namespace_pods(cluster.address, api, ns)
        result = run_cli(cluster.address, "delete", "node", big)
        assert result.code == 0, result.stderr


async def test_metrics_and_health_endpoints(scheduler: SchedulerProcess) -> None:
    assert scheduler.get("/healthz") == (200, "ok")
    assert scheduler.get("/readyz") == (200, "ok")
    status, text = scheduler.get("/metrics")
    assert status == 200
    for name in (
        'scheduler_pending_pods{queue="active"}',
        'scheduler_pending_pods{queue="unschedulable"}',
        "# TYPE scheduler_schedule_attempts_total counter",
        "# TYPE scheduler_scheduling_attempt_duration_seconds histogram",
        "scheduler_pod_scheduling_attempts_bucket",
    ):
        assert name in text, name


async def _nonempty(values: Awaitable[Sequence[T]]) -> Sequence[T] | None:
    result = await values
    return result or None


async def _bound(api: Client, namespace: str, name: str) -> objects_pb2.Pod | None:
    pod = await api.get("pods", name, namespace)
    return pod if pod.spec.node_name else None  # type: ignore[attr-defined,return-value]


def _gated_pods(scheduler: SchedulerProcess) -> float:
    status, text = scheduler.get("/metrics")
    assert status == 200
    (line,) = [line for line in text.splitlines() if line.startswith('scheduler_pending_pods{queue="gated"}')]
    return float(line.split()[-1])


async def test_a_gated_pod_is_never_attempted_until_its_last_gate_is_removed(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, ns: str, tmp_path: Path
) -> None:
    gates = [{"name": "example.com/quota"}, {"name": "example.com/capacity"}]
    apply(cluster.address, tmp_path, pod_manifest("gated", ns, schedulingGates=gates))
    listed = run_cli(cluster.address, "get", "pods", "-n", ns)
    assert listed.code == 0, listed.stderr
    assert listed.stdout.splitlines()[1].split()[:3] == ["gated", "0/1", "SchedulingGated"]
    described = run_cli(cluster.address, "describe", "pod", "gated", "-n", ns).stdout
    assert "Scheduling Gates:" in described and "example.com/capacity" in described
    await eventually(lambda: asyncio.sleep(0, _gated_pods(scheduler) == 1 or None), "the gated pod queued")
    # Nobody binds a gated pod, not even a caller who asks the API server directly.
    with pytest.raises(errors.Conflict, match=r"non-empty \.spec\.schedulingGates"):
        await api.bind(ns, "gated", "node-a")
    # One gate of two removed (by whoever held it, with an update): still gated.
    current = await api.get("pods", "gated", ns)
    assert isinstance(current, objects_pb2.Pod)
    del current.spec.scheduling_gates[0]
    await api.update(current)
    await asyncio.sleep(1.0)
    assert not (await api.get("pods", "gated", ns)).spec.node_name  # type: ignore[attr-defined]
    assert _gated_pods(scheduler) == 1
    # The last one removed by applying the manifest without it, as a user would.
    apply(cluster.address, tmp_path, pod_manifest("gated", ns))
    try:
        pod = await eventually(lambda: _bound(api, ns, "gated"), "the released pod bound")
        assert pod.spec.node_name in ("node-a", "node-b")
        # Events are recorded after the bind: wait for it rather than race it.
        events = await eventually(lambda: _nonempty(scheduling_events(api, ns, "gated")),
                                  "the Scheduled event")
        reasons = [e.reason for e in events]
        assert reasons == ["Scheduled"], reasons  # never attempted while gated: no FailedScheduling
        assert _gated_pods(scheduler) == 0
    finally:
        await delete_namespace_pods(cluster.address, api, ns)


async def test_a_wait_for_first_consumer_volume_takes_its_pod_to_the_volume_and_is_bound(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, ns: str, tmp_path: Path
) -> None:
    # VolumeBinding with the API server's PV controller: the only volume is node-b's, the scheduler
    # writes its claimRef in PreBind and binds the pod once the controller has completed the binding.
    storage_class, volume = f"local-{ns}", f"local-{ns}"
    apply(cluster.address, tmp_path,
          {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": storage_class},
           "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"},
          {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": volume},
           "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"],
                    "storageClassName": storage_class, "local": {"path": "/mnt/disks/a"},
                    "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-b"]}]}]}}}},
          {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": ns},
           "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
                    "resources": {"requests": {"storage": "1Gi"}}}},
          pod_manifest("db", ns, volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]))
    try:
        pod = await eventually(lambda: _bound(api, ns, "db"), "the pod with a local volume bound")
        assert pod.spec.node_name == "node-b"
        claim = await api.get("persistentvolumeclaims", "data", ns)
        assert isinstance(claim, objects_pb2.PersistentVolumeClaim)
        assert claim.spec.volume_name == volume
        assert claim.metadata.annotations["pv.kubernetes.io/bind-completed"] == "yes"
        bound = await api.get("persistentvolumes", volume)
        assert isinstance(bound, objects_pb2.PersistentVolume)
        assert (bound.spec.claim_ref.namespace, bound.spec.claim_ref.name) == (ns, "data")
        assert bound.metadata.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
    finally:
        await delete_namespace_pods(cluster.address, api, ns)
        for args in (("pvc", "data", "-n", ns), ("pv", volume), ("storageclass", storage_class)):
            result = run_cli(cluster.address, "delete", *args)
            assert result.code == 0, result.stderr
