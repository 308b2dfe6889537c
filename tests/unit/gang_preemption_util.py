"""A small cluster for the gang preemption unit tests: real NodeInfos (tests/builders.py) in the fakes'
snapshot, the default profile's real plugins built on the framework's own handle, and the scheduler's
PodGroupIndex fed with the pods and PodGroups given."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cluster.api import objects_pb2
from scheduler.clock import FakeClock
from scheduler.config import in_tree_registry, load_config
from scheduler.framework import PodGroupIndex, PodInfo, Status
from scheduler.framework.runtime import Framework, build_framework
from scheduler.plugins.defaultpreemption import DefaultPreemptionArgs, num_candidates
from scheduler.plugins.defaultpreemption.candidates import budgets
from scheduler.plugins.defaultpreemption.group import GroupPlan, select_group_victims
from scheduler.preemptions import Preemptions
from scheduler.queue import SchedulingQueue
from scheduler.queue.plugged import PluggedQueue
from tests import builders
from tests.builders import COSCHEDULING as X_K8S
from tests.builders import UPSTREAM
from tests.unit.framework_fakes import Snapshot, fake_handle
from tests.unit.preemption_util import FakeClient, Nominator, Recorder, cpu_node, cpu_pod


def pod_group(name: str, min_count: int, *, single: bool = False, all_: bool = False,
              priority: int | None = None, never: bool = False, api_version: str = UPSTREAM,
              namespace: str = "default") -> objects_pb2.PodGroup:
    """A gang PodGroup (minCount, or minMember in the x-k8s spelling); ``single`` / ``all_`` set its
    disruptionMode explicitly, ``priority`` its spec.priority (what admission resolves from its class),
    ``never`` its preemptionPolicy Never."""
    spec: dict[str, Any] = {}
    modes = {mode: {} for mode, wanted in (("single", single), ("all", all_)) if wanted}
    if modes:
        spec["disruptionMode"] = modes
    if priority is not None:
        spec["priority"] = priority
    if never:
        spec["preemptionPolicy"] = "Never"
    counts = {"min_member": min_count} if api_version == X_K8S else {"min_count": min_count}
    return builders.pod_group(name, namespace, api_version=api_version, kind="PodGroup",
                              spec=spec or None, **counts)


def member(name: str, group: str, cpu: str, priority: int, *, node_name: str = "", start: int = 0,
           labels: Mapping[str, str] | None = None, never: bool = False,
           nominated: str = "") -> objects_pb2.Pod:
    """A pod of PodGroup ``group`` (spec.schedulingGroup)."""
    pod = cpu_pod(name, cpu, priority, node_name=node_name, start=start, labels=labels, never=never,
                  nominated=nominated)
    pod.spec.scheduling_group.pod_group_name = group
    return pod


@dataclass
class GangCluster:
    nodes: list[objects_pb2.Node]
    pods: list[objects_pb2.Pod] = field(default_factory=list)
    groups: list[objects_pb2.PodGroup] = field(default_factory=list)
    pdbs: list[objects_pb2.PodDisruptionBudget] = field(default_factory=list)
    nominated: Mapping[str, Sequence[objects_pb2.Pod]] = field(default_factory=dict)
    #: The API client of the handle; a FakeClient of ``pods`` unless given.
    client: FakeClient | None = None

    def __post_init__(self) -> None:
        on_node: dict[str, list[objects_pb2.Pod]] = {n.metadata.name: [] for n in self.nodes}
        for pod in self.pods:
            if pod.spec.node_name:
                on_node[pod.spec.node_name].append(pod)
        self.snapshot = Snapshot([builders.node_info(n, on_node[n.metadata.name]) for n in self.nodes])
        self.index = PodGroupIndex()
        for pod in self.pods:
            self.index.set_pod(pod)
        for group in self.groups:
            self.index.set_group(group)
        self.nominator = Nominator(self.nominated)
        if self.client is None:
            self.client = FakeClient(self.pods)
        self.events = Recorder()
        plugged = PluggedQueue()
        self.preemptions = Preemptions(plugged)
        self.handle = fake_handle(self.snapshot, nominator=self.nominator, pod_groups=self.index,
                                  pod_disruption_budgets=lambda: self.pdbs, client=self.client,
                                  event_recorder=self.events, api_dispatcher=self.preemptions)
        self.framework: Framework = build_framework(load_config(None).profiles[0], in_tree_registry(),
                                                    self.handle)
        self.queue = SchedulingQueue(self.framework.queue_sort_less, clock=FakeClock(),
                                     events_to_register=self.framework.events_to_register())
        plugged.plug(self.queue)

    def select(self, members: Sequence[objects_pb2.Pod], needed: int | None = None,
               offset: int = 0) -> tuple[GroupPlan | None, Status | None]:
        """The group victim selection for ``members`` (all of them needed unless told), each dry run
        starting at ``offset`` with the default number of candidates."""
        args = DefaultPreemptionArgs()

        def offset_and_wanted(count: int) -> tuple[int, int]:
            return offset % count, num_candidates(count, args.min_candidate_nodes_percentage,
                                                  args.min_candidate_nodes_absolute)

        return select_group_victims(
            self.framework, self.snapshot, self.nominator, self.index, [PodInfo(m) for m in members],
            len(members) if needed is None else needed, budgets(self.pdbs), offset_and_wanted)


def victims(plan: GroupPlan | None) -> list[str]:
    assert plan is not None
    return sorted(e.victim.pod.metadata.name for e in plan.evictions)


def nodes(*names: str, cpu: str = "4") -> list[objects_pb2.Node]:
    return [cpu_node(name, cpu) for name in names]


def fill(node_name: str, prefix: str, count: int, cpu: str, priority: int,
         **kwargs: Any) -> list[objects_pb2.Pod]:
    return [cpu_pod(f"{prefix}-{i}", cpu, priority, node_name=node_name, **kwargs) for i in range(count)]
