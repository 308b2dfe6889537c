"""A small cluster for DefaultPreemption unit tests: the real default plugins through build_framework on a
snapshot built as the scheduler builds it, a recording API client, a recording nominator and recorder, and
the scheduler's own preemptions over a real queue, to which the handle hands the API calls."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cluster.api import errors, objects_pb2
from scheduler.algorithm import ScheduleFitError, schedule_pod
from scheduler.cache import snapshot_of
from scheduler.clock import FakeClock
from scheduler.config import in_tree_registry, load_config
from scheduler.extender.interface import Extender
from scheduler.framework import CycleState, DRAManager, PodInfo, PostFilterResult, Status
from scheduler.framework.runtime import Framework, build_framework
from scheduler.plugins.defaultpreemption import DefaultPreemption, DefaultPreemptionArgs
from scheduler.preemptions import Preemptions
from scheduler.queue import SchedulingQueue
from scheduler.queue.plugged import PluggedQueue
from tests.builders import ROOMY, node, pod
from tests.unit.framework_fakes import fake_handle

PROFILE = "default-scheduler"


def cpu_node(name: str, cpu: str = "4", *, taint: bool = False) -> objects_pb2.Node:
    taints = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}] if taint else []
    return node(name, allocatable={**ROOMY, "cpu": cpu}, taints=taints,
                labels={"kubernetes.io/hostname": name})


def cpu_pod(
    name: str,
    cpu: str,
    priority: int,
    *,
    node_name: str = "",
    labels: Mapping[str, str] | None = None,
    start: int = 0,
    nominated: str = "",
    terminating: bool = False,
    grace: int | None = None,
    never: bool = False,
) -> objects_pb2.Pod:
    """A pod requesting ``cpu`` with ``priority``; bound to ``node_name`` when given; ``start`` is its
    status.startTime in Unix seconds (0: not started)."""
    spec: dict[str, Any] = {}
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    if never:
        spec["preemptionPolicy"] = "Never"
    p = pod(name, spec=spec, uid=f"uid-{name}", cpu=cpu, priority=priority, node_name=node_name,
            labels=labels, nominated=nominated, deletion_timestamp=1_700_000_000 if terminating else None)
    if start:
        p.status.start_time.seconds = start
    return p


def pdb(name: str, labels: Mapping[str, str], allowed: int, namespace: str = "default"
        ) -> objects_pb2.PodDisruptionBudget:
    budget = objects_pb2.PodDisruptionBudget()
    budget.metadata.name = name
    budget.metadata.namespace = namespace
    budget.spec.selector.match_labels.update(labels)
    budget.status.disruptions_allowed = allowed
    return budget


class FakeClient:
    """Records the API calls preemption makes; ``fail_delete`` makes every delete raise it."""

    def __init__(self, pods: Iterable[objects_pb2.Pod] = ()) -> None:
        self.pods = {(p.metadata.namespace, p.metadata.name): p for p in pods}
        self.deleted: list[tuple[str, str, str, int | None]] = []
        self.status_updates: list[objects_pb2.Pod] = []
        self.created: list[Any] = []
        self.fail_delete: Exception | None = None

    async def delete(self, kind: str, name: str, namespace: str = "", *,
                     grace_period_seconds: int | None = None) -> Any:
        if self.fail_delete is not None:
            raise self.fail_delete
        self.deleted.append((kind, namespace, name, grace_period_seconds))
        return self.pods.get((namespace, name))

    async def update_status(self, obj: objects_pb2.Pod) -> objects_pb2.Pod:
        self.status_updates.append(obj)
        return obj

    async def get(self, kind: str, name: str, namespace: str = "") -> Any:
        try:
            return self.pods[(namespace, name)]
        except KeyError:
            raise errors.NotFound(f"{kind} {namespace}/{name} not found") from None

    async def create(self, obj: Any) -> Any:
        self.created.append(obj)
        return obj


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str, str, str, str]] = []

    def record(self, obj: Any, type_: str, reason: str, action: str, message: str, *, component: str) -> None:
        self.events.append((obj.metadata.name, type_, reason, action, message, component))


class Nominator:
    """Pods nominated per node; remembers what preemption told it to forget."""

    def __init__(self, by_node: Mapping[str, Sequence[objects_pb2.Pod]] | None = None) -> None:
        self.by_node = {n: [PodInfo(p) for p in pods] for n, pods in (by_node or {}).items()}
        self.forgotten: list[str] = []

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return list(self.by_node.get(node_name, []))

    def nominated_node_names(self) -> Collection[str]:
        return self.by_node.keys()

    def delete_nominated_pod_if_exists(self, p: objects_pb2.Pod) -> None:
        self.forgotten.append(p.metadata.name)


@dataclass
class Cluster:
    nodes: list[objects_pb2.Node]
    pods: list[objects_pb2.Pod] = field(default_factory=list)
    pdbs: list[objects_pb2.PodDisruptionBudget] = field(default_factory=list)
    nominated: Mapping[str, Sequence[objects_pb2.Pod]] = field(default_factory=dict)
    extenders: Sequence[Extender] = ()
    #: The claims, slices and classes DynamicResources reads.
    dra: DRAManager = field(default_factory=DRAManager)

    def __post_init__(self) -> None:
        self.snapshot = snapshot_of(self.nodes, self.pods)
        self.client = FakeClient(self.pods)
        self.nominator = Nominator(self.nominated)
        self.events = Recorder()
        self.rng = random.Random(0)
        plugged = PluggedQueue()
        self.preemptions = Preemptions(plugged)
        self.handle = fake_handle(
            self.snapshot, nominator=self.nominator, client=self.client, event_recorder=self.events,
            pod_disruption_budgets=lambda: self.pdbs, extenders=self.extenders,
            api_dispatcher=self.preemptions, rng=self.rng, dra_manager=self.dra,
        )
        self.framework: Framework = build_framework(load_config(None).profiles[0], in_tree_registry(),
                                                    self.handle)
        self.queue = SchedulingQueue(self.framework.queue_sort_less, clock=FakeClock(),
                                     events_to_register=self.framework.events_to_register())
        plugged.plug(self.queue)

    def plugin(self, args: DefaultPreemptionArgs | None = None, seed: int = 0) -> DefaultPreemption:
        """The plugin on this cluster's handle, whose random source is reseeded with ``seed``."""
        self.rng.seed(seed)
        return DefaultPreemption(args or DefaultPreemptionArgs(), self.handle)

    async def fit_error(self, preemptor: PodInfo) -> tuple[CycleState, dict[str, Status]]:
        """Schedule ``preemptor`` as the scheduler does; it must not fit. The cycle state and the Filter
        statuses PostFilter gets."""
        state = CycleState()
        try:
            await schedule_pod(self.framework, state, preemptor, self.snapshot,
                               percentage_of_nodes_to_score=None, rng=random.Random(0), start_index=0)
        except ScheduleFitError as err:
            return state, err.diagnosis.node_to_status
        raise AssertionError(f"{preemptor.key} fits without preemption")

    async def post_filter(
        self, preemptor: objects_pb2.Pod, plugin: DefaultPreemption | None = None
    ) -> tuple[PostFilterResult | None, Status | None]:
        """PostFilter after a failed cycle of ``preemptor``; the API calls of a preemption it starts are
        left to ``preemptions`` (which must be running)."""
        info = PodInfo(preemptor)
        state, statuses = await self.fit_error(info)
        return await (plugin or self.plugin()).post_filter(state, info, statuses)

    async def preempt(
        self, preemptor: objects_pb2.Pod, plugin: DefaultPreemption | None = None
    ) -> tuple[PostFilterResult | None, Status | None]:
        """PostFilter, and the API calls of the preemption it starts, to the end."""
        async with asyncio.TaskGroup() as group:
            running = group.create_task(self.preemptions.run())
            await asyncio.sleep(0)  # run() takes ownership of its task group
            try:
                return await self.post_filter(preemptor, plugin)
            finally:
                await self.preemptions.wait_idle()
                running.cancel()
