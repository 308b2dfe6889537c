"""RuntimeClass admission on a pod (cluster/api/runtimeclass.py), rows from kube-apiserver's
plugin/pkg/admission/runtimeclass/admission_test.go (TestSetOverhead, TestSetScheduling, TestValidate)
and the toleration merge of pkg/util/tolerations (MergeTolerations)."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.api import objects_pb2
from cluster.api.runtimeclass import (
    OVERHEAD_MISMATCH,
    OVERHEAD_WITHOUT_CLASS,
    Refusal,
    apply_runtime_class,
    merge_tolerations,
)
from tests import builders

OVERHEAD = {"cpu": "100m", "memory": "1"}
GUARANTEED = {"cpu": "1", "memory": "10"}


def pod(*, overhead: dict[str, str] | None = None, requests: dict[str, str] | None = None,
        node_selector: dict[str, str] | None = None,
        tolerations: list[dict[str, Any]] | None = None) -> objects_pb2.Pod:
    app: dict[str, Any] = {"name": "foo-0", "image": "foo:V0"}
    if requests:
        app["resources"] = {"requests": requests, "limits": requests}
    spec = {"runtimeClassName": "foo", "containers": [app], "overhead": overhead or {},
            "nodeSelector": node_selector or {}, "tolerations": tolerations or []}
    return builders.pod("p", "test", spec=spec)


def runtime_class(*, overhead: dict[str, str] | None = None, node_selector: dict[str, str] | None = None,
                  tolerations: list[dict[str, Any]] | None = None) -> objects_pb2.RuntimeClass:
    return builders.runtime_class("foo", "bar", overhead=overhead, node_selector=node_selector,
                                  tolerations=tolerations or ())


FOO_BAR = {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}
FIZZ_BUZZ = {"key": "fizz", "operator": "Equal", "value": "buzz", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("given", "rc", "refusal", "expected"),
    [
        # TestSetOverhead
        (pod(), runtime_class(overhead=OVERHEAD), None, pod(overhead=OVERHEAD)),
        (pod(requests=GUARANTEED), runtime_class(overhead=OVERHEAD), None,
         pod(requests=GUARANTEED, overhead=OVERHEAD)),
        (pod(overhead=OVERHEAD), runtime_class(overhead={"cpu": "10", "memory": "10G"}),
         Refusal("spec.overhead", OVERHEAD_MISMATCH), None),
        (pod(overhead=OVERHEAD), runtime_class(overhead=OVERHEAD), None, pod(overhead=OVERHEAD)),
        # Quantities compare by value, as upstream's semantic equality does.
        (pod(overhead={"cpu": "0.1", "memory": "1"}), runtime_class(overhead=OVERHEAD), None,
         pod(overhead=OVERHEAD)),
        (pod(overhead={"cpu": "100m"}), runtime_class(overhead=OVERHEAD),
         Refusal("spec.overhead", OVERHEAD_MISMATCH), None),
        # TestValidate: an overhead without a class overhead.
        (pod(requests=GUARANTEED, overhead=OVERHEAD), runtime_class(),
         Refusal("spec.overhead", OVERHEAD_WITHOUT_CLASS), None),
        (pod(overhead=OVERHEAD), None, Refusal("spec.overhead", OVERHEAD_WITHOUT_CLASS), None),
        (pod(), None, None, pod()),
        # TestSetScheduling
        (pod(node_selector={"foo": "bar"}), runtime_class(), None, pod(node_selector={"foo": "bar"})),
        (pod(node_selector={"foo": "bar"}), runtime_class(node_selector={"foo": "conflict"}),
         Refusal("spec.nodeSelector", "conflict: runtimeClass.scheduling.nodeSelector[foo] = conflict; "
                 "pod.spec.nodeSelector[foo] = bar"), None),
        (pod(), runtime_class(node_selector={"foo": "bar"}), None, pod(node_selector={"foo": "bar"})),
        (pod(node_selector={"foo": "bar"}), runtime_class(node_selector={"foo": "bar"}), None,
         pod(node_selector={"foo": "bar"})),
        (pod(node_selector={"foo": "bar"}), runtime_class(node_selector={"foo": "bar", "fizz": "buzz"}), None,
         pod(node_selector={"foo": "bar", "fizz": "buzz"})),
        (pod(node_selector={"foo": "bar"}, tolerations=[FOO_BAR]),
         runtime_class(tolerations=[FOO_BAR, FIZZ_BUZZ]), None,
         pod(node_selector={"foo": "bar"}, tolerations=[FOO_BAR, FIZZ_BUZZ])),
        # Nothing is half-applied: a conflict refuses before the overhead is set.
        (pod(node_selector={"foo": "bar"}),
         runtime_class(overhead=OVERHEAD, node_selector={"foo": "x"}, tolerations=[FIZZ_BUZZ]),
         Refusal("spec.nodeSelector", "conflict: runtimeClass.scheduling.nodeSelector[foo] = x; "
                 "pod.spec.nodeSelector[foo] = bar"), None),
    ],
    ids=[
        "overhead-no-container-requirements", "overhead-guaranteed-pod", "overhead-differing-already-set",
        "overhead-same-already-set", "overhead-same-value-other-spelling", "overhead-missing-resource",
        "class-without-overhead-pod-with", "no-class-pod-with-overhead", "no-class-no-overhead",
        "scheduling-none", "node-selector-conflict", "node-selector-into-empty", "node-selector-same-pair",
        "node-selector-merged", "tolerations-merged", "conflict-changes-nothing",
    ],
)
def test_apply_runtime_class(
    given: objects_pb2.Pod, rc: objects_pb2.RuntimeClass | None, refusal: Refusal | None,
    expected: objects_pb2.Pod | None,
) -> None:
    before = objects_pb2.Pod()
    before.CopyFrom(given)
    assert apply_runtime_class(given, rc) == refusal
    assert given == (expected if refusal is None else before)


def tol(key: str = "", operator: str = "", value: str = "", effect: str = "",
        seconds: int | None = None) -> objects_pb2.Toleration:
    made = objects_pb2.Toleration(key=key, operator=operator, value=value, effect=effect)
    if seconds is not None:
        made.toleration_seconds = seconds
    return made


@pytest.mark.parametrize(
    ("first", "second", "merged"),
    [
        ([], [], []),
        ([tol("a", "Equal", "1", "NoSchedule")], [], [tol("a", "Equal", "1", "NoSchedule")]),
        # The same toleration twice is kept once.
        ([tol("a", "Equal", "1", "NoSchedule")], [tol("a", "Equal", "1", "NoSchedule")],
         [tol("a", "Equal", "1", "NoSchedule")]),
        # Exists on a key covers every value of it; an empty effect covers every effect.
        ([tol("a", "Equal", "1", "NoSchedule")], [tol("a", "Exists")], [tol("a", "Exists")]),
        ([tol("a", "Exists", effect="NoSchedule"), tol("b", "Equal", "2", "NoExecute")],
         [tol(operator="Exists")], [tol(operator="Exists")]),
        # A different value or key is another toleration.
        ([tol("a", "Equal", "1", "NoSchedule")], [tol("a", "Equal", "2", "NoSchedule")],
         [tol("a", "Equal", "1", "NoSchedule"), tol("a", "Equal", "2", "NoSchedule")]),
        # NoExecute: a shorter tolerationSeconds does not cover a longer (or unbounded) one.
        ([tol("a", "Exists", effect="NoExecute", seconds=10)],
         [tol("a", "Exists", effect="NoExecute", seconds=5)],
         [tol("a", "Exists", effect="NoExecute", seconds=10)]),
        ([tol("a", "Exists", effect="NoExecute", seconds=5)],
         [tol("a", "Exists", effect="NoExecute")], [tol("a", "Exists", effect="NoExecute")]),
        # An empty operator is Equal: the two cover each other, and the later, spelled out, is kept.
        ([tol("a", "", "1", "NoSchedule")], [tol("a", "Equal", "1", "NoSchedule")],
         [tol("a", "Equal", "1", "NoSchedule")]),
    ],
    ids=["empty", "first-only", "equal", "exists-covers-value", "everything-covers", "other-value",
         "longer-seconds-wins", "unbounded-wins", "empty-operator-is-equal"],
)
def test_merge_tolerations(first: list[objects_pb2.Toleration], second: list[objects_pb2.Toleration],
                           merged: list[objects_pb2.Toleration]) -> None:
    assert merge_tolerations(first, second) == merged
