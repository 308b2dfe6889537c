"""Gang scheduling with the real queue, cache, event handlers, default profile and binder, a fake clock
and a stand-in API client: gating until minCount, the whole-group cycle (all bound with one bind_group
call, or nothing and the whole group back in the queue), competing gangs, extra members, an admitted
group's late pod, the Permit timeout, a failed group bind, and the queue's order."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from cluster.api import errors, objects_pb2, timeutil
from scheduler.binding import EXPLANATION_ANNOTATION, Binder
from scheduler.cache import Cache, Snapshot
from scheduler.clock import FakeClock
from scheduler.config import in_tree_registry, parse_config
from scheduler.config.types import API_VERSION, KIND
from scheduler.eventhandlers import EventHandlers
from scheduler.events import Annotations, made_annotations
from scheduler.framework import (
    CycleState,
    DRAManager,
    FailedPodGroup,
    Handle,
    PodGroupIndex,
    PodGroupPostFilterResult,
    PodInfo,
    QueuedPodInfo,
    Status,
    WaitingPods,
    pod_key,
)
from scheduler.framework.runtime import FrameworkError, build_framework
from scheduler.metrics import SchedulerMetrics
from scheduler.queue import ACTIVE, BACKOFF, GATED, UNSCHEDULABLE, SchedulingQueue
from scheduler.queue.plugged import PluggedQueue
from scheduler.schedule_one import SchedulingLoop
from tests import builders
from tests.builders import ROOMY, node, pod
from tests.unit.binder_util import bindings_done, running_binder
from tests.unit.framework_fakes import fake_handle


def make_node(name: str, cpu: str = "1") -> objects_pb2.Node:
    return node(name, labels={"kubernetes.io/hostname": name}, allocatable={**ROOMY, "cpu": cpu})


def pod_group(name: str, min_count: int, *, x_k8s: bool = False, timeout_s: int | None = None,
              created: int = 1_700_000_000) -> objects_pb2.PodGroup:
    if x_k8s:
        return builders.pod_group(name, api_version=builders.COSCHEDULING, kind="PodGroup",
                                  resource_version="1", created=created, min_member=min_count,
                                  timeout=timeout_s)
    return builders.pod_group(name, kind="PodGroup", resource_version="1", created=created,
                              min_count=min_count)


def member(name: str, group: str, cpu: str = "1", *, label: bool = False) -> objects_pb2.Pod:
    created = pod(name, uid=f"uid-{name}", resource_version="10", scheduler_name="default-scheduler",
                  cpu=cpu, labels={"scheduling.x-k8s.io/pod-group": group} if label else None)
    if not label:
        created.spec.scheduling_group.pod_group_name = group
    return created


@dataclass
class FakeApi:
    """The calls the scheduler makes: Bind, BindGroup, UpdateStatus (pods, PodGroups, CompositePodGroups)
    and Get."""

    pods: dict[str, objects_pb2.Pod] = field(default_factory=dict)
    groups: dict[str, objects_pb2.PodGroup] = field(default_factory=dict)
    bound: list[tuple[str, str]] = field(default_factory=list)
    group_binds: list[list[tuple[str, str, str]]] = field(default_factory=list)
    bind_group_error: errors.ApiError | None = None
    group_status_writes: list[objects_pb2.PodGroup] = field(default_factory=list)
    group_conflicts_left: int = 0
    claims: dict[str, objects_pb2.ResourceClaim] = field(default_factory=dict)
    composites: dict[str, objects_pb2.CompositePodGroup] = field(default_factory=dict)
    #: The calls that wrote, in order: ("claim", name) and ("bind_group", names).
    writes: list[tuple[str, Any]] = field(default_factory=list)

    async def bind(self, namespace: str, name: str, node_name: str) -> objects_pb2.Pod:
        self.bound.append((f"{namespace}/{name}", node_name))
        return self.pods[f"{namespace}/{name}"]

    async def bind_group(self, bindings: Sequence[tuple[str, str, str]]) -> list[objects_pb2.Pod]:
        if self.bind_group_error is not None:
            raise self.bind_group_error
        self.group_binds.append(list(bindings))
        self.writes.append(("bind_group", sorted(name for _, name, _ in bindings)))
        return [self.pods[f"{namespace}/{name}"] for namespace, name, _ in bindings]

    async def update_status(self, obj: Any) -> Any:
        if isinstance(obj, objects_pb2.ResourceClaim):
            self.writes.append(("claim", obj.metadata.name))
            self.claims[obj.metadata.name] = obj
            return obj
        if isinstance(obj, objects_pb2.CompositePodGroup):
            self.composites[f"{obj.metadata.namespace}/{obj.metadata.name}"] = obj
            return obj
        if isinstance(obj, objects_pb2.PodGroup):
            key = f"{obj.metadata.namespace}/{obj.metadata.name}"
            if self.group_conflicts_left:
                self.group_conflicts_left -= 1
                self.groups[key].metadata.resource_version = "7"  # a controller wrote the counts
                self.groups[key].status.scheduled = 3
                raise errors.Conflict("the object has been modified")
            assert obj.metadata.resource_version == self.groups[key].metadata.resource_version
            self.group_status_writes.append(obj)
            self.groups[key] = obj
        else:
            self.pods[pod_key(obj)] = obj
        return obj

    async def get(self, kind: str, name: str, namespace: str) -> Any:
        if kind == "podgroups":
            copy = objects_pb2.PodGroup()
            copy.CopyFrom(self.groups[f"{namespace}/{name}"])
            return copy
        copy = objects_pb2.Pod()
        copy.CopyFrom(self.pods[f"{namespace}/{name}"])
        return copy


@dataclass
class FakeRecorder:
    events: list[tuple[str, str, str, str, dict[str, str]]] = field(default_factory=list)

    def record(self, obj: Any, type_: str, reason: str, action: str, message: str, *, component: str,
               annotations: Annotations | None = None) -> None:
        self.events.append((type(obj).__name__, obj.metadata.name, reason, message,
                            made_annotations(annotations or {})))

    def about(self, kind: str, reason: str) -> list[tuple[str, str, dict[str, str]]]:
        return [(name, message, notes)
                for k, name, r, message, notes in self.events if (k, r) == (kind, reason)]


class Waiter:
    """A Permit plugin that holds every pod for ``timeout`` seconds and allows none."""

    name = "Waiter"

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        return Status.wait(), self.timeout

    def events_to_register(self) -> list[Any]:
        return []


class GroupRecorder:
    """A PodGroupPostFilter plugin that notes what it is shown (the group, and how many pods the snapshot
    holds then) and nominates ``nominations``."""

    name = "GroupRecorder"

    def __init__(self, handle: Handle, nominations: dict[str, str]) -> None:
        self.handle = handle
        self.nominations = nominations
        self.seen: list[tuple[FailedPodGroup, int]] = []

    def pod_group_post_filter(
        self, group: FailedPodGroup
    ) -> tuple[PodGroupPostFilterResult | None, Status | None]:
        pods = sum(len(info.pods) for info in self.handle.snapshot().node_infos().list())
        self.seen.append((group, pods))
        return PodGroupPostFilterResult(self.nominations, "preemption: made room"), None


class Rig:
    def __init__(self, nodes: int = 4, *, permit_wait: float | None = None,
                 group_recorder: dict[str, str] | None = None, dra_manager: DRAManager | None = None) -> None:
        self.clock = FakeClock(1000.0)
        self.api = FakeApi()
        self.recorder = FakeRecorder()
        self.cache = Cache(clock=self.clock)
        self.snapshot = Snapshot()
        self.groups = PodGroupIndex(self.cache.is_assumed)
        registry = in_tree_registry()
        # The whole-group cycle without gang preemption (test_gang_preemption.py has that).
        plugins: dict[str, Any] = {"podGroupPostFilter": {"disabled": [{"name": "*"}]}}
        if permit_wait is not None:
            registry.register("Waiter", lambda args, handle: Waiter(permit_wait))
            plugins["permit"] = {"enabled": [{"name": "Waiter"}]}
        self.group_recorder: GroupRecorder | None = None
        if group_recorder is not None:

            def new_group_recorder(args: Any, handle: Handle) -> GroupRecorder:
                self.group_recorder = GroupRecorder(handle, group_recorder)
                return self.group_recorder

            registry.register("GroupRecorder", new_group_recorder)
            plugins["podGroupPostFilter"]["enabled"] = [{"name": "GroupRecorder"}]
        document: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND,
                                    "profiles": [{"plugins": plugins}]}
        config = parse_config(document, registry=registry)
        plugged = PluggedQueue()
        self.waiting = WaitingPods()
        handle = fake_handle(self.snapshot, nominator=plugged, client=self.api, event_recorder=self.recorder,
                             pod_groups=self.groups, waiting_pods=self.waiting, dra_manager=dra_manager)
        self.framework = build_framework(config.profiles[0], registry, handle, clock=self.clock)
        self.queue = SchedulingQueue(self.framework.queue_sort_less, clock=self.clock,
                                     events_to_register=self.framework.events_to_register(),
                                     pre_enqueue=self.framework.run_pre_enqueue)
        plugged.plug(self.queue)
        self.handlers = EventHandlers(self.cache, self.queue, ["default-scheduler"], pod_groups=self.groups)
        self.binder = Binder(
            cache=self.cache, queue=self.queue, recorder=self.recorder,  # type: ignore[arg-type]
            metrics=SchedulerMetrics(), clock=self.clock,
            on_failure=lambda *failure: self.loop.handle_failure(*failure),
            on_group_bound=lambda bound, profile: self.loop.pod_group_reporter.scheduled(
                bound, component=profile),
        )
        self.loop = SchedulingLoop(
            profiles={"default-scheduler": self.framework}, queue=self.queue, cache=self.cache,
            snapshot=self.snapshot, client=self.api, pod_lister=self.api.pods.get,  # type: ignore[arg-type]
            binder=self.binder, recorder=self.recorder, metrics=SchedulerMetrics(),  # type: ignore[arg-type]
            clock=self.clock, rng=random.Random(1), percentage_of_nodes_to_score={},
        )
        for index in range(nodes):
            self.add_node(f"node-{index}")

    def add_node(self, name: str, cpu: str = "1") -> None:
        self.handlers.node_handlers()["on_add"](make_node(name, cpu))

    def add_group(self, group: objects_pb2.PodGroup) -> None:
        self.api.groups[f"default/{group.metadata.name}"] = group
        self.handlers.pod_group_handlers()["on_add"](group)

    def add_pods(self, *pods: objects_pb2.Pod) -> None:
        for created in pods:
            self.api.pods[pod_key(created)] = created
            self.handlers.pod_handlers()["on_add"](created)

    def gang(self, group: str, count: int, cpu: str = "1", *, label: bool = False) -> list[objects_pb2.Pod]:
        pods = [member(f"{group}-{i}", group, cpu, label=label) for i in range(count)]
        self.add_pods(*pods)
        return pods

    def confirm_bindings(self) -> None:
        """The informer's updates for the pods the fake API bound."""
        for bindings in self.api.group_binds:
            for namespace, name, node_name in bindings:
                self._confirm(f"{namespace}/{name}", node_name)
        for key, node_name in self.api.bound:
            self._confirm(key, node_name)

    def _confirm(self, key: str, node_name: str) -> None:
        old = self.api.pods[key]
        if old.spec.node_name:
            return
        new = objects_pb2.Pod()
        new.CopyFrom(old)
        new.spec.node_name = node_name
        self.api.pods[key] = new
        self.handlers.pod_handlers()["on_update"](old, new)

    async def cycles(self) -> int:
        """Run cycles while activeQ has pods; how many ran."""
        ran = 0
        while not self.queue.is_empty_active():
            await self.loop.schedule_one()
            await bindings_done(self.binder)
            ran += 1
        return ran

    def where(self, name: str) -> str | None:
        found = self.queue.lookup(f"default/{name}")
        return found[0] if found is not None else None

    def queued(self, name: str) -> QueuedPodInfo:
        found = self.queue.lookup(f"default/{name}")
        assert found is not None, name
        return found[1]

    def pod_condition(self, name: str) -> objects_pb2.PodCondition | None:
        return next((c for c in self.api.pods[f"default/{name}"].status.conditions), None)


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    rig = Rig()
    async with running_binder(rig.binder):
        yield rig


