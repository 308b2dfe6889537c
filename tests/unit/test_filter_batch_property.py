"""Filter over many nodes in one call per plugin (``filter_nodes``, ``Framework.run_filter_nodes``) decides
exactly as Filter node by node: on random clusters and pods through the default profile's in-tree plugins,
node by node, through the framework's three routes (a signature's memo, batch, node by node) and through
whole scheduling attempts."""

from __future__ import annotations

import asyncio
import functools
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster.api import objects_pb2
from scheduler.algorithm import ScheduleFitError, ScheduleResult, SchedulingError, schedule_pod
from scheduler.cache import snapshot_of
from scheduler.config import in_tree_registry, load_config
from scheduler.framework import Code, CycleState, NamespaceIndex, NodeInfo, NodeSet, PodInfo, Status
from scheduler.framework.batching import SignatureMemo
from scheduler.framework.runtime import NODE_BY_NODE_BELOW, Framework, build_framework
from scheduler.framework.verdicts import Verdicts
from tests import builders
from tests.builders import container, node, pod
from tests.unit.framework_fakes import Nominator, Snapshot, fake_handle
from tests.unit.test_node_to_status import identities

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
#: The Namespace objects of the random clusters; pods also land in "loose", which has none.
NAMESPACES = {"default": {"tier": "gold"}, "team-a": {"tier": "gold"}, "team-b": {"tier": "silver"}}
POD_NAMESPACES = ("default", "team-a", "team-b", "loose")
#: Images nodes may report (names, size) and pods may run: ImageLocality scores between 0 and 100 with
#: them, and "registry.example/app" (no tag) matches the node's ":latest" name.
NODE_IMAGES = ((["registry.example/app:latest", "registry.example/app:v1"], 400 * 2**20),
               (["registry.example/big:v2"], 2000 * 2**20), (["busybox:1.36"], 4 * 2**20))
POD_IMAGES = ("registry.example/app", "registry.example/app:v1", "registry.example/big:v2", "busybox:1.36",
              "nginx")


def random_node(rng: random.Random, i: int) -> objects_pb2.Node:
    labels = {HOSTNAME: f"n{i}"}
    if rng.random() < 0.9:  # a node without a zone fails spread constraints and zone affinity terms
        labels[ZONE] = rng.choice(["z1", "z2", "z3"])
    if rng.random() < 0.5:
        labels["disk"] = rng.choice(["ssd", "hdd"])
    taints = []
    if rng.random() < 0.25:
        effect = rng.choice(["NoSchedule", "PreferNoSchedule", "NoExecute"])
        taints.append({"key": "dedicated", "value": rng.choice(["gpu", "db"]), "effect": effect})
    allocatable = {"cpu": rng.choice(["1", "2", "4"]), "memory": rng.choice(["1Gi", "4Gi"]),
                   "pods": rng.choice(["2", "4", "110"])}
    if rng.random() < 0.3:
        allocatable["example.com/gpu"] = rng.choice(["1", "2", "8"])
    images = [image for image in NODE_IMAGES if rng.random() < 0.4]
    return node(f"n{i}", labels=labels, taints=taints, unschedulable=rng.random() < 0.1,
                allocatable=allocatable, images=images)


def random_pod(rng: random.Random, name: str, node_name: str = "") -> objects_pb2.Pod:
    app = rng.choice(["a", "b"])
    requests = {"cpu": rng.choice(["100m", "500m", "1500m"]), "memory": rng.choice(["100Mi", "1Gi"])}
    if rng.random() < 0.15:
        requests["example.com/gpu"] = rng.choice(["1", "2"])
    ports = [8080] if rng.random() < 0.2 else []
    image = rng.choice(POD_IMAGES)
    spec: dict[str, Any] = {"containers": [container(requests, host_ports=ports, image=image)]}
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    if rng.random() < 0.1:
        spec["tolerations"] = [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]
    if rng.random() < 0.2:
        spec["nodeSelector"] = {"disk": "ssd"}
    affinity: dict[str, Any] = {}
    if rng.random() < 0.3:
        term: dict[str, Any] = {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z1", "z2"]}]}
        if rng.random() < 0.3:  # the node's name matters too
            term["matchFields"] = [{"key": "metadata.name", "operator": "NotIn", "values": ["n3"]}]
        affinity["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [term]}}
    pod_term: dict[str, Any] = {"labelSelector": {"matchLabels": {"app": app}},
                                "topologyKey": rng.choice([HOSTNAME, ZONE])}
    if rng.random() < 0.3:  # namespaces by their labels (NAMESPACES), or all of them
        pod_term["namespaceSelector"] = rng.choice([{}, {"matchLabels": {"tier": "gold"}}])
    if rng.random() < 0.3:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [pod_term]}
    if rng.random() < 0.15:
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [pod_term]}
    if affinity:
        spec["affinity"] = affinity
    if rng.random() < 0.3:
        spec["topologySpreadConstraints"] = [{
            "maxSkew": rng.choice([1, 2]), "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": app}},
        }]
    if not node_name and rng.random() < 0.05:
        node_name = f"n{rng.randrange(10)}"
    return pod(spec=spec, name=name, labels={"app": app}, node_name=node_name,
               namespace=rng.choice(POD_NAMESPACES))


