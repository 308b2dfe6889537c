"""InterPodAffinity PreScore / Score / NormalizeScore (expected scores worked out by hand in each case),
its args, and its queueing hints."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest

from cluster.api import objects_pb2
from scheduler.config import ConfigError
from scheduler.framework import (
    ActionType,
    Code,
    CycleState,
    EventResource,
    NamespaceLabels,
    NodeScore,
    PodInfo,
    QueueingHint,
    Status,
)
from scheduler.plugins import interpodaffinity
from scheduler.plugins.interpodaffinity import InterPodAffinityArgs, node_change_hint, pod_change_hint
from tests.builders import PLUGIN_ARGS_PATH, node, plugin_args, pod
from tests.unit.framework_fakes import fake_handle
from tests.unit.test_plugin_interpodaffinity import snapshot, term


def weighted(weight: int, key: str, operator: str, values: Sequence[str] = (), topology: str = "region",
             **extra: Any) -> dict:
    return {"weight": weight, "podAffinityTerm": term(key, operator, values, topology, **extra)}


def spec(preferred: Sequence[dict] = (), preferred_anti: Sequence[dict] = (), required: Sequence[dict] = (),
         anti: Sequence[dict] = ()) -> dict:
    affinity: dict[str, Any] = {"podAffinity": {}, "podAntiAffinity": {}}
    if preferred:
        affinity["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = list(preferred)
    if required:
        affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = list(required)
    if preferred_anti:
        affinity["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = list(preferred_anti)
    if anti:
        affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = list(anti)
    return {"affinity": affinity}


S1 = {"security": "S1"}
DB = {"app": "db"}
NODES = [
    node("n1", labels={"region": "China"}),
    node("n2", labels={"region": "China", "az": "az1"}),
    node("n3", labels={"region": "India"}),
    node("n4"),
]


def placed(
    node_name: str, labels: dict | None = None, namespace: str = "default", **terms: Any
) -> objects_pb2.Pod:
    return pod(spec=spec(**terms), name=f"p-{node_name}-{len(terms)}-{sorted((labels or {}).items())}",
               namespace=namespace, labels=labels, node_name=node_name)


SKIP = "skip"
CASES = [
    ("no terms anywhere", pod(labels=S1), [placed("n1", S1)], None, SKIP),
    ("preferred affinity: every node of the matching pod's region",
     pod(spec=spec(preferred=[weighted(5, "security", "In", ["S1"])])), [placed("n1", S1)], None,
     [100, 100, 0, 0]),
    ("preferred anti-affinity: the other nodes win",
     pod(spec=spec(preferred_anti=[weighted(5, "security", "In", ["S1"])])), [placed("n1", S1)], None,
     [0, 0, 100, 100]),
    ("weights add up per pair and the fraction is truncated (3 of 4 -> 75)",
     pod(spec=spec(preferred=[weighted(3, "security", "In", ["S1"]),
                         weighted(1, "security", "In", ["S1"], "az")])),
     [placed("n2", S1)], None, [75, 100, 0, 0]),
    ("symmetry: an existing pod's preferred affinity toward the pod",
     pod(labels=S1), [placed("n3", preferred=[weighted(5, "security", "In", ["S1"])])], None, [0, 0, 100, 0]),
    ("symmetry: an existing pod's preferred anti-affinity toward the pod",
     pod(labels=S1), [placed("n1", preferred_anti=[weighted(5, "security", "In", ["S1"])])], None,
     [0, 0, 100, 100]),
    ("an existing pod's required affinity toward the pod weighs hardPodAffinityWeight (1)",
     pod(labels=S1), [placed("n1", required=[term("security", "In", ["S1"])])], None, [100, 100, 0, 0]),
    ("hardPodAffinityWeight 0 ignores existing pods' required affinity",
     pod(labels=S1), [placed("n1", required=[term("security", "In", ["S1"])])],
     {"hardPodAffinityWeight": 0}, SKIP),
    ("hardPodAffinityWeight 10 against a preferred weight of 5",
     pod(spec=spec(preferred=[weighted(5, "app", "In", ["db"])]), labels=S1),
     [placed("n1", required=[term("security", "In", ["S1"])]), placed("n3", DB)],
     {"hardPodAffinityWeight": 10}, [100, 100, 50, 0]),
    ("ignorePreferredTermsOfExistingPods: a pod without preferred terms is not scored",
     pod(labels=S1), [placed("n3", preferred=[weighted(5, "security", "In", ["S1"])])],
     {"ignorePreferredTermsOfExistingPods": True}, SKIP),
    ("ignorePreferredTermsOfExistingPods: a pod with preferred terms still sees existing pods' terms",
     pod(spec=spec(preferred=[weighted(5, "app", "In", ["db"])]), labels=S1),
     [placed("n3", DB), placed("n1", preferred=[weighted(5, "security", "In", ["S1"])])],
     {"ignorePreferredTermsOfExistingPods": True}, [100, 100, 100, 0]),
    ("an existing pod's term limited to another namespace",
     pod(labels=S1), [placed("n3", preferred=[weighted(5, "security", "In", ["S1"], namespaces=["other"])])],
     None, SKIP),
    ("the pod's preferred term does not see pods of other namespaces",
     pod(spec=spec(preferred=[weighted(5, "security", "In", ["S1"])])), [placed("n1", S1, namespace="x")],
     None,
     SKIP),
]


@pytest.mark.parametrize(
    ("incoming", "pods", "args", "want"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_score(incoming: objects_pb2.Pod, pods: list, args: dict | None, want: Any) -> None:
    snap = snapshot(NODES, pods)
    plugin = interpodaffinity.new(plugin_args(interpodaffinity.NAME, args), fake_handle(snap))
    state, pod_info = CycleState(), PodInfo(incoming)
    status = plugin.pre_score(state, pod_info, snap.list())
    if want == SKIP:
        assert status == Status(Code.SKIP)
        return
    assert status is None
    scores = [NodeScore(info.name, plugin.score(state, pod_info, info)) for info in snap.list()]
    assert plugin.normalize_score(state, pod_info, scores) is None
    assert [s.score for s in scores] == want


def test_raw_scores_before_normalization() -> None:
    """Score is the sum of the node's pairs: +5 (incoming preferred) -3 (existing preferred anti)."""
    snap = snapshot(NODES, [
        placed("n1", S1),
        placed("n2", preferred_anti=[weighted(3, "app", "In", ["web"])]),
    ])
    plugin = interpodaffinity.new(None, fake_handle(snap))
    state, pod_info = CycleState(), PodInfo(pod(spec=spec(preferred=[weighted(5, "security", "In", ["S1"])]),
                                                  labels={"app": "web"}))
    assert plugin.pre_score(state, pod_info, snap.list()) is None
    assert [plugin.score(state, pod_info, info) for info in snap.list()] == [2, 2, 0, 0]


