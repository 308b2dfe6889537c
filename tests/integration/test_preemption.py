"""Preemption with real processes: a `podsched apiserver` (with its disruption controller) and a
`podsched scheduler` with the default profile (DefaultPreemption as PostFilter), on each backend.

The module's cluster is two nodes of 2 CPUs on a store of its own. Each test fills both nodes with
pods pinned by spec.nodeName (so which pod runs where is the test's choice, not the scheduler's), then
submits a pod that fits nowhere and follows what happens through a watch on its namespace: the whole
history, in order, is what the assertions read, so nothing transient (a victim's Terminating state,
the preemptor's nomination) can be missed between two polls. Pods are deleted at the end of each test
so the nodes are empty for the next one.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cluster.api import objects_pb2, quantity, timeutil
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess, SchedulerProcess
from tests.integration.conftest import own_apiserver_with
from tests.integration.helpers import node_manifest, parse_table, pod_manifest, run_cli
from tests.integration.test_scheduler import (
    apply,
    eventually,
    running_scheduler,
)

NODE_CPU = "2"
NODES = ("node-a", "node-b")
#: The victims' terminationGracePeriodSeconds: short, yet long enough to see them Terminating.
GRACE_S = 2
#: Arrival times of watch events are taken in the test process: allow for delivery jitter.
GRACE_SLACK_S = 0.5


def priority_class(name: str, value: int, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, **fields}


CLASSES = (
    priority_class("lowest", 10),
    priority_class("low", 100),
    priority_class("high", 1000),
    priority_class("high-never", 1000, preemptionPolicy="Never"),
)


def running(name: str, namespace: str, node: str, priority_class_name: str, cpu: str,
            labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A pod already running on ``node`` (created bound), with the short grace period."""
    return pod_manifest(name, namespace, cpu=cpu, labels=labels, nodeName=node,
                        priorityClassName=priority_class_name, terminationGracePeriodSeconds=GRACE_S)


def pending(name: str, namespace: str, priority_class_name: str, cpu: str) -> dict[str, Any]:
    return pod_manifest(name, namespace, cpu=cpu, priorityClassName=priority_class_name)


# ----------------------------------------------------------------------------------------- history


@dataclass(frozen=True, slots=True)
class Seen:
    """One watch event: when the test received it, its type, the pod after the change."""

    at: float
    type: str
    pod: objects_pb2.Pod

    @property
    def name(self) -> str:
        return self.pod.metadata.name

    @property
    def terminating(self) -> bool:
        return timeutil.is_set(self.pod.metadata.deletion_timestamp)


@dataclass(slots=True)
class History:
    """The namespace's pods when recording began and every change after, in order."""

    initial: list[objects_pb2.Pod]
    seen: list[Seen]

    def of(self, name: str) -> list[Seen]:
        return [s for s in self.seen if s.name == name]

    def index(self, seen: Seen) -> int:
        return next(i for i, s in enumerate(self.seen) if s is seen)

    def disturbed(self) -> set[str]:
        """Pods that were ever marked for deletion or deleted."""
        return {s.name for s in self.seen if s.type == "DELETED" or s.terminating}


@contextlib.asynccontextmanager
async def recording(client: Client, namespace: str) -> AsyncIterator[History]:
    """Watch the namespace's pods from the current revision while the block runs."""
    listed = await client.list("pods", namespace)
    history = History(list(listed.items), [])  # type: ignore[arg-type]

    async def follow() -> None:
        async for event in client.watch("pods", namespace, resource_version=listed.resource_version):
            history.seen.append(Seen(time.monotonic(), event.type, event.object))  # type: ignore[arg-type]

    task = asyncio.create_task(follow())
    try:
        yield history
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task  # a watch that failed raises here


def cpu_milli(pod: objects_pb2.Pod) -> int:
    return sum(int(quantity.parse_quantity(c.resources.requests.get("cpu", "0")) * 1000)
               for c in pod.spec.containers)


def assert_never_overcommitted(history: History) -> None:
    """Replay the history: after every change, the pods bound to each node (Terminating ones still hold
    their room, as on a real node) request no more CPU than it has."""
    allocatable = int(quantity.parse_quantity(NODE_CPU) * 1000)
    pods = {p.metadata.name: p for p in history.initial}
    for step, seen in enumerate(history.seen):
        if seen.type == "DELETED":
            pods.pop(seen.name, None)
        else:
            pods[seen.name] = seen.pod
        used: dict[str, int] = {}
        for pod in pods.values():
            if pod.spec.node_name:
                used[pod.spec.node_name] = used.get(pod.spec.node_name, 0) + cpu_milli(pod)
        over = {node: milli for node, milli in used.items() if milli > allocatable}
        assert not over, f"after change {step} ({seen.type} {seen.name}) nodes over allocatable: {over}"