def bound_pods(rig: Rig) -> set[str]:
    return {name for bindings in rig.api.group_binds for _, name, _ in bindings} | {
        key.partition("/")[2] for key, _ in rig.api.bound}


# ------------------------------------------------------------------------------------------ gating


async def test_a_gang_is_gated_until_its_pod_group_exists_and_has_min_count_pods(rig: Rig) -> None:
    rig.gang("train", 2)
    assert rig.queue.pending_counts() == {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 2}
    rig.add_group(pod_group("train", 3))  # the group exists now, but has 2 of its 3 pods
    assert rig.queue.pending_counts()[GATED] == 2
    assert rig.queued("train-0").unschedulable_plugins == {"GangScheduling"}
    rig.add_pods(member("train-2", "train"))  # the third pod ungates its siblings
    assert rig.queue.pending_counts() == {ACTIVE: 3, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 0}


async def test_a_pod_of_no_group_or_of_a_basic_group_is_never_gated(rig: Rig) -> None:
    basic = pod_group("solo", 0)
    basic.spec.scheduling_policy.ClearField("gang")
    basic.spec.scheduling_policy.basic.SetInParent()
    rig.add_group(basic)
    rig.add_pods(member("solo-0", "solo"), pod("plain", scheduler_name="default-scheduler", cpu="1"))
    assert rig.queue.pending_counts() == {ACTIVE: 2, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 0}