# ------------------------------------------------------------------------------------------ args


@pytest.mark.parametrize(
    ("data", "want"),
    [
        ({}, InterPodAffinityArgs(1, False)),
        ({"hardPodAffinityWeight": 0}, InterPodAffinityArgs(0, False)),
        ({"hardPodAffinityWeight": 100, "ignorePreferredTermsOfExistingPods": True},
         InterPodAffinityArgs(100, True)),
        ({"kind": "InterPodAffinityArgs", "apiVersion": "kubescheduler.config.k8s.io/v1"},
         InterPodAffinityArgs()),
    ],
    ids=["defaults", "weight 0", "all set", "with type meta"],
)
def test_args(data: dict, want: InterPodAffinityArgs) -> None:
    assert plugin_args(interpodaffinity.NAME, data) == want
    assert interpodaffinity.ARGS is InterPodAffinityArgs


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"hardPodAffinityWeight": 101},
         f"{PLUGIN_ARGS_PATH}.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"),
        ({"hardPodAffinityWeight": -1},
         f"{PLUGIN_ARGS_PATH}.hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"),
        ({"hardPodAffinityWeight": "5"},
         f'{PLUGIN_ARGS_PATH}.hardPodAffinityWeight: Invalid value: "5": must be an integer'),
        ({"ignorePreferredTermsOfExistingPods": "yes"},
         f'{PLUGIN_ARGS_PATH}.ignorePreferredTermsOfExistingPods: Invalid value: "yes": '
         "must be true or false"),
        ({"hardPodAffinityWeigth": 1}, f'{PLUGIN_ARGS_PATH}: unknown field "hardPodAffinityWeigth"'),
        ({"kind": "PodTopologySpreadArgs"}, f"{PLUGIN_ARGS_PATH}.kind"),
    ],
    ids=["too big", "negative", "string", "not a boolean", "misspelt", "wrong kind"],
)
def test_bad_args(data: dict, message: str) -> None:
    with pytest.raises(ConfigError, match="^" + re.escape(message)):
        plugin_args(interpodaffinity.NAME, data)


def test_factory_takes_the_args_object_or_none() -> None:
    handle = fake_handle(snapshot([], []))
    configured = plugin_args(interpodaffinity.NAME, {"hardPodAffinityWeight": 7})
    assert interpodaffinity.new(configured, handle).args == InterPodAffinityArgs(7)
    assert interpodaffinity.new(InterPodAffinityArgs(3), handle).args == InterPodAffinityArgs(3)
    assert interpodaffinity.new(None, handle).args == InterPodAffinityArgs()


# ----------------------------------------------------------------------------------------- hints


def test_events_to_register() -> None:
    events = interpodaffinity.new(None, fake_handle(snapshot([], []))).events_to_register()
    registered = {(e.event.resource, e.event.action) for e in events}
    assert registered == {
        (EventResource.ASSIGNED_POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT),
        # A namespace created or relabelled may come under a term's namespaceSelector.
        (EventResource.NAMESPACE, ActionType.ADD | ActionType.UPDATE),
    }
    assert all(e.hint is not None for e in events)


