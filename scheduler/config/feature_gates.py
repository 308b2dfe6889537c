"""``--feature-gates``: kube-scheduler's flag, for the gates podsched has (``NAME=true|false,...``)."""

from __future__ import annotations

from scheduler.config.types import SchedulerConfiguration

#: Gate name -> the SchedulerConfiguration field it sets.
FEATURE_GATES = {"SchedulerOpportunisticBatching": "opportunistic_batching"}

_BOOLS = {"true": True, "false": False}


def apply_feature_gates(config: SchedulerConfiguration, text: str) -> None:
    """Set the gates ``text`` names on ``config``; ValueError naming the entry that is wrong (nothing is
    set then)."""
    settings: dict[str, bool] = {}
    for entry in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = entry.partition("=")
        name = name.strip()
        if not sep:
            raise ValueError(f"--feature-gates: {entry!r} is not NAME=true|false")
        if name not in FEATURE_GATES:
            known = ", ".join(sorted(FEATURE_GATES))
            raise ValueError(f"--feature-gates: unknown feature gate {name!r} (known: {known})")
        enabled = _BOOLS.get(value.strip().lower())
        if enabled is None:
            raise ValueError(f"--feature-gates: {name} must be true or false, got {value.strip()!r}")
        settings[FEATURE_GATES[name]] = enabled
    for field, enabled in settings.items():
        setattr(config, field, enabled)
