"""Per-pod sums over every node of the snapshot, kept across cycles and recomputed only where nodes changed.

InterPodAffinity and PodTopologySpread need, for each pod they schedule, a sum over all nodes (5,000 of
them) of something computed from each node's labels and pods: how many pods match a selector per
topology domain, which topology pairs hold pods whose anti-affinity matches the pod, and so on. Computed
from scratch, that is a pass over every pod of the cluster per scheduling cycle, which dominates a cycle
in Python. But pods of one workload ask the same question (same namespace, labels and terms), and
between two cycles only a few nodes change (the pod just bound, a node update).

So a plugin keys the question (``AggregateCache``, a small LRU) and keeps, per question, the
contribution of every node it has seen (``NodeAggregate``), indexed by the NodeInfo's ``generation``.
Generations are process-wide unique and every change to a NodeInfo (its node object, a pod added or
removed) draws a new one, so a generation names one exact content: a node whose generation is known
contributes what it contributed before; a new generation is computed; a generation that is no longer in
the snapshot is subtracted. A pass thus costs a dictionary lookup per node plus the computation for the
nodes that changed.

Nor does finding the nodes that changed take a pass over every node: ``refresh_from`` asks the snapshot
(the Handle's ``NodeInfoLister``) which nodes it replaced, added or dropped since this aggregate's last
refresh (``changed_since``) and looks only at those, so a cycle costs in proportion to the nodes that
changed. A first refresh, a refresh against another lister, or one so far behind that the lister's
bounded log no longer reaches back, is a full pass instead: ``refresh``, over the nodes the aggregate
covers, which is the declared reference (tests/unit/test_plugin_nodeaggregate.py proves the two equal on
generated sequences of node and pod changes).

An aggregate covers ``Members`` of the lister: every node, or only those on one of its affinity lists
(nodes with pods with affinity terms, or with required anti-affinity terms), where a node that changed
may join or leave.

A contribution is a tuple of ``(group, key, amount)``: ``totals[group][key]`` is the sum of the amounts
and a key stays present while at least one node contributes to it, even with a zero amount (a topology
domain with no matching pod is still a domain).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from scheduler.framework.interface import NodeInfoLister
from scheduler.framework.types import NodeInfo

G = TypeVar("G", bound=Hashable)
#: What one node adds to the sums: (group, key, amount) triples.
Contribution = tuple[tuple[G, str, int], ...]

#: How many distinct questions a plugin remembers. Each entry holds one small tuple per node; a cluster
#: runs a few workloads at a time, and a miss only costs the pass that an uncached plugin always pays.
DEFAULT_CACHE_SIZE = 16


@dataclass(frozen=True, slots=True)
class Members:
    """Which of a lister's nodes an aggregate sums over: ``listed`` lists them all, ``includes`` says
    whether one NodeInfo of the lister is one of them."""

    listed: Callable[[NodeInfoLister], Sequence[NodeInfo]]
    includes: Callable[[NodeInfo], bool]


ALL_NODES = Members(lambda lister: lister.list(), lambda node_info: True)
WITH_AFFINITY = Members(
    lambda lister: lister.have_pods_with_affinity(), lambda node_info: bool(node_info.pods_with_affinity)
)
WITH_REQUIRED_ANTI_AFFINITY = Members(
    lambda lister: lister.have_pods_with_required_anti_affinity(),
    lambda node_info: bool(node_info.pods_with_required_anti_affinity),
)


class NodeAggregate(Generic[G]):
    """The sums of per-node contributions over the nodes of the last refresh."""

    __slots__ = ("_by_generation", "_generation_by_name", "_lister", "_mark", "_refs", "totals")

    def __init__(self) -> None:
        self._by_generation: dict[int, Contribution[G]] = {}
        #: node name -> the generation it last contributed with: a node that changed is replaced without
        #: a pass over every node to find its old generation.
        self._generation_by_name: dict[str, int] = {}
        #: group -> key -> summed amount. Read-only for callers: copy before changing.
        self.totals: dict[G, dict[str, int]] = {}
        #: group -> key -> how many nodes contribute to it (the key is dropped at zero).
        self._refs: dict[G, dict[str, int]] = {}
        #: The lister of the last ``refresh_from`` and its change mark then (None: none yet).
        self._lister: NodeInfoLister | None = None
        self._mark = 0

    def refresh_from(
        self, lister: NodeInfoLister, members: Members, contribution: Callable[[NodeInfo], Contribution[G]]
    ) -> None:
        """Bring ``totals`` up to date with the ``members`` of ``lister``: from the nodes it changed since
        the last refresh from it, or by ``refresh`` over them all when that is not known."""
        mark = lister.change_mark()
        changed = lister.changed_since(self._mark) if lister is self._lister else None
        if changed is None:
            self.refresh(members.listed(lister), contribution)
        elif changed:
            self._refresh_changed(changed, lister, members.includes, contribution)
        self._lister, self._mark = lister, mark

    def refresh(self, nodes: Sequence[NodeInfo], contribution: Callable[[NodeInfo], Contribution[G]]) -> None:
        """Bring ``totals`` up to date with ``nodes`` (each name once), calling ``contribution`` only for
        NodeInfos whose generation was not seen before. ``contribution`` must depend only on the
        NodeInfo (and on whatever the caller keyed this aggregate with). The reference for
        ``refresh_from``: a pass over every node."""
        self._lister = None  # what ``nodes`` is a list of is not known: the next refresh_from is full
        known = self._by_generation
        by_name = self._generation_by_name
        fresh = [node_info for node_info in nodes if node_info.generation not in known]
        replaced = []
        for node_info in fresh:
            generation = node_info.generation
            if generation in known:  # the same NodeInfo listed twice
                continue
            added = contribution(node_info)
            known[generation] = added
            self._apply(added, +1)
            old = by_name.get(node_info.name)
            by_name[node_info.name] = generation
            if old is not None:
                replaced.append(old)
        # Subtracted after every addition, so that a key both leaves and joins keeps its place.
        for generation in replaced:
            if generation in known:
                self._apply(known.pop(generation), -1)
        if len(known) != len(nodes):
            # Some generations are gone without a successor: nodes that left the list.
            current = {node_info.generation for node_info in nodes}
            for generation in known.keys() - current:
                self._apply(known.pop(generation), -1)
            self._generation_by_name = {node_info.name: node_info.generation for node_info in nodes}

    def _refresh_changed(
        self,
        names: Sequence[str],
        lister: NodeInfoLister,
        includes: Callable[[NodeInfo], bool],
        contribution: Callable[[NodeInfo], Contribution[G]],
    ) -> None:
        """``refresh`` where only the nodes ``names`` may differ from the last refresh."""
        known = self._by_generation
        by_name = self._generation_by_name
        replaced = []
        for name in dict.fromkeys(names):  # each once, in the order they changed
            old = by_name.get(name)
            try:
                node_info: NodeInfo | None = lister.get(name)
            except KeyError:
                node_info = None  # dropped
            if node_info is not None and includes(node_info):
                generation = node_info.generation
                if generation == old:
                    continue
                added = contribution(node_info)
                known[generation] = added
                self._apply(added, +1)
                by_name[name] = generation
            elif old is not None:
                del by_name[name]
            if old is not None:
                replaced.append(old)
        # Subtracted after every addition, as in ``refresh``.
        for generation in replaced:
            self._apply(known.pop(generation), -1)

    def contribution_of(self, node_info: NodeInfo) -> Contribution[G] | None:
        """What ``node_info`` contributed at the last refresh (None if it was not among the nodes)."""
        return self._by_generation.get(node_info.generation)

    def _apply(self, contribution: Contribution[G], sign: int) -> None:
        totals, refs = self.totals, self._refs
        for group, key, amount in contribution:
            group_totals = totals.get(group)
            if group_totals is None:
                group_totals = totals[group] = {}
                refs[group] = {}
            group_refs = refs[group]
            left = group_refs.get(key, 0) + sign
            if left > 0:
                group_refs[key] = left
                group_totals[key] = group_totals.get(key, 0) + sign * amount
            else:
                del group_refs[key]
                del group_totals[key]
                if not group_totals:
                    del totals[group]
                    del refs[group]


class AggregateCache(Generic[G]):
    """A small LRU of NodeAggregates keyed by the question they answer."""

    __slots__ = ("_entries", "_size")

    def __init__(self, size: int = DEFAULT_CACHE_SIZE) -> None:
        self._entries: OrderedDict[Hashable, NodeAggregate[G]] = OrderedDict()
        self._size = size

    def refreshed(
        self,
        key: Hashable,
        lister: NodeInfoLister,
        members: Members,
        contribution: Callable[[NodeInfo], Contribution[G]],
    ) -> NodeAggregate[G]:
        """The aggregate for ``key``, brought up to date with the ``members`` of ``lister``."""
        aggregate = self._entries.get(key)
        if aggregate is None:
            aggregate = self._entries[key] = NodeAggregate()
            if len(self._entries) > self._size:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(key)
        aggregate.refresh_from(lister, members, contribution)
        return aggregate
