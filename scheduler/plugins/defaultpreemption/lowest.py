"""The lowest priority among each node's pods, one row per node of a snapshot (node data,
framework/nodedata.py): a pod can preempt only on nodes where it is above it, so the dry run reads one
NumPy comparison instead of every pod of every node, most of which have no lower-priority pod at all."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from scheduler.framework.types import NodeInfo

#: The lowest priority of a node without pods: above every pod's, so that no pod can preempt there.
NO_PODS = np.iinfo(np.int64).max


class LowestPodPriority:
    """``values[row]``: the lowest priority of the pods on the node of ``row`` (NO_PODS without any)."""

    __slots__ = ("values",)

    def __init__(self, nodes: Sequence[NodeInfo]) -> None:
        self.values: npt.NDArray[np.int64] = np.fromiter(map(_lowest, nodes), dtype=np.int64,
                                                         count=len(nodes))

    def set_row(self, row: int, info: NodeInfo) -> None:
        self.values[row] = _lowest(info)


def _lowest(info: NodeInfo) -> int:
    return min((pod.priority for pod in info.pods.values()), default=NO_PODS)