def assert_graceful_deletion(history: History, victim: str) -> None:
    """The victim was first marked Terminating with its grace period, and only disappeared once that
    period had run."""
    changes = history.of(victim)
    marked = next((s for s in changes if s.terminating), None)
    assert marked is not None, f"{victim} was never Terminating: {[s.type for s in changes]}"
    assert marked.pod.metadata.deletion_grace_period_seconds == GRACE_S
    deleted = next((s for s in changes if s.type == "DELETED"), None)
    assert deleted is not None, f"{victim} was never deleted"
    assert history.index(marked) < history.index(deleted)
    waited = deleted.at - marked.at
    assert waited >= GRACE_S - GRACE_SLACK_S, f"{victim} disappeared {waited:.2f}s after being marked"


def assert_nominated_then_bound(history: History, preemptor: str, node: str, victims: Sequence[str]) -> None:
    """While it waited, the preemptor was nominated to ``node``; it was bound there only after every
    victim was gone, and binding cleared the nomination."""
    changes = history.of(preemptor)
    nominated = next((s for s in changes if s.pod.status.nominated_node_name), None)
    assert nominated is not None, f"{preemptor} was never nominated"
    assert (nominated.pod.status.nominated_node_name, nominated.pod.spec.node_name) == (node, "")
    bound = next((s for s in changes if s.pod.spec.node_name), None)
    assert bound is not None, f"{preemptor} was never bound"
    assert bound.pod.spec.node_name == node
    assert bound.pod.status.nominated_node_name == ""
    assert history.index(nominated) < history.index(bound)
    for victim in victims:
        gone = next(s for s in history.of(victim) if s.type == "DELETED")
        assert history.index(gone) < history.index(bound), f"{preemptor} bound before {victim} was gone"


async def events_for(client: Client, namespace: str, name: str) -> list[objects_pb2.Event]:
    listed = await client.list("events", namespace, field_selector=f"involvedObject.name={name}")
    return list(listed.items)  # type: ignore[arg-type]


async def gone(client: Client, namespace: str, names: Sequence[str]) -> bool | None:
    present = {p.metadata.name for p in (await client.list("pods", namespace)).items}  # type: ignore[attr-defined]
    return True if present.isdisjoint(names) else None


async def bound_to(client: Client, namespace: str, name: str) -> str | None:
    pod = await client.get("pods", name, namespace)
    return pod.spec.node_name or None  # type: ignore[attr-defined]