# A pending pod that wants to be near a cache and away from databases, in the same zone.
PENDING = pod("pending", spec=spec(required=[term("app", "In", ["cache"], "zone")],
                                   anti=[term("app", "In", ["db"], "zone")]), labels={"app": "web"})
# A pending pod with self-affinity (its group's pods attract each other).
SELF_AFFINE = pod("self", spec=spec(required=[term("app", "In", ["web"], "zone")]), labels={"app": "web"})
# A pending pod of tenant a, and a placed pod whose anti-affinity refuses web pods of its own tenant.
TENANT_A = pod(name="tenant-a", labels={"app": "web", "tenant": "a"})


def bound(labels: dict, node_name: str = "n1", **terms: Any) -> objects_pb2.Pod:
    return pod(spec=spec(**terms), name="other", labels=labels, node_name=node_name)


REFUSES_OWN_TENANT = {"anti": [term("app", "In", ["web"], "zone", matchLabelKeys=["tenant"])]}

POD_HINTS = [
    ("added pod matches the affinity", PENDING, None, bound({"app": "cache"}), QueueingHint.QUEUE),
    ("added pod matches nothing", PENDING, None, bound({"app": "other"}), QueueingHint.SKIP),
    ("added pod is not scheduled", PENDING, None, bound({"app": "cache"}, node_name=""), QueueingHint.SKIP),
    ("label update makes the pod match the affinity", PENDING, bound({"app": "other"}),
     bound({"app": "cache"}),
     QueueingHint.QUEUE),
    ("label update stops the pod matching the anti-affinity", PENDING, bound({"app": "db"}),
     bound({"app": "other"}), QueueingHint.QUEUE),
    ("label update unrelated to the terms", PENDING, bound({"app": "x"}), bound({"app": "y"}),
     QueueingHint.SKIP),
    ("label update stops the updated pod's anti-affinity refusing the pending pod", TENANT_A,
     bound({"tenant": "a"}, **REFUSES_OWN_TENANT), bound({"tenant": "b"}, **REFUSES_OWN_TENANT),
     QueueingHint.QUEUE),
    ("deleted pod matched the anti-affinity", PENDING, bound({"app": "db"}), None, QueueingHint.QUEUE),
    ("deleted pod matched nothing", PENDING, bound({"app": "other"}), None, QueueingHint.SKIP),
    ("deleted pod's own anti-affinity refused the pending pod", TENANT_A,
     bound({"tenant": "a"}, **REFUSES_OWN_TENANT), None, QueueingHint.QUEUE),
    ("deleted pod was a peer of a self-affine pod (the first-pod rule may now apply)", SELF_AFFINE,
     bound({"app": "web"}), None, QueueingHint.QUEUE),
    ("deleted pod matched the affinity of a pod that does not match its own terms", PENDING,
     bound({"app": "cache"}), None, QueueingHint.SKIP),
]


@pytest.mark.parametrize(
    ("pending", "old", "new", "want"), [c[1:] for c in POD_HINTS], ids=[c[0] for c in POD_HINTS]
)
def test_pod_change_hint(pending: objects_pb2.Pod, old: Any, new: Any, want: QueueingHint) -> None:
    assert pod_change_hint(pending, old, new, NamespaceLabels()) is want


TAINTED = [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]
NODE_HINTS = [
    ("added node has the topology key", PENDING, None, node("n", labels={"zone": "z"}), QueueingHint.QUEUE),
    ("added node lacks the topology keys", PENDING, None, node("n", labels={"region": "r"}),
     QueueingHint.SKIP),
    ("zone changed", PENDING, node("n", labels={"zone": "z1"}), node("n", labels={"zone": "z2"}),
     QueueingHint.QUEUE),
    ("zone label removed", PENDING, node("n", labels={"zone": "z1"}), node("n"), QueueingHint.QUEUE),
    ("unrelated label changed", PENDING, node("n", labels={"zone": "z1", "a": "1"}),
     node("n", labels={"zone": "z1", "a": "2"}), QueueingHint.SKIP),
    ("taint removed from a node with the topology key", PENDING,
     node("n", labels={"zone": "z1"}, taints=TAINTED),
     node("n", labels={"zone": "z1"}), QueueingHint.QUEUE),
    ("pending pod without terms (refused by existing pods)", TENANT_A, None, node("n"), QueueingHint.QUEUE),
]


@pytest.mark.parametrize(
    ("pending", "old", "new", "want"), [c[1:] for c in NODE_HINTS], ids=[c[0] for c in NODE_HINTS]
)
def test_node_change_hint(pending: objects_pb2.Pod, old: Any, new: Any, want: QueueingHint) -> None:
    assert node_change_hint(pending, old, new) is want