async def test_a_pod_whose_pod_group_is_deleted_after_it_was_queued_waits_for_it(rig: Rig) -> None:
    group = pod_group("train", 2)
    rig.add_group(group)
    rig.gang("train", 2)
    assert rig.queue.pending_counts()[ACTIVE] == 2
    rig.handlers.pod_group_handlers()["on_delete"](group)
    await rig.cycles()
    assert rig.api.group_binds == [] and rig.api.bound == []  # never placed alone
    condition = rig.pod_condition("train-0")
    assert condition is not None and "waiting for PodGroup default/train to be created" in condition.message
    rig.clock.advance(20)  # past the backoff
    rig.add_group(group)  # back: the pair is asked again and placed together
    assert {rig.where("train-0"), rig.where("train-1")} == {ACTIVE}
    await rig.cycles()
    (bindings,) = rig.api.group_binds
    assert sorted(name for _, name, _ in bindings) == ["train-0", "train-1"]


# ---------------------------------------------------------------------------------- whole group


async def test_a_gang_that_fits_is_bound_with_one_bind_group_call(rig: Rig) -> None:
    rig.add_group(pod_group("train", 4))
    rig.gang("train", 4)
    assert await rig.cycles() == 1  # one cycle placed the whole group
    (bindings,) = rig.api.group_binds
    assert sorted(name for _, name, _ in bindings) == ["train-0", "train-1", "train-2", "train-3"]
    assert sorted(node_name for _, _, node_name in bindings) == ["node-0", "node-1", "node-2", "node-3"]
    assert rig.api.bound == []  # no per-pod Bind for a gang
    assert len(rig.recorder.about("Pod", "Scheduled")) == 4
    assert rig.recorder.about("PodGroup", "Scheduled") == [("train", "bound 4 pods of the group", {})]
    (condition,) = rig.api.groups["default/train"].status.conditions
    assert (condition.type, condition.status) == ("PodGroupInitiallyScheduled", "True")


