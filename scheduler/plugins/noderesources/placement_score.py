"""NodeResourcesFit's placement score (KEP-5732): MostAllocated, with the resources and weights of the
plugin's scoring strategy, applied to a whole placement as if its nodes were one node (kube-scheduler
bin-packs placements whatever strategy scores nodes). The allocatable of every node of the placement is
summed, so is what is already requested on them (the non-zero requests, as node scoring counts them), and
the requests of the pods the placement's simulation placed are added, so the tightest fit scores highest.
A scalar resource counts only when some placed pod asks for it, as in node scoring.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from scheduler.config.argtypes import ResourceSpec
from scheduler.framework import PodGroupAssignments
from scheduler.plugins.noderesources.resource_allocation import node_vectors, pod_request_list

#: (requested per resource, allocatable per resource) -> score, as NodeResourcesFit scores a node.
Scorer = Callable[[Sequence[int], Sequence[int]], int]


def score_placement(scorer: Scorer, resources: Sequence[ResourceSpec],
                    assignments: PodGroupAssignments) -> int:
    group_request = [0] * len(resources)
    for proposed in assignments.proposed:
        for i, request in enumerate(pod_request_list(proposed.pod, resources, use_requested=False)):
            group_request[i] += request
    allocatable = [0] * len(resources)
    requested = [0] * len(resources)
    for node_info in assignments.placement.nodes:
        # node_vectors adds the request it is given to what the node has: take it off again.
        node_requested, node_allocatable = node_vectors(node_info, resources, group_request,
                                                        use_requested=False)
        for i, alloc in enumerate(node_allocatable):
            if alloc:
                allocatable[i] += alloc
                requested[i] += node_requested[i] - group_request[i]
    total = [on_nodes + (group_request[i] if allocatable[i] else 0) for i, on_nodes in enumerate(requested)]
    return scorer(total, allocatable)
