"""ResourceQuota: validation as kube-apiserver validates it (for the resources and scopes podsched
counts), the immutable scopes, which pods a quota's PriorityClass scopes count (kube's pod evaluator),
and how scopes and amounts are printed."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.api import objects_pb2
from cluster.api.quota import (
    LIMITED_SCOPES,
    counts_pod,
    first_refused,
    format_amounts,
    format_requirements,
    in_scope,
    scope_requirements,
)
from cluster.api.validation import validate_object, validate_update
from cluster.apiserver.registry.priorityclasses import SYSTEM_CLUSTER_CRITICAL, SYSTEM_NODE_CRITICAL
from tests import builders


def quota(spec: dict[str, Any], status: dict[str, Any] | None = None) -> objects_pb2.ResourceQuota:
    return builders.resource_quota("q", "team", spec=spec, status=status or {})


def expression(operator: str, *values: str, scope: str = "PriorityClass") -> dict[str, Any]:
    return {"scopeName": scope, "operator": operator, "values": list(values)}


def selector(*expressions: dict[str, Any]) -> dict[str, Any]:
    return {"scopeSelector": {"matchExpressions": list(expressions)}}


@pytest.mark.parametrize(
    "spec",
    [
        {"hard": {"pods": "10"}},
        {"hard": {"pods": "0", "count/pods": "3"}},
        {"hard": {"pods": "1k"}},
        {"hard": {"pods": "5"}, "scopes": ["PriorityClass"]},
        {"hard": {"pods": "5"}, **selector(expression("In", "high", "low"))},
        {"hard": {"pods": "5"}, **selector(expression("NotIn", "high"), expression("Exists"))},
        {"hard": {"pods": "5"}, **selector(expression("DoesNotExist"))},
        {},
    ],
    ids=["pods", "zero-and-count", "suffix", "scopes", "in", "notin-and-exists", "does-not-exist", "empty"],
)
def test_valid_quotas(spec: dict[str, Any]) -> None:
    assert validate_object(quota(spec)) == []


@pytest.mark.parametrize(
    ("spec", "status", "expected"),
    [
        ({"hard": {"requests.cpu": "2"}}, None,
         'spec.hard[requests.cpu]: Unsupported value: "requests.cpu": '
         'supported values: "pods", "count/pods"'),
        ({"hard": {"pods": "many"}}, None, 'spec.hard[pods]: Invalid value: "many": '),
        ({"hard": {"pods": "-1"}}, None,
         'spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0'),
        ({"hard": {"pods": "1500m"}}, None, 'spec.hard[pods]: Invalid value: "1500m": must be an integer'),
        ({"scopes": ["BestEffort"]}, None,
         'spec.scopes[0]: Unsupported value: "BestEffort": supported values: "PriorityClass"'),
        ({"scopes": ["PriorityClass", "PriorityClass"]}, None,
         'spec.scopes[1]: Duplicate value: "PriorityClass"'),
        (selector(expression("In", "high", scope="Terminating")), None,
         'spec.scopeSelector.matchExpressions[0].scopeName: Unsupported value: "Terminating": '
         'supported values: "PriorityClass"'),
        (selector(expression("Equals", "high")), None,
         'spec.scopeSelector.matchExpressions[0].operator: Unsupported value: "Equals": '
         'supported values: "In", "NotIn", "Exists", "DoesNotExist"'),
        (selector(expression("In")), None,
         "spec.scopeSelector.matchExpressions[0].values: Required value: must be at least one value when "
         "`operator` is 'In' or 'NotIn' for scope selector"),
        (selector(expression("Exists"), expression("NotIn")), None,
         "spec.scopeSelector.matchExpressions[1].values: Required value: must be at least one value when "),
        (selector(expression("DoesNotExist", "high")), None,
         "spec.scopeSelector.matchExpressions[0].values: Invalid value: \"[high]\": must be no value when "
         "`operator` is 'Exist' or 'DoesNotExist' for scope selector"),
        ({"hard": {"pods": "2"}}, {"used": {"pods": "-3"}},
         'status.used[pods]: Invalid value: "-3": must be greater than or equal to 0'),
        ({"hard": {"pods": "2"}}, {"hard": {"services": "2"}},
         'status.hard[services]: Unsupported value: "services": supported values: "pods", "count/pods"'),
    ],
    ids=[
        "compute-resource", "not-a-quantity", "negative", "fraction", "unsupported-scope", "duplicate-scope",
        "selector-scope-name", "selector-operator", "in-without-values", "notin-without-values",
        "does-not-exist-with-values", "negative-used", "unsupported-status-resource",
    ],
)
def test_invalid_quotas(spec: dict[str, Any], status: dict[str, Any] | None, expected: str) -> None:
    problems = validate_object(quota(spec, status))
    assert any(problem.startswith(expected) for problem in problems), problems


def test_scopes_and_scope_selector_are_immutable_and_hard_is_not() -> None:
    old = quota({"hard": {"pods": "2"}, "scopes": ["PriorityClass"], **selector(expression("In", "high"))})
    assert validate_update(old, quota({"hard": {"pods": "9"}, "scopes": ["PriorityClass"],
                                       **selector(expression("In", "high"))})) == []
    changed = quota({"hard": {"pods": "2"}, **selector(expression("In", "high", "low"))})
    assert validate_update(old, changed) == [
        'spec.scopes: Invalid value: "[]": field is immutable',
        'spec.scopeSelector: Invalid value: "[{PriorityClass In [high low]}]": field is immutable',
    ]


def pod(priority_class: str = "", namespace: str = "team") -> objects_pb2.Pod:
    return builders.pod("p", namespace, priority_class=priority_class)


def group(priority_class: str = "", namespace: str = "team") -> objects_pb2.PodGroup:
    return builders.pod_group("g", namespace, spec={}, priority_class=priority_class)


@pytest.mark.parametrize(
    ("spec", "counted"),
    [
        ({}, {"", "high", "low"}),
        (selector(expression("In", "high", "mid")), {"high"}),
        (selector(expression("NotIn", "high")), {"", "low"}),
        (selector(expression("Exists")), {"high", "low"}),
        ({"scopes": ["PriorityClass"]}, {"high", "low"}),
        (selector(expression("DoesNotExist")), {""}),
        (selector(expression("Exists"), expression("NotIn", "low")), {"high"}),
    ],
    ids=[
        "no-scope", "in", "notin-counts-classless", "exists", "scopes-mean-exists", "does-not-exist", "all-of"
    ],
)
def test_which_pods_a_priority_class_scope_counts(spec: dict[str, Any], counted: set[str]) -> None:
    limiting = quota(spec)
    assert {name for name in ("", "high", "low") if counts_pod(limiting, pod(name))} == counted


def test_a_quota_counts_only_pods_of_its_namespace() -> None:
    assert not counts_pod(quota({}), pod("high", namespace="other"))


def test_scopes_and_amounts_print_as_kube_apiserver_prints_them() -> None:
    limiting = quota({"scopes": ["PriorityClass"],
                      **selector(expression("In", "system-node-critical", "system-cluster-critical"))})
    assert format_requirements(scope_requirements(limiting)) == (
        "[{PriorityClass Exists []} {PriorityClass In [system-node-critical system-cluster-critical]}]"
    )
    assert format_amounts({"pods": 1, "count/pods": 2}) == "count/pods=2,pods=1"


def test_the_limited_scopes_name_the_servers_system_classes() -> None:
    (scope,) = LIMITED_SCOPES
    assert (scope.scope_name, scope.operator) == ("PriorityClass", "In")
    assert set(scope.values) == {SYSTEM_NODE_CRITICAL, SYSTEM_CLUSTER_CRITICAL}


def counted(
    name: str, hard: int, used: int, *classes: str, namespace: str = "team"
) -> objects_pb2.ResourceQuota:
    """A quota as stored: ``hard`` pods, ``used`` counted, scoped to ``classes`` when given."""
    made = quota(selector(expression("In", *classes)) if classes else {},
                 {"hard": {"pods": str(hard)}, "used": {"pods": str(used)}})
    made.metadata.name, made.metadata.namespace = name, namespace
    made.spec.hard["pods"] = str(hard)
    return made


CRITICAL = "system-node-critical"
EXCEEDED_TWO = "exceeded quota: two, requested: pods=1, used: pods=2, limited: pods=2"
NOT_OPENED = (
    "insufficient quota to match these scopes: "
    "[{PriorityClass In [system-node-critical system-cluster-critical]}]"
)


@pytest.mark.parametrize(
    ("pods", "quotas", "expected"),
    [
        ([pod(), pod()], [counted("two", 2, 0)], None),
        ([pod(), pod(), pod()], [counted("two", 2, 0)], (2, EXCEEDED_TWO)),
        ([pod(), pod()], [counted("two", 2, 1)], (1, EXCEEDED_TWO)),
        # Pods of another namespace, or outside the quota's scopes, do not count.
        ([pod(), pod(namespace="other"), pod()], [counted("two", 2, 0)], None),
        ([pod("low"), pod("low"), pod("high")], [counted("one", 1, 0, "high")], None),
        ([pod("high"), pod("high")], [counted("one", 1, 0, "high")],
         (1, "exceeded quota: one, requested: pods=1, used: pods=1, limited: pods=1")),
        # The first quota of several to refuse is named; a refused pod is charged to none.
        ([pod(), pod()], [counted("two", 2, 0), counted("tight", 1, 0)],
         (1, "exceeded quota: tight, requested: pods=1, used: pods=1, limited: pods=1")),
        # A quota whose usage is unknown is left to the server.
        ([pod(), pod()], [quota({"hard": {"pods": "1"}}, {"hard": {"pods": "1"}})], None),
        # A system class needs a quota that opens it, in the pod's namespace.
        ([pod(CRITICAL)], [counted("open", 5, 0, CRITICAL)], None),
        ([pod(CRITICAL)], [counted("other", 5, 0, "system-cluster-critical")],
         (0, NOT_OPENED)),
        ([pod(), pod(CRITICAL)], [counted("open", 5, 0, CRITICAL, namespace="elsewhere")],
         (1, NOT_OPENED)),
        # A PodGroup uses no quota, but its system class needs a quota that opens it, as a pod's does.
        ([group(), group(), pod()], [counted("one", 1, 0)], None),
        ([group(CRITICAL), pod(CRITICAL)], [counted("open", 1, 0, CRITICAL)], None),
        ([group(CRITICAL)], [counted("other", 5, 0, "system-cluster-critical")], (0, NOT_OPENED)),
        ([pod(), group(CRITICAL)], [counted("open", 5, 0, CRITICAL, namespace="elsewhere")],
         (1, NOT_OPENED)),
    ],
    ids=["fits", "third-over", "used-counts", "other-namespace", "out-of-scope", "in-scope", "two-quotas",
         "unknown-usage", "system-class-opened", "system-class-not-opened", "system-class-opened-elsewhere",
         "groups-not-charged", "group-system-class-opened", "group-system-class-not-opened",
         "group-system-class-opened-elsewhere"],
)
def test_first_refused_counts_the_pods_in_order(
    pods: list[objects_pb2.Pod | objects_pb2.PodGroup], quotas: list[objects_pb2.ResourceQuota],
    expected: tuple[int, str] | None,
) -> None:
    before = [q.SerializeToString(deterministic=True) for q in quotas]
    assert first_refused(pods, quotas) == expected
    assert [q.SerializeToString(deterministic=True) for q in quotas] == before  # the quotas are not changed


@pytest.mark.parametrize(("phase", "counted"), [("Pending", True), ("Running", True), ("Unknown", True),
                                                ("Succeeded", False), ("Failed", False)])
def test_a_finished_pod_is_counted_by_no_quota_but_stays_in_its_scope(phase: str, counted: bool) -> None:
    finished = pod(CRITICAL)
    finished.status.phase = phase
    assert counts_pod(quota({}), finished) is counted
    assert in_scope(quota({}), finished)
