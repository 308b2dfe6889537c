"""PodTopologySpread PreScore / Score / NormalizeScore (kube-scheduler's scoring_test.go cases, the
arithmetic redone by hand in each comment), its args, and its queueing hints."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.api import objects_pb2
from scheduler.cache import snapshot_of
from scheduler.config import ConfigError
from scheduler.framework import (
    ActionType,
    Code,
    CycleState,
    EventResource,
    NodeScore,
    PodInfo,
    QueueingHint,
    Status,
)
from scheduler.plugins import podtopologyspread
from scheduler.plugins.podtopologyspread import PodTopologySpreadArgs, node_change_hint, pod_change_hint
from tests.builders import PLUGIN_ARGS_PATH, node, plugin_args, pod
from tests.unit.framework_fakes import fake_handle
from tests.unit.test_plugin_podtopologyspread import incoming, spread, spread_out

HOSTNAME = "kubernetes.io/hostname"
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}


def host(name: str, zone: str | None = None, *, hostname: bool = True) -> objects_pb2.Node:
    labels = {HOSTNAME: name} if hostname else {"n": name}
    if zone:
        labels["zone"] = zone
    return node(name, labels=labels)


def soft(max_skew: int, key: str, **extra: Any) -> dict:
    return spread(max_skew, key, "ScheduleAnyway", **extra)


def both(labels: dict[str, int], other: dict[str, int]) -> list[objects_pb2.Pod]:
    return spread_out(labels) + [
        pod(name=f"q-{n}{i}", node_name=n, labels={"bar": ""})
        for n, count in other.items()
        for i in range(count)
    ]


FOUR_HOSTS = [host("node-a"), host("node-b"), host("node-c"), host("node-d")]
ZONED = [host("node-a", "zone1"), host("node-b", "zone1"), host("node-x", "zone2"), host("node-y", "zone2")]

CASES = [
    # Every raw score is 0: every node gets 100.
    ("no existing pods", incoming(soft(1, HOSTNAME)), FOUR_HOSTS[:2], [], None, [100, 100]),
    (
        "one node passed Filter",
        incoming(soft(1, HOSTNAME)),
        FOUR_HOSTS[:2],
        spread_out({"node-a": 1}),
        ["node-a"],
        [100],
    ),
    (
        "every node holds as many matching pods",
        incoming(soft(1, HOSTNAME)),
        FOUR_HOSTS[:2],
        spread_out({"node-a": 1, "node-b": 1}),
        None,
        [100, 100],
    ),
    # 2/1/0/3, weight log(4+2) = 1.79: raw 4/2/0/5 -> 100*(5+0-s)/5.
    (
        "hosts at 2/1/0/3",
        incoming(soft(1, HOSTNAME)),
        FOUR_HOSTS,
        spread_out({"node-a": 2, "node-b": 1, "node-d": 3}),
        None,
        [20, 60, 100, 0],
    ),
    # maxSkew 2 adds 1 to every raw score: 5/3/1/6 -> 100*(7-s)/6.
    (
        "hosts at 2/1/0/3, maxSkew 2",
        incoming(soft(2, HOSTNAME)),
        FOUR_HOSTS,
        spread_out({"node-a": 2, "node-b": 1, "node-d": 3}),
        None,
        [33, 66, 100, 16],
    ),
    # 4/3/2/1, maxSkew 3: raw 9.17/7.38/5.58/3.79 rounded 9/7/6/4 -> 100*(13-s)/9.
    (
        "hosts at 4/3/2/1, maxSkew 3",
        incoming(soft(3, HOSTNAME)),
        FOUR_HOSTS,
        spread_out({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}),
        None,
        [44, 66, 77, 100],
    ),
    # node-y failed Filter: 3 candidates, weight log(5) = 1.61: raw 6.4/3.2/1.6 -> 6/3/2 -> 100*(8-s)/6.
    (
        "hosts at 4/2/1/~3~",
        incoming(soft(1, HOSTNAME)),
        [host("node-a"), host("node-b"), host("node-x"), host("node-y")],
        spread_out({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}),
        ["node-a", "node-b", "node-x"],
        [33, 83, 100],
    ),
    # node-b lacks the key: ignored, scores 0; 2 candidates left, weight log(4): raw 5.5/1.4 -> 6/1.
    (
        "a candidate without the topology key",
        incoming(soft(1, HOSTNAME)),
        [host("node-a"), host("node-b", hostname=False), host("node-x"), host("node-y")],
        spread_out({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}),
        ["node-a", "node-b", "node-x"],
        [16, 0, 100],
    ),
    # Zones of the candidates: zone1 (4+2 pods) and zone2 (1+3, node-y counts though it failed Filter);
    # weight log(2+2) = 1.39: raw 8.3/8.3/5.5 -> 8/8/6 -> 100*(14-s)/8.
    (
        "zones at 6/4, node-y not a candidate",
        incoming(soft(1, "zone")),
        ZONED,
        spread_out({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}),
        ["node-a", "node-b", "node-x"],
        [75, 75, 100],
    ),
    # zone 3/6 and hosts 2/2 over 2 candidates, both weights log(4): raw 6.9/11.1 -> 7/11.
    (
        "zone and host constraints, 2 of 4 nodes candidates",
        incoming(soft(1, "zone"), soft(1, HOSTNAME)),
        ZONED,
        spread_out({"node-a": 2, "node-b": 1, "node-x": 2, "node-y": 4}),
        ["node-a", "node-x"],
        [100, 63],
    ),
    # zone (foo) 2/1 with weight log(4); hosts (bar) 0/1/0/1 with weight log(6): raw 3/5/1/3.
    (
        "zone and host constraints with different selectors",
        incoming(soft(1, "zone"), soft(1, HOSTNAME, selector=BAR), labels={"foo": "", "bar": ""}),
        ZONED,
        [
            *spread_out({"node-a": 1, "node-y": 1}),
            pod(name="ab", node_name="node-b", labels={"foo": "", "bar": ""}),
            pod(name="yb", node_name="node-y", labels={"bar": ""}),
        ],
        None,
        [60, 20, 100, 60],
    ),
    # zone (foo) 0/2 with weight log(4) = 1.39; hosts (bar) 0/1/0/1 with weight log(6) = 1.79:
    # raw 0/1.8/2.8/4.6 -> 0/2/3/5 -> 100*(5-s)/5.
    (
        "some nodes without matching pods",
        incoming(soft(1, "zone"), soft(1, HOSTNAME, selector=BAR), labels={"foo": "", "bar": ""}),
        ZONED,
        [
            *both({"node-x": 1}, {"node-b": 1}),
            pod(name="yy", node_name="node-y", labels={"foo": "", "bar": ""}),
        ],
        None,
        [100, 60, 40, 0],
    ),
    # The tainted node-a does not count under nodeTaintsPolicy Honor, but a node's own count is still
    # taken from the node: weight log(2+2), raw 2.8/0 -> 3/0.
    (
        "hostname count of a candidate that the inclusion policy leaves out",
        incoming(soft(1, HOSTNAME, nodeTaintsPolicy="Honor")),
        [
            node("node-a", labels={HOSTNAME: "node-a"}, taints=[{"key": "k", "effect": "NoSchedule"}]),
            host("node-b"),
        ],
        spread_out({"node-a": 2}),
        None,
        [0, 100],
    ),
    (
        "pods of other namespaces do not count",
        incoming(soft(1, HOSTNAME)),
        FOUR_HOSTS[:2],
        [pod(name="o", node_name="node-a", namespace="other", labels={"foo": ""})],
        None,
        [100, 100],
    ),
]


@pytest.mark.parametrize(
    ("incoming_pod", "nodes", "pods", "candidates", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_score(
    incoming_pod: objects_pb2.Pod, nodes: list, pods: list, candidates: list | None, want: list
) -> None:
    snap = snapshot_of(nodes, pods)
    plugin = podtopologyspread.new(None, fake_handle(snap))
    filtered = [snap.get(name) for name in (candidates or [n.metadata.name for n in nodes])]
    state, pod_info = CycleState(), PodInfo(incoming_pod)
    assert plugin.pre_score(state, pod_info, filtered) is None
    scores = [NodeScore(info.name, plugin.score(state, pod_info, info)) for info in filtered]
    assert plugin.normalize_score(state, pod_info, scores) is None
    assert [s.score for s in scores] == want


def test_pre_score_skips_without_soft_constraints_or_nodes() -> None:
    snap = snapshot_of(FOUR_HOSTS)
    plugin = podtopologyspread.new(None, fake_handle(snap))
    assert plugin.pre_score(CycleState(), PodInfo(incoming(spread(1, "zone"))), snap.list()) == Status(
        Code.SKIP
    )
    empty = podtopologyspread.new(None, fake_handle(snapshot_of([])))
    assert empty.pre_score(CycleState(), PodInfo(incoming(soft(1, "zone"))), []) == Status(Code.SKIP)


def test_normalize_without_pre_score_state_is_an_error() -> None:
    plugin = podtopologyspread.new(None, fake_handle(snapshot_of([])))
    status = plugin.normalize_score(CycleState(), PodInfo(incoming()), [NodeScore("a", 1)])
    assert status is not None and status.code is Code.ERROR


# ------------------------------------------------------------------------------------------ args


def test_args_defaults_and_a_list() -> None:
    assert plugin_args(podtopologyspread.NAME, {}) == PodTopologySpreadArgs((), "System")
    args = plugin_args(
        podtopologyspread.NAME,
        {
            "kind": "PodTopologySpreadArgs",
            "defaultingType": "List",
            "defaultConstraints": [
                {
                    "maxSkew": 3,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                }
            ],
        }
    )
    assert args.defaulting_type == "List"
    assert [(c.max_skew, c.topology_key, c.when_unsatisfiable) for c in args.default_constraints] == [
        (3, "topology.kubernetes.io/zone", "ScheduleAnyway")
    ]
    assert podtopologyspread.ARGS is PodTopologySpreadArgs


def test_default_constraints_apply_to_no_pod() -> None:
    """No Service nor controller selects the pod: the default constraints have no selector, so none
    applies (test_plugin_podtopologyspread_defaults.py has the pods they do apply to)."""
    snap = snapshot_of(FOUR_HOSTS, spread_out({"node-a": 3}))
    args = {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": "DoNotSchedule"}],
    }
    plugin = podtopologyspread.new(plugin_args(podtopologyspread.NAME, args), fake_handle(snap))
    assert plugin.pre_filter(CycleState(), PodInfo(incoming()), snap.list()) == (None, Status(Code.SKIP))


LIST = {"defaultingType": "List"}
ZONE = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
WHERE = PLUGIN_ARGS_PATH


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"defaultConstraints": [ZONE]},
            f'{WHERE}.defaultingType: Invalid value: "System": when .defaultConstraints are not empty',
        ),
        (
            {"defaultingType": "Foo"},
            f'{WHERE}.defaultingType: Unsupported value: "Foo": supported values: "System", "List"',
        ),
        (
            {**LIST, "defaultConstraints": [{**ZONE, "maxSkew": 0}]},
            f"{WHERE}.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)",
        ),
        (
            {**LIST, "defaultConstraints": [{**ZONE, "topologyKey": ""}]},
            f"{WHERE}.defaultConstraints[0].topologyKey: Required value: can not be empty",
        ),
        (
            {**LIST, "defaultConstraints": [{**ZONE, "topologyKey": "a b"}]},
            f'{WHERE}.defaultConstraints[0].topologyKey: Invalid value: "a b"',
        ),
        (
            {**LIST, "defaultConstraints": [{**ZONE, "whenUnsatisfiable": "Sometimes"}]},
            f'{WHERE}.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Sometimes": '
            'supported values: "DoNotSchedule", "ScheduleAnyway"',
        ),
        (
            {**LIST, "defaultConstraints": [{**ZONE, "labelSelector": {"matchLabels": {"a": "b"}}}]},
            f"{WHERE}.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector",
        ),
        (
            {**LIST, "defaultConstraints": [ZONE, {**ZONE, "maxSkew": 2}]},
            f'{WHERE}.defaultConstraints[1]: Duplicate value: "{{zone, DoNotSchedule}}"',
        ),
        (
            {**LIST, "defaultConstraints": [{**ZONE, "maxSkw": 1}]},
            f'{WHERE}.defaultConstraints[0]: unknown field "maxSkw"',
        ),
        ({"defaultConstraint": []}, f'{WHERE}: unknown field "defaultConstraint"'),
    ],
    ids=[
        "System with constraints",
        "unknown defaulting",
        "maxSkew 0",
        "no topologyKey",
        "bad topologyKey",
        "bad whenUnsatisfiable",
        "selector",
        "duplicate",
        "unknown constraint field",
        "unknown field",
    ],
)
def test_bad_args(data: dict, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        plugin_args(podtopologyspread.NAME, data)
    assert str(raised.value).startswith(message)


# ----------------------------------------------------------------------------------------- hints


def test_events_to_register() -> None:
    events = podtopologyspread.new(None, fake_handle(snapshot_of([]))).events_to_register()
    assert {(e.event.resource, e.event.action) for e in events} == {
        (EventResource.ASSIGNED_POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
        (
            EventResource.NODE,
            ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT,
        ),
    }
    assert all(e.hint is not None for e in events)


PENDING = incoming(spread(1, "zone"))


def bound(labels: dict, node_name: str = "n1", namespace: str = "default") -> objects_pb2.Pod:
    return pod(name="other", node_name=node_name, namespace=namespace, labels=labels)


POD_HINTS = [
    ("added matching pod", None, bound({"foo": ""}), QueueingHint.QUEUE),
    ("added pod not matching", None, bound({"bar": ""}), QueueingHint.SKIP),
    ("added pod of another namespace", None, bound({"foo": ""}, namespace="x"), QueueingHint.SKIP),
    ("added pod not scheduled", None, bound({"foo": ""}, node_name=""), QueueingHint.SKIP),
    ("deleted matching pod", bound({"foo": ""}), None, QueueingHint.QUEUE),
    ("deleted pod not matching", bound({"bar": ""}), None, QueueingHint.SKIP),
    ("relabelled into the selector", bound({"bar": ""}), bound({"foo": ""}), QueueingHint.QUEUE),
    ("relabelled out of the selector", bound({"foo": ""}), bound({}), QueueingHint.QUEUE),
    (
        "relabelled, still matching",
        bound({"foo": "", "a": "1"}),
        bound({"foo": "", "a": "2"}),
        QueueingHint.SKIP,
    ),
]


@pytest.mark.parametrize(("old", "new", "want"), [c[1:] for c in POD_HINTS], ids=[c[0] for c in POD_HINTS])
def test_pod_change_hint(old: Any, new: Any, want: QueueingHint) -> None:
    assert pod_change_hint(PENDING, old, new) is want


TAINT = [{"key": "k", "effect": "NoSchedule"}]
NODE_HINTS = [
    ("added node with the key", None, node("n", labels={"zone": "z"}), QueueingHint.QUEUE),
    ("added node without the key", None, node("n"), QueueingHint.SKIP),
    ("deleted node with the key", node("n", labels={"zone": "z"}), None, QueueingHint.QUEUE),
    ("deleted node without the key", node("n"), None, QueueingHint.SKIP),
    ("key added", node("n"), node("n", labels={"zone": "z"}), QueueingHint.QUEUE),
    ("key removed", node("n", labels={"zone": "z"}), node("n"), QueueingHint.QUEUE),
    ("zone changed", node("n", labels={"zone": "a"}), node("n", labels={"zone": "b"}), QueueingHint.QUEUE),
    (
        "unrelated label",
        node("n", labels={"zone": "a"}),
        node("n", labels={"zone": "a", "x": "y"}),
        QueueingHint.SKIP,
    ),
    (
        "taints changed",
        node("n", labels={"zone": "a"}, taints=TAINT),
        node("n", labels={"zone": "a"}),
        QueueingHint.QUEUE,
    ),
    ("taints changed on a node without the key", node("n", taints=TAINT), node("n"), QueueingHint.SKIP),
]


@pytest.mark.parametrize(("old", "new", "want"), [c[1:] for c in NODE_HINTS], ids=[c[0] for c in NODE_HINTS])
def test_node_change_hint(old: Any, new: Any, want: QueueingHint) -> None:
    assert node_change_hint(PENDING, old, new) is want
