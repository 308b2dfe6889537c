"""What a PodDisruptionBudget's status should say, given the pods its selector matches: the arithmetic of
Kubernetes' disruption controller (pkg/controller/disruption/disruption.go: getExpectedPodCount,
countHealthyPods, updatePdbStatus, failSafe), as pure functions.

- expectedPods: the number of matching pods. Kubernetes takes it from the pods' workload controllers
  (the sum of their replicas) when the budget is a percentage or maxUnavailable, and uses the number of
  matching pods only for an integer minAvailable; podsched has no workload controllers, so the number of
  matching pods is the scale in every case.
- desiredHealthy: minAvailable as an integer is itself; as a percentage, that share of expectedPods
  rounded up; maxUnavailable is expectedPods minus it (a percentage rounded up first), never below 0
  (intstr.GetScaledValueFromIntOrPercent with roundUp). A budget with neither field (policy/v1 does not
  default one) leaves expectedPods and desiredHealthy at 0, as Kubernetes does, so it allows no disruption.
- currentHealthy: matching pods not being deleted, not in disruptedPods, and Ready (`readiness`: with no
  kubelet, a bound Running pod with no Ready condition other than True).
- disruptedPods: the pods an eviction let go (the API server's pods/eviction adds each, with the time,
  before it deletes the pod). An entry keeps its pod out of currentHealthy, so the next status does not
  count the pod the eviction already spent the budget on, until the pod is terminating or gone, or
  DELETION_TIMEOUT_S after the eviction, when the eviction is taken not to have happened. The new status
  keeps only the entries still in force; `next_expiry` says when the next one runs out, when the
  budget must be looked at again.
- disruptionsAllowed: currentHealthy - desiredHealthy, and 0 when that is negative or when no pod is
  expected (a budget that matches nothing yet stays safe when its first pods appear).
- observedGeneration: the budget's metadata.generation.

A spec the arithmetic cannot use (which validation keeps out of the API) raises `BudgetSpecError`; the
controller then writes `fail_safe_status`, which allows no disruption, as Kubernetes' failSafe does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from google.protobuf import struct_pb2
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import objects_pb2
from cluster.api.readiness import is_ready

#: How long an eviction's disruptedPods entry keeps its pod out of currentHealthy (Kubernetes'
#: DeletionTimeout: time enough for the pod's deletion to be seen, not a grace period's end).
DELETION_TIMEOUT_S = 120.0
#: IntOrString's integer is an int32, and so are the status counts.
INT32_MAX = 2**31 - 1
_PERCENT = re.compile(r"([0-9]+)%", re.ASCII)


class BudgetSpecError(ValueError):
    """A budget's minAvailable or maxUnavailable is neither an int32 ≥ 0 nor a percentage."""


def scaled_value(value: struct_pb2.Value, total: int, *, field: str) -> int:
    """An IntOrString (carried as a protobuf Value) scaled to ``total``: an integer is itself, "N%" is
    N% of ``total`` rounded up."""
    kind = value.WhichOneof("kind")
    if kind == "number_value":
        number = value.number_value
        if not number.is_integer() or not 0 <= number <= INT32_MAX:
            raise BudgetSpecError(f"{field}: {number:.15g} is not an integer from 0 to {INT32_MAX}")
        return int(number)
    if kind == "string_value":
        match = _PERCENT.fullmatch(value.string_value)
        if match is None:
            raise BudgetSpecError(
                f'{field}: "{value.string_value}" is not an integer or a percentage like "50%"'
            )
        # Exact integer ceiling of percent * total / 100 (Kubernetes: math.Ceil on float64, same result).
        return -(-int(match.group(1)) * total // 100)
    raise BudgetSpecError(f"{field}: {kind or 'an empty value'} is not an integer or a percentage")


def expected_and_desired(spec: objects_pb2.PodDisruptionBudgetSpec, matching: int) -> tuple[int, int]:
    """(expectedPods, desiredHealthy) of a budget whose selector matches ``matching`` pods."""
    if spec.HasField("max_unavailable"):
        unavailable = scaled_value(spec.max_unavailable, matching, field="spec.maxUnavailable")
        return matching, max(0, matching - unavailable)
    if spec.HasField("min_available"):
        return matching, scaled_value(spec.min_available, matching, field="spec.minAvailable")
    return 0, 0


def is_healthy(pod: objects_pb2.Pod) -> bool:
    """Whether ``pod`` counts toward currentHealthy, disruptedPods aside (see the module docstring)."""
    return not pod.metadata.HasField("deletion_timestamp") and is_ready(pod)


def _seconds(ts: Timestamp) -> float:
    return ts.seconds + ts.nanos / 1e9


def disrupted_pods_in_force(
    pdb: objects_pb2.PodDisruptionBudget, pods: Iterable[objects_pb2.Pod], now: float
) -> dict[str, Timestamp]:
    """The entries of ``pdb``'s disruptedPods still in force at ``now``: their pod is among ``pods``, is
    not terminating, and was evicted at most DELETION_TIMEOUT_S ago."""
    disrupted = pdb.status.disrupted_pods
    if not disrupted:
        return {}
    kept = {}
    for pod in pods:
        name = pod.metadata.name
        if name in disrupted and not pod.metadata.HasField("deletion_timestamp"):
            evicted = disrupted[name]
            if not _seconds(evicted) + DELETION_TIMEOUT_S < now:
                kept[name] = evicted
    return kept


def next_expiry(status: objects_pb2.PodDisruptionBudgetStatus) -> float | None:
    """When the first of ``status``'s disruptedPods entries runs out (None: there is none)."""
    if not status.disrupted_pods:
        return None
    return min(_seconds(evicted) for evicted in status.disrupted_pods.values()) + DELETION_TIMEOUT_S


def budget_status(
    pdb: objects_pb2.PodDisruptionBudget, pods: Iterable[objects_pb2.Pod], *, now: float
) -> objects_pb2.PodDisruptionBudgetStatus:
    """The status of ``pdb`` at ``now`` (Unix seconds) given ``pods``, the pods its selector matches in its
    namespace."""
    pods = list(pods)
    disrupted = disrupted_pods_in_force(pdb, pods, now)
    healthy = 0
    for pod in pods:
        evicted = disrupted.get(pod.metadata.name)
        if evicted is not None and _seconds(evicted) + DELETION_TIMEOUT_S > now:
            continue  # evicted, and expected to be deleted soon
        healthy += is_healthy(pod)
    expected, desired = expected_and_desired(pdb.spec, len(pods))
    allowed = healthy - desired
    return objects_pb2.PodDisruptionBudgetStatus(
        observed_generation=pdb.metadata.generation,
        disrupted_pods=disrupted,
        disruptions_allowed=allowed if expected > 0 and allowed > 0 else 0,
        current_healthy=healthy,
        desired_healthy=desired,
        expected_pods=expected,
    )


def fail_safe_status(pdb: objects_pb2.PodDisruptionBudget) -> objects_pb2.PodDisruptionBudgetStatus:
    """The status to write when ``pdb``'s status cannot be computed: as it is, but allowing no
    disruption, so nothing relying on the budget evicts on stale numbers."""
    status = objects_pb2.PodDisruptionBudgetStatus()
    status.CopyFrom(pdb.status)
    status.disruptions_allowed = 0
    return status