def random_cluster(rng: random.Random, count: int) -> tuple[list[objects_pb2.Node], list[objects_pb2.Pod]]:
    nodes = [random_node(rng, i) for i in range(count)]
    placed = [random_pod(rng, f"placed-{j}", node_name=f"n{rng.randrange(count)}") for j in range(count)]
    return nodes, placed


def namespaces() -> NamespaceIndex:
    """NAMESPACES as the scheduler's informer would have them."""
    index = NamespaceIndex()
    for name, labels in NAMESPACES.items():
        index.set(builders.namespace(name, labels={**labels, "kubernetes.io/metadata.name": name}))
    return index


def default_framework(snapshot: Any, nominator: Nominator) -> Framework:
    handle = fake_handle(snapshot, nominator=nominator, namespaces=namespaces())
    return build_framework(load_config(None).profiles[0], in_tree_registry(), handle)


def node_by_node(framework: Framework, monkeypatch: pytest.MonkeyPatch) -> Framework:
    """``framework`` as if no Filter plugin had the batch form: it filters node by node."""
    monkeypatch.setattr(framework, "_filter_nodes", {})
    return framework


def random_nominations(rng: random.Random, count: int) -> Nominator:
    return Nominator({f"n{rng.randrange(count)}": [PodInfo(random_pod(rng, f"nominated-{k}"))]
                      for k in range(3)})


@pytest.mark.parametrize("seed", range(8))
def test_batch_filter_gives_each_node_the_status_filter_gives_it(seed: int) -> None:
    rng = random.Random(seed)
    nodes, placed = random_cluster(rng, 40)
    snapshot = snapshot_of(nodes, placed)
    framework = default_framework(snapshot, random_nominations(rng, 40))
    compared = 0
    for k in range(25):
        pod_info = PodInfo(random_pod(rng, f"incoming-{k}"))
        state = CycleState()
        _, status = framework.run_pre_filter(state, pod_info)
        if status is not None:
            continue
        one = functools.partial(framework.run_filter_with_nominated_pods, state, pod_info)
        infos = list(snapshot.list())
        rng.shuffle(infos)
        # A whole batch, and fewer nodes than the batch form is asked about (asked node by node).
        for size in (len(infos), NODE_BY_NODE_BELOW - 1, 1):
            verdicts = framework.run_filter_nodes(state, pod_info, NodeSet(infos[:size]))
            assert verdicts.statuses == [one(info) for info in infos[:size]]
        compared += 1
    assert compared > 10


def attempt(framework: Framework, snapshot: Any, pod_info: PodInfo, *, start: int, percentage: int,
            seed: int) -> ScheduleResult | tuple[Any, ...]:
    """The attempt's result, or what its failure carries."""
    try:
        return asyncio.run(schedule_pod(framework, CycleState(), pod_info, snapshot,
                                        percentage_of_nodes_to_score=percentage,
                                        rng=random.Random(seed), start_index=start))
    except ScheduleFitError as err:
        return (err.message(), err.next_start_index, err.diagnosis, err.explanation)
    except SchedulingError as err:
        return (err.status, err.next_start_index)


