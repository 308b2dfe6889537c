"""PodGroupPodsCount: prefers the placements that hold more of a pod group's pods (kube-scheduler's
podgrouppodscount plugin, KEP-5732).

A placement's raw score is the group's pods already on a node (bound or assumed) plus the pods its
simulation placed; NormalizePlacementScore scales them to 0..100 by the highest count among the
candidates. Counting the pods already placed keeps the scores of near-equal placements near-equal; the
minimum count is deliberately left out of the scale for the same reason.
"""

from __future__ import annotations

from scheduler.framework import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    CycleState,
    Handle,
    PlacementScore,
    PluginError,
    PodGroupAssignments,
    PodGroupInfo,
)

NAME = "PodGroupPodsCount"


class PodGroupPodsCount:
    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def score_placement(self, state: CycleState, group: PodGroupInfo,
                        assignments: PodGroupAssignments) -> int:
        return len(self._handle.pod_groups.placed(group.key)) + len(assignments.proposed)

    def placement_score_extensions(self) -> PodGroupPodsCount:
        return self

    def normalize_placement_score(self, state: CycleState, group: PodGroupInfo,
                                  scores: list[PlacementScore]) -> None:
        highest = max((entry.score for entry in scores), default=0)
        if highest == 0:
            raise PluginError("no pods from pod group are assigned to any of the candidate placements")
        for entry in scores:
            entry.score = MIN_NODE_SCORE + entry.score * (MAX_NODE_SCORE - MIN_NODE_SCORE) // highest


def new(args: None, handle: Handle) -> PodGroupPodsCount:
    return PodGroupPodsCount(handle)
