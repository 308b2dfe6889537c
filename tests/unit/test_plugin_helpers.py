"""Shared plugin helpers: toleration matching, node selectors and affinity, score normalization."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import json_format

from cluster.api import objects_pb2
from scheduler.framework import NodeScore
from scheduler.plugins.helpers import (
    DO_NOT_SCHEDULE_EFFECTS,
    NodeSelector,
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
    default_normalize_score,
    default_normalize_values,
    find_untolerated_taint,
    node_matches_selector_terms,
    pod_matches_node_selector_and_affinity,
    tolerates,
)
from tests.builders import node, pod


def toleration(**kw: Any) -> objects_pb2.Toleration:
    return objects_pb2.Toleration(**kw)


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> objects_pb2.Taint:
    return objects_pb2.Taint(key=key, value=value, effect=effect)


# core/v1 toleration_test.go's cases.
@pytest.mark.parametrize(
    ("tol", "t", "expected"),
    [
        (toleration(key="foo", operator="Exists", effect="NoSchedule"), taint("foo", "bar"), True),
        (
            toleration(key="foo", operator="Equal", value="bar", effect="NoSchedule"),
            taint("foo", "bar"),
            True,
        ),
        (
            toleration(key="foo", operator="Equal", value="bar", effect="NoSchedule"),
            taint("foo", "baz"),
            False,
        ),
        (toleration(key="foo", operator="Exists"), taint("foo", "bar", "NoExecute"), True),
        (
            toleration(key="foo", operator="Exists", effect="NoSchedule"),
            taint("foo", "bar", "NoExecute"),
            False,
        ),
        (toleration(key="foo", value="bar", effect="NoSchedule"), taint("foo", "bar"), True),
        (toleration(key="foo", value="bar"), taint("foo", "baz"), False),
        (toleration(operator="Exists"), taint("anything", "x", "NoExecute"), True),
        (toleration(operator="Exists", effect="PreferNoSchedule"), taint("k", "v", "NoSchedule"), False),
        (toleration(key="other", operator="Exists"), taint("foo", "bar"), False),
        (toleration(key="foo", operator="Gt", value="1"), taint("foo", "2"), False),
    ],
    ids=[
        "exists-same-effect",
        "equal-same-value",
        "equal-other-value",
        "empty-effect-matches-all-effects",
        "effect-mismatch",
        "empty-operator-is-equal",
        "empty-operator-other-value",
        "empty-key-exists-tolerates-everything",
        "empty-key-exists-but-effect-mismatch",
        "other-key",
        "unknown-operator",
    ],
)
def test_tolerates(tol: objects_pb2.Toleration, t: objects_pb2.Taint, expected: bool) -> None:
    assert tolerates(tol, t) is expected


def test_find_untolerated_taint_considers_only_the_given_effects_and_returns_the_first() -> None:
    taints = [taint("soft", effect="PreferNoSchedule"), taint("a", "1"), taint("b", "2", "NoExecute")]
    tolerations = [toleration(key="a", operator="Exists")]
    found = find_untolerated_taint(taints, tolerations, DO_NOT_SCHEDULE_EFFECTS)
    assert found is not None and found.key == "b"
    found = find_untolerated_taint(taints, tolerations)
    assert found is not None and found.key == "soft"
    assert find_untolerated_taint(taints, [toleration(operator="Exists")]) is None


def terms(*term_dicts: dict[str, Any]) -> list[objects_pb2.NodeSelectorTerm]:
    return [json_format.ParseDict(t, objects_pb2.NodeSelectorTerm()) for t in term_dicts]


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


NODE = node("node-1", labels={"zone": "a", "gpus": "4", "disk": "ssd"})


@pytest.mark.parametrize(
    ("selector_terms", "expected"),
    [
        ([{"matchExpressions": [expr("zone", "In", "a", "b")]}], True),
        ([{"matchExpressions": [expr("zone", "In", "b")]}], False),
        ([{"matchExpressions": [expr("zone", "NotIn", "b")]}], True),
        ([{"matchExpressions": [expr("missing", "NotIn", "b")]}], True),
        ([{"matchExpressions": [expr("zone", "NotIn", "a")]}], False),
        ([{"matchExpressions": [expr("disk", "Exists")]}], True),
        ([{"matchExpressions": [expr("missing", "Exists")]}], False),
        ([{"matchExpressions": [expr("missing", "DoesNotExist")]}], True),
        ([{"matchExpressions": [expr("disk", "DoesNotExist")]}], False),
        ([{"matchExpressions": [expr("gpus", "Gt", "3")]}], True),
        ([{"matchExpressions": [expr("gpus", "Gt", "4")]}], False),
        ([{"matchExpressions": [expr("gpus", "Lt", "5")]}], True),
        ([{"matchExpressions": [expr("zone", "Lt", "5")]}], False),
        ([{"matchExpressions": [expr("missing", "Gt", "0")]}], False),
        ([{"matchExpressions": [expr("zone", "In", "a"), expr("disk", "In", "hdd")]}], False),
        (
            [
                {"matchExpressions": [expr("zone", "In", "b")]},
                {"matchExpressions": [expr("disk", "In", "ssd")]},
            ],
            True,
        ),
        ([{"matchFields": [expr("metadata.name", "In", "node-1")]}], True),
        ([{"matchFields": [expr("metadata.name", "In", "node-2")]}], False),
        ([{"matchFields": [expr("metadata.name", "NotIn", "node-2")]}], True),
        (
            [
                {
                    "matchExpressions": [expr("zone", "In", "a")],
                    "matchFields": [expr("metadata.name", "In", "x")],
                }
            ],
            False,
        ),
        ([{}], False),
        ([], False),
        ([{"matchExpressions": [expr("zone", "Foo", "a")]}], False),
        ([{"matchExpressions": [expr("gpus", "Gt", "x")]}], False),
        ([{"matchFields": [expr("metadata.name", "In", "node-1", "node-2")]}], False),
        (
            [
                {"matchExpressions": [expr("zone", "Gt", "1", "2")]},
                {"matchExpressions": [expr("zone", "In", "a")]},
            ],
            True,
        ),
    ],
    ids=[
        "in",
        "in-no-match",
        "notin",
        "notin-missing-label",
        "notin-no-match",
        "exists",
        "exists-missing",
        "doesnotexist",
        "doesnotexist-present",
        "gt",
        "gt-equal-is-not-greater",
        "lt",
        "lt-non-integer-label",
        "gt-missing-label",
        "expressions-are-anded",
        "terms-are-ored",
        "matchfields-name-in",
        "matchfields-name-in-other",
        "matchfields-name-notin",
        "expressions-and-fields-anded",
        "empty-term-matches-nothing",
        "no-terms-match-nothing",
        "bad-operator-term-never-matches",
        "gt-non-integer-value-never-matches",
        "matchfields-needs-one-value",
        "a-bad-term-does-not-spoil-the-others",
    ],
)
def test_node_matches_selector_terms(selector_terms: list[dict[str, Any]], expected: bool) -> None:
    assert node_matches_selector_terms(NODE, terms(*selector_terms)) is expected


def test_strict_node_selector_names_every_bad_field() -> None:
    selector = json_format.ParseDict(
        {
            "nodeSelectorTerms": [
                {"matchExpressions": [expr("zone", "Foo", "a")]},
                {
                    "matchExpressions": [expr("gpus", "Gt", "x")],
                    "matchFields": [expr("metadata.name", "Exists")],
                },
            ]
        },
        objects_pb2.NodeSelector(),
    )
    with pytest.raises(ValueError) as info:
        NodeSelector.from_proto(
            selector, "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution", strict=True
        )
    message = str(info.value)
    base = "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    assert f'{base}[0].matchExpressions[0].operator: Unsupported value: "Foo"' in message
    assert f'{base}[1].matchExpressions[0].values[0]: Invalid value: "x"' in message
    assert f'{base}[1].matchFields[0].operator: Unsupported value: "Exists"' in message


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, True),
        ({"nodeSelector": {"zone": "a"}}, True),
        ({"nodeSelector": {"zone": "a", "disk": "hdd"}}, False),
        (
            {
                "nodeSelector": {"zone": "a"},
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": [expr("disk", "In", "hdd")]}]
                        }
                    }
                },
            },
            False,
        ),
        (
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": [expr("disk", "In", "ssd")]}]
                        }
                    }
                },
            },
            True,
        ),
        ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}}, False),
    ],
    ids=[
        "nothing-required",
        "node-selector-matches",
        "node-selector-all-keys-needed",
        "selector-and-affinity-both-needed",
        "affinity-matches",
        "affinity-without-terms-matches-nothing",
    ],
)
def test_pod_matches_node_selector_and_affinity(spec: dict[str, Any], expected: bool) -> None:
    p = pod(spec=spec)
    assert pod_matches_node_selector_and_affinity(p, NODE) is expected
    assert RequiredNodeAffinity.from_pod(p).matches(NODE) is expected


def test_preferred_terms_sum_weights_of_matching_terms_skipping_zero_weight_and_empty_terms() -> None:
    preferred = [
        json_format.ParseDict(t, objects_pb2.PreferredSchedulingTerm())
        for t in [
            {"weight": 5, "preference": {"matchExpressions": [expr("zone", "In", "a")]}},
            {"weight": 3, "preference": {"matchExpressions": [expr("disk", "In", "ssd")]}},
            {"weight": 7, "preference": {"matchExpressions": [expr("disk", "In", "hdd")]}},
            {"weight": 0, "preference": {"matchExpressions": [expr("zone", "In", "a")]}},
            {"weight": 9, "preference": {}},
        ]
    ]
    parsed = PreferredSchedulingTerms.from_proto(preferred)
    assert len(parsed.terms) == 3
    assert parsed.score(NODE) == 8
    assert parsed.score(node("bare")) == 0


def test_preferred_terms_reject_a_bad_term() -> None:
    bad = json_format.ParseDict(
        {"weight": 1, "preference": {"matchExpressions": [expr("zone", "In")]}},
        objects_pb2.PreferredSchedulingTerm(),
    )
    with pytest.raises(
        ValueError, match=r"addedAffinity\.preferred\[0\]\.preference\.matchExpressions\[0\]\.values"
    ):
        PreferredSchedulingTerms.from_proto([bad], "addedAffinity.preferred")


# helper/normalize_score_test.go's cases.
@pytest.mark.parametrize(
    ("raw", "reverse", "expected"),
    [
        ([10, 20, 30], False, [33, 66, 100]),
        ([10, 20, 30], True, [67, 34, 0]),
        ([0, 0, 0], False, [0, 0, 0]),
        ([0, 0, 0], True, [100, 100, 100]),
        ([1000, 10, 20, 30], False, [100, 1, 2, 3]),
        ([1000, 10, 20, 30], True, [0, 99, 98, 97]),
        ([], True, []),
    ],
    ids=["scale", "scale-reverse", "zeros", "zeros-reverse", "one-large", "one-large-reverse", "empty"],
)
def test_default_normalize_score(raw: list[int], reverse: bool, expected: list[int]) -> None:
    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    default_normalize_score(scores, reverse=reverse)
    assert [s.score for s in scores] == expected
    assert [s.name for s in scores] == [f"n{i}" for i in range(len(raw))]
    values = list(raw)
    default_normalize_values(values, reverse=reverse)
    assert values == expected