@pytest.mark.parametrize("seed", range(6))
def test_scheduling_attempts_decide_the_same_with_batch_filter_as_node_by_node(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    count = 160  # above 100 nodes, so that filtering stops once enough nodes fit
    nodes, placed = random_cluster(rng, count)
    snapshot = snapshot_of(nodes, placed)
    nominator = random_nominations(rng, count)
    batched = default_framework(snapshot, nominator)
    one_by_one = node_by_node(default_framework(snapshot, nominator), monkeypatch)
    for k in range(12):
        pod_info = PodInfo(random_pod(rng, f"incoming-{k}"))
        start, percentage = rng.randrange(2 * count), rng.choice([0, 1, 30, 70, 100])
        expected = attempt(one_by_one, snapshot, pod_info, start=start, percentage=percentage, seed=k)
        assert attempt(batched, snapshot, pod_info, start=start, percentage=percentage, seed=k) == expected


def reported(statuses: list[Status | None]) -> list[tuple[str, str, tuple[str, ...]] | None]:
    return [None if s is None else (s.plugin, s.code.name, s.reasons) for s in statuses]


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1), st.data())
def test_the_three_routes_of_run_filter_nodes_give_the_same_verdicts(seed: int, data: st.DataObject) -> None:
    rng = random.Random(seed)  # the clusters and pods above, from a generated seed
    count = 40
    nodes, placed = random_cluster(rng, count)
    snapshot = snapshot_of(nodes, placed)
    nominator = random_nominations(rng, count)
    framework = default_framework(snapshot, nominator)
    with pytest.MonkeyPatch.context() as monkeypatch:
        one_by_one = node_by_node(default_framework(snapshot, nominator), monkeypatch)
        for k in range(4):
            pod_info = PodInfo(random_pod(rng, f"incoming-{k}"))
            state = CycleState()
            _, status = framework.run_pre_filter(state, pod_info)
            if status is not None:
                continue
            node_state = CycleState()
            one_by_one.run_pre_filter(node_state, pod_info)
            first = data.draw(st.integers(0, count - 1))
            start = data.draw(st.integers(0, count))
            window = snapshot.rotated(first).window(start, data.draw(st.integers(start, count)))
            reference = [framework.run_filter_with_nominated_pods(state, pod_info, info) for info in window]
            batch = framework.run_filter_nodes(state, pod_info, window)
            assert batch.codes is None and batch.statuses == reference
            # The tally the batch kept is the count over its verdicts, whole or up to a node.
            stop = data.draw(st.one_of(st.none(), st.integers(0, len(window))))
            assert identities(batch.counted_failures(stop)) == identities(
                Verdicts(batch.statuses).counted_failures(stop))
            memo = SignatureMemo()
            for _ in range(2):  # verdicts computed, then remembered
                memoized = framework.run_filter_nodes(state, pod_info, window, memo=memo)
                assert memoized.codes is not None and reported(memoized.statuses) == reported(reference)
            assert reported(one_by_one.run_filter_nodes(node_state, pod_info, window).statuses) == (
                reported(reference))
            # Node by node stops after the wanted-th node that fits, or at the first error.
            wanted = data.draw(st.integers(1, 5))
            stopped = one_by_one.run_filter_nodes(node_state, pod_info, window, wanted=wanted).statuses
            fitting = [i for i, verdict in enumerate(reference) if verdict is None]
            errors = [i for i, verdict in enumerate(reference) if verdict is not None
                      and verdict.code is Code.ERROR]
            end = min([len(reference) - 1, *fitting[wanted - 1:wanted], *errors[:1]]) + 1 if reference else 0
            assert reported(stopped) == reported(reference[:end])


class Fussy:
    """Filters node by node and in batches, failing on some nodes either way."""

    name = "Fussy"

    def __init__(self, *, batch_raises: bool) -> None:
        self.batch_raises = batch_raises

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status | None:
        if node_info.name == "n1":
            raise ValueError("cannot read n1")
        if node_info.name == "n2":
            return Status.unschedulable("n2 is full")
        if node_info.name == "n3":
            return Status(Code.SKIP)
        return None

    def filter_nodes(self, state: CycleState, pod_info: PodInfo,
                     nodes: list[NodeInfo]) -> list[Status | None]:
        if self.batch_raises:
            raise ValueError("cannot read n1")
        return [_call(self.filter, state, pod_info, node_info) for node_info in nodes]