async def test_a_group_once_scheduled_keeps_its_condition_true_when_a_later_cycle_fails(rig: Rig) -> None:
    # Upstream's PodGroupInitiallyScheduled reports the first success: True never goes back to False.
    rig.add_group(pod_group("train", 5))
    rig.api.groups["default/train"].status.conditions.add(
        type="PodGroupInitiallyScheduled", status="True", reason="Scheduled",
        message="bound 5 pods of the group")
    rig.gang("train", 5)
    await rig.cycles()
    assert rig.api.group_binds == []  # four nodes: five pods of a core do not fit
    assert len(rig.recorder.about("PodGroup", "FailedScheduling")) == 1  # the event still tells why
    (condition,) = rig.api.groups["default/train"].status.conditions
    assert (condition.type, condition.status, condition.message) == (
        "PodGroupInitiallyScheduled", "True", "bound 5 pods of the group")


async def test_a_gang_that_does_not_fit_binds_nothing_and_goes_back_together(rig: Rig) -> None:
    rig.add_group(pod_group("train", 5, x_k8s=True))
    rig.gang("train", 5, label=True)
    await rig.cycles()
    assert rig.api.group_binds == [] and rig.api.bound == []
    assert rig.cache.pod_count() == 0  # every placement was undone
    names = [f"train-{i}" for i in range(5)]
    assert {rig.where(name) for name in names} == {UNSCHEDULABLE}
    assert {rig.queued(name).attempts for name in names} == {1}
    assert {frozenset(rig.queued(name).unschedulable_plugins) for name in names} == {
        frozenset({"GangScheduling", "NodeResourcesFit"})}
    ((group_name, event_message, notes),) = rig.recorder.about("PodGroup", "FailedScheduling")
    per_pod = json.loads(notes[EXPLANATION_ANNOTATION])["pods"]
    assert sorted(per_pod) == names
    (unplaced,) = [name for name in names if "unschedulable" in per_pod[name]]
    assert per_pod[unplaced] == {"unschedulable": "0/4 nodes are available: 4 Insufficient cpu."}
    assert {per_pod[name]["node"] for name in names if name != unplaced} == {
        "node-0", "node-1", "node-2", "node-3"}
    message = (f"pod group default/train: 4/5 pods placeable, minMember 5: pod {unplaced}: "
               "0/4 nodes are available: 4 Insufficient cpu.")
    assert (group_name, event_message) == ("train", message)
    for name in names:
        condition = rig.pod_condition(name)
        assert condition is not None
        assert (condition.status, condition.reason, condition.message) == ("False", "Unschedulable", message)
    (condition,) = rig.api.groups["default/train"].status.conditions
    assert (condition.status, condition.reason, condition.message) == ("False", "Unschedulable", message)

    # A new node is an event NodeResourcesFit registered: the whole group goes back and now fits.
    rig.clock.advance(20)
    rig.add_node("node-4")
    assert {rig.where(name) for name in names} == {ACTIVE}
    await rig.cycles()
    (bindings,) = rig.api.group_binds
    assert len(bindings) == 5


