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
from typing import TYPE_CHECKING, TypeVar

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

#: What a choice among placements returns: a placement's trial, or a composite's tree.
T = TypeVar("T")

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
    return explain_domains([(trial.placement.name, trial.attempt.detail()) for trial in trials], label)


def explain_domains(details: Sequence[tuple[str, str]], label: str) -> str:
    """"no placement fits: " and how far the group (or a composite's tree) got in each domain, given as
    (domain, detail), the first EXPLAINED_PLACEMENTS of them told."""
    if not details:
        return "no placement fits: no node offers one"
    parts = [f"{label} {name}: {detail}" for name, detail in details[:EXPLAINED_PLACEMENTS]]
    more = len(details) - EXPLAINED_PLACEMENTS
    if more > 0:
        parts.append(f"{more} more {label}s do not fit either")
    return "no placement fits: " + "; ".join(parts)


def choose(framework: Framework, state: CycleState, group: PodGroupInfo, feasible: Sequence[PlacementTrial],
           rng: random.Random) -> tuple[PlacementTrial | None, Status | None]:
    """The best of the feasible placements (kube-scheduler's findBestPlacement), or the PlacementScore
    plugins' failure."""
    return best_scored(framework, state, group, [
        (trial, PodGroupAssignments(trial.placement, tuple(
            ProposedAssignment(placed.queued.pod_info, placed.node_name)
            for placed in trial.attempt.placements)))
        for trial in feasible
    ], rng)


def best_scored(framework: Framework, state: CycleState, group: PodGroupInfo,
                candidates: Sequence[tuple[T, PodGroupAssignments]],
                rng: random.Random) -> tuple[T | None, Status | None]:
    """The candidate whose assignments the PlacementScore plugins total highest (a lone one without
    asking them), equal totals drawn by ``rng``; or the plugins' failure."""
    if len(candidates) == 1:
        return candidates[0][0], None
    totals, status = framework.run_placement_score(state, group, [assigned for _, assigned in candidates])
    if status is not None:
        return None, status
    best = max(totals)
    return rng.choice([candidate for (candidate, _), total in zip(candidates, totals, strict=True)
                       if total == best]), None
