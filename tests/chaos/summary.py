"""The chaos run's figures, as lines for the end of the test session (tests/chaos/conftest.py prints
them in pytest's terminal summary, so they show in every `make test` log, passing or failing)."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence

import pytest

from tests.chaos.faults import Failover, Outage
from tests.chaos.replicas import Life

#: The line a scheduler prints just before it exits 1, having lost its lease.
STEP_DOWN = "podsched scheduler: leader election lost: "

#: Where the chaos fixture leaves its lines for the terminal summary.
SUMMARY_LINES = pytest.StashKey[list[str]]()


def failover_lines(failovers: Sequence[Failover], bounds: dict[str, float]) -> list[str]:
    """min/median/max of the measured failover times, per fault kind, with the bound of each."""
    lines = []
    for kind, bound in bounds.items():
        times = [f.seconds for f in failovers if f.kind == kind]
        if not times:
            continue
        lines.append(
            f"{kind} of the leader x{len(times)}: min {min(times):.2f} s, "
            f"median {statistics.median(times):.2f} s, max {max(times):.2f} s (bound {bound:.2f} s)"
        )
    return lines


def step_down_line(lives: Sequence[Life]) -> str:
    """How many scheduler processes stepped down (exit 1 after "leader election lost: WHY"), by the
    first clause of WHY: a lapsed renewal, a fenced write refused, a lease seen in other hands."""
    reasons: Counter[str] = Counter()
    for life in lives:
        for line in life.log().splitlines():
            if line.startswith(STEP_DOWN):
                reasons[line[len(STEP_DOWN):].split(": ", 1)[0]] += 1
    listed = "; ".join(f"{count} x {why}" for why, count in reasons.most_common()) or "none"
    return f"leaders that stepped down: {listed}"


def outage_line(outage: Outage) -> str:
    holders = " -> ".join(outage.holders) or "(none)"
    return f"{outage.kind} down: lease holders {holders}; {outage.binds} pods bound meanwhile"
