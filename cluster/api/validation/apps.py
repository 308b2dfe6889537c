"""Validation of apps/v1's kinds: ReplicaSet, StatefulSet."""

from __future__ import annotations

from typing import Any

from cluster.api import kinds, objects_pb2
from cluster.api.selectors import LabelSelector
from cluster.api.validation.field import invalid, not_supported, required
from cluster.api.validation.meta import validate_label_selector, validate_labels
from cluster.api.validation.replicas import SELECTOR_MISMATCH, validate_replicas
from cluster.api.validation.rules import KindValidation

POD_MANAGEMENT_POLICIES = ("OrderedReady", "Parallel")



def _validate_selected_template(spec: Any, kind_name: str) -> list[str]:
    """ReplicaSet and StatefulSet (apps/v1): a non-empty selector that the template's labels match."""
    problems = validate_replicas(spec)
    if not spec.HasField("selector"):
        return [*problems, required("spec.selector")]
    problems += validate_label_selector(spec.selector, "spec.selector")
    if problems:
        return problems
    if not spec.selector.match_labels and not spec.selector.match_expressions:
        return [invalid("spec.selector", "{}", f"empty selector is invalid for {kind_name}")]
    labels = spec.template.metadata.labels
    if not LabelSelector.from_proto(spec.selector).matches(labels):
        problems.append(invalid("spec.template.metadata.labels", dict(labels), SELECTOR_MISMATCH))
    problems += validate_labels(labels, "spec.template.metadata.labels")
    return problems


def validate_replica_set(rs: objects_pb2.ReplicaSet) -> list[str]:
    return _validate_selected_template(rs.spec, "deployment")


def validate_stateful_set(sts: objects_pb2.StatefulSet) -> list[str]:
    problems = _validate_selected_template(sts.spec, "statefulset")
    policy = sts.spec.pod_management_policy
    if policy and policy not in POD_MANAGEMENT_POLICIES:
        problems.append(not_supported("spec.podManagementPolicy", policy, POD_MANAGEMENT_POLICIES))
    return problems


REPLICA_SET = KindValidation(kinds.REPLICA_SET, validate_replica_set)
STATEFUL_SET = KindValidation(kinds.STATEFUL_SET, validate_stateful_set)

VALIDATIONS: tuple[KindValidation[Any], ...] = (REPLICA_SET, STATEFUL_SET)
