"""InterPodAffinity's namespaceSelector against Namespace labels, table-driven from kube-scheduler's
interpodaffinity filtering_test.go (TestRequiredAffinitySingleNode, the NamespaceSelector rows) and
scoring_test.go (TestPreferredAffinity, the NamespaceSelector rows), with their four namespaces
(subteam1/2 of team1/2, labelled team=team1 or team=team2); then what podsched adds: a namespace with no
Namespace object, existing pods' terms judged by the incoming pod's namespace labels, a relabelled
namespace between cycles, the queue's namespace hint."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from cluster.api import objects_pb2
from scheduler.framework import (
    CycleState,
    NamespaceIndex,
    NamespaceLabels,
    PodInfo,
    QueueingHint,
    Status,
)
from scheduler.framework.types import affinity_term
from scheduler.plugins import interpodaffinity
from scheduler.plugins.interpodaffinity import namespace_change_hint, pod_change_hint
from tests import builders
from tests.builders import node, pod
from tests.unit.framework_fakes import fake_handle
from tests.unit.plugin_util import run_score
from tests.unit.test_plugin_interpodaffinity import (
    AFFINITY,
    ANTI,
    EXISTING,
    NODE1,
    S1,
    SECURITYSCAN,
    affinity_spec,
    incoming,
    placed,
    snapshot,
    term,
)
from tests.unit.test_plugin_interpodaffinity_scoring import spec, weighted

TEAM1 = {"team": "team1"}
TEAM2 = {"team": "team2"}
NAME_LABEL = "kubernetes.io/metadata.name"


def namespace(name: str, labels: Mapping[str, str]) -> objects_pb2.Namespace:
    return builders.namespace(name, labels={**labels, NAME_LABEL: name})


def index(*namespaces: objects_pb2.Namespace) -> NamespaceIndex:
    out = NamespaceIndex()
    for ns in namespaces:
        out.set(ns)
    return out


NAMESPACES = (
    namespace("subteam1.team1", TEAM1),
    namespace("subteam2.team1", TEAM1),
    namespace("subteam1.team2", TEAM2),
    namespace("subteam2.team2", TEAM2),
)
IN_TEAM1 = {"matchExpressions": [{"key": "team", "operator": "In", "values": ["team1"]}]}
SCAN = ["securityscan", "value2"]


def run_filter(
    incoming_pod: objects_pb2.Pod,
    nodes: Sequence[objects_pb2.Node],
    pods: Sequence[objects_pb2.Pod],
    namespaces: NamespaceIndex,
) -> tuple[Status | None, list[Status | None]]:
    snap = snapshot(nodes, pods)
    plugin = interpodaffinity.new(None, fake_handle(snap, namespaces=namespaces))
    state, pod_info = CycleState(), PodInfo(incoming_pod)
    _, status = plugin.pre_filter(state, pod_info, snap.list())
    if status is not None:
        return status, []
    return None, [plugin.filter(state, pod_info, info) for info in snap.list()]


FILTER_CASES = [
    # filtering_test.go
    ("affinity with NamespaceSelector",
     incoming(S1, required=[term("service", "In", SCAN, namespaceSelector=IN_TEAM1)]),
     [placed("node1", SECURITYSCAN, namespace="subteam1.team1")], None),
    ("affinity with non-matching NamespaceSelector",
     incoming(S1, required=[term("service", "In", SCAN, namespaceSelector=IN_TEAM1)]),
     [placed("node1", SECURITYSCAN, namespace="subteam1.team2")], AFFINITY),
    ("anti-affinity with matching NamespaceSelector",
     incoming(S1, namespace="subteam1.team1",
              anti=[term("service", "In", SCAN, topology="zone", namespaceSelector=IN_TEAM1)]),
     [placed("node1", SECURITYSCAN, namespace="subteam2.team1")], ANTI),
    ("anti-affinity with matching all NamespaceSelector",
     incoming(S1, namespace="subteam1.team1",
              anti=[term("service", "In", SCAN, topology="zone", namespaceSelector={})]),
     [placed("node1", SECURITYSCAN, namespace="subteam2.team1")], ANTI),
    ("anti-affinity with non-matching NamespaceSelector",
     incoming(S1, namespace="subteam1.team1",
              anti=[term("service", "In", SCAN, topology="zone", namespaceSelector=IN_TEAM1)]),
     [placed("node1", SECURITYSCAN, namespace="subteam1.team2")], None),
    # podsched's own rows
    ("a namespace with no Namespace object has only its name label: a team selector misses it",
     incoming(S1, required=[term("service", "In", SCAN, namespaceSelector=IN_TEAM1)]),
     [placed("node1", SECURITYSCAN, namespace="no-object")], AFFINITY),
    ("a namespace with no Namespace object is selected by its name label",
     incoming(S1, required=[term("service", "In", SCAN, namespaceSelector={
         "matchLabels": {NAME_LABEL: "no-object"}})]),
     [placed("node1", SECURITYSCAN, namespace="no-object")], None),
    ("namespaces and namespaceSelector add up",
     incoming(S1, required=[term("service", "In", SCAN, namespaces=["subteam2.team2"],
                                 namespaceSelector=IN_TEAM1)]),
     [placed("node1", SECURITYSCAN, namespace="subteam2.team2")], None),
    ("an existing pod's anti-affinity selects the incoming pod's namespace by its labels",
     incoming(SECURITYSCAN, namespace="subteam2.team1"),
     [placed("node1", S1, namespace="subteam1.team2",
             anti=[term("service", "In", SCAN, topology="zone", namespaceSelector=IN_TEAM1)])], EXISTING),
    ("an existing pod's anti-affinity whose selector misses the incoming pod's namespace labels",
     incoming(SECURITYSCAN, namespace="subteam1.team2"),
     [placed("node1", S1, namespace="subteam1.team1",
             anti=[term("service", "In", SCAN, topology="zone", namespaceSelector=IN_TEAM1)])], "skip"),
]


@pytest.mark.parametrize(
    ("incoming_pod", "pods", "want"), [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES]
)
def test_filter_with_namespace_labels(incoming_pod: objects_pb2.Pod, pods: list, want: Any) -> None:
    pre_filter, statuses = run_filter(incoming_pod, [NODE1], pods, index(*NAMESPACES))
    if want == "skip":
        assert pre_filter is not None and pre_filter.is_skip
        return
    assert pre_filter is None
    assert statuses == [want]


def test_a_relabelled_namespace_changes_the_next_cycle() -> None:
    """The plugin caches counts per workload: a namespace's new labels must not be answered from them."""
    namespaces = index(*NAMESPACES)
    nodes = [node("node1", labels={"region": "r1"})]
    snap = snapshot(nodes, [placed("node1", SECURITYSCAN, namespace="newcomer")])
    plugin = interpodaffinity.new(None, fake_handle(snap, namespaces=namespaces))
    waiting = PodInfo(incoming(S1, required=[term("service", "In", SCAN, namespaceSelector=IN_TEAM1)]))

    def verdict() -> Status | None:
        state = CycleState()
        plugin.pre_filter(state, waiting, snap.list())
        return plugin.filter(state, waiting, snap.list()[0])

    assert verdict() == AFFINITY
    namespaces.set(namespace("newcomer", TEAM1))
    assert verdict() is None
    namespaces.set(namespace("newcomer", TEAM2))
    assert verdict() == AFFINITY


