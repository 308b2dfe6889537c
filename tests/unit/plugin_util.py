"""What plugin unit tests share beyond the builders in tests/builders.py."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cluster.api import objects_pb2
from scheduler.framework import CycleState, NodeInfo, NodeScore, PodInfo


def run_score(
    plugin: Any, p: objects_pb2.Pod, infos: Sequence[NodeInfo], state: CycleState | None = None
) -> list[int]:
    """PreScore, Score on every node, then NormalizeScore when the plugin has it: the final scores."""
    state = state if state is not None else CycleState()
    pod_info = PodInfo(p)
    status = plugin.pre_score(state, pod_info, infos)
    assert status is None, status
    scores = [NodeScore(info.name, plugin.score(state, pod_info, info)) for info in infos]
    extensions = plugin.score_extensions()
    if extensions is not None:
        assert extensions.normalize_score(state, pod_info, scores) is None
    return [s.score for s in scores]