async def test_a_gang_that_does_not_fit_is_shown_to_the_pod_group_post_filter_plugins() -> None:
    rig = Rig(group_recorder={"default/train-1": "node-2"})
    async with running_binder(rig.binder):
        rig.add_group(pod_group("train", 5))
        rig.gang("train", 5)
        await rig.cycles()
    assert rig.group_recorder is not None
    ((group, snapshot_pods),) = rig.group_recorder.seen
    assert (group.policy.group, group.admitted, group.needed) == ("default/train", 0, 5)
    assert sorted(member.key for member in group.members) == [f"default/train-{i}" for i in range(5)]
    # The cycle's placements were undone in the cache, and the snapshot the plugins read shows it.
    assert snapshot_pods == 0
    # The plugin's nominations replace the members' own, and its message ends the group's.
    assert rig.queue.nominated_node_of("default/train-1") == "node-2"
    assert [rig.queue.nominated_node_of(f"default/train-{i}") for i in (0, 2, 3, 4)] == [None] * 4
    ((_, event_message, _),) = rig.recorder.about("PodGroup", "FailedScheduling")
    assert event_message.endswith("0/4 nodes are available: 4 Insufficient cpu. preemption: made room")


async def test_the_pod_group_condition_write_keeps_the_controllers_counts_across_a_conflict(rig: Rig) -> None:
    rig.api.group_conflicts_left = 1
    rig.add_group(pod_group("train", 5))
    rig.gang("train", 5)
    await rig.cycles()
    (written,) = rig.api.group_status_writes
    assert written.metadata.resource_version == "7" and written.status.scheduled == 3
    assert written.status.conditions[0].reason == "Unschedulable"


async def test_two_gangs_competing_for_room_for_one_end_with_one_placed_and_one_waiting(rig: Rig) -> None:
    rig.add_group(pod_group("a", 3, created=100))
    rig.add_group(pod_group("b", 3, created=200))
    rig.gang("a", 3)
    rig.gang("b", 3)
    await rig.cycles()
    (bindings,) = rig.api.group_binds
    assert sorted(name for _, name, _ in bindings) == ["a-0", "a-1", "a-2"]  # the older group first
    rig.confirm_bindings()
    assert {rig.where(f"b-{i}") for i in range(3)} == {UNSCHEDULABLE}
    assert rig.cache.pod_count() == 3  # a's pods only: nothing of b is held