def test_add_pod_judges_by_the_labels_pre_filter_took() -> None:
    """AddPod (preemption, nominated pods) uses PreFilter's namespace labels, not later ones."""
    namespaces = index(*NAMESPACES)
    nodes = [node("node1", labels={"region": "r1"})]
    snap = snapshot(nodes, [])
    plugin = interpodaffinity.new(None, fake_handle(snap, namespaces=namespaces))
    waiting = PodInfo(incoming(S1, required=[term("service", "In", SCAN, namespaceSelector=IN_TEAM1)]))
    state = CycleState()
    plugin.pre_filter(state, waiting, snap.list())
    namespaces.set(namespace("subteam1.team1", TEAM2))
    nominated = PodInfo(placed("node1", SECURITYSCAN, namespace="subteam1.team1"))
    assert plugin.pre_filter_extensions().add_pod(state, waiting, nominated, snap.list()[0]) is None
    assert plugin.filter(state, waiting, snap.list()[0]) is None


# ------------------------------------------------------------------------------------------- scoring

SECURITY_S1 = {"security": "S1"}
CHINA, INDIA = node("node1", labels={"region": "China"}), node("node2", labels={"region": "India"})


def preferred_term() -> dict:
    return weighted(5, "security", "In", ["S1"], namespaces=["subteam2.team2"], namespaceSelector=IN_TEAM1)


def scored(pod_namespace: str, anti: bool) -> objects_pb2.Pod:
    terms = {"preferred_anti" if anti else "preferred": [preferred_term()]}
    return pod(spec=spec(**terms), namespace=pod_namespace, labels=SECURITY_S1)


