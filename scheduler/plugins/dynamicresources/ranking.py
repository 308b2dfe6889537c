"""Reserve's allocation in the device ranker's order: the profile's Score plugin that ranks devices
(``Handle.device_ranker``) says which devices the pod gets on the node chosen for it. Filter allocates
without it (the ranking changes which devices, never whether the claims fit), so only the chosen node's
allocation is searched again."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from cluster.api import objects_pb2
from scheduler.dra import AllocationError, Allocator
from scheduler.dra.requests import Request
from scheduler.framework import CycleState, DeviceCandidate, DeviceRankPlugin, NodeInfo, PodInfo

log = logging.getLogger(__name__)


def try_ranked_allocation(ranker: DeviceRankPlugin, state: CycleState, pod: PodInfo, node_info: NodeInfo,
                          allocator: Allocator) -> list[objects_pb2.AllocationResult] | None:
    """The claims' allocation on ``node_info``'s node in ``ranker``'s device order; None when that
    search raises or finds none (``ranked_allocations`` then says why)."""
    assert node_info.node is not None
    try:
        return allocator.allocate(node_info.node, _device_order(ranker, state, pod, node_info))
    except AllocationError:
        return None


def _device_order(ranker: DeviceRankPlugin, state: CycleState, pod: PodInfo,
                  node_info: NodeInfo) -> Callable[[objects_pb2.Node, Request, Sequence[DeviceCandidate]],
                                                   Sequence[int] | None]:
    """The allocator's ranker: ``ranker``'s order for the pod on ``node_info``."""

    def rank(node: objects_pb2.Node, request: Request,
             candidates: Sequence[DeviceCandidate]) -> Sequence[int] | None:
        return ranker.rank_devices(state, pod, node_info, candidates)

    return rank


def ranked_allocations(
    ranker: DeviceRankPlugin,
    state: CycleState,
    pod: PodInfo,
    node_info: NodeInfo,
    allocator: Allocator,
    found: list[objects_pb2.AllocationResult],
) -> list[objects_pb2.AllocationResult]:
    """The claims' allocation on ``node_info``'s node with each request's devices tried in ``ranker``'s
    order; ``found`` (Filter's) when that search fails, which a ranking cannot cause: logged."""
    assert node_info.node is not None  # Filter found the allocation on this node
    try:
        ranked = allocator.allocate(node_info.node, _device_order(ranker, state, pod, node_info))
    except AllocationError as err:
        log.warning("pod %s on node %s: allocating in %s's device order failed (%s); Filter's allocation "
                    "is kept", pod.key, node_info.name, ranker.name, err)
        return found
    if ranked is None:
        log.error("pod %s on node %s: the claims did not fit in %s's device order, though they fit in "
                  "Filter's; Filter's allocation is kept", pod.key, node_info.name, ranker.name)
        return found
    return ranked
