"""InterPodAffinity PreFilter / Filter / AddPod / RemovePod, table-driven from kube-scheduler's
filtering_test.go cases (namespace selectors rewritten for podsched, whose namespaces carry only the
``kubernetes.io/metadata.name`` label)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest

from cluster.api import objects_pb2
from scheduler.cache import Cache, Snapshot
from scheduler.clock import FakeClock
from scheduler.framework import (
    Code,
    CycleState,
    EnqueueExtensions,
    FilterPlugin,
    NodeInfo,
    PodInfo,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    Status,
)
from scheduler.plugins import interpodaffinity
from scheduler.plugins.interpodaffinity import (
    REASON_AFFINITY,
    REASON_ANTI_AFFINITY,
    REASON_EXISTING_ANTI_AFFINITY,
)
from tests.builders import node, pod
from tests.unit.framework_fakes import fake_handle


class FakeSnapshot:
    """A test-only NodeInfoLister / SharedLister over fixed NodeInfos. Keeps no change log: after
    ``infos`` is replaced it does not know which nodes changed, so readers look at every node."""

    def __init__(self, infos: Sequence[NodeInfo]) -> None:
        self._infos = list(infos)
        self._replacements = 0

    @property
    def infos(self) -> list[NodeInfo]:
        return self._infos

    @infos.setter
    def infos(self, infos: list[NodeInfo]) -> None:
        self._infos = infos
        self._replacements += 1

    def node_infos(self) -> FakeSnapshot:
        return self

    def change_mark(self) -> int:
        return self._replacements

    def changed_since(self, mark: int) -> Sequence[str] | None:
        return () if mark == self._replacements else None

    def list(self) -> Sequence[NodeInfo]:
        return self.infos

    def get(self, node_name: str) -> NodeInfo:
        return next(info for info in self.infos if info.name == node_name)

    def have_pods_with_affinity(self) -> Sequence[NodeInfo]:
        return [info for info in self.infos if info.pods_with_affinity]

    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]:
        return [info for info in self.infos if info.pods_with_required_anti_affinity]


def term(key: str, operator: str, values: Sequence[str] = (), topology: str = "region", **extra: Any) -> dict:
    expression: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        expression["values"] = list(values)
    return {"labelSelector": {"matchExpressions": [expression]}, "topologyKey": topology, **extra}


def affinity_spec(required: Sequence[dict] = (), anti: Sequence[dict] = ()) -> dict:
    affinity: dict[str, Any] = {}
    if required:
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": list(required)}
    if anti:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": list(anti)}
    return {"affinity": affinity}


def incoming(labels: dict | None = None, *, required: Sequence[dict] = (), anti: Sequence[dict] = (),
             namespace: str = "default") -> objects_pb2.Pod:
    return pod(spec=affinity_spec(required, anti), name="incoming", namespace=namespace, labels=labels)


def placed(node_name: str, labels: dict | None = None, *, name: str = "", required: Sequence[dict] = (),
           anti: Sequence[dict] = (), namespace: str = "default") -> objects_pb2.Pod:
    return pod(name or f"p-{node_name}-{sorted((labels or {}).items())}", spec=affinity_spec(required, anti),
               namespace=namespace, labels=labels, node_name=node_name)


def snapshot(nodes: Sequence[objects_pb2.Node], pods: Sequence[objects_pb2.Pod]) -> FakeSnapshot:
    infos = {n.metadata.name: NodeInfo(n) for n in nodes}
    for p in pods:
        # A pod on a node that is not in the cluster stays out of the snapshot, as in kube-scheduler's.
        if p.spec.node_name in infos:
            infos[p.spec.node_name].add_pod(PodInfo(p))
    return FakeSnapshot(list(infos.values()))


def run_filter(
    incoming_pod: objects_pb2.Pod, nodes: Sequence[objects_pb2.Node], pods: Sequence[objects_pb2.Pod]
) -> tuple[Status | None, list[Status | None]]:
    snap = snapshot(nodes, pods)
    plugin = interpodaffinity.new(None, fake_handle(snap))
    state, pod_info = CycleState(), PodInfo(incoming_pod)
    _, status = plugin.pre_filter(state, pod_info, snap.list())
    if status is not None:
        return status, []
    return None, [plugin.filter(state, pod_info, info) for info in snap.list()]


AFFINITY = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON_AFFINITY,))
ANTI = Status(Code.UNSCHEDULABLE, (REASON_ANTI_AFFINITY,))
EXISTING = Status(Code.UNSCHEDULABLE, (REASON_EXISTING_ANTI_AFFINITY,))
SKIP = Status(Code.SKIP)

SECURITYSCAN = {"service": "securityscan"}
S1 = {"security": "S1"}
NODE1 = node("node1", labels={"region": "r1", "zone": "z11"})
SCANNER = placed("node1", SECURITYSCAN)
METADATA_NAME = "kubernetes.io/metadata.name"

SINGLE_NODE_CASES = [
    ("no terms and no existing pods", incoming(), [], SKIP, None),
    ("affinity In matches the existing pod",
     incoming(S1, required=[term("service", "In", ["securityscan", "value2"])]), [SCANNER], None, None),
    ("affinity NotIn matches the existing pod",
     incoming(S1, required=[term("service", "NotIn", ["securityscan3", "value3"])]), [SCANNER], None, None),
    ("affinity limited to another namespace",
     incoming(S1, required=[term("service", "In", ["securityscan"], namespaces=["DiffNameSpace"])]),
     [placed("node1", SECURITYSCAN, namespace="ns")], None, AFFINITY),
    ("affinity selector matches no pod",
     incoming(SECURITYSCAN, required=[term("service", "In", ["antivirusscan", "value2"])]), [SCANNER], None,
     AFFINITY),
    ("several affinity terms, all satisfied",
     incoming(S1, required=[term("service", "Exists"), term("wrongkey", "DoesNotExist"),
                            term("service", "In", ["securityscan"]),
                            term("service", "NotIn", ["WrongValue"])]),
     [SCANNER], None, None),
    ("several affinity terms, one unsatisfied",
     incoming(S1, required=[term("service", "Exists"), term("service", "In", ["securityscan2"])]),
     [SCANNER], None, AFFINITY),
    ("affinity and anti-affinity both satisfied",
     incoming(S1, required=[term("service", "In", ["securityscan"])],
              anti=[term("service", "In", ["antivirusscan"], topology="node")]), [SCANNER], None, None),
    ("an existing pod's anti-affinity that does not match the pod",
     incoming(S1, required=[term("service", "In", ["securityscan"])],
              anti=[term("service", "In", ["antivirusscan"], topology="node")]),
     [placed("node1", SECURITYSCAN, anti=[term("service", "In", ["antivirusscan"], topology="node")])],
     None, None),
    ("affinity satisfied, anti-affinity violated",
     incoming(S1, required=[term("service", "In", ["securityscan"])],
              anti=[term("service", "In", ["securityscan"], topology="zone")]), [SCANNER], None, ANTI),
    ("own terms satisfied, an existing pod's anti-affinity refuses the pod (symmetry)",
     incoming(SECURITYSCAN, required=[term("service", "In", ["securityscan"])],
              anti=[term("service", "In", ["antivirusscan"], topology="node")]),
     [placed("node1", SECURITYSCAN, anti=[term("service", "In", ["securityscan"], topology="zone")])],
     None, EXISTING),
    ("the pod matches its own NotIn affinity nowhere, and no pod matches it",
     incoming(SECURITYSCAN, required=[term("service", "NotIn", ["securityscan", "value2"])]),
     [placed("node2", SECURITYSCAN)], None, AFFINITY),
    ("a pod without terms, refused by an existing pod's anti-affinity",
     incoming(SECURITYSCAN),
     [placed("node1", SECURITYSCAN, anti=[term("service", "In", ["securityscan"], topology="zone")])],
     None, EXISTING),
    ("a pod without terms, an existing pod's anti-affinity does not match it: nothing to do",
     incoming(SECURITYSCAN),
     [placed("node1", SECURITYSCAN, anti=[term("service", "NotIn", ["securityscan"], topology="zone")])],
     SKIP, None),
    ("the pod's anti-affinity matches the existing pod, which does not refuse it",
     incoming(SECURITYSCAN, anti=[term("service", "Exists"), term("security", "Exists")]),
     [placed("node1", S1, anti=[term("security", "Exists", topology="zone")])], None, ANTI),
    ("symmetry a1: partial mutual match, the pod's own anti-affinity reported first",
     incoming(SECURITYSCAN, anti=[term("service", "Exists", topology="zone"),
                                  term("security", "Exists", topology="zone")]),
     [placed("node1", S1, anti=[term("security", "Exists", topology="zone")])], None, ANTI),
    ("symmetry a2: the existing pod's second term refuses the pod",
     incoming(S1, anti=[term("security", "Exists", topology="zone")]),
     [placed("node1", SECURITYSCAN, anti=[term("service", "Exists", topology="zone"),
                                          term("security", "Exists", topology="zone")])], None, EXISTING),
    ("affinity by namespaceSelector on the namespace name",
     incoming(S1, required=[term("service", "In", ["securityscan"], namespaceSelector={
         "matchExpressions": [{"key": METADATA_NAME, "operator": "In", "values": ["team1"]}]})]),
     [placed("node1", SECURITYSCAN, namespace="team1")], None, None),
    ("affinity by a namespaceSelector that selects another namespace",
     incoming(S1, required=[term("service", "In", ["securityscan"], namespaceSelector={
         "matchExpressions": [{"key": METADATA_NAME, "operator": "In", "values": ["team1"]}]})]),
     [placed("node1", SECURITYSCAN, namespace="team2")], None, AFFINITY),
    ("anti-affinity by namespaceSelector",
     incoming(S1, namespace="team1", anti=[term("service", "In", ["securityscan"], topology="zone",
                                               namespaceSelector={"matchLabels": {METADATA_NAME: "team2"}})]),
     [placed("node1", SECURITYSCAN, namespace="team2")], None, ANTI),
    ("anti-affinity with an empty namespaceSelector: every namespace",
     incoming(S1, namespace="team1", anti=[term("service", "In", ["securityscan"], topology="zone",
                                               namespaceSelector={})]),
     [placed("node1", SECURITYSCAN, namespace="team2")], None, ANTI),
    ("anti-affinity by a namespaceSelector that selects another namespace",
     incoming(S1, namespace="team1", anti=[term("service", "In", ["securityscan"], topology="zone",
                                               namespaceSelector={"matchLabels": {METADATA_NAME: "team3"}})]),
     [placed("node1", SECURITYSCAN, namespace="team2")], None, None),
    ("matchLabelKeys: a pod of the same tenant counts",
     incoming({"app": "web", "tenant": "b"},
              required=[term("app", "In", ["web"], matchLabelKeys=["tenant"])]),
     [placed("node1", {"app": "web", "tenant": "b"})], None, None),
    ("mismatchLabelKeys: only pods of other tenants are refused",
     incoming({"app": "web", "tenant": "b"},
              anti=[term("app", "In", ["web"], topology="zone", mismatchLabelKeys=["tenant"])]),
     [placed("node1", {"app": "web", "tenant": "b"})], None, None),
]


@pytest.mark.parametrize(
    ("incoming_pod", "pods", "pre_filter", "want"),
    [case[1:] for case in SINGLE_NODE_CASES],
    ids=[case[0] for case in SINGLE_NODE_CASES],
)
def test_single_node(
    incoming_pod: objects_pb2.Pod, pods: list, pre_filter: Status | None, want: Status | None
) -> None:
    got_pre_filter, statuses = run_filter(incoming_pod, [NODE1], pods)
    assert got_pre_filter == pre_filter
    if pre_filter is None:
        assert statuses == [want]


CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}

MULTI_NODE_CASES = [
    ("every node in the topology domain of a matching pod passes",
     incoming(required=[term("foo", "In", ["bar"])]),
     [placed("n1", {"foo": "bar"})],
     [node("n1", labels=CHINA), node("n2", labels=CHINA_AZ1), node("n3", labels=INDIA)],
     [None, None, AFFINITY]),
    ("the first pod of a group may go to any node that has the topology keys",
     incoming({"foo": "bar", "service": "securityscan"},
              required=[term("foo", "In", ["bar"], topology="zone"),
                        term("service", "In", ["securityscan"], topology="zone")]),
     [placed("nodeA", {"foo": "bar"})],
     [node("nodeA", labels={"zone": "az1", "hostname": "h1"}),
      node("nodeB", labels={"zone": "az2", "hostname": "h2"})],
     [None, None]),
    ("the first pod of a group still needs the topology keys",
     incoming({"foo": "bar", "service": "securityscan"},
              required=[term("foo", "In", ["bar"], topology="zone"),
                        term("service", "In", ["securityscan"], topology="zone")]),
     [placed("nodeA", {"foo": "bar"})],
     [node("nodeA", labels={"zoneLabel": "az1"}), node("nodeB", labels={"zoneLabel": "az2"})],
     [AFFINITY, AFFINITY]),
    ("no first-pod exception once some pod matches: other domains are out",
     incoming({"foo": "bar"}, required=[term("foo", "In", ["bar"], topology="zone")]),
     [placed("nodeA", {"foo": "bar"})],
     [node("nodeA", labels={"zone": "az1"}), node("nodeB", labels={"zone": "az2"})],
     [None, AFFINITY]),
    ("anti-affinity keeps the pod out of the whole region",
     incoming(anti=[term("foo", "In", ["abc"])]),
     [placed("nodeA", {"foo": "abc"})],
     [node("nodeA", labels={"region": "r1", "hostname": "nodeA"}),
      node("nodeB", labels={"region": "r1", "hostname": "nodeB"})],
     [ANTI, ANTI]),
    ("anti-affinity refuses a pod matching any one of its terms",
     incoming(anti=[term("foo", "In", ["abc"]), term("service", "In", ["securityscan"], topology="zone")]),
     [placed("nodeA", {"foo": "abc", "service": "securityscan"})],
     [node("nodeA", labels={"region": "r1", "zone": "z1"}),
      node("nodeB", labels={"region": "r1", "zone": "z2"})],
     [ANTI, ANTI]),
    ("anti-affinity: another region is fine",
     incoming(anti=[term("foo", "In", ["abc"])]),
     [placed("nodeA", {"foo": "abc"})],
     [node("nodeA", labels=CHINA), node("nodeB", labels=CHINA_AZ1), node("nodeC", labels=INDIA)],
     [ANTI, ANTI, None]),
    ("anti-affinity only in the pod's namespace, and a refusing pod of another namespace",
     incoming({"foo": "123"}, namespace="NS1", anti=[term("foo", "In", ["bar"])]),
     [placed("nodeA", {"foo": "bar"}, namespace="NS1"),
      placed("nodeC", namespace="NS2", anti=[term("foo", "In", ["123"])])],
     [node("nodeA", labels=CHINA), node("nodeB", labels=CHINA_AZ1), node("nodeC", labels=INDIA)],
     [ANTI, ANTI, None]),
    ("an existing pod's anti-affinity on a topology key no node has",
     incoming({"foo": ""}),
     [placed("nodeA", anti=[term("foo", "Exists", topology="invalid-node-label")])],
     [node("nodeA", labels={"region": "r1"}), node("nodeB", labels={"region": "r1"})],
     SKIP),
    ("the pod's anti-affinity on a topology key no node has",
     incoming(anti=[term("foo", "Exists", topology="invalid-node-label")]),
     [placed("nodeA", {"foo": ""})],
     [node("nodeA", labels={"region": "r1"}), node("nodeB", labels={"region": "r1"})],
     [None, None]),
    ("two existing pods refuse the pod on different topology keys",
     incoming({"foo": "", "bar": ""}),
     [placed("nodeA", name="a", anti=[term("foo", "Exists", topology="zone")]),
      placed("nodeA", name="b", anti=[term("bar", "Exists", topology="region")])],
     [node("nodeA", labels={"region": "r1", "zone": "z1"}),
      node("nodeB", labels={"region": "r1", "zone": "z2"}),
      node("nodeC", labels={"region": "r2", "zone": "z3"})],
     [EXISTING, EXISTING, None]),
    ("matchLabelKeys: the pod's own value joins the selector, so the other tenant's pod does not count",
     incoming({"app": "web", "tenant": "b"},
              required=[term("app", "In", ["web"], matchLabelKeys=["tenant"])]),
     [placed("n1", {"app": "web", "tenant": "a"}), placed("n2", {"app": "web", "tenant": "b"})],
     [node("n1", labels={"region": "r1"}), node("n2", labels={"region": "r2"})],
     [AFFINITY, None]),
    ("a node without the affinity's topology key fails even where matching pods run",
     incoming(required=[term("foo", "In", ["bar"], topology="zone")]),
     [placed("nodeA", {"foo": "bar"}), placed("nodeB", {"foo": "bar"})],
     [node("nodeA", labels={"zone": "z1"}), node("nodeB", labels={"region": "r1"})],
     [None, AFFINITY]),
]


@pytest.mark.parametrize(
    ("incoming_pod", "pods", "nodes", "want"),
    [case[1:] for case in MULTI_NODE_CASES],
    ids=[case[0] for case in MULTI_NODE_CASES],
)
def test_multiple_nodes(incoming_pod: objects_pb2.Pod, pods: list, nodes: list, want: Any) -> None:
    pre_filter, statuses = run_filter(incoming_pod, nodes, pods)
    if isinstance(want, Status):
        assert pre_filter == want
    else:
        assert pre_filter is None
        assert statuses == want


# ------------------------------------------------------------------------- AddPod / RemovePod


ZONES = [
    node("nodeA", labels={"zone": "z1"}),
    node("nodeB", labels={"zone": "z1"}),
    node("nodeC", labels={"zone": "z2"}),
]


def prepared(
    incoming_pod: objects_pb2.Pod, pods: Sequence[objects_pb2.Pod]
) -> tuple[Any, CycleState, PodInfo, FakeSnapshot]:
    snap = snapshot(ZONES, pods)
    plugin = interpodaffinity.new(None, fake_handle(snap))
    state, pod_info = CycleState(), PodInfo(incoming_pod)
    _, status = plugin.pre_filter(state, pod_info, snap.list())
    assert status is None
    return plugin, state, pod_info, snap


def filter_all(plugin: Any, state: CycleState, pod_info: PodInfo, snap: FakeSnapshot) -> list[Status | None]:
    return [plugin.filter(state, pod_info, info) for info in snap.list()]


def test_add_pod_matching_anti_affinity_only_changes_the_cloned_state() -> None:
    plugin, state, pod_info, snap = prepared(
        incoming({"app": "web"}, anti=[term("app", "In", ["db"], topology="zone")]),
        [placed("nodeC", {"app": "other"})],
    )
    cloned = state.clone()
    nominated = PodInfo(placed("nodeA", {"app": "db"}, name="nominated"))
    assert plugin.add_pod(cloned, pod_info, nominated, snap.get("nodeA")) is None
    assert filter_all(plugin, cloned, pod_info, snap) == [ANTI, ANTI, None]
    assert filter_all(plugin, state, pod_info, snap) == [None, None, None]
    assert plugin.remove_pod(cloned, pod_info, nominated, snap.get("nodeA")) is None
    assert filter_all(plugin, cloned, pod_info, snap) == [None, None, None]


def test_add_pod_whose_anti_affinity_refuses_the_pod() -> None:
    plugin, state, pod_info, snap = prepared(
        incoming({"app": "web"}, anti=[term("app", "In", ["db"], topology="zone")]), []
    )
    refusing = PodInfo(placed("nodeC", {"app": "cache"}, anti=[term("app", "In", ["web"], topology="zone")]))
    plugin.add_pod(state, pod_info, refusing, snap.get("nodeC"))
    assert filter_all(plugin, state, pod_info, snap) == [None, None, EXISTING]


def test_remove_pod_lifts_anti_affinity() -> None:
    victim = placed("nodeA", {"app": "db"})
    plugin, state, pod_info, snap = prepared(
        incoming({"app": "web"}, anti=[term("app", "In", ["db"], topology="zone")]), [victim]
    )
    assert filter_all(plugin, state, pod_info, snap) == [ANTI, ANTI, None]
    plugin.remove_pod(state, pod_info, PodInfo(victim), snap.get("nodeA"))
    assert filter_all(plugin, state, pod_info, snap) == [None, None, None]


def test_add_pod_satisfies_affinity_and_ends_the_first_pod_exception() -> None:
    # The pod matches its own term, and no pod matches yet: it may go anywhere (first of its group).
    plugin, state, pod_info, snap = prepared(
        incoming({"app": "web"}, required=[term("app", "In", ["web"], topology="zone")]), []
    )
    assert filter_all(plugin, state, pod_info, snap) == [None, None, None]
    plugin.add_pod(state, pod_info, PodInfo(placed("nodeC", {"app": "web"})), snap.get("nodeC"))
    assert filter_all(plugin, state, pod_info, snap) == [AFFINITY, AFFINITY, None]


def test_remove_pod_of_another_namespace_changes_nothing() -> None:
    plugin, state, pod_info, snap = prepared(
        incoming({"app": "web"}, anti=[term("app", "In", ["db"], topology="zone")]),
        [placed("nodeA", {"app": "db"})],
    )
    plugin.remove_pod(state, pod_info, PodInfo(placed("nodeA", {"app": "db"}, namespace="other")),
                      snap.get("nodeA"))
    assert filter_all(plugin, state, pod_info, snap) == [ANTI, ANTI, None]


def test_add_pod_without_pre_filter_state_is_an_error() -> None:
    plugin = interpodaffinity.new(None, fake_handle(snapshot(ZONES, [])))
    status = plugin.add_pod(CycleState(), PodInfo(incoming()), PodInfo(placed("nodeA")), NodeInfo(ZONES[0]))
    assert status is not None and status.code is Code.ERROR


def test_filter_without_node_object_is_an_error() -> None:
    plugin, state, pod_info, _ = prepared(incoming(anti=[term("app", "In", ["db"], topology="zone")]), [])
    status = plugin.filter(state, pod_info, NodeInfo())
    assert status is not None and status.code is Code.ERROR


# ------------------------------------------------------------------ the snapshot changing under it


def test_pre_filter_follows_snapshot_changes_between_cycles() -> None:
    """The per-workload aggregates are reused across cycles; a changed node must be recounted, a
    removed one forgotten, an added one counted."""
    web = incoming({"app": "web"}, anti=[term("app", "In", ["db"], topology="zone")])
    snap = snapshot(ZONES, [placed("nodeA", {"app": "db"})])
    handle = fake_handle(snap)
    plugin = interpodaffinity.new(None, handle)

    def cycle() -> list[Status | None]:
        state, pod_info = CycleState(), PodInfo(web)
        _, status = plugin.pre_filter(state, pod_info, snap.list())
        assert status is None
        return filter_all(plugin, state, pod_info, snap)

    assert cycle() == [ANTI, ANTI, None]
    # The db pod moves from nodeA to nodeC: two changed NodeInfos (new generations).
    node_a, node_b, node_c = (info.clone() for info in snap.list())
    node_a.remove_pod("default/" + next(iter(node_a.pods.values())).pod.metadata.name)
    node_c.add_pod(PodInfo(placed("nodeC", {"app": "db"})))
    snap.infos = [node_a, node_b, node_c]  # refreshed in place, as the scheduler's snapshot is
    assert cycle() == [None, None, ANTI]
    # nodeC leaves the cluster; a new zone-z1 node with a db pod joins.
    node_d = NodeInfo(node("nodeD", labels={"zone": "z1"}), [PodInfo(placed("nodeD", {"app": "db"}))])
    snap.infos = [node_a, node_b, node_d]
    assert cycle() == [ANTI, ANTI, ANTI]


def test_filter_and_score_follow_the_scheduler_snapshot_across_cycles() -> None:
    """With the scheduler's own snapshot, whose change log tells the aggregates which nodes changed: after
    random pod, label and node changes, a plugin kept across cycles filters and scores as a fresh one."""
    rng = random.Random(5)
    cache = Cache(clock=FakeClock())
    nodes = {f"n{i}": node(f"n{i}", labels={"zone": f"z{i % 3}"}) for i in range(6)}
    for n in nodes.values():
        cache.add_node(n)
    snap = Snapshot(change_log_size=4)  # small: some cycles fall back to the full pass
    handle = fake_handle(snap)
    plugin = interpodaffinity.new(None, handle)
    the_pod = PodInfo(pod(name="incoming", labels={"app": "web"}, spec={"affinity": {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [term("app", "In", ["db"], topology="zone")],
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 3, "podAffinityTerm": term("tier", "Exists", topology="zone")}],
        },
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [term("app", "In", ["web"], topology="zone")],
        },
    }}))
    kinds = [
        {"labels": {"app": "db"}},
        {"labels": {"app": "db", "tier": "back"}},
        {"labels": {"app": "cache"}, "anti": [term("app", "In", ["web"], topology="zone")]},
        {"labels": {"app": "web"}, "required": [term("app", "In", ["web"], topology="zone")]},
    ]
    pods: dict[str, objects_pb2.Pod] = {}

    def cycle(p: Any) -> tuple[list[Status | None], Status | None, list[int]]:
        state = CycleState()
        _, status = p.pre_filter(state, the_pod, snap.list())
        verdicts = filter_all(p, state, the_pod, snap) if status is None else [status] * len(snap.list())
        score_status = p.pre_score(state, the_pod, snap.list())
        scores = [p.score(state, the_pod, info) for info in snap.list()] if score_status is None else []
        return verdicts, score_status, scores

    for step in range(80):
        action = rng.choice(["add pod", "add pod", "remove pod", "relabel node", "remove node", "add node"])
        if action == "add pod" and nodes:
            kind = rng.choice(kinds)
            new = placed(rng.choice(sorted(nodes)), kind["labels"], name=f"p{step}",
                         required=kind.get("required", ()), anti=kind.get("anti", ()))
            pods[new.metadata.name] = new
            cache.add_pod(new)
        elif action == "remove pod" and pods:
            cache.remove_pod(pods.pop(rng.choice(sorted(pods))))
        elif action == "relabel node" and nodes:
            name = rng.choice(sorted(nodes))
            relabelled = node(name, labels={"zone": rng.choice(["z0", "z1", "z2"])})
            cache.update_node(nodes[name], relabelled)
            nodes[name] = relabelled
        elif action == "remove node" and nodes:
            name = rng.choice(sorted(nodes))
            for key in [k for k, p in pods.items() if p.spec.node_name == name]:
                cache.remove_pod(pods.pop(key))
            cache.remove_node(nodes.pop(name))
        else:
            name = f"m{step}"
            nodes[name] = node(name, labels={"zone": rng.choice(["z0", "z1", "z3"])})
            cache.add_node(nodes[name])
        cache.update_snapshot(snap)
        assert cycle(plugin) == cycle(interpodaffinity.new(None, handle)), step


# ---------------------------------------------------------------------------------------- misc


def test_plugin_implements_its_extension_points() -> None:
    plugin = interpodaffinity.new(None, fake_handle(FakeSnapshot([])))
    for protocol in (PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
        assert isinstance(plugin, protocol), protocol
    assert plugin.name == interpodaffinity.NAME == "InterPodAffinity"
    assert plugin.pre_filter_extensions() is plugin
    assert plugin.score_extensions() is plugin