async def all_running(client: Client, namespace: str, count: int) -> bool | None:
    pods = (await client.list("pods", namespace)).items
    return True if len(pods) == count and all(p.status.phase == "Running" for p in pods) else None  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def cluster(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    """An API server (disruption controller included) on a store of its own: two 2-CPU nodes and the
    priority classes."""
    objects = (*(node_manifest(name, cpu=NODE_CPU) for name in NODES), *CLASSES)
    with own_apiserver_with(backend, tmp_path_factory.mktemp("preemption-cluster"), *objects) as server:
        yield server


@pytest.fixture(scope="module")
def scheduler(cluster: ApiServerProcess) -> Iterator[SchedulerProcess]:
    """The default profile, which has DefaultPreemption as its PostFilter."""
    with running_scheduler(cluster.address) as process:
        yield process


# ------------------------------------------------------------------------------------------- tests


async def test_a_high_priority_pod_evicts_the_fewest_cheapest_pods_and_binds_after_their_grace(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, ns: str, tmp_path: Path
) -> None:
    # node-a: a pod of the preemptor's own priority and a low one; node-b: a low and a lowest one.
    # Evicting node-a's low pod or node-b's lowest one would each make room: the node whose victim has
    # the lower priority wins, and there only the one pod goes (low-b is put back: it still fits).
    apply(cluster.address, tmp_path,
          running("peer", ns, "node-a", "high", "1"), running("low-a", ns, "node-a", "low", "1"),
          running("low-b", ns, "node-b", "low", "1"), running("lowest-b", ns, "node-b", "lowest", "1"))
    await eventually(lambda: all_running(api, ns, 4), "the four pods running")

    async with recording(api, ns) as history:
        apply(cluster.address, tmp_path, pending("preemptor", ns, "high", "1"))
        node = await eventually(lambda: bound_to(api, ns, "preemptor"), "the preemptor bound", within=30)
        await eventually(lambda: gone(api, ns, ["lowest-b"]), "the victim gone")

    assert node == "node-b", scheduler.log()
    assert history.disturbed() == {"lowest-b"}
    assert_graceful_deletion(history, "lowest-b")
    assert_nominated_then_bound(history, "preemptor", "node-b", ["lowest-b"])
    assert_never_overcommitted(history)
    survivors = {p.metadata.name: (p.spec.node_name, timeutil.is_set(p.metadata.deletion_timestamp))
                 for p in (await api.list("pods", ns)).items}  # type: ignore[attr-defined]
    assert survivors == {"peer": ("node-a", False), "low-a": ("node-a", False),
                         "low-b": ("node-b", False), "preemptor": ("node-b", False)}

    # The victim's side of the story: a Preempted event naming the preemptor (by UID, as
    # kube-scheduler words it) and the node, listed by `podsched get events`.
    preemptor = await api.get("pods", "preemptor", ns)
    (preempted,) = [e for e in await events_for(api, ns, "lowest-b") if e.reason == "Preempted"]
    assert (preempted.type, preempted.message) == (
        "Normal", f"Preempted by pod {preemptor.metadata.uid} on node node-b")
    listed = run_cli(cluster.address, "get", "events", "-n", ns)
    assert listed.code == 0, listed.stderr
    assert "Preempted" in listed.stdout and "lowest-b" in listed.stdout, listed.stdout

    # The preemptor's side, in `podsched describe`: it failed (no node had room), then was scheduled.
    # A preemption that succeeded adds nothing to the FitError message (kube-scheduler appends
    # "preemption: ..." only when the PostFilter fails).
    described = run_cli(cluster.address, "describe", "pod", "preemptor", "-n", ns)
    assert described.code == 0, described.stderr
    events = parse_table(described.stdout.split("Events:", 1)[1])
    reasons = [row["Reason"] for row in events]
    assert reasons.index("FailedScheduling") < reasons.index("Scheduled"), described.stdout
    failed = next(row for row in events if row["Reason"] == "FailedScheduling")
    assert failed["Message"] == "0/2 nodes are available: 2 Insufficient cpu.", described.stdout
    scheduled = next(row for row in events if row["Reason"] == "Scheduled")
    assert scheduled["Message"] == f"Successfully assigned {ns}/preemptor to node-b"


async def test_a_pod_of_a_never_preempting_class_waits_instead(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, ns: str, tmp_path: Path
) -> None:
    apply(cluster.address, tmp_path,
          running("low-a", ns, "node-a", "low", "2"), running("low-b", ns, "node-b", "low", "2"))
    await eventually(lambda: all_running(api, ns, 2), "the two pods running")
    message = ("0/2 nodes are available: 2 Insufficient cpu. "
               "preemption: not eligible due to preemptionPolicy=Never.")

    async def condition() -> objects_pb2.PodCondition | None:
        pod = await api.get("pods", "patient", ns)
        return next((c for c in pod.status.conditions  # type: ignore[attr-defined]
                     if c.type == "PodScheduled" and c.message), None)

    async with recording(api, ns) as history:
        apply(cluster.address, tmp_path, pending("patient", ns, "high-never", "2"))
        scheduled = await eventually(condition, "the PodScheduled condition")
        # Give a wrongly started preemption time to show: a victim is marked at once, not after a delay.
        await asyncio.sleep(GRACE_S)

    assert (scheduled.status, scheduled.reason, scheduled.message) == ("False", "Unschedulable", message)
    assert history.disturbed() == set()
    patient = await api.get("pods", "patient", ns)
    assert patient.spec.preemption_policy == "Never"  # type: ignore[attr-defined]
    assert (patient.spec.node_name, patient.status.nominated_node_name) == ("", "")  # type: ignore[attr-defined]
    for name, node in (("low-a", "node-a"), ("low-b", "node-b")):
        pod = await api.get("pods", name, ns)
        assert pod.spec.node_name == node and not timeutil.is_set(pod.metadata.deletion_timestamp)  # type: ignore[attr-defined]
    described = run_cli(cluster.address, "describe", "pod", "patient", "-n", ns)
    assert described.code == 0, described.stderr
    assert "FailedScheduling" in described.stdout and message in described.stdout, described.stdout


async def test_a_pod_guarded_by_a_disruption_budget_is_spared_for_another_nodes_victim(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, ns: str, tmp_path: Path
) -> None:
    # node-a's pod is the cheaper victim (lowest priority), but its budget allows no disruption, and
    # node-b offers a victim that violates nothing: fewest PDB violations decides first.
    budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
              "metadata": {"name": "guarded", "namespace": ns},
              "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}}
    apply(cluster.address, tmp_path, budget,
          running("guarded", ns, "node-a", "lowest", "2", labels={"app": "guarded"}),
          running("plain", ns, "node-b", "low", "2", labels={"app": "plain"}))
    await eventually(lambda: all_running(api, ns, 2), "the two pods running")

    async def budget_current() -> objects_pb2.PodDisruptionBudgetStatus | None:
        status = (await api.get("poddisruptionbudgets", "guarded", ns)).status  # type: ignore[attr-defined]
        return status if status.current_healthy == 1 else None

    status = await eventually(budget_current, "the disruption controller to count the guarded pod")
    assert (status.desired_healthy, status.expected_pods, status.disruptions_allowed) == (1, 1, 0)

    async with recording(api, ns) as history:
        apply(cluster.address, tmp_path, pending("preemptor", ns, "high", "2"))
        node = await eventually(lambda: bound_to(api, ns, "preemptor"), "the preemptor bound", within=30)
        await eventually(lambda: gone(api, ns, ["plain"]), "the victim gone")

    assert node == "node-b", scheduler.log()
    assert history.disturbed() == {"plain"}
    assert_graceful_deletion(history, "plain")
    assert_nominated_then_bound(history, "preemptor", "node-b", ["plain"])
    assert_never_overcommitted(history)
    guarded = await api.get("pods", "guarded", ns)
    assert guarded.spec.node_name == "node-a"  # type: ignore[attr-defined]
    assert not timeutil.is_set(guarded.metadata.deletion_timestamp)
