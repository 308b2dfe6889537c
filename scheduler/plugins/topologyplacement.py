"""TopologyPlacementGenerator: one placement per domain of a pod group's topology constraint
(kube-scheduler's topologyaware plugin, KEP-5732).

A group whose PodGroup says ``spec.schedulingConstraints.topology[0].key: K`` gets one placement per
distinct value of node label K among the cluster's nodes, named by the value, holding the nodes with that
value; nodes without the label are in none. Once some of the group's pods are on a node (bound, or
assumed while their binding runs), only the domain they are in is offered: a group is never split. A
group without a constraint is not constrained: the plugin answers with the whole cluster. A group left
without a placement is asked again when a node is added or its labels change.
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    Handle,
    Placement,
    PluginError,
    PodGroupInfo,
    placements_by_label,
)
from scheduler.framework.pod_groups import topology_key_of

NAME = "TopologyPlacementGenerator"


class TopologyPlacement:
    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def generate_placements(self, state: CycleState, group: PodGroupInfo,
                            parent: Placement) -> Sequence[Placement]:
        key = topology_key_of(group.pod_group)
        if not key:
            return [parent]
        return placements_by_label(parent.nodes, key, self._placed_domain(group.key, key))

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # A node that comes, or takes the group's label, can make a domain.
        return [ClusterEventWithHint(
            ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL))]

    def _placed_domain(self, group: str, key: str) -> str | None:
        """The domain the group's placed pods are in, None when none is placed. Raises PluginError when
        they are not in one domain the snapshot can tell."""
        lister = self._handle.snapshot().node_infos()
        domain: str | None = None
        for pod, node_name in self._handle.pod_groups.placed(group):
            what = f"pod {pod.metadata.namespace}/{pod.metadata.name}"
            try:
                labels = lister.get(node_name).node.metadata.labels  # type: ignore[union-attr]
            except KeyError:
                raise PluginError(f"cannot determine domain for already scheduled pods: {what} is on node "
                                  f"{node_name}, which the scheduler does not know") from None
            if key not in labels:
                raise PluginError(f"cannot determine domain for already scheduled pods: node {node_name} of "
                                  f"{what} has no label {key}")
            if domain is not None and labels[key] != domain:
                raise PluginError(f"cannot determine domain for already scheduled pods: more than 1 domain "
                                  f"found for pod group {group}: {domain}, {labels[key]}")
            domain = labels[key]
        return domain


def new(args: None, handle: Handle) -> TopologyPlacement:
    return TopologyPlacement(handle)
