"""Small fake plugins, snapshot and nominator for the framework and algorithm unit tests, and
``fake_handle``: the framework's own ``FrameworkHandle`` over test doubles."""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import numpy as np

from cluster.api import errors, objects_pb2
from scheduler.clock import Clock
from scheduler.config import Profile
from scheduler.framework import (
    CycleState,
    DRAManager,
    NamespaceIndex,
    NamespaceLister,
    NodeInfo,
    NodeScore,
    PodGroupIndex,
    PodInfo,
    PreFilterResult,
    QueuedPodInfo,
    SharedLister,
    Status,
    StorageLister,
    WaitingPods,
    WorkloadIndex,
    WorkloadLister,
)
from scheduler.framework.columns import ResourceColumns
from scheduler.framework.handle import FrameworkHandle
from scheduler.framework.nodedata import NodeSet, NodeTable, Rows
from scheduler.framework.registry import PluginRef, PluginSet, PointPlugins, Registry
from scheduler.framework.runtime import Framework, build_framework
from scheduler.framework.storage import StorageObjects
from tests import builders


def node(name: str, labels: Mapping[str, str] | None = None) -> NodeInfo:
    return NodeInfo(builders.node(name, labels=labels, allocatable=builders.ROOMY))


def pod(
    name: str, priority: int = 0, nominated: str = "", labels: Mapping[str, str] | None = None
) -> PodInfo:
    return PodInfo(builders.pod(name, priority=priority, nominated=nominated, labels=labels))


class Snapshot:
    """A SharedLister and NodeInfoLister over a fixed list of nodes."""

    def __init__(self, nodes: Sequence[NodeInfo]) -> None:
        self._nodes = list(nodes)
        self._by_name = {n.name: n for n in nodes}

    def node_infos(self) -> Snapshot:
        return self

    def storage_infos(self) -> Snapshot:
        return self

    def is_pvc_used_by_pods(self, key: str) -> bool:
        return any(key in info.pvc_ref_counts for info in self._nodes)

    def list(self) -> Sequence[NodeInfo]:
        return self._nodes

    def get(self, node_name: str) -> NodeInfo:
        return self._by_name[node_name]

    def have_pods_with_affinity(self) -> Sequence[NodeInfo]:
        return []

    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]:
        return []


class Nominator:
    def __init__(self, by_node: Mapping[str, Sequence[PodInfo]] | None = None) -> None:
        self.by_node = {name: list(pods) for name, pods in (by_node or {}).items()}

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        return self.by_node.get(node_name, [])

    def nominated_node_names(self) -> Collection[str]:
        return self.by_node.keys()

    def delete_nominated_pod_if_exists(self, pod: objects_pb2.Pod) -> None:
        for pods in self.by_node.values():
            pods[:] = [p for p in pods if p.key != f"{pod.metadata.namespace}/{pod.metadata.name}"]


