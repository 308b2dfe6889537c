"""Preemption inside whole scheduling cycles: the real queue, cache, scheduling loop and a profile with
DefaultPreemption, over a stand-in API. A high-priority pod that fits nowhere gets its victims deleted and
is nominated (status and nominator); once the victims are gone it binds to the nominated node, and a
lower-priority pod arriving meanwhile cannot take the room."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from cluster.api import errors, objects_pb2
from scheduler.binding import Binder
from scheduler.cache import Cache, Snapshot
from scheduler.clock import FakeClock
from scheduler.config import API_VERSION, KIND, in_tree_registry, parse_config
from scheduler.eventhandlers import ASSIGNED_POD_DELETE
from scheduler.framework import pod_key
from scheduler.framework.runtime import build_framework
from scheduler.metrics import SchedulerMetrics
from scheduler.preemptions import Preemptions
from scheduler.queue import SchedulingQueue
from scheduler.queue.plugged import PluggedQueue
from scheduler.schedule_one import SchedulingLoop
from tests.unit.binder_util import bindings_done, running_binder
from tests.unit.framework_fakes import fake_handle
from tests.unit.preemption_util import cpu_node, cpu_pod

#: The default profile with DefaultPreemption at PostFilter, as kube-scheduler's default profile has it.
CONFIG = {
    "apiVersion": API_VERSION,
    "kind": KIND,
    "profiles": [{"schedulerName": "default-scheduler",
                  "plugins": {"postFilter": {"enabled": [{"name": "DefaultPreemption"}]}}}],
}


@dataclass
class Api:
    pods: dict[str, objects_pb2.Pod] = field(default_factory=dict)
    bound: list[tuple[str, str]] = field(default_factory=list)
    deleted: list[tuple[str, int | None]] = field(default_factory=list)

    async def bind(self, namespace: str, name: str, node_name: str) -> objects_pb2.Pod:
        self.bound.append((f"{namespace}/{name}", node_name))
        return self.pods[f"{namespace}/{name}"]

    async def update_status(self, pod: objects_pb2.Pod) -> objects_pb2.Pod:
        self.pods[pod_key(pod)] = pod
        return pod

    async def get(self, kind: str, name: str, namespace: str = "") -> objects_pb2.Pod:
        try:
            return self.pods[f"{namespace}/{name}"]
        except KeyError:
            raise errors.NotFound(f'pods "{name}" not found') from None

    async def delete(self, kind: str, name: str, namespace: str = "", *,
                     grace_period_seconds: int | None = None) -> objects_pb2.Pod:
        self.deleted.append((f"{namespace}/{name}", grace_period_seconds))
        return self.pods[f"{namespace}/{name}"]


@dataclass
class Recorder:
    events: list[tuple[str, str, str]] = field(default_factory=list)

    def record(self, obj: Any, type_: str, reason: str, action: str, message: str, *, component: str,
               annotations: dict[str, str] | None = None) -> None:
        self.events.append((obj.metadata.name, reason, message))


class Rig:
    def __init__(self) -> None:
        self.clock = FakeClock(1000.0)
        self.api = Api()
        self.recorder = Recorder()
        self.cache = Cache(clock=self.clock)
        self.snapshot = Snapshot()
        plugged = PluggedQueue()
        # A preemption's API calls run in the background, as in the scheduler.
        self.preemptions = Preemptions(plugged)
        handle = fake_handle(self.snapshot, nominator=plugged, client=self.api, event_recorder=self.recorder,
                             api_dispatcher=self.preemptions)
        profile = parse_config(CONFIG).profiles[0]
        framework = build_framework(profile, in_tree_registry(), handle, clock=self.clock)
        self.queue = SchedulingQueue(framework.queue_sort_less, clock=self.clock,
                                     events_to_register=framework.events_to_register())
        plugged.plug(self.queue)
        metrics = SchedulerMetrics()
        self.binder = Binder(cache=self.cache, queue=self.queue, recorder=self.recorder,  # type: ignore[arg-type]
                             metrics=metrics, clock=self.clock,
                             on_failure=lambda *failure: self.loop.handle_failure(*failure))
        self.loop = SchedulingLoop(
            profiles={"default-scheduler": framework}, queue=self.queue, cache=self.cache,
            snapshot=self.snapshot, client=self.api, pod_lister=self.api.pods.get,  # type: ignore[arg-type]
            binder=self.binder, recorder=self.recorder, metrics=metrics,  # type: ignore[arg-type]
            clock=self.clock, rng=random.Random(1), percentage_of_nodes_to_score={},
        )

    def bound_pod(self, pod: objects_pb2.Pod) -> None:
        self.api.pods[pod_key(pod)] = pod
        self.cache.add_pod(pod)

    def submit(self, pod: objects_pb2.Pod) -> None:
        pod.spec.scheduler_name = "default-scheduler"
        self.api.pods[pod_key(pod)] = pod
        assert self.queue is not None
        self.queue.add(pod)

    async def schedule_one(self) -> None:
        """One scheduling cycle, and the API calls of a preemption it started."""
        await asyncio.wait_for(self.loop.schedule_one(), 5)
        await asyncio.wait_for(self.preemptions.wait_idle(), 5)

    async def settle(self) -> None:
        await bindings_done(self.binder)


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    rig = Rig()
    async with running_binder(rig.binder), asyncio.TaskGroup() as group:
        preemptions = group.create_task(rig.preemptions.run())
        await asyncio.sleep(0)  # run() takes ownership of its task group
        yield rig
        preemptions.cancel()


async def test_a_preemptor_is_nominated_and_binds_once_its_victims_are_gone(rig: Rig) -> None:
    for name in ("node-a", "node-b"):
        rig.cache.add_node(cpu_node(name, "2"))
    rig.bound_pod(cpu_pod("low-a", "2", 1, node_name="node-a"))
    rig.bound_pod(cpu_pod("low-b", "2", 5, node_name="node-b", grace=10))
    assert rig.queue is not None

    rig.submit(cpu_pod("hi", "2", 100))
    await rig.schedule_one()
    # The lowest-priority victim's node; deleted with its own (default) grace period.
    assert rig.api.deleted == [("default/low-a", 30)]
    assert ("low-a", "Preempted", "Preempted by pod uid-hi on node node-a") in rig.recorder.events
    hi = rig.api.pods["default/hi"]
    assert hi.status.nominated_node_name == "node-a"
    condition = next(c for c in hi.status.conditions if c.type == "PodScheduled")
    assert (condition.status, condition.reason) == ("False", "Unschedulable")
    assert [p.key for p in rig.queue.nominated_pods_for_node("node-a")] == ["default/hi"]

    # The victim goes (its graceful deletion ends); a lower-priority pod arriving now cannot take the
    # room the nomination holds for the preemptor.
    victim = rig.api.pods.pop("default/low-a")
    rig.cache.remove_pod(victim)
    rig.submit(cpu_pod("sneaky", "2", 0))
    await rig.schedule_one()
    assert rig.api.bound == []

    # The deletion requeues the preemptor (after its backoff), which lands on its nominated node.
    rig.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, victim, None)
    rig.clock.advance(30.0)
    rig.queue.flush_backoff_completed()
    await rig.schedule_one()
    await rig.settle()
    assert rig.api.bound == [("default/hi", "node-a")]
