"""What became of a trace's pod groups in a replay: each gang placed or never placed, and where each
group with a topology constraint landed, by the domains of its key that its bound pods' nodes are in.

The domains are read with the trace's own key even when the replay dropped the constraints
(``without_topology_constraints``), so that a replay without them shows how many groups its scheduler
split across domains that the constraint would have kept together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from cluster.api import objects_pb2, podgroups
from cluster.simulate.replay.ledger import PodRecord
from cluster.simulate.trace import Trace
from cluster.simulate.trace.groups import topology_key
from scheduler.framework.types import pod_key

#: How a pod on a node without the key's label shows among a group's domains.
NO_DOMAIN = "(none)"


@dataclass(frozen=True, slots=True)
class GroupOutcome:
    """One PodGroup of the trace at the end of a replay."""

    #: "namespace/name".
    name: str
    #: The gang's minimum; 0 for a group of the basic policy.
    min_count: int
    #: The node label the trace constrains the group to one domain of ("" for none).
    topology_key: str
    #: The trace's pods that join the group, and how many of them were ever bound.
    pods: int
    bound: int
    #: The key's values (NO_DOMAIN for a node without the label) of the nodes its pods were bound to.
    domains: tuple[str, ...]

    @property
    def placed(self) -> bool:
        """A gang got its minimum bound; a basic group got any of its pods bound."""
        return self.bound >= max(self.min_count, 1)

    @property
    def in_one_domain(self) -> bool | None:
        """Whether a placed, constrained group sits in one domain of its key; None for the others."""
        if not self.topology_key or not self.placed:
            return None
        return len(self.domains) == 1 and self.domains[0] != NO_DOMAIN

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "min_count": self.min_count, "topology_key": self.topology_key,
                "pods": self.pods, "bound": self.bound, "placed": self.placed, "domains": list(self.domains),
                "in_one_domain": self.in_one_domain}


def group_outcomes(trace: Trace, records: Sequence[PodRecord]) -> list[GroupOutcome]:
    """Each PodGroup of ``trace`` (as the trace gives it), in trace order, judged by ``records``."""
    groups = [o for o in trace.objects if isinstance(o, objects_pb2.PodGroup)]
    if not groups:
        return []
    by_key = {record.key: record for record in records}
    labels: dict[str, Mapping[str, str]] = {node.metadata.name: node.metadata.labels for node in trace.nodes}
    members: dict[tuple[str, str], list[PodRecord | None]] = {}
    for entry in trace.pods:
        name = podgroups.group_name_of(entry.pod)
        if name:
            members.setdefault((entry.pod.metadata.namespace, name), []).append(
                by_key.get(pod_key(entry.pod)))
    outcomes = []
    for group in groups:
        meta, key = group.metadata, topology_key(group)
        records_of = [r for r in members.get((meta.namespace, meta.name), []) if r is not None]
        nodes = [r.node for r in records_of if r.bound_at is not None and r.node]
        domains = sorted({labels.get(node, {}).get(key, NO_DOMAIN) for node in nodes}) if key else []
        outcomes.append(GroupOutcome(f"{meta.namespace}/{meta.name}", podgroups.min_count(group), key,
                                     len(members.get((meta.namespace, meta.name), [])), len(nodes),
                                     tuple(domains)))
    return outcomes


def without_topology_constraints(trace: Trace) -> Trace:
    """``trace`` with its PodGroups' topology constraints removed (everything else as it is)."""
    objects = []
    for obj in trace.objects:
        if isinstance(obj, objects_pb2.PodGroup) and obj.spec.scheduling_constraints.topology:
            unconstrained = objects_pb2.PodGroup()
            unconstrained.CopyFrom(obj)
            unconstrained.spec.ClearField("scheduling_constraints")
            obj = unconstrained
        objects.append(obj)
    return replace(trace, objects=objects)
