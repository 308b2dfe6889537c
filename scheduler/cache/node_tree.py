"""The order in which a scheduling cycle visits nodes: round robin over zones, as kube-scheduler's nodeTree.

The scheduler filters nodes until it has found enough feasible ones (numFeasibleNodesToFind) and starts
each cycle where the last one stopped. Listing nodes zone by zone, one node of each zone in turn, spreads
that partial search over every zone instead of exhausting the first zone's nodes. Within a zone, and for
the zones themselves, the order is the order in which they first appeared, so it is stable from one cycle
to the next. Nodes without zone labels all share the zone "" (plain insertion order when no node has one).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping

from cluster.api import objects_pb2

log = logging.getLogger(__name__)

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
#: The deprecated labels, still honoured when the new ones are absent (as Kubernetes' GetZoneKey does).
BETA_ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION_LABEL = "failure-domain.beta.kubernetes.io/region"


def zone_key(labels: Mapping[str, str]) -> str:
    """The node's region and zone as one key ("" when it has neither), as Kubernetes' GetZoneKey: the
    same zone name in two regions is two zones."""
    zone = labels.get(ZONE_LABEL, labels.get(BETA_ZONE_LABEL, ""))
    region = labels.get(REGION_LABEL, labels.get(BETA_REGION_LABEL, ""))
    if not zone and not region:
        return ""
    # A NUL separator: neither part can contain one, so the key cannot be ambiguous.
    return f"{region}:\x00:{zone}"


class NodeTree:
    """The names of the live nodes, grouped by zone. ``version`` changes whenever ``list()`` would."""

    __slots__ = ("_zone_of", "_zones", "num_nodes", "version")

    def __init__(self) -> None:
        #: zone key -> node names in the order they were added; dict order is the zones' order.
        self._zones: dict[str, list[str]] = {}
        self._zone_of: dict[str, str] = {}
        self.num_nodes = 0
        self.version = 0

    def add_node(self, node: objects_pb2.Node) -> None:
        name = node.metadata.name
        if name in self._zone_of:
            log.debug("node %s is already in the node tree", name)
            return
        zone = zone_key(node.metadata.labels)
        self._zones.setdefault(zone, []).append(name)
        self._zone_of[name] = zone
        self.num_nodes += 1
        self.version += 1

    def remove_node(self, name: str) -> bool:
        """Take the node out; False if it was not in the tree."""
        zone = self._zone_of.pop(name, None)
        if zone is None:
            return False
        names = self._zones[zone]
        names.remove(name)
        if not names:
            del self._zones[zone]
        self.num_nodes -= 1
        self.version += 1
        return True

    def update_node(self, node: objects_pb2.Node) -> None:
        """Move the node to its new zone if its zone labels changed (to the end of that zone's list)."""
        name = node.metadata.name
        zone = zone_key(node.metadata.labels)
        if self._zone_of.get(name) == zone:
            return
        self.remove_node(name)
        self.add_node(node)

    def __contains__(self, name: object) -> bool:
        return name in self._zone_of

    def list(self) -> list[str]:
        """Every node name: the first node of each zone, then the second of each, and so on."""
        rounds = itertools.zip_longest(*self._zones.values())
        return [name for names in rounds for name in names if name is not None]
