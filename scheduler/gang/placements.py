"""A topology-constrained group's placements (KEP-5732): the record of each placement's simulation,
the choice of the best feasible one, and the explanation when none is feasible.

The cycle (cycle.py) asks the profile's PlacementGenerate plugins for the group's placements (one per
domain of its topology key with TopologyPlacementGenerator), simulates the whole group inside each with
the usual Filter and Score restricted to the placement's nodes, undoes each simulation, and keeps the
feasible ones: at least minCount pods placeable for a gang, at least one for a basic group. One feasible
placement is taken as it is; among several, the PlacementScore plugins' weighted total decides, equal
totals by the scheduler's seeded random source (kube-scheduler draws a random number per placement).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler.framework import (
    CycleState,
    Placement,
    PodGroupAssignments,
    PodGroupInfo,
    ProposedAssignment,
    Status,
)

if TYPE_CHECKING:
    from scheduler.framework.runtime import Framework
    from scheduler.gang.cycle import GroupAttempt

#: Domains a "no placement fits" message describes; the rest are counted.
EXPLAINED_PLACEMENTS = 10


@dataclass(frozen=True, slots=True)
class PlacementTrial:
    """One placement and what its simulation could place (already undone)."""

    placement: Placement
    attempt: GroupAttempt


def domain_label(topology_key: str) -> str:
    """What a placement of the key is called in messages: "rack" for topology.kubernetes.io/rack."""
    return topology_key.rsplit("/", 1)[-1] if topology_key else "placement"


def no_placement_fits(trials: Sequence[PlacementTrial], label: str) -> str:
    """"no placement fits: rack r1: 6/8 pods placeable, minCount 8: pod w-6: ...; rack r2: ..."."""
    if not trials:
        return "no placement fits: no node offers one"
    parts = [f"{label} {trial.placement.name}: {trial.attempt.detail()}"
             for trial in trials[:EXPLAINED_PLACEMENTS]]
    more = len(trials) - EXPLAINED_PLACEMENTS
    if more > 0:
        parts.append(f"{more} more {label}s do not fit either")
    return "no placement fits: " + "; ".join(parts)


def choose(framework: Framework, state: CycleState, group: PodGroupInfo, feasible: Sequence[PlacementTrial],
           rng: random.Random) -> tuple[PlacementTrial | None, Status | None]:
    """The best of the feasible placements (kube-scheduler's findBestPlacement), or the PlacementScore
    plugins' failure."""
    if len(feasible) == 1:
        return feasible[0], None
    assignments = [
        PodGroupAssignments(trial.placement, tuple(
            ProposedAssignment(placed.queued.pod_info, placed.node_name)
            for placed in trial.attempt.placements))
        for trial in feasible
    ]
    totals, status = framework.run_placement_score(state, group, assignments)
    if status is not None:
        return None, status
    best = max(totals)
    return rng.choice([trial for trial, total in zip(feasible, totals, strict=True) if total == best]), None