SCORE_CASES = [
    # scoring_test.go TestPreferredAffinity
    ("Affinity with pods matching NamespaceSelector", False,
     [("node1", "subteam1.team1"), ("node1", "subteam1.team1"), ("node1", "subteam1.team2"),
      ("node2", "subteam2.team1")], [100, 0]),
    ("Affinity with pods matching both NamespaceSelector and Namespaces fields", False,
     [("node1", "subteam1.team1"), ("node1", "subteam1.team1"), ("node1", "subteam2.team2"),
      ("node2", "subteam2.team1")], [100, 0]),
    ("Anti-affinity with pods matching NamespaceSelector", True,
     [("node1", "subteam1.team1"), ("node1", "subteam1.team1"), ("node1", "subteam1.team2"),
      ("node2", "subteam2.team1")], [0, 100]),
    ("Anti-affinity with pods matching both NamespaceSelector and Namespaces fields", True,
     [("node1", "subteam1.team1"), ("node1", "subteam1.team1"), ("node1", "subteam2.team2"),
      ("node2", "subteam2.team1")], [0, 100]),
]


@pytest.mark.parametrize(
    ("anti", "pods", "want"), [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES]
)
def test_score_with_namespace_labels(anti: bool, pods: list[tuple[str, str]], want: list[int]) -> None:
    existing = [pod(f"p{i}", namespace=ns, labels=SECURITY_S1, node_name=where)
                for i, (where, ns) in enumerate(pods)]
    snap = snapshot([CHINA, INDIA], existing)
    plugin = interpodaffinity.new(None, fake_handle(snap, namespaces=index(*NAMESPACES)))
    assert run_score(plugin, scored("subteam1.team1", anti), snap.list()) == want


def test_existing_pods_preferred_terms_read_the_incoming_pods_namespace_labels() -> None:
    existing = pod("p", namespace="subteam1.team2", node_name="node2", spec=spec(preferred=[
        weighted(5, "security", "In", ["S1"], namespaceSelector=IN_TEAM1)]))
    snap = snapshot([CHINA, INDIA], [existing])
    plugin = interpodaffinity.new(None, fake_handle(snap, namespaces=index(*NAMESPACES)))
    assert run_score(plugin, pod(namespace="subteam2.team1", labels=SECURITY_S1), snap.list()) == [0, 100]


# --------------------------------------------------------------------------------------------- hints

WAITING = pod("waiting", namespace="default", spec=affinity_spec(
    required=[term("service", "In", SCAN, namespaceSelector=IN_TEAM1)]))
REFUSING = pod("refusing", namespace="default", spec=affinity_spec(
    anti=[term("service", "In", SCAN, namespaceSelector=IN_TEAM1)]))

NAMESPACE_HINTS = [
    ("a namespace created with the selected labels", WAITING, None, namespace("new", TEAM1),
     QueueingHint.QUEUE),
    ("a namespace created with other labels", WAITING, None, namespace("new", TEAM2), QueueingHint.SKIP),
    ("a namespace relabelled into the selector", WAITING, namespace("x", TEAM2), namespace("x", TEAM1),
     QueueingHint.QUEUE),
    ("a namespace relabelled out of the selector", WAITING, namespace("x", TEAM1), namespace("x", TEAM2),
     QueueingHint.SKIP),
    ("an anti-affinity's namespace relabelled out of its selector", REFUSING, namespace("x", TEAM1),
     namespace("x", TEAM2), QueueingHint.QUEUE),
    ("an update that leaves the labels alone", WAITING, namespace("x", TEAM1), namespace("x", TEAM1),
     QueueingHint.SKIP),
    ("the pod's own namespace relabelled: existing pods' terms judge it by those labels",
     pod("plain", namespace="mine"), namespace("mine", TEAM2), namespace("mine", TEAM1), QueueingHint.QUEUE),
]


@pytest.mark.parametrize(
    ("pending", "old", "new", "want"), [c[1:] for c in NAMESPACE_HINTS], ids=[c[0] for c in NAMESPACE_HINTS]
)
def test_namespace_change_hint(pending: objects_pb2.Pod, old: Any, new: Any, want: QueueingHint) -> None:
    assert namespace_change_hint(pending, old, new) is want


def test_pod_change_hint_reads_namespace_labels() -> None:
    added = pod("scanner", namespace="subteam1.team1", labels=SECURITYSCAN, node_name="node1")
    labels = index(*NAMESPACES).snapshot()
    assert pod_change_hint(WAITING, None, added, labels) is QueueingHint.QUEUE
    assert pod_change_hint(WAITING, None, added, NamespaceLabels()) is QueueingHint.SKIP


def test_affinity_term_without_selector_reads_no_labels() -> None:
    waiting = pod("w", namespace="a", spec=affinity_spec(required=[term("service", "Exists")]))
    parsed = affinity_term(waiting, waiting.spec.affinity.pod_affinity
                           .required_during_scheduling_ignored_during_execution[0])
    assert not parsed.reads_namespace_labels
    assert parsed.matches_namespace("a", NamespaceLabels())
    assert not parsed.matches_namespace("b", index(namespace("b", TEAM1)).snapshot())
