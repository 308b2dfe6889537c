"""Every batch path equals its plugin's reference (per-node) implementation, on generated nodes and pods:
LeastAllocated and BalancedAllocation over the resource columns, NodeResourcesFit's and NodeAffinity's
batch Filter over a snapshot's node data (a whole batch, a rotated window, a subset), and both again after
the snapshot takes changed nodes in; and every in-tree plugin's batch Filter on generated clusters."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from cluster.api import objects_pb2
from scheduler.cache import Cache, Snapshot, snapshot_of
from scheduler.clock import SystemClock
from scheduler.config import in_tree_registry
from scheduler.framework import (
    BatchFilterPlugin,
    Code,
    CycleState,
    NodeInfo,
    PodInfo,
    PreFilterPlugin,
    Resource,
    Status,
)
from scheduler.framework.resource import CPU, MEMORY
from scheduler.plugins import nodeaffinity
from scheduler.plugins.noderesources import fit
from scheduler.plugins.noderesources.balanced_allocation import balanced_columns, balanced_score
from scheduler.plugins.noderesources.fit import least_allocated_columns, least_allocated_scorer
from scheduler.plugins.noderesources.resource_allocation import ResourceSpec, node_vectors
from tests.builders import node, pod
from tests.unit.framework_fakes import Nominator, fake_handle, resource_columns
from tests.unit.test_filter_batch_property import default_framework, random_cluster, random_pod

#: Zero allocatable and over-commitment included: both have their own branches.
ALLOCATABLE_CPU = st.sampled_from([0, 1, 999, 4000, 64000]) | st.integers(0, 2**40)
ALLOCATABLE_MEMORY = st.sampled_from([0, 7, 2**30, 2**35]) | st.integers(0, 2**50)
REQUESTED = st.integers(0, 2**40)


@st.composite
def node_infos(draw: st.DrawFn) -> NodeInfo:
    info = NodeInfo()
    info.allocatable = Resource(draw(ALLOCATABLE_CPU), draw(ALLOCATABLE_MEMORY))
    info.requested = Resource(draw(REQUESTED), draw(REQUESTED))
    info.non_zero_requested = Resource(draw(REQUESTED), draw(REQUESTED))
    return info




def verdicts(statuses: Sequence[Status | None]) -> list[tuple[str, tuple[str, ...]] | None]:
    return [None if s is None else (s.code.name, s.reasons) for s in statuses]


@given(st.lists(node_infos(), max_size=40), st.tuples(st.integers(0, 2**40), st.integers(0, 2**50)),
       st.tuples(st.integers(1, 100), st.integers(1, 100)))
def test_least_allocated_columns_equal_the_reference_scorer(
    nodes: list[NodeInfo], pod_request: tuple[int, int], weights: tuple[int, int]
) -> None:
    resources = (ResourceSpec(CPU, weights[0]), ResourceSpec(MEMORY, weights[1]))
    scorer = least_allocated_scorer(resources)
    expected = [scorer(*node_vectors(n, resources, pod_request, use_requested=False)) for n in nodes]
    assert least_allocated_columns(*resource_columns(nodes), pod_request, weights) == expected


@given(st.lists(node_infos(), max_size=40), st.tuples(st.integers(0, 2**40), st.integers(0, 2**50)))
def test_balanced_columns_equal_the_reference_score(
    nodes: list[NodeInfo], pod_request: tuple[int, int]
) -> None:
    resources = (ResourceSpec(CPU), ResourceSpec(MEMORY))
    expected = [balanced_score(*node_vectors(n, resources, pod_request, use_requested=True)) for n in nodes]
    assert balanced_columns(*resource_columns(nodes), pod_request) == expected


# ------------------------------------------------------------------ batch Filter over a snapshot's data

ZONES = st.sampled_from(["a", "b", "c", None])
KINDS = st.sampled_from(["small", "large", None])
NODE = st.tuples(ZONES, KINDS, st.sampled_from(["0", "1", "2", "4"]), st.sampled_from(["0", "1Gi", "4Gi"]),
                 st.sampled_from(["0", "1", "2", "110"]))
BOUND = st.tuples(st.integers(0, 2000), st.integers(0, 2048), st.integers(0, 10**6))
EXPRESSION = st.fixed_dictionaries({
    "key": st.sampled_from(["zone", "type"]),
    "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]),
})


def labelled(name: str, spec: tuple[str | None, str | None, str, str, str]) -> objects_pb2.Node:
    zone, kind, cpu, memory, pods = spec
    labels = {key: value for key, value in (("zone", zone), ("type", kind)) if value is not None}
    return node(name, labels=labels, allocatable={"cpu": cpu, "memory": memory, "pods": pods})


def expression(raw: dict[str, str]) -> dict[str, Any]:
    if raw["operator"] in ("In", "NotIn"):
        return {**raw, "values": ["a", "small"]}
    return raw


@st.composite
def clusters(draw: st.DrawFn) -> tuple[Cache, Snapshot, int]:
    count = draw(st.integers(1, 30))
    cache = Cache(clock=SystemClock())
    for i, spec in enumerate(draw(st.lists(NODE, min_size=count, max_size=count))):
        cache.add_node(labelled(f"n{i}", spec))
    for j, (cpu, memory, where) in enumerate(draw(st.lists(BOUND, max_size=40))):
        cache.add_pod(pod(f"p{j}", requests={"cpu": f"{cpu}m", "memory": f"{memory}Mi"},
                          node_name=f"n{where % count}"))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    return cache, snapshot, count


def changed(cache: Cache, snapshot: Snapshot, data: st.DataObject, count: int) -> None:
    """Relabel and resize some nodes and bind a pod, and bring the snapshot up to date."""
    for i in data.draw(st.lists(st.integers(0, count - 1), max_size=5, unique=True)):
        old = snapshot.get(f"n{i}").node
        assert old is not None
        cache.update_node(old, labelled(f"n{i}", data.draw(NODE)))
    cache.add_pod(pod("late", requests={"cpu": "300m", "memory": "100Mi"},
                      node_name=f"n{data.draw(st.integers(0, count - 1))}"))
    cache.update_snapshot(snapshot)


def assert_batches_decide_as_node_by_node(plugin: Any, state: CycleState, pod_info: PodInfo,
                                          snapshot: Snapshot, first: int) -> None:
    expected = verdicts([plugin.filter(state, pod_info, info) for info in snapshot.list()])
    assert verdicts(plugin.filter_nodes(state, pod_info, snapshot.node_set(snapshot.list()))) == expected
    rotated = expected[first:] + expected[:first]
    assert verdicts(plugin.filter_nodes(state, pod_info, snapshot.rotated(first))) == rotated
    assert verdicts(plugin.filter_nodes(state, pod_info, snapshot.rotated(first).subset([0, -1]))) == [
        rotated[0], rotated[-1]]


@settings(max_examples=60, deadline=None)
@given(clusters(), st.integers(0, 3000), st.integers(0, 3000), st.data())
def test_fit_batch_filter_decides_as_filter(cluster: tuple[Cache, Snapshot, int], cpu: int, memory: int,
                                           data: st.DataObject) -> None:
    cache, snapshot, count = cluster
    plugin = fit.new(None, fake_handle(snapshot))
    amounts = (("cpu", cpu, f"{cpu}m"), ("memory", memory, f"{memory}Mi"))
    requests = {name: quantity for name, amount, quantity in amounts if amount}
    pod_info = PodInfo(pod(requests=requests))
    state = CycleState()
    plugin.pre_filter(state, pod_info, snapshot.list())
    first = data.draw(st.integers(0, count - 1))
    assert_batches_decide_as_node_by_node(plugin, state, pod_info, snapshot, first)
    changed(cache, snapshot, data, count)
    assert_batches_decide_as_node_by_node(plugin, state, pod_info, snapshot, first)


@settings(max_examples=60, deadline=None)
@given(clusters(), st.lists(st.lists(EXPRESSION, min_size=1, max_size=2), min_size=1, max_size=2),
       st.data())
def test_node_affinity_batch_filter_decides_as_filter(
    cluster: tuple[Cache, Snapshot, int], terms: list[list[dict[str, str]]], data: st.DataObject
) -> None:
    cache, snapshot, count = cluster
    plugin = nodeaffinity.new(None, fake_handle(snapshot))
    selector_terms = [{"matchExpressions": [expression(raw) for raw in term]} for term in terms]
    node_affinity = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": selector_terms}}
    pod_info = PodInfo(pod(spec={"affinity": {"nodeAffinity": node_affinity}}))
    state = CycleState()
    plugin.pre_filter(state, pod_info, snapshot.list())
    first = data.draw(st.integers(0, count - 1))
    assert_batches_decide_as_node_by_node(plugin, state, pod_info, snapshot, first)
    changed(cache, snapshot, data, count)
    assert_batches_decide_as_node_by_node(plugin, state, pod_info, snapshot, first)


# ------------------------------------------------------- every in-tree batch Filter, plugin by plugin


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_every_in_tree_batch_filter_decides_as_its_filter(seed: int) -> None:
    rng = random.Random(seed)  # the cluster and pods of test_filter_batch_property, from a generated seed
    nodes, placed = random_cluster(rng, 30)
    snapshot = snapshot_of(nodes, placed)
    handle = fake_handle(snapshot, nominator=Nominator())
    registry = in_tree_registry()
    names = default_framework(snapshot, Nominator()).plugin_names("filter")
    plugins = [registry.load(name).factory(None, handle) for name in names]
    batch_plugins = [p for p in plugins if isinstance(p, BatchFilterPlugin)]
    assert len(batch_plugins) == len(plugins)  # every in-tree Filter plugin has the batch form
    for k in range(5):
        pod_info = PodInfo(random_pod(rng, f"incoming-{k}"))
        state = CycleState()
        for plugin in batch_plugins:
            if isinstance(plugin, PreFilterPlugin):
                _, status = plugin.pre_filter(state, pod_info, snapshot.list())
                if status is not None and status.code is not Code.SUCCESS:
                    continue  # skipped or rejected everywhere: its Filter does not run
            expected = verdicts([plugin.filter(state, pod_info, info) for info in snapshot.list()])
            first = rng.randrange(len(nodes))
            assert verdicts(plugin.filter_nodes(state, pod_info, snapshot.rotated(first))) == (
                expected[first:] + expected[:first]), plugin.name


# ------------------------------------------- NodeUnschedulable and TaintToleration over their node flags

#: A node's cordon and taint: (cordoned, taint effect or None).
FLAGS = st.tuples(st.booleans(), st.sampled_from([None, "NoSchedule", "NoExecute", "PreferNoSchedule"]))


def flagged_node(name: str, flags: tuple[bool, str | None]) -> objects_pb2.Node:
    cordoned, effect = flags
    taints = [] if effect is None else [{"key": "dedicated", "value": "gpu", "effect": effect}]
    return node(name, allocatable={"cpu": "4", "memory": "4Gi", "pods": "10"}, taints=taints,
                unschedulable=cordoned)


@settings(max_examples=60, deadline=None)
@given(st.lists(FLAGS, min_size=1, max_size=30), st.booleans(), st.data())
def test_cordon_and_taint_batch_filters_decide_as_filter_as_nodes_change(
    flags: list[tuple[bool, str | None]], tolerates: bool, data: st.DataObject
) -> None:
    """The rows' flags follow the nodes: cordoned, uncordoned, tainted and untainted again."""
    count = len(flags)
    cache = Cache(clock=SystemClock())
    for i, node_flags in enumerate(flags):
        cache.add_node(flagged_node(f"n{i}", node_flags))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    tolerations = [{"key": "dedicated", "operator": "Exists"}] if tolerates else []
    pod_info = PodInfo(pod(spec={"tolerations": tolerations}))
    registry = in_tree_registry()
    handle = fake_handle(snapshot)
    plugins = [registry.load(name).factory(None, handle) for name in ("NodeUnschedulable", "TaintToleration")]
    first = data.draw(st.integers(0, count - 1))
    for plugin in plugins:
        assert_batches_decide_as_node_by_node(plugin, CycleState(), pod_info, snapshot, first)
    for i in data.draw(st.lists(st.integers(0, count - 1), max_size=5, unique=True)):
        old = snapshot.get(f"n{i}").node
        assert old is not None
        cache.update_node(old, flagged_node(f"n{i}", data.draw(FLAGS)))
    cache.update_snapshot(snapshot)
    for plugin in plugins:
        assert_batches_decide_as_node_by_node(plugin, CycleState(), pod_info, snapshot, first)
