"""Scheduling cycles with the real queue, cache, default profile and binder, and a stand-in API client:
what a cycle leaves behind on success, on a FitError, and in the failure handler's corner cases."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from cluster.api import errors, objects_pb2, timeutil
from scheduler.binding import EXPLANATION_ANNOTATION, Binder
from scheduler.cache import Cache, Snapshot
from scheduler.clock import FakeClock
from scheduler.config import in_tree_registry, load_config
from scheduler.events import Annotations, made_annotations
from scheduler.framework import pod_key
from scheduler.framework.explanation import Explanation
from scheduler.framework.runtime import build_framework
from scheduler.metrics import SchedulerMetrics
from scheduler.queue import BACKOFF, UNSCHEDULABLE, SchedulingQueue
from scheduler.queue.plugged import PluggedQueue
from scheduler.schedule_one import SchedulingLoop
from tests.builders import ROOMY, node, pod
from tests.unit.binder_util import bindings_done, running_binder
from tests.unit.framework_fakes import fake_handle


def make_node(name: str, cpu: str = "2") -> objects_pb2.Node:
    return node(name, labels={"kubernetes.io/hostname": name}, allocatable={**ROOMY, "cpu": cpu})


def make_pod(name: str, cpu: str) -> objects_pb2.Pod:
    return pod(name, uid=f"uid-{name}", resource_version="10", scheduler_name="default-scheduler", cpu=cpu)


class Pods(dict[str, objects_pb2.Pod]):
    """The API's pods, which double as the informer's view; ``broken`` makes reading them fail."""

    broken = False

    def get(self, key: str, default: Any = None) -> Any:
        if self.broken:
            raise RuntimeError("a bug in the pod lister")
        return super().get(key, default)


@dataclass
class FakeApi:
    """The client calls a scheduling cycle makes: Bind (DefaultBinder), UpdateStatus and Get."""

    pods: Pods = field(default_factory=Pods)
    bound: list[tuple[str, str]] = field(default_factory=list)
    status_writes: list[objects_pb2.Pod] = field(default_factory=list)
    conflicts_left: int = 0

    async def bind(self, namespace: str, name: str, node_name: str) -> objects_pb2.Pod:
        self.bound.append((f"{namespace}/{name}", node_name))
        return self.pods[f"{namespace}/{name}"]

    async def update_status(self, pod: objects_pb2.Pod) -> objects_pb2.Pod:
        if self.conflicts_left:
            self.conflicts_left -= 1
            self.pods[pod_key(pod)].metadata.resource_version = "99"  # someone else wrote meanwhile
            raise errors.Conflict("the object has been modified")
        current = self.pods[pod_key(pod)]
        assert pod.metadata.resource_version == current.metadata.resource_version
        self.status_writes.append(pod)
        return pod

    async def get(self, kind: str, name: str, namespace: str) -> objects_pb2.Pod:
        pod = self.pods.get(f"{namespace}/{name}")
        if pod is None:
            raise errors.NotFound(f'pods "{name}" not found')
        copy = objects_pb2.Pod()
        copy.CopyFrom(pod)
        return copy


@dataclass
class FakeRecorder:
    events: list[tuple[str, str, str, dict[str, str]]] = field(default_factory=list)

    def record(self, obj: Any, type_: str, reason: str, action: str, message: str, *, component: str,
               annotations: Annotations | None = None) -> None:
        self.events.append((obj.metadata.name, reason, message, made_annotations(annotations or {})))


class Rig:
    def __init__(self) -> None:
        self.clock = FakeClock(1000.0)
        self.api = FakeApi()
        self.recorder = FakeRecorder()
        self.metrics = SchedulerMetrics()
        self.cache = Cache(clock=self.clock)
        self.snapshot = Snapshot()
        config = load_config(None)
        plugged = PluggedQueue()
        # No preemption here starts: no node's pods could make room for a pod of these tests.
        handle = fake_handle(self.snapshot, nominator=plugged, client=self.api, event_recorder=self.recorder)
        framework = build_framework(config.profiles[0], in_tree_registry(), handle, clock=self.clock)
        self.queue = SchedulingQueue(framework.queue_sort_less, clock=self.clock,
                                     events_to_register=framework.events_to_register())
        plugged.plug(self.queue)
        self.binder = Binder(cache=self.cache, queue=self.queue, recorder=self.recorder,  # type: ignore[arg-type]
                             metrics=self.metrics, clock=self.clock,
                             on_failure=lambda *failure: self.loop.handle_failure(*failure))
        self.loop = SchedulingLoop(
            profiles={"default-scheduler": framework}, queue=self.queue, cache=self.cache,
            snapshot=self.snapshot, client=self.api, pod_lister=self.api.pods.get,  # type: ignore[arg-type]
            binder=self.binder, recorder=self.recorder, metrics=self.metrics,  # type: ignore[arg-type]
            clock=self.clock, rng=random.Random(1), percentage_of_nodes_to_score={},
        )
        for name in ("node-a", "node-b"):
            self.cache.add_node(make_node(name))

    def submit(self, pod: objects_pb2.Pod) -> None:
        self.api.pods[pod_key(pod)] = pod
        self.queue.add(pod)

    async def settle(self) -> None:
        await bindings_done(self.binder)


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    rig = Rig()
    async with running_binder(rig.binder):
        yield rig


async def test_a_pod_that_fits_is_assumed_and_bound(rig: Rig) -> None:
    rig.submit(make_pod("web", "500m"))
    await rig.loop.schedule_one()
    assert rig.cache.is_assumed("default/web")  # the next cycle already counts it
    await rig.settle()
    ((key, node),) = rig.api.bound
    assert key == "default/web" and node in ("node-a", "node-b")
    ((name, reason, message, annotations),) = rig.recorder.events
    assert (name, reason, message) == ("web", "Scheduled", f"Successfully assigned default/web to {node}")
    assert Explanation.from_json(annotations[EXPLANATION_ANNOTATION]).chosen_node == node
    assert not rig.loop.busy


async def test_a_pod_that_fits_nowhere_is_reported_and_waits_for_an_event(rig: Rig) -> None:
    rig.submit(make_pod("huge", "3"))
    await rig.loop.schedule_one()
    # Preemption (PostFilter) cannot help either: 3 CPUs exceed both nodes' allocatable.
    message = ("0/2 nodes are available: 2 Insufficient cpu. "
               "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    ((name, reason, event_message, annotations),) = rig.recorder.events
    assert (name, reason, event_message) == ("huge", "FailedScheduling", message)
    explanation = Explanation.from_json(annotations[EXPLANATION_ANNOTATION])
    assert [(g.plugin, g.count) for g in explanation.filtered] == [("NodeResourcesFit", 2)]
    (written,) = rig.api.status_writes
    (condition,) = written.status.conditions
    assert (condition.type, condition.status, condition.reason, condition.message) == (
        "PodScheduled", "False", "Unschedulable", message)
    # Rejected by NodeResourcesFit, it waits in unschedulablePods for an event that plugin registered.
    location, queued = rig.queue.lookup("default/huge")  # type: ignore[misc]
    assert location == UNSCHEDULABLE and queued.unschedulable_plugins == {"NodeResourcesFit"}
    assert rig.api.bound == []


@pytest.mark.parametrize(
    ("policy", "preemption_message", "nominated_after"),
    [
        # Preemption ran and found no candidate: its empty nomination clears the stale one (kube's
        # NewPostFilterResultWithNominatedNode("")), in the status and in the queue's nominator.
        ("", "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.", ""),
        # The pod may not preempt: PostFilter returns no result and the nomination stays as it is.
        ("Never", "preemption: not eligible due to preemptionPolicy=Never.", "node-a"),
    ],
    ids=["no-candidate-clears", "not-eligible-keeps"],
)
async def test_a_stale_nomination_is_cleared_only_when_preemption_finds_no_candidate(
    rig: Rig, policy: str, preemption_message: str, nominated_after: str
) -> None:
    pod = make_pod("huge", "3")
    pod.status.nominated_node_name = "node-a"  # left by an earlier preemption
    if policy:
        pod.spec.preemption_policy = policy
    rig.submit(pod)
    assert [p.key for p in rig.queue.nominated_pods_for_node("node-a")] == ["default/huge"]
    await rig.loop.schedule_one()
    (written,) = rig.api.status_writes
    assert written.status.nominated_node_name == nominated_after
    (condition,) = written.status.conditions
    assert condition.message == "0/2 nodes are available: 2 Insufficient cpu. " + preemption_message
    expected_nominees = ["default/huge"] if nominated_after else []
    assert [p.key for p in rig.queue.nominated_pods_for_node("node-a")] == expected_nominees


async def test_the_condition_write_retries_a_conflict_on_the_latest_version(rig: Rig) -> None:
    rig.api.conflicts_left = 1
    rig.submit(make_pod("huge", "3"))
    await rig.loop.schedule_one()
    (written,) = rig.api.status_writes
    assert written.metadata.resource_version == "99"


async def test_a_pod_deleted_during_its_cycle_is_not_requeued(rig: Rig) -> None:
    rig.submit(make_pod("huge", "3"))
    del rig.api.pods["default/huge"]  # the informer saw it go while it was in flight
    await rig.loop.schedule_one()
    assert rig.queue.lookup("default/huge") is None
    assert rig.api.status_writes == []
    assert [e[1] for e in rig.recorder.events] == ["FailedScheduling"]


async def test_a_pod_being_deleted_is_skipped(rig: Rig) -> None:
    pod = make_pod("leaving", "500m")
    pod.metadata.deletion_timestamp.CopyFrom(timeutil.now())
    rig.submit(pod)
    await rig.loop.schedule_one()
    assert rig.api.bound == [] and not rig.cache.is_assumed("default/leaving")
    skipped = ("leaving", "FailedScheduling", "skip schedule deleting pod: default/leaving", {})
    assert rig.recorder.events == [skipped]


async def test_without_nodes_the_pod_backs_off(rig: Rig) -> None:
    for name in ("node-a", "node-b"):
        rig.cache.remove_node(make_node(name))
    rig.submit(make_pod("early", "500m"))
    await rig.loop.schedule_one()
    assert [e[2] for e in rig.recorder.events] == ["no nodes available to schedule pods"]
    location, _ = rig.queue.lookup("default/early")  # type: ignore[misc]
    assert location == BACKOFF


async def test_a_bug_in_a_cycle_retries_the_pod_after_backoff_and_scheduling_goes_on(rig: Rig) -> None:
    rig.submit(make_pod("huge", "3"))
    rig.api.pods.broken = True
    await rig.loop.schedule_one()
    location, _ = rig.queue.lookup("default/huge")  # type: ignore[misc]
    assert location == BACKOFF and not rig.loop.busy
    rig.api.pods.broken = False
    rig.submit(make_pod("web", "500m"))
    await rig.loop.schedule_one()
    await rig.settle()
    assert [key for key, _ in rig.api.bound] == ["default/web"]
