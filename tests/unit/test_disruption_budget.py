"""The disruption controller's arithmetic (cluster.controllers.budget): IntOrString scaling with
Kubernetes' rounding, desiredHealthy / expectedPods for every kind of budget, which pods are healthy,
and the fail-safe status."""

from __future__ import annotations

import pytest
from google.protobuf import struct_pb2
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import objects_pb2
from cluster.controllers.budget import (
    DELETION_TIMEOUT_S,
    BudgetSpecError,
    budget_status,
    expected_and_desired,
    fail_safe_status,
    is_healthy,
    next_expiry,
    scaled_value,
)
from tests.builders import pod


def int_or_string(value: int | str | None) -> struct_pb2.Value:
    if isinstance(value, str):
        return struct_pb2.Value(string_value=value)
    if value is None:
        return struct_pb2.Value()
    return struct_pb2.Value(number_value=value)


def make_spec(min_available: int | str | None = None, max_unavailable: int | str | None = None
              ) -> objects_pb2.PodDisruptionBudgetSpec:
    spec = objects_pb2.PodDisruptionBudgetSpec()
    if min_available is not None:
        spec.min_available.CopyFrom(int_or_string(min_available))
    if max_unavailable is not None:
        spec.max_unavailable.CopyFrom(int_or_string(max_unavailable))
    return spec


def make_pod(
    name: str = "p", *, node: str = "n1", phase: str = "Running", deleting: bool = False,
    ready: str | None = None,
) -> objects_pb2.Pod:
    conditions = [{"type": "PodScheduled", "status": "True"}]
    if ready is not None:
        conditions.append({"type": "Ready", "status": ready})
    return pod(name, "ns", node_name=node, phase=phase, status={"conditions": conditions},
               deletion_timestamp=1_700_000_000 if deleting else None)


@pytest.mark.parametrize(
    ("value", "total", "expected"),
    [
        (3, 10, 3),
        (0, 10, 0),
        (12, 10, 12),
        ("50%", 10, 5),
        ("50%", 3, 2),
        ("33%", 10, 4),
        ("1%", 1, 1),
        ("1%", 0, 0),
        ("0%", 7, 0),
        ("100%", 7, 7),
        ("10%", 10_000, 1000),
        ("29%", 100, 29),
    ],
    ids=["int", "int-zero", "int-above-total", "half-even", "half-odd-rounds-up", "third-rounds-up",
         "tiny-share-rounds-up", "of-nothing", "zero-percent", "all", "large", "exact-no-float-drift"],
)
def test_scaled_value(value: int | str, total: int, expected: int) -> None:
    assert scaled_value(int_or_string(value), total, field="spec.minAvailable") == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (-1, r"^spec\.maxUnavailable: -1 is not an integer from 0 to 2147483647$"),
        (1.5, r"^spec\.maxUnavailable: 1\.5 is not an integer from 0 to 2147483647$"),
        (2**31, r"^spec\.maxUnavailable: 2147483648 is not an integer from 0 to 2147483647$"),
        ("50", r'^spec\.maxUnavailable: "50" is not an integer or a percentage like "50%"$'),
        ("x%", r'^spec\.maxUnavailable: "x%" is not an integer or a percentage like "50%"$'),
        ("-5%", r'^spec\.maxUnavailable: "-5%" is not an integer or a percentage like "50%"$'),
        (None, r"^spec\.maxUnavailable: an empty value is not an integer or a percentage$"),
    ],
    ids=["negative", "fraction", "beyond-int32", "string-without-percent", "non-numeric-percent",
         "negative-percent", "empty"],
)
def test_scaled_value_rejects(value: int | str | None, message: str) -> None:
    with pytest.raises(BudgetSpecError, match=message):
        scaled_value(int_or_string(value), 10, field="spec.maxUnavailable")