async def test_members_beyond_min_count_are_bound_in_the_same_call_and_the_unplaced_wait_alone(
    rig: Rig,
) -> None:
    rig.add_group(pod_group("train", 3))
    rig.gang("train", 6)
    await rig.cycles()
    (bindings,) = rig.api.group_binds
    assert len(bindings) == 4  # 4 nodes: minCount 3 and one extra, together
    unplaced = {f"train-{i}" for i in range(6)} - {name for _, name, _ in bindings}
    assert len(unplaced) == 2
    for name in unplaced:
        assert rig.where(name) == UNSCHEDULABLE
        assert rig.queued(name).unschedulable_plugins == {"NodeResourcesFit"}
        condition = rig.pod_condition(name)
        assert condition is not None and condition.message == "0/4 nodes are available: 4 Insufficient cpu."


async def test_a_member_assumed_away_from_its_nomination_no_longer_holds_the_nominated_node() -> None:
    rig = Rig(nodes=0)
    # node-0 has the more free memory: LeastAllocated sends train-1 there unless node-0 looks taken.
    for name, memory in (("node-0", "64Gi"), ("node-1", "8Gi")):
        allocatable = {**ROOMY, "cpu": "1", "memory": memory}
        rig.handlers.node_handlers()["on_add"](
            node(name, labels={"kubernetes.io/hostname": name}, allocatable=allocatable))
    async with running_binder(rig.binder):
        rig.add_group(pod_group("train", 2))
        # a may only go to node-1, yet still carries a nomination to node-0 from an earlier attempt.
        a = member("train-0", "train")
        a.spec.node_selector["kubernetes.io/hostname"] = "node-1"
        a.status.nominated_node_name = "node-0"
        rig.add_pods(a, member("train-1", "train"))
        assert rig.queue.nominated_node_of("default/train-0") == "node-0"
        await rig.cycles()
        # Once a is assumed on node-1, node-0 is free for train-1: the gang fits.
        (bindings,) = rig.api.group_binds
        assert sorted((name, node_name) for _, name, node_name in bindings) == [
            ("train-0", "node-1"), ("train-1", "node-0")]


async def test_a_pod_of_an_admitted_group_is_scheduled_alone(rig: Rig) -> None:
    rig.add_group(pod_group("train", 2))
    rig.gang("train", 2)
    await rig.cycles()
    rig.confirm_bindings()
    rig.add_pods(member("train-late", "train"))
    await rig.cycles()
    assert len(rig.api.group_binds) == 1
    ((key, _),) = rig.api.bound  # bound alone by DefaultBinder
    assert key == "default/train-late"


async def test_a_failed_group_bind_releases_every_member_as_an_error() -> None:
    rig = Rig()
    rig.api.bind_group_error = errors.Conflict('pod "train-2" is already bound')
    async with running_binder(rig.binder):
        rig.add_group(pod_group("train", 4))
        rig.gang("train", 4)
        await rig.cycles()
    assert rig.api.group_binds == [] and rig.cache.pod_count() == 0
    assert {rig.where(f"train-{i}") for i in range(4)} == {BACKOFF}
    condition = rig.pod_condition("train-0")
    assert condition is not None and condition.reason == "SchedulerError"


async def test_a_gang_not_permitted_within_its_timeout_is_released_whole() -> None:
    rig = Rig(permit_wait=600)  # the Waiter would hold each pod 10 minutes; the group allows 30 s
    async with running_binder(rig.binder):
        rig.add_group(pod_group("train", 2, x_k8s=True, timeout_s=30))
        rig.gang("train", 2, label=True)
        await rig.loop.schedule_one()
        assert rig.cache.pod_count() == 2 and len(rig.waiting) == 2
        await asyncio.sleep(0)
        rig.clock.advance(31)
        await bindings_done(rig.binder)
    assert rig.api.group_binds == [] and rig.cache.pod_count() == 0 and len(rig.waiting) == 0
    # Released like a single pod whose Permit timed out: the freed room is an event, so both back off.
    assert {rig.where("train-0"), rig.where("train-1")} == {BACKOFF}
    condition = rig.pod_condition("train-0")
    assert condition is not None and "within its timeout of 30s" in condition.message


