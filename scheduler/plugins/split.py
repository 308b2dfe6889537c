"""A plugin whose filtering and scoring halves live in their own classes (InterPodAffinity,
PodTopologySpread): the extension-point methods the framework calls, each handed to the half that owns
it, so each plugin class keeps only its name, its args and its events."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, Self

from scheduler.framework import CycleState, NodeInfo, NodeScore, PodInfo, PreFilterResult, Status


class FilteringHalf(Protocol):
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]: ...

    def add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None: ...

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> list[Status | None]: ...


class ScoringHalf(Protocol):
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None: ...

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int: ...

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None: ...


class SplitPlugin:
    """PreFilter (with its AddPod/RemovePod extensions), Filter, PreScore, Score and NormalizeScore,
    delegated to ``_filtering`` and ``_scoring``, which the subclass sets in its constructor."""

    _filtering: FilteringHalf
    _scoring: ScoringHalf

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        return self._filtering.pre_filter(state, pod, nodes)

    def pre_filter_extensions(self) -> Self:
        return self

    def add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._filtering.add_pod(state, pod, pod_to_add, node_info)

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._filtering.remove_pod(state, pod, pod_to_remove, node_info)

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        return self._filtering.filter(state, pod, node_info)

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> list[Status | None]:
        return self._filtering.filter_nodes(state, pod, nodes)

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        return self._scoring.pre_score(state, pod, nodes)

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        return self._scoring.score(state, pod, node_info)

    def score_extensions(self) -> Self:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        return self._scoring.normalize_score(state, pod, scores)