@pytest.mark.parametrize(
    ("spec", "matching", "expected", "desired"),
    [
        (make_spec(min_available=2), 5, 5, 2),
        (make_spec(min_available=7), 5, 5, 7),
        (make_spec(min_available=0), 5, 5, 0),
        (make_spec(min_available="50%"), 5, 5, 3),
        (make_spec(min_available="100%"), 4, 4, 4),
        (make_spec(max_unavailable=1), 5, 5, 4),
        (make_spec(max_unavailable=9), 5, 5, 0),
        (make_spec(max_unavailable="50%"), 5, 5, 2),
        (make_spec(max_unavailable="25%"), 10, 10, 7),
        (make_spec(max_unavailable="0%"), 3, 3, 3),
        (make_spec(min_available=1), 0, 0, 1),
        (make_spec(), 5, 0, 0),
    ],
    ids=["min-int", "min-int-above-pods", "min-zero", "min-percent-rounds-up", "min-all",
         "max-int", "max-int-above-pods-floors-at-zero", "max-percent-rounds-unavailable-up",
         "max-quarter", "max-zero-percent", "no-pods", "neither-field"],
)
def test_expected_and_desired(
    spec: objects_pb2.PodDisruptionBudgetSpec, matching: int, expected: int, desired: int
) -> None:
    assert expected_and_desired(spec, matching) == (expected, desired)


@pytest.mark.parametrize(
    ("pod", "healthy"),
    [
        (make_pod(), True),
        (make_pod(ready="True"), True),
        (make_pod(ready="False"), False),
        (make_pod(ready="Unknown"), False),
        (make_pod(node="", phase="Pending"), False),
        (make_pod(node="", phase="Running", ready="True"), False),
        (make_pod(phase="Pending"), False),
        (make_pod(phase="Succeeded"), False),
        (make_pod(phase="Failed"), False),
        (make_pod(deleting=True), False),
        (make_pod(deleting=True, ready="True"), False),
    ],
    ids=["bound-running-no-ready-condition", "ready-true", "ready-false", "ready-unknown", "unbound",
         "unbound-but-ready", "bound-pending", "succeeded", "failed", "terminating",
         "terminating-ready"],
)
def test_is_healthy(pod: objects_pb2.Pod, healthy: bool) -> None:
    assert is_healthy(pod) is healthy


NOW = 1_700_000_000.0


def _pdb(spec: objects_pb2.PodDisruptionBudgetSpec, generation: int = 3) -> objects_pb2.PodDisruptionBudget:
    pdb = objects_pb2.PodDisruptionBudget(spec=spec)
    pdb.metadata.name = "budget"
    pdb.metadata.generation = generation
    return pdb


HEALTHY = make_pod()
UNBOUND = make_pod(node="", phase="Pending")
TERMINATING = make_pod(deleting=True)
NOT_READY = make_pod(ready="False")


@pytest.mark.parametrize(
    ("spec", "pods", "status"),
    [
        (make_spec(min_available=2), [HEALTHY] * 3, (3, 3, 2, 1)),
        (make_spec(min_available=2), [HEALTHY, HEALTHY, UNBOUND], (3, 2, 2, 0)),
        (make_spec(min_available=3), [HEALTHY, HEALTHY], (2, 2, 3, 0)),
        (make_spec(min_available="50%"), [HEALTHY] * 3 + [UNBOUND], (4, 3, 2, 1)),
        (make_spec(max_unavailable=1), [HEALTHY] * 4, (4, 4, 3, 1)),
        (make_spec(max_unavailable="30%"), [HEALTHY] * 10, (10, 10, 7, 3)),
        (make_spec(max_unavailable=2), [HEALTHY, TERMINATING, NOT_READY, UNBOUND], (4, 1, 2, 0)),
        (make_spec(min_available=0), [], (0, 0, 0, 0)),
        (make_spec(max_unavailable=5), [HEALTHY], (1, 1, 0, 1)),
        (make_spec(), [HEALTHY] * 2, (0, 2, 0, 0)),
    ],
    ids=["min-int-spare-one", "min-int-one-unbound", "min-above-healthy", "min-percent",
         "max-int", "max-percent", "unhealthy-kinds-count-as-expected-only", "no-pods-allows-nothing",
         "max-above-pods", "neither-field-allows-nothing"],
)
def test_budget_status(
    spec: objects_pb2.PodDisruptionBudgetSpec, pods: list[objects_pb2.Pod], status: tuple[int, int, int, int]
) -> None:
    expected, current, desired, allowed = status
    assert budget_status(_pdb(spec), pods, now=NOW) == objects_pb2.PodDisruptionBudgetStatus(
        observed_generation=3,
        expected_pods=expected,
        current_healthy=current,
        desired_healthy=desired,
        disruptions_allowed=allowed,
    )


