"""PodTopologySpread's default constraints: the selector kube-scheduler's helper.DefaultSelector builds
(rows after helper/spread_test.go), and the System / List defaults in PreScore, Score and PreFilter (rows
after podtopologyspread/scoring_test.go and filtering_test.go, the arithmetic redone in each comment)."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import json_format

from cluster.api import objects_pb2
from cluster.api.selectors import LabelSelector
from scheduler.cache import snapshot_of
from scheduler.framework import Code, CycleState, NodeScore, PodInfo, QueueingHint, Status, WorkloadIndex
from scheduler.plugins import podtopologyspread
from tests.builders import node, plugin_args, pod
from tests.unit.framework_fakes import fake_handle
from tests.unit.test_plugin_podtopologyspread import spread, spread_out

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def service(name: str, selector: dict[str, str], namespace: str = "default") -> objects_pb2.Service:
    return json_format.ParseDict(
        {"metadata": {"name": name, "namespace": namespace}, "spec": {"selector": selector}},
        objects_pb2.Service(),
    )


def replica_set(name: str, selector: dict, namespace: str = "default") -> objects_pb2.ReplicaSet:
    return json_format.ParseDict(
        {"metadata": {"name": name, "namespace": namespace}, "spec": {"selector": selector}},
        objects_pb2.ReplicaSet(),
    )


def stateful_set(name: str, selector: dict, namespace: str = "default") -> objects_pb2.StatefulSet:
    return json_format.ParseDict(
        {"metadata": {"name": name, "namespace": namespace}, "spec": {"selector": selector}},
        objects_pb2.StatefulSet(),
    )


def controller(
    name: str, selector: dict[str, str], namespace: str = "default"
) -> objects_pb2.ReplicationController:
    return json_format.ParseDict(
        {"metadata": {"name": name, "namespace": namespace}, "spec": {"selector": selector}},
        objects_pb2.ReplicationController(),
    )


def owned(
    labels: dict[str, str],
    owner: tuple[str, str, str] | None = None,
    *,
    controller_ref: bool = True,
    namespace: str = "default",
    **spec: Any,
) -> objects_pb2.Pod:
    """The incoming pod, owned by ``owner`` = (apiVersion, kind, name) when given."""
    p = pod(name="p", namespace=namespace, labels=labels, spec=spec or None)
    if owner is not None:
        api_version, kind, name = owner
        p.metadata.owner_references.add(
            api_version=api_version, kind=kind, name=name, uid="u", controller=controller_ref
        )
    return p


def index(*objects: Any) -> WorkloadIndex:
    workloads = WorkloadIndex()
    for obj in objects:
        if isinstance(obj, objects_pb2.Service):
            workloads.set_service(obj)
        else:
            workloads.set_controller(obj)
    return workloads


RS = ("apps/v1", "ReplicaSet", "rs1")
STS = ("apps/v1", "StatefulSet", "ss1")
RC = ("v1", "ReplicationController", "rc1")

# (name, objects, pod, labels the selector must match, labels it must not match; None: empty selector)
SELECTOR_CASES: list[tuple[str, list[Any], objects_pb2.Pod, dict | None, dict | None]] = [
    ("no objects", [], owned({"foo": "bar"}), None, None),
    ("a service selecting the pod", [service("s1", {"foo": "bar"})], owned({"foo": "bar", "x": "y"}),
     {"foo": "bar"}, {"foo": "baz"}),
    ("a service not selecting the pod", [service("s1", {"foo": "baz"})], owned({"foo": "bar"}), None, None),
    ("a service of another namespace", [service("s1", {"foo": "bar"}, namespace="other")],
     owned({"foo": "bar"}), None, None),
    # Services that select nothing (no selector) give nothing.
    ("a service without selector", [service("s1", {})], owned({"foo": "bar"}), None, None),
    ("two services: their selectors merged", [service("s1", {"foo": "bar"}), service("s2", {"baz": "q"})],
     owned({"foo": "bar", "baz": "q"}), {"foo": "bar", "baz": "q"}, {"foo": "bar"}),
    ("its ReplicaSet", [replica_set("rs1", {"matchLabels": {"app": "a"}})], owned({"app": "a"}, RS),
     {"app": "a"}, {"app": "b"}),
    # The owner's selector is taken as it is, whether it matches the pod or not.
    ("its ReplicaSet with expressions", [replica_set("rs1", {"matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["web"]}]})], owned({"app": "a"}, RS),
     {"tier": "web"}, {"tier": "db"}),
    ("its StatefulSet", [stateful_set("ss1", {"matchLabels": {"app": "s"}})], owned({"app": "s"}, STS),
     {"app": "s"}, {}),
    ("its ReplicationController", [controller("rc1", {"app": "r"})], owned({"app": "r"}, RC),
     {"app": "r"}, {"app": "x"}),
    ("a ReplicaSet that does not exist", [replica_set("rs2", {"matchLabels": {"app": "a"}})],
     owned({"app": "a"}, RS), None, None),
    ("a ReplicaSet of another namespace", [replica_set("rs1", {"matchLabels": {"app": "a"}}, "other")],
     owned({"app": "a"}, RS), None, None),
    ("an owner that is not the controller", [replica_set("rs1", {"matchLabels": {"app": "a"}})],
     owned({"app": "a"}, RS, controller_ref=False), None, None),
    ("a ReplicaSet named in another group", [replica_set("rs1", {"matchLabels": {"app": "a"}})],
     owned({"app": "a"}, ("extensions/v1beta1", "ReplicaSet", "rs1")), None, None),
    ("a Deployment owner (not one of the kinds)", [replica_set("rs1", {"matchLabels": {"app": "a"}})],
     owned({"app": "a"}, ("apps/v1", "Deployment", "rs1")), None, None),
    ("a service and its ReplicaSet", [service("s1", {"foo": "bar"}),
                                       replica_set("rs1", {"matchLabels": {"app": "a"}})],
     owned({"foo": "bar", "app": "a"}, RS), {"foo": "bar", "app": "a"}, {"app": "a"}),
    # A ReplicationController's label set is merged with the services' labels: its values win.
    ("a service and its ReplicationController",
     [service("s1", {"foo": "bar"}), controller("rc1", {"foo": "x"})],
     owned({"foo": "bar"}, RC), {"foo": "x"}, {"foo": "bar"}),
]


@pytest.mark.parametrize(
    ("objects", "incoming_pod", "matching", "not_matching"),
    [c[1:] for c in SELECTOR_CASES],
    ids=[c[0] for c in SELECTOR_CASES],
)
def test_default_selector(
    objects: list[Any], incoming_pod: objects_pb2.Pod, matching: dict | None, not_matching: dict | None
) -> None:
    selector = index(*objects).default_selector(incoming_pod)
    if matching is None:
        assert selector.empty
        return
    assert not selector.empty
    assert selector.matches(matching)
    assert not_matching is not None and not selector.matches(not_matching)


def test_index_forgets_deleted_and_changed_objects() -> None:
    workloads = index(service("s1", {"foo": "bar"}), replica_set("rs1", {"matchLabels": {"app": "a"}}))
    p = owned({"foo": "bar", "app": "a"}, RS)
    assert workloads.default_selector(p) == LabelSelector.parse("foo=bar,app=a")
    workloads.remove_service(service("s1", {}))
    assert workloads.default_selector(p) == LabelSelector.parse("app=a")
    workloads.set_controller(replica_set("rs1", {"matchLabels": {"app": "b"}}))
    assert workloads.default_selector(p) == LabelSelector.parse("app=b")
    workloads.remove_controller(replica_set("rs1", {}))
    assert workloads.default_selector(p).empty
    # A Service updated to select nothing is dropped.
    workloads.set_service(service("s2", {"foo": "bar"}))
    workloads.set_service(service("s2", {}))
    assert workloads.default_selector(p).empty


# ------------------------------------------------------------------------------------- scoring


def host(name: str, zone: str | None = None) -> objects_pb2.Node:
    labels = {HOSTNAME: name, **({ZONE: zone} if zone else {})}
    return node(name, labels=labels)


FOUR_HOSTS = [host("node-a"), host("node-b"), host("node-c"), host("node-d")]
ZONED = [host("node-a", "zone1"), host("node-b", "zone1"), host("node-x", "zone2"), host("node-y", "zone2")]
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}

SCORE_CASES = [
    # System defaults {hostname, 3} and {zone, 5}. No node has a zone: all are in the zone "" (weight
    # log(1+2)), which Score leaves out; hostname weight log(4+2) = 1.79: raw 4*1.79+2 = 9, 7, 6, 4 ->
    # 100*(13-s)/9. The same scores as one hostname constraint of maxSkew 3.
    ("system defaulting, nodes don't have zone, pods match service",
     owned({"foo": ""}), [service("s", {"foo": ""})], FOUR_HOSTS,
     spread_out({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}), [44, 66, 77, 100]),
    # Zones at 3/1, hosts at 2/1/0/1: hostname log(6) = 1.79, zone log(4) = 1.39.
    # a: 2*1.79+2 + 3*1.39+4 = 13.74 -> 14; b: 1.79+2+4.16+4 = 11.95 -> 12; x: 2+1.39+4 = 7.39 -> 7;
    # y: 1.79+2+1.39+4 = 9.18 -> 9; 100*(21-s)/14 = 50, 64, 100, 85.
    ("system defaulting with zones, the pod's ReplicaSet",
     owned({"foo": ""}, RS), [replica_set("rs1", FOO)], ZONED,
     spread_out({"node-a": 2, "node-b": 1, "node-y": 1}), [50, 64, 100, 85]),
    # A node without a zone is a zone of its own ("") for the weight (log(2+2)) and is scored on its
    # host alone: a: 1.79+2 + 2*1.39+4 = 10.57 -> 11; b: 1.79+2+2.77+4 = 10.57 -> 11; c: 2 (zone left out);
    # d: 1.79+2 = 3.79 -> 4; 100*(13-s)/11 = 18, 18, 100, 81.
    ("system defaulting, one node without zone",
     owned({"foo": ""}, RS), [replica_set("rs1", FOO)],
     [host("node-a", "zone1"), host("node-b", "zone1"), host("node-c"), host("node-d")],
     spread_out({"node-a": 1, "node-b": 1, "node-d": 1}), [18, 18, 100, 81]),
]


def scores(plugin: Any, snap: Any, incoming_pod: objects_pb2.Pod) -> list[int] | Status | None:
    """The normalized scores of every node, in name order."""
    filtered = sorted(snap.list(), key=lambda info: info.name)
    state, pod_info = CycleState(), PodInfo(incoming_pod)
    status = plugin.pre_score(state, pod_info, filtered)
    if status is not None:
        return status
    result = [NodeScore(info.name, plugin.score(state, pod_info, info)) for info in filtered]
    assert plugin.normalize_score(state, pod_info, result) is None
    return [s.score for s in result]


@pytest.mark.parametrize(
    ("incoming_pod", "objects", "nodes", "pods", "want"), [c[1:] for c in SCORE_CASES],
    ids=[c[0] for c in SCORE_CASES],
)
def test_score_with_system_defaults(
    incoming_pod: objects_pb2.Pod, objects: list, nodes: list, pods: list, want: list[int]
) -> None:
    snap = snapshot_of(nodes, pods)
    plugin = podtopologyspread.new(None, fake_handle(snap, workloads=index(*objects)))
    assert scores(plugin, snap, incoming_pod) == want


SKIP_CASES = [
    ("no service nor controller selects the pod", owned({"foo": ""}), []),
    ("the pod's ReplicaSet does not exist", owned({"foo": ""}, RS), [replica_set("rs2", FOO)]),
    ("a service of another namespace", owned({"foo": ""}), [service("s", {"foo": ""}, namespace="other")]),
]


@pytest.mark.parametrize(
    ("incoming_pod", "objects"), [c[1:] for c in SKIP_CASES], ids=[c[0] for c in SKIP_CASES]
)
def test_no_default_constraint_without_a_selector(incoming_pod: objects_pb2.Pod, objects: list) -> None:
    snap = snapshot_of(FOUR_HOSTS, spread_out({"node-a": 3}))
    plugin = podtopologyspread.new(None, fake_handle(snap, workloads=index(*objects)))
    assert scores(plugin, snap, incoming_pod) == Status(Code.SKIP)
    assert plugin.sign(PodInfo(incoming_pod)) == ()


def test_own_constraints_replace_the_defaults() -> None:
    """A pod with constraints of its own is spread by them only: the Service is not looked at."""
    snap = snapshot_of(FOUR_HOSTS, spread_out({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}))
    workloads = index(service("s", {"foo": ""}))
    plugin = podtopologyspread.new(None, fake_handle(snap, workloads=workloads))
    hard = owned({"foo": ""}, topologySpreadConstraints=[spread(1, "rack")])
    # Its only constraint is a DoNotSchedule one: nothing to score.
    assert scores(plugin, snap, hard) == Status(Code.SKIP)
    # maxSkew 1 on hostname: raw 4*1.79 = 7, 5, 4, 2 -> 100*(9-s)/7 (the defaults' maxSkew 3 would give
    # 44/66/77/100).
    soft = owned({"foo": ""}, topologySpreadConstraints=[spread(1, HOSTNAME, "ScheduleAnyway")])
    assert scores(plugin, snap, soft) == [28, 57, 71, 100]


def test_system_defaults_never_filter() -> None:
    snap = snapshot_of(FOUR_HOSTS, spread_out({"node-a": 9}))
    plugin = podtopologyspread.new(None, fake_handle(snap, workloads=index(service("s", {"foo": ""}))))
    incoming_pod = owned({"foo": ""})
    assert plugin.pre_filter(CycleState(), PodInfo(incoming_pod), snap.list()) == (None, Status(Code.SKIP))
    # But the pod is spread (Score), so it has no signature to share.
    assert plugin.sign(PodInfo(incoming_pod)) is None


LIST_HARD = plugin_args(podtopologyspread.NAME, {
    "defaultingType": "List",
    "defaultConstraints": [{"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": "DoNotSchedule"}],
})


def test_list_defaults_filter_pods_of_a_replica_set() -> None:
    """filtering_test.go's default constraints row: a DoNotSchedule default applies through PreFilter /
    Filter with the ReplicaSet's selector; hosts at 1/0/0/0 leave only the empty hosts."""
    snap = snapshot_of(FOUR_HOSTS, spread_out({"node-a": 1}))
    plugin = podtopologyspread.new(LIST_HARD, fake_handle(snap, workloads=index(replica_set("rs1", FOO))))
    state, pod_info = CycleState(), PodInfo(owned({"foo": ""}, RS))
    assert plugin.pre_filter(state, pod_info, snap.list()) == (None, None)
    names = ("node-a", "node-b", "node-c", "node-d")
    fits = [plugin.filter(state, pod_info, snap.get(name)) is None for name in names]
    assert fits == [False, True, True, True]
    # Without its ReplicaSet nothing applies.
    bare = podtopologyspread.new(LIST_HARD, fake_handle(snap))
    assert bare.pre_filter(CycleState(), pod_info, snap.list()) == (None, Status(Code.SKIP))


def test_list_defaults_hint_on_the_default_constraints() -> None:
    """A pod rejected by a DoNotSchedule default is queued again when a matching pod leaves."""
    snap = snapshot_of(FOUR_HOSTS)
    plugin = podtopologyspread.new(LIST_HARD, fake_handle(snap, workloads=index(replica_set("rs1", FOO))))
    pod_event = plugin.events_to_register()[0]
    assert pod_event.hint is not None
    gone = spread_out({"node-a": 1})[0]
    assert pod_event.hint(owned({"foo": ""}, RS), gone, None) is QueueingHint.QUEUE
    assert pod_event.hint(owned({"foo": ""}), gone, None) is QueueingHint.SKIP
