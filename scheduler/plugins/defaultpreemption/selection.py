"""Which candidate node to preempt on (kube-scheduler's pickOneNodeForPreemption).

Each criterion in turn keeps only the best-scoring nodes; the first criterion that leaves a single node
decides, and if none does, the first remaining candidate wins:

1. fewest PodDisruptionBudget violations;
2. the lowest priority of the most important victim;
3. the smallest sum of victim priorities (each shifted by 2^31 so that every term is positive: more
   victims never add up to less, even with negative priorities);
4. fewest victims;
5. the latest start time among the highest-priority victims (evict what has run the shortest);
6. the first candidate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from scheduler.plugins.defaultpreemption.candidates import Candidate

#: Added to every priority in the sum (kube-scheduler adds MaxInt32 + 1).
PRIORITY_OFFSET = 2**31


def _fewest_pdb_violations(c: Candidate) -> float:
    return -c.num_pdb_violations


def _lowest_highest_priority(c: Candidate) -> float:
    return -c.victims[0].priority  # victims are sorted most important first


def _smallest_priority_sum(c: Candidate) -> float:
    return -sum(victim.priority + PRIORITY_OFFSET for victim in c.victims)


def _fewest_victims(c: Candidate) -> float:
    return -len(c.victims)


def earliest_start_of_highest_priority(c: Candidate) -> float:
    """The earliest start time among the victims of the highest priority (GetEarliestPodStartTime)."""
    top = max(victim.priority for victim in c.victims)
    return min(victim.start_time for victim in c.victims if victim.priority == top)


#: The criteria in order; each maps a candidate to a score, higher is better.
CRITERIA: tuple[Callable[[Candidate], float], ...] = (
    _fewest_pdb_violations,
    _lowest_highest_priority,
    _smallest_priority_sum,
    _fewest_victims,
    earliest_start_of_highest_priority,
)


def pick_one_node_for_preemption(candidates: Sequence[Candidate]) -> Candidate | None:
    """The candidate to preempt on, or None when there is none."""
    remaining = list(candidates)
    if not remaining:
        return None
    for criterion in CRITERIA:
        scores = [criterion(c) for c in remaining]
        best = max(scores)
        remaining = [c for c, score in zip(remaining, scores, strict=True) if score == best]
        if len(remaining) == 1:
            break
    return remaining[0]