def _call(filter_: Any, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status | None:
    try:
        return filter_(state, pod_info, node_info)  # type: ignore[no-any-return]
    except ValueError:
        return Status.as_error("cannot read n1")


@pytest.mark.parametrize("batch_raises", [True, False], ids=["batch-raises", "batch-answers"])
def test_a_batch_that_raises_is_asked_again_node_by_node(batch_raises: bool) -> None:
    infos = [NodeInfo(node(f"n{i}")) for i in range(NODE_BY_NODE_BELOW + 3)]
    framework = Framework("p", fake_handle(Snapshot([])), {
        "filter": [Fussy(batch_raises=batch_raises)]}, {})
    state, pod_info = CycleState(), PodInfo(pod(name="p"))
    verdicts = framework.run_filter_nodes(state, pod_info, NodeSet(infos))
    assert verdicts.statuses == [framework.run_filter(state, pod_info, info) for info in infos]


class Picky:
    """Turns down the nodes of ``names`` with the Status object ``shared`` (it may hand it to others),
    and the node ``own`` with one of its own."""

    def __init__(self, name: str, names: set[str], own: str, shared: Status) -> None:
        self.name = name
        self.names = names
        self.own = own
        self.shared = shared

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status | None:
        raise AssertionError("asked node by node")

    def filter_nodes(self, state: CycleState, pod_info: PodInfo, nodes: NodeSet) -> list[Status | None]:
        own = Status.unresolvable(f"not {self.own}")
        return [own if info.name == self.own else self.shared if info.name in self.names else None
                for info in nodes]


def test_the_batch_tallies_each_distinct_verdict_once_whichever_plugins_hand_it_over() -> None:
    infos = [NodeInfo(node(f"n{i}")) for i in range(2 * NODE_BY_NODE_BELOW)]
    shared = Status.unschedulable("no room")
    first = Picky("First", {"n0", "n1", "n2"}, "n3", shared)
    second = Picky("Second", {"n4", "n5"}, "n6", shared)
    framework = Framework("p", fake_handle(Snapshot([])), {"filter": [first, second]}, {})
    verdicts = framework.run_filter_nodes(CycleState(), PodInfo(pod(name="p")), NodeSet(infos))
    counted = verdicts.counted_failures()
    assert identities(counted) == identities(Verdicts(verdicts.statuses).counted_failures())
    # The object both plugins handed over names the first: five nodes have it.
    assert sorted((status.plugin, status.reasons, times) for status, times in counted) == [
        ("First", ("no room",), 5), ("First", ("not n3",), 1), ("Second", ("not n6",), 1)]


class Counting:
    """Accepts every node, counting its per-node and its batch calls."""

    name = "Counting"

    def __init__(self) -> None:
        self.node_calls = 0
        self.batch_calls = 0

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status | None:
        self.node_calls += 1
        return None

    def filter_nodes(self, state: CycleState, pod_info: PodInfo,
                     nodes: list[NodeInfo]) -> list[Status | None]:
        self.batch_calls += 1
        return [None] * len(nodes)


def test_a_few_nodes_are_filtered_node_by_node_and_more_in_one_batch_call() -> None:
    plugin = Counting()
    framework = Framework("p", fake_handle(Snapshot([])), {"filter": [plugin]}, {})
    state, pod_info = CycleState(), PodInfo(pod(name="p"))
    few = [NodeInfo(node(f"n{i}")) for i in range(NODE_BY_NODE_BELOW - 1)]
    assert framework.run_filter_nodes(state, pod_info, NodeSet(few)).statuses == [None] * len(few)
    assert (plugin.node_calls, plugin.batch_calls) == (len(few), 0)
    many = [NodeInfo(node(f"m{i}")) for i in range(NODE_BY_NODE_BELOW)]
    assert framework.run_filter_nodes(state, pod_info, NodeSet(many)).statuses == [None] * len(many)
    assert (plugin.node_calls, plugin.batch_calls) == (len(few), 1)


class NodeByNodeOnly:
    name = "NodeByNodeOnly"

    def filter(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo) -> Status | None:
        return None


def test_no_batch_when_a_filter_plugin_filters_only_node_by_node() -> None:
    plugin = Counting()
    framework = Framework("p", fake_handle(Snapshot([])), {"filter": [plugin, NodeByNodeOnly()]}, {})
    many = [NodeInfo(node(f"m{i}")) for i in range(3 * NODE_BY_NODE_BELOW)]
    # Node by node, as that plugin expects, and no further than the nodes wanted.
    verdicts = framework.run_filter_nodes(CycleState(), PodInfo(pod(name="p")), NodeSet(many), wanted=5)
    assert verdicts.statuses == [None] * 5
    assert (plugin.node_calls, plugin.batch_calls) == (5, 0)