# ------------------------------------------------------------------------------------------ order


def test_the_queue_orders_groups_by_priority_then_age_then_name_and_keeps_members_adjacent(rig: Rig) -> None:
    rig.add_group(pod_group("young", 1, created=300))
    rig.add_group(pod_group("old", 1, created=100))
    urgent = pod_group("urgent", 1, created=500)
    urgent.spec.priority = 10
    rig.add_group(urgent)
    less = rig.framework.queue_sort_less

    def queued(created: objects_pb2.Pod, timestamp: float) -> QueuedPodInfo:
        return QueuedPodInfo(PodInfo(created), timestamp=timestamp)

    young = queued(member("young-0", "young"), 1.0)
    old = queued(member("old-0", "old"), 2.0)
    urgent_pod = queued(member("urgent-0", "urgent"), 3.0)
    assert less(old, young) and not less(young, old)  # the older group first, whatever the queue time
    assert less(urgent_pod, old)  # the group's priority first
    plain_early = queued(pod("p1", scheduler_name="default-scheduler"), 1.0)
    plain_late = queued(pod("p2", scheduler_name="default-scheduler"), 2.0)
    assert less(plain_early, plain_late) and not less(plain_late, plain_early)  # as before
    assert timeutil.is_set(rig.groups.pod_group("default/old").metadata.creation_timestamp)  # type: ignore[union-attr]


# ------------------------------------------------------------------------------------------ index


def test_the_index_counts_live_members_through_adds_updates_terminations_and_deletes() -> None:
    index = PodGroupIndex()
    first, second = member("w-0", "train"), member("w-1", "train", label=True)
    index.set_pod(first)
    index.set_pod(second)
    assert index.member_count("default/train") == 2
    terminating = objects_pb2.Pod()
    terminating.CopyFrom(first)
    terminating.metadata.deletion_timestamp.seconds = 1
    index.set_pod(terminating)
    assert index.member_count("default/train") == 1
    assert [p.metadata.name for p in index.pending("default/train")] == ["w-1"]
    moved = objects_pb2.Pod()
    moved.CopyFrom(second)
    moved.metadata.labels["scheduling.x-k8s.io/pod-group"] = "other"
    index.set_pod(moved)
    assert (index.member_count("default/train"), index.member_count("default/other")) == (0, 1)
    index.remove_pod(terminating)
    index.remove_pod(moved)
    assert index.members("default/train") == [] and index.member_count("default/other") == 0


# ------------------------------------------------------------------------------- configuration


def test_a_profile_configures_its_pre_enqueue_plugins() -> None:
    document = {"apiVersion": API_VERSION, "kind": KIND,
                "profiles": [{"plugins": {"preEnqueue": {"disabled": [{"name": "GangScheduling"}]}}}]}
    config = parse_config(document)
    framework = build_framework(config.profiles[0], in_tree_registry(), fake_handle(Snapshot()))
    assert framework.plugin_names("preEnqueue") == ["SchedulingGates", "DynamicResources"]
    assert framework.run_pre_enqueue(PodInfo(member("w-0", "missing"))) is None  # nothing gates it
    default = build_framework(parse_config({"apiVersion": API_VERSION, "kind": KIND}).profiles[0],
                              in_tree_registry(), fake_handle(Snapshot()))
    assert default.plugin_names("preEnqueue") == ["SchedulingGates", "DynamicResources", "GangScheduling"]
    status = default.run_pre_enqueue(PodInfo(member("w-0", "missing")))
    assert status is not None and status.plugin == "GangScheduling"
    assert status.message() == "waiting for PodGroup default/missing to be created"


def test_a_plugin_enabled_at_pre_enqueue_must_implement_it() -> None:
    document = {"apiVersion": API_VERSION, "kind": KIND,
                "profiles": [{"plugins": {"preEnqueue": {"enabled": [{"name": "NodeName"}]}}}]}
    config = parse_config(document)
    with pytest.raises(FrameworkError, match='"NodeName" is enabled at preEnqueue but does not implement it'):
        build_framework(config.profiles[0], in_tree_registry(), fake_handle(Snapshot()))
