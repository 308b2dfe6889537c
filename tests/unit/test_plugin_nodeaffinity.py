"""NodeAffinity: nodeSelector and required affinity (Filter, PreFilter narrowing), preferred terms
(Score), the profile's addedAffinity, and the node-change hint."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from scheduler.config import ConfigError
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    FilterPlugin,
    PodInfo,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    ScorePlugin,
)
from scheduler.plugins import nodeaffinity
from tests.builders import PLUGIN_ARGS_PATH, node, node_info, plugin_args, pod
from tests.unit.framework_fakes import Snapshot, fake_handle
from tests.unit.plugin_util import run_score

POD_REASON = "node(s) didn't match Pod's node affinity/selector"
ENFORCED_REASON = "node(s) didn't match scheduler-enforced node affinity"


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def match(*expressions: dict[str, Any]) -> dict[str, Any]:
    """A nodeSelectorTerm of label expressions."""
    return {"matchExpressions": list(expressions)}


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
            }
        }
    }


def preferred(*weighted: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    terms = [{"weight": w, "preference": term} for w, term in weighted]
    return {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": terms}}}


def plugin(args: Mapping[str, Any] | None = None) -> Any:
    return nodeaffinity.new(plugin_args(nodeaffinity.NAME, args), fake_handle(Snapshot([])))


def filter_status(
    spec: dict[str, Any], labels: dict[str, str], *, name: str = "node1", args: Any = None
) -> Any:
    """PreFilter then Filter, as the framework runs them; a PreFilter rejection or SKIP is returned as is."""
    p = plugin(args)
    state = CycleState()
    pod_info = PodInfo(pod(spec=spec))
    info = node_info(node(name, labels=labels))
    result, status = p.pre_filter(state, pod_info, [info])
    if status is not None:
        return status
    if result is not None and result.node_names is not None and name not in result.node_names:
        return "narrowed-out"
    return p.filter(state, pod_info, info)


# node_affinity_test.go's TestNodeAffinity filter cases.
@pytest.mark.parametrize(
    ("spec", "labels", "fits"),
    [
        ({"nodeSelector": {"foo": "bar"}}, {}, False),
        ({"nodeSelector": {"foo": "bar"}}, {"foo": "bar"}, True),
        ({"nodeSelector": {"foo": "bar"}}, {"foo": "baz"}, False),
        ({"nodeSelector": {"foo": "bar", "baz": "qux"}}, {"foo": "bar"}, False),
        (required(match(expr("foo", "In", "bar", "value2"))), {"foo": "bar"}, True),
        (required(match(expr("kernel-version", "Gt", "0204"))), {"kernel-version": "0206"}, True),
        (required(match(expr("kernel-version", "Gt", "0204"))), {"kernel-version": "0204"}, False),
        (required(match(expr("mem-type", "NotIn", "DDR", "DDR2"))), {"mem-type": "DDR3"}, True),
        (required(match(expr("GPU", "Exists"))), {"GPU": "NVIDIA-GRID-K1"}, True),
        (required(match(expr("foo", "In", "value1", "value2"))), {"foo": "bar"}, False),
        (required(match(expr("foo", "DoesNotExist"))), {"foo": "bar"}, False),
        (required(match(expr("foo", "Lt", "10"))), {"foo": "9"}, True),
        (
            required({"matchExpressions": [expr("foo", "In", "bar"), expr("GPU", "Exists")]}),
            {"foo": "bar"},
            False,
        ),
        (
            required(
                {"matchExpressions": [expr("foo", "In", "bar")]},
                {"matchExpressions": [expr("GPU", "Exists")]},
            ),
            {"GPU": "yes"},
            True,
        ),
        (required({}), {"foo": "bar"}, False),
        (required(), {"foo": "bar"}, False),
        ({**required(match(expr("foo", "In", "bar"))), "nodeSelector": {"foo": "bar"}}, {"foo": "bar"}, True),
        (
            {**required(match(expr("foo", "In", "bar"))), "nodeSelector": {"foo": "baz"}},
            {"foo": "bar"},
            False,
        ),
        (required({"matchFields": [expr("metadata.name", "In", "node1")]}), {}, True),
        (required({"matchFields": [expr("metadata.name", "NotIn", "node1")]}), {}, False),
        (
            required(
                {
                    "matchFields": [expr("metadata.name", "In", "node1")],
                    "matchExpressions": [expr("foo", "In", "bar")],
                }
            ),
            {"foo": "baz"},
            False,
        ),
    ],
    ids=[
        "selector-missing-label",
        "selector-matches",
        "selector-other-value",
        "selector-needs-all-labels",
        "affinity-in",
        "affinity-gt",
        "affinity-gt-equal",
        "affinity-notin",
        "affinity-exists",
        "affinity-in-no-match",
        "affinity-doesnotexist-present",
        "affinity-lt",
        "expressions-anded",
        "terms-ored",
        "empty-term-matches-nothing",
        "no-terms-matches-nothing",
        "selector-and-affinity-both-match",
        "selector-fails-affinity-matches",
        "matchfields-name",
        "matchfields-notin",
        "fields-and-expressions-anded",
    ],
)
def test_filter(spec: dict[str, Any], labels: dict[str, str], fits: bool) -> None:
    status = filter_status(spec, labels)
    if fits:
        assert status is None
    else:
        assert status is not None and status != "narrowed-out"
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == (POD_REASON,)


def name_in(*names: str) -> dict[str, Any]:
    return expr("metadata.name", "In", *names)


# node_affinity_test.go's PreFilter expectations.
@pytest.mark.parametrize(
    ("spec", "result", "code"),
    [
        ({}, None, Code.SKIP),
        ({"nodeSelector": {"foo": "bar"}}, None, None),
        (required(match(expr("foo", "In", "bar"))), None, None),
        (required({"matchFields": [name_in("node1")]}), {"node1"}, None),
        (
            required({"matchFields": [name_in("node1")]}, {"matchFields": [name_in("node2")]}),
            {"node1", "node2"},
            None,
        ),
        (
            required(
                {"matchFields": [name_in("node1", "node2")]}, {"matchExpressions": [expr("foo", "In", "bar")]}
            ),
            None,
            None,
        ),
        (required({"matchFields": [name_in("node1", "node2"), name_in("node2", "node3")]}), {"node2"}, None),
        (
            required({"matchFields": [name_in("node1"), name_in("node2")]}),
            None,
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ),
        (required({"matchFields": [expr("metadata.name", "NotIn", "node1")]}), None, None),
    ],
    ids=[
        "nothing-to-filter-skips",
        "selector-only",
        "no-node-names",
        "one-name",
        "terms-union",
        "a-term-without-names-disables-narrowing",
        "expressions-intersect",
        "conflicting-names",
        "notin-does-not-narrow",
    ],
)
def test_pre_filter(spec: dict[str, Any], result: set[str] | None, code: Code | None) -> None:
    p = plugin()
    assert isinstance(p, PreFilterPlugin) and isinstance(p, FilterPlugin)
    assert p.pre_filter_extensions() is None
    got, status = p.pre_filter(CycleState(), PodInfo(pod(spec=spec)), [])
    assert got == (PreFilterResult(frozenset(result)) if result is not None else None)
    if code is None:
        assert status is None
    else:
        assert status is not None and status.code is code
    if code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        assert status is not None and status.reasons == ("pod affinity terms conflict",)


def test_filter_falls_back_when_pre_filter_did_not_run() -> None:
    p = plugin()
    info = node_info(node(labels={"foo": "bar"}))
    assert p.filter(CycleState(), PodInfo(pod(spec={"nodeSelector": {"foo": "bar"}})), info) is None
    status = p.filter(CycleState(), PodInfo(pod(spec={"nodeSelector": {"foo": "qux"}})), info)
    assert status is not None and status.reasons == (POD_REASON,)


ADDED_ZONE = {
    "addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [expr("zone", "In", "foo")]}]
        }
    }
}


# node_affinity_test.go's added-affinity cases.
@pytest.mark.parametrize(
    ("spec", "labels", "reason"),
    [
        ({}, {"zone": "foo"}, None),
        ({}, {"zone": "bar"}, ENFORCED_REASON),
        (required(match(expr("zone", "In", "foo"))), {"zone": "foo"}, None),
        (required(match(expr("zone", "In", "bar"))), {"zone": "foo"}, POD_REASON),
        (required(match(expr("zone", "In", "bar"))), {"zone": "bar"}, ENFORCED_REASON),
    ],
    ids=["matches-added", "fails-added", "matches-both", "fails-pod", "fails-added-first"],
)
def test_added_affinity_filter(spec: dict[str, Any], labels: dict[str, str], reason: str | None) -> None:
    status = filter_status(spec, labels, args=ADDED_ZONE)
    if reason is None:
        assert status is None
    else:
        assert status is not None and status.reasons == (reason,)
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE


FOO = {"matchExpressions": [expr("foo", "In", "bar")]}
KEY = {"matchExpressions": [expr("key", "In", "value")]}
ALL_THREE = {
    "matchExpressions": [expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1")]
}
LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}


# node_affinity_test.go's TestNodeAffinityPriority: the sum of the matching terms' weights, then
# DefaultNormalizeScore (score * 100 / max, truncated).
@pytest.mark.parametrize(
    ("spec", "node_labels", "expected", "args"),
    [
        (preferred((2, FOO)), [LABEL1, LABEL2, LABEL3], [100, 0, 0], None),
        (preferred((2, FOO), (4, KEY), (5, ALL_THREE)), [LABEL1, LABEL5, LABEL2], [18, 100, 36], None),
        (preferred((2, FOO)), [{}, {}], [0, 0], None),
        (preferred((0, FOO), (3, KEY)), [LABEL1, LABEL2], [0, 100], None),
        (
            preferred((2, FOO)),
            [LABEL1, LABEL2, LABEL5],
            [40, 60, 100],
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 3, "preference": KEY}]
                }
            },
        ),
        (
            {},
            [LABEL1, LABEL2],
            [0, 100],
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 3, "preference": KEY}]
                }
            },
        ),
    ],
    ids=[
        "one-term",
        "weights-summed",
        "nothing-matches",
        "zero-weight-ignored",
        "added-terms-add-up",
        "added-terms-alone",
    ],
)
def test_score(
    spec: dict[str, Any], node_labels: list[dict[str, str]], expected: list[int], args: Any
) -> None:
    p = plugin(args)
    assert isinstance(p, ScorePlugin)
    infos = [node_info(node(f"node{i}", labels=labels)) for i, labels in enumerate(node_labels)]
    assert run_score(p, pod(spec=spec), infos) == expected


def test_pre_score_skips_without_preferred_terms() -> None:
    the_pod = pod(spec=required(match(expr("foo", "In", "bar"))))
    status = plugin().pre_score(CycleState(), PodInfo(the_pod), [])
    assert status is not None and status.is_skip


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"addedAffinity": {"bogus": {}}}, f'{PLUGIN_ARGS_PATH}.addedAffinity: unknown field "bogus"'),
        ({"colour": "red"}, f'{PLUGIN_ARGS_PATH}: unknown field "colour"'),
        (
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [expr("zone", "Near", "a")]}]
                    }
                }
            },
            f"{PLUGIN_ARGS_PATH}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            '.matchExpressions[0].operator: Unsupported value: "Near"',
        ),
        (
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "preference": {"matchExpressions": [expr("zone", "Gt", "x")]}}
                    ]
                }
            },
            f"{PLUGIN_ARGS_PATH}.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference"
            '.matchExpressions[0].values[0]: Invalid value: "x"',
        ),
        (
            {"kind": "NodeResourcesFitArgs"},
            f'{PLUGIN_ARGS_PATH}.kind: Unsupported value: "NodeResourcesFitArgs": '
            'supported values: "NodeAffinityArgs"',
        ),
    ],
    ids=["unknown-nested-field", "unknown-field", "bad-operator", "bad-gt-value", "wrong-kind"],
)
def test_args_validation(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        plugin_args(nodeaffinity.NAME, data)
    assert message in str(info.value)


def test_args_defaults_and_typed_kind() -> None:
    none = plugin_args(nodeaffinity.NAME, {})
    assert none.added_required is None and none.added_preferred is None
    args = plugin_args(
        nodeaffinity.NAME,
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeAffinityArgs", **ADDED_ZONE},
    )
    assert args.added_required is not None
    assert len(args.added_required.terms) == 1
    assert args.added_required.matches_labels({"zone": "foo"}, "n1")
    assert not args.added_required.matches_labels({"zone": "bar"}, "n1")


def node_hint(args: Any = None) -> Any:
    (registered,) = plugin(args).events_to_register()
    assert ClusterEvent(EventResource.NODE, ActionType.ADD).matches(registered.event)
    assert ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL).matches(registered.event)
    assert not ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT).matches(registered.event)
    return registered.hint


# node_affinity_test.go's Test_isSchedulableAfterNodeChange.
@pytest.mark.parametrize(
    ("spec", "old", "new", "args", "expected"),
    [
        ({"nodeSelector": {"foo": "bar"}}, None, node(labels={"foo": "bar"}), None, QueueingHint.QUEUE),
        ({"nodeSelector": {"foo": "bar"}}, None, node(labels={"foo": "fuz"}), None, QueueingHint.SKIP),
        (
            {"nodeSelector": {"foo": "bar"}},
            node(labels={"foo": "fuz"}),
            node(labels={"foo": "bar"}),
            None,
            QueueingHint.QUEUE,
        ),
        (
            {"nodeSelector": {"foo": "bar"}},
            node(labels={"foo": "bar"}),
            node(labels={"foo": "bar", "x": "y"}),
            None,
            QueueingHint.SKIP,
        ),
        ({}, None, node(labels={"zone": "bar"}), ADDED_ZONE, QueueingHint.SKIP),
        ({}, None, node(labels={"zone": "foo"}), ADDED_ZONE, QueueingHint.QUEUE),
    ],
    ids=[
        "matching-node-added",
        "unmatched-node-added",
        "labels-now-match",
        "already-matched",
        "added-affinity-fails",
        "added-affinity-matches",
    ],
)
def test_node_change_hint(
    spec: dict[str, Any], old: Any, new: Any, args: Any, expected: QueueingHint
) -> None:
    assert node_hint(args)(pod(spec=spec), old, new) is expected