def test_budget_status_raises_on_an_unusable_spec() -> None:
    with pytest.raises(BudgetSpecError, match=r"^spec\.minAvailable: 10000000000 is not an integer"):
        budget_status(_pdb(make_spec(min_available=10_000_000_000)), [HEALTHY], now=NOW)


def _at(seconds: float) -> Timestamp:
    return Timestamp(seconds=int(seconds))


def test_disrupted_pods_are_not_healthy_until_gone_or_expired() -> None:
    # Kubernetes' TestUpdateDisruptedPods: an entry stays while its pod is there, not terminating, and
    # was evicted less than DeletionTimeout ago; only then does it keep its pod out of currentHealthy.
    pdb = _pdb(make_spec(min_available=1))
    pdb.status.disrupted_pods["p1"].CopyFrom(_at(NOW))
    pdb.status.disrupted_pods["p2"].CopyFrom(_at(NOW - 180))
    pdb.status.disrupted_pods["p3"].CopyFrom(_at(NOW - 60))
    pdb.status.disrupted_pods["notthere"].CopyFrom(_at(NOW))
    pods = [make_pod("p1", deleting=True), make_pod("p2"), make_pod("p3")]
    status = budget_status(pdb, pods, now=NOW)
    assert (status.disruptions_allowed, status.current_healthy, status.desired_healthy,
            status.expected_pods) == (0, 1, 1, 3)
    assert dict(status.disrupted_pods) == {"p3": _at(NOW - 60)}
    assert next_expiry(status) == NOW + 60


@pytest.mark.parametrize(
    ("evicted_ago", "kept", "healthy"),
    [(0, True, 0), (DELETION_TIMEOUT_S - 1, True, 0), (DELETION_TIMEOUT_S, True, 1),
     (DELETION_TIMEOUT_S + 1, False, 1)],
    ids=["just-evicted", "about-to-expire", "expiring-now", "expired"],
)
def test_a_disrupted_pod_entry_expires_after_the_deletion_timeout(
    evicted_ago: float, kept: bool, healthy: int
) -> None:
    pdb = _pdb(make_spec(min_available=0))
    pdb.status.disrupted_pods["p"].CopyFrom(_at(NOW - evicted_ago))
    status = budget_status(pdb, [make_pod("p")], now=NOW)
    assert ("p" in status.disrupted_pods) is kept
    assert status.current_healthy == healthy
    assert next_expiry(status) == (NOW - evicted_ago + DELETION_TIMEOUT_S if kept else None)


def test_fail_safe_status_keeps_the_numbers_but_allows_nothing() -> None:
    pdb = _pdb(make_spec(min_available=1))
    pdb.status.CopyFrom(objects_pb2.PodDisruptionBudgetStatus(
        observed_generation=2, expected_pods=4, current_healthy=4, desired_healthy=1, disruptions_allowed=3))
    status = fail_safe_status(pdb)
    assert status == objects_pb2.PodDisruptionBudgetStatus(
        observed_generation=2, expected_pods=4, current_healthy=4, desired_healthy=1, disruptions_allowed=0)
    assert pdb.status.disruptions_allowed == 3
