"""Validation of policy/v1's kind: PodDisruptionBudget."""

from __future__ import annotations

import re
from typing import Any

from cluster.api import kinds, objects_pb2
from cluster.api.names import regex_error
from cluster.api.validation.field import NOT_NEGATIVE, invalid, not_supported
from cluster.api.validation.meta import validate_label_selector
from cluster.api.validation.rules import KindValidation

UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")

_PERCENT = re.compile(r"[0-9]+%", re.ASCII)


_INT32_MAX = 2**31 - 1


def _validate_int_or_percent(value: Any, path: str) -> list[str]:
    """A PDB's minAvailable/maxUnavailable: an integer ≥ 0 or a percentage "0%".."100%"."""
    kind = value.WhichOneof("kind")
    if kind == "number_value":
        number = value.number_value
        if not number.is_integer():
            return [invalid(path, number, "must be an integer")]
        if number < 0:
            return [invalid(path, int(number), NOT_NEGATIVE)]
        if number > _INT32_MAX:
            # IntOrString holds an int32 in Kubernetes; a larger number does not even decode there.
            return [invalid(path, int(number), f"must be less than or equal to {_INT32_MAX}")]
        return []
    if kind == "string_value":
        text = value.string_value
        if not _PERCENT.fullmatch(text):
            return [
                invalid(
                    path,
                    text,
                    regex_error(
                        "a valid percent string must be a numeric string followed by an ending '%'",
                        "[0-9]+%",
                        "1%",
                        "93%",
                    ),
                )
            ]
        if int(text[:-1]) > 100:
            return [invalid(path, text, "must not be greater than 100%")]
        return []
    return [invalid(path, kind or "null", "must be an integer or a percentage string")]


def validate_pdb(pdb: objects_pb2.PodDisruptionBudget) -> list[str]:
    spec = pdb.spec
    problems = []
    if spec.HasField("min_available") and spec.HasField("max_unavailable"):
        problems.append(
            invalid(
                "spec",
                "minAvailable and maxUnavailable",
                "minAvailable and maxUnavailable cannot be both set",
            )
        )
    if spec.HasField("min_available"):
        problems += _validate_int_or_percent(spec.min_available, "spec.minAvailable")
    if spec.HasField("max_unavailable"):
        problems += _validate_int_or_percent(spec.max_unavailable, "spec.maxUnavailable")
    if spec.HasField("selector"):
        problems += validate_label_selector(spec.selector, "spec.selector")
    policy = spec.unhealthy_pod_eviction_policy
    if policy and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        problems.append(
            not_supported("spec.unhealthyPodEvictionPolicy", policy, UNHEALTHY_POD_EVICTION_POLICIES)
        )
    return problems


POD_DISRUPTION_BUDGET = KindValidation(kinds.POD_DISRUPTION_BUDGET, validate_pdb)

VALIDATIONS: tuple[KindValidation[Any], ...] = (POD_DISRUPTION_BUDGET,)