class NoApiCalls:
    """The API client of a handle whose plugins must make no API call: any call fails the test."""

    def __getattr__(self, method: str) -> Any:
        async def call(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError(f"unexpected API call {method}{args}")

        return call


class GroupBindingClient:
    """An API client over a dict of pods (by "namespace/name") that binds as the API server does: ``bind``
    one pod, ``bind_group`` all or nothing (a missing, terminating or bound pod raises NotFound or
    Conflict and binds none). Every successful call is one new resourceVersion; ``calls`` records them."""

    def __init__(self, pods: Sequence[objects_pb2.Pod] = ()) -> None:
        self.pods = {f"{p.metadata.namespace or 'default'}/{p.metadata.name}": p for p in pods}
        self.revision = 1
        self.calls: list[tuple[str, list[tuple[str, str, str]]]] = []

    async def bind(self, namespace: str, name: str, node_name: str) -> objects_pb2.Pod:
        return (await self._bind("bind", [(namespace, name, node_name)]))[0]

    async def bind_group(self, bindings: Sequence[tuple[str, str, str]]) -> list[objects_pb2.Pod]:
        return await self._bind("bind_group", bindings)

    async def _bind(self, call: str, bindings: Sequence[tuple[str, str, str]]) -> list[objects_pb2.Pod]:
        self.calls.append((call, list(bindings)))
        current = []
        for namespace, name, _ in bindings:
            pod = self.pods.get(f"{namespace}/{name}")
            if pod is None:
                raise errors.NotFound(f'pods "{name}" not found')
            if pod.metadata.HasField("deletion_timestamp") or pod.spec.node_name:
                raise errors.Conflict(f'Operation cannot be fulfilled on pods/binding "{name}": not bindable')
            current.append(pod)
        self.revision += 1
        bound = []
        for pod, (_, _, node_name) in zip(current, bindings, strict=True):
            updated = objects_pb2.Pod()
            updated.CopyFrom(pod)
            updated.spec.node_name = node_name
            updated.metadata.resource_version = str(self.revision)
            self.pods[f"{pod.metadata.namespace or 'default'}/{pod.metadata.name}"] = updated
            bound.append(updated)
        return bound


class Events:
    """An event recorder that keeps what it is told: (object name, type, reason, message, component)."""

    def __init__(self) -> None:
        self.recorded: list[tuple[str, str, str, str, str]] = []

    def record(self, obj: Any, type_: str, reason: str, action: str, message: str, *, component: str,
               annotations: Mapping[str, str] | None = None) -> None:
        self.recorded.append((obj.metadata.name, type_, reason, message, component))


class NoBackgroundCalls:
    """The API dispatcher of a handle whose plugins must start no background API calls."""

    def start(self, preemptor: PodInfo, node_name: str, evict: Any) -> None:
        raise AssertionError(f"unexpected background API calls for {preemptor.key} on {node_name}")

    def start_group(self, members: Sequence[PodInfo], group: str, evict: Any) -> None:
        raise AssertionError(f"unexpected background API calls for pod group {group}")


def fake_handle(
    snapshot: SharedLister,
    *,
    nominator: Any = None,
    client: Any = None,
    event_recorder: Any = None,
    pod_disruption_budgets: Callable[[], Sequence[objects_pb2.PodDisruptionBudget]] = list,
    extenders: Sequence[Any] = (),
    waiting_pods: WaitingPods | None = None,
    api_dispatcher: Any = None,
    rng: random.Random | None = None,
    pod_groups: PodGroupIndex | None = None,
    namespaces: NamespaceLister | None = None,
    workloads: WorkloadLister | None = None,
    dra_manager: DRAManager | None = None,
    storage: StorageLister | None = None,
    clock: Clock | None = None,
) -> FrameworkHandle:
    """The framework's ``FrameworkHandle`` as the scheduler builds it, with test doubles for what a test
    does not give: no nominations, no API calls, a recording event recorder, no PDBs, no extenders, no
    background calls, a random source seeded with 0, no pod groups, no Namespace objects, no Services nor
    workload controllers, no DRA objects, no storage objects, the system clock."""
    return FrameworkHandle(
        snapshot=snapshot,
        nominator=nominator if nominator is not None else Nominator(),
        client=client if client is not None else NoApiCalls(),
        event_recorder=event_recorder if event_recorder is not None else Events(),
        pod_disruption_budgets=pod_disruption_budgets,
        extenders=extenders,
        waiting_pods=waiting_pods if waiting_pods is not None else WaitingPods(),
        api_dispatcher=api_dispatcher if api_dispatcher is not None else NoBackgroundCalls(),
        rng=rng if rng is not None else random.Random(0),
        pod_groups=pod_groups if pod_groups is not None else PodGroupIndex(),
        namespaces=namespaces if namespaces is not None else NamespaceIndex(),
        workloads=workloads if workloads is not None else WorkloadIndex(),
        dra_manager=dra_manager if dra_manager is not None else DRAManager(),
        storage=storage if storage is not None else StorageObjects(),
        clock=clock,
    )


class Sort:
    name = "Sort"

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return a.pod_info.priority > b.pod_info.priority


class Binder:
    def __init__(self, name: str = "Binder", status: Status | None = None) -> None:
        self.name = name
        self.status = status
        self.bound: list[tuple[str, str]] = []

    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        self.bound.append((pod.key, node_name))
        return self.status


class NodeFilter:
    """Rejects the nodes named in ``reject`` with their statuses; its PreFilter returns ``result`` and
    ``pre_status``. Counts its Filter calls."""

    def __init__(
        self,
        name: str = "NodeFilter",
        reject: Mapping[str, Status] | None = None,
        result: PreFilterResult | None = None,
        pre_status: Status | None = None,
    ) -> None:
        self.name = name
        self.reject = dict(reject or {})
        self.result = result
        self.pre_status = pre_status
        self.pre_filter_calls = 0
        self.filtered: list[str] = []

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        self.pre_filter_calls += 1
        return self.result, self.pre_status

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        self.filtered.append(node_info.name)
        return self.reject.get(node_info.name)


class Capacity:
    """A resource-like Filter: at most ``capacity`` pods per node. PreFilter writes the pod count it
    expects to add; AddPod / RemovePod keep a per-cycle tally, as real plugins keep their state."""

    name = "Capacity"
    KEY = "Capacity/added"

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.added: list[tuple[str, str]] = []

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        state.write(self.KEY, 0)
        return None, None

    def pre_filter_extensions(self) -> Capacity:
        return self

    def add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        self.added.append((pod_to_add.key, node_info.name))
        state.write(self.KEY, state.read(self.KEY) + 1)
        return None

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        state.write(self.KEY, state.read(self.KEY) - 1)
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if len(node_info.pods) >= self.capacity:
            return Status.unschedulable("Too many pods")
        return None


class NeedsPeer:
    """An affinity-like Filter: the node must already run a pod labelled app=peer."""

    name = "NeedsPeer"

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if any(p.pod.metadata.labels.get("app") == "peer" for p in node_info.pods.values()):
            return None
        return Status.unschedulable("node(s) didn't match pod affinity rules")


class Scorer:
    """Scores nodes from a table (0 for unknown nodes); ``normalize`` rewrites the list if given."""

    def __init__(
        self,
        name: str,
        scores: Mapping[str, int],
        normalize: Callable[[list[NodeScore]], Status | None] | None = None,
        pre_status: Status | None = None,
    ) -> None:
        self.name = name
        self.scores = dict(scores)
        self.normalize = normalize
        self.pre_status = pre_status
        self.scored: list[str] = []

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        return self.pre_status

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        self.scored.append(node_info.name)
        return self.scores.get(node_info.name, 0)

    def score_extensions(self) -> Scorer | None:
        return self if self.normalize is not None else None

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        assert self.normalize is not None
        return self.normalize(scores)


def build(
    *plugins: Any,
    weights: Mapping[str, int] | None = None,
    nominator: Nominator | None = None,
    snapshot: Snapshot | None = None,
    clock: Clock | None = None,
    points: Mapping[str, Sequence[str]] | None = None,
) -> Framework:
    """A framework of ``plugins`` (each enabled through multiPoint, or at ``points`` if given), with a
    Sort and a Binder added when missing so that the profile is complete."""
    plugins_by_name = {p.name: p for p in plugins}
    plugins_by_name.setdefault("Sort", Sort())
    plugins_by_name.setdefault("Binder", Binder())
    registry = Registry({name: (lambda args, handle, p=p: p) for name, p in plugins_by_name.items()})
    weights = weights or {}
    if points is None:
        multi_point = tuple(PluginRef(name, weights.get(name, 0)) for name in plugins_by_name)
        plugin_set = PluginSet(PointPlugins(multi_point), {})
    else:
        defaults = ("Sort",) if "bind" in points else ("Sort", "Binder")
        plugin_set = PluginSet(
            PointPlugins(tuple(PluginRef(name) for name in defaults)),
            {
                point: PointPlugins(tuple(PluginRef(n, weights.get(n, 0)) for n in names))
                for point, names in points.items()
            },
        )
    handle = fake_handle(snapshot if snapshot is not None else Snapshot([]), nominator=nominator)
    return build_framework(Profile("test", plugin_set, {}), registry, handle, clock=clock)


def node_set(nodes: Sequence[NodeInfo]) -> NodeSet:
    """``nodes`` as a NodeSet with a node table of their own, as a snapshot hands its nodes to plugins."""
    return NodeSet(list(nodes), np.arange(len(nodes), dtype=np.intp), NodeTable(nodes))


def resource_columns(nodes: Sequence[NodeInfo]) -> tuple[ResourceColumns, Rows]:
    """The resource columns of ``nodes`` in a table of their own, and their rows in it."""
    found = node_set(nodes).node_data(ResourceColumns)
    assert found is not None
    return found
