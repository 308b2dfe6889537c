"""What the workload controllers' specs share: replica counts, and the message of a selector that does
not match its template."""

from __future__ import annotations

from typing import Any

from cluster.api.validation.field import invalid

SELECTOR_MISMATCH = "`selector` does not match template `labels`"


def validate_replicas(spec: Any) -> list[str]:
    problems = []
    if spec.replicas < 0:
        problems.append(invalid("spec.replicas", spec.replicas, "must be greater than or equal to 0"))
    if spec.min_ready_seconds < 0:
        problems.append(
            invalid("spec.minReadySeconds", spec.min_ready_seconds, "must be greater than or equal to 0")
        )
    return problems
