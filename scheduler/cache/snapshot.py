"""The snapshot a scheduling cycle works on: a frozen copy of the cache's nodes, as kube-scheduler's Snapshot.

The scheduler keeps one Snapshot and has the cache bring it up to date at the start of every cycle
(``Cache.update_snapshot``). Only the nodes that changed since the previous cycle are copied: the
NodeInfo objects of the others stay the very same objects from one cycle to the next. A changed node gets
a fresh copy (the old object is left as it was, so anything still holding it sees a consistent, if
stale, node), put in place in the node list and in the affinity lists it belongs to (added to or
dropped from them, by bisection, when it starts or stops having pods with affinity terms).

The snapshot also keeps a table of the plugins' derived node data (framework/nodedata.py), row i for
the node at position i of the node list: a replaced node's row is rewritten, and the data is rebuilt with
the list. ``batch`` and ``rotated`` hand the algorithm nodes together with their rows, for the plugins'
batch Filter and Score (the framework's ``NodeTableLister``).

The snapshot also knows which PersistentVolumeClaims pods on its nodes use (kube-scheduler's
usedPVCSet, for ReadWriteOncePod): per claim, how many of its nodes have a pod using it, kept as nodes are
replaced, added and dropped (only nodes with such pods cost anything).

The snapshot logs the names of the nodes it replaces, adds and drops (``change_mark`` / ``changed_since``),
so that a plugin keeping sums over every node (plugins/nodeaggregate.py) finds what changed since its
last cycle without a pass over all nodes. The log is bounded: a reader further behind than
``CHANGE_LOG_SIZE`` changes is told so and looks at every node instead.

The node list is in the cache's NodeTree order (zones interleaved), the same from one cycle to the
next until a node is added, removed or changes zone; the algorithm's round-robin start index relies on
that stability. Every node in a snapshot has its Node object: the NodeInfos the cache keeps for deleted
nodes whose pods have not gone yet never appear here.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from scheduler.framework import NodeInfo
from scheduler.framework.nodedata import NodeSet, NodeTable

#: How many node changes the log keeps at least (at most twice as many, trimmed in halves). A cycle
#: changes a node or two; a reader that is further behind than this is better off with a full pass.
CHANGE_LOG_SIZE = 4096


class Snapshot:
    """Implements the framework's ``SharedLister``, ``NodeInfoLister``, ``NodeTableLister`` and
    ``StorageInfoLister``. Filled
    by ``Cache``, which is the only writer of its underscored fields; plugins only read it."""

    __slots__ = (
        "_anti_affinity_positions",
        "_by_name",
        "_change_log",
        "_change_log_size",
        "_change_log_start",
        "_index",
        "_list",
        "_table",
        "_used_pvcs",
        "_with_affinity",
        "_with_affinity_positions",
        "_with_required_anti_affinity",
        "generation",
        "tree_version",
    )

    def __init__(self, change_log_size: int = CHANGE_LOG_SIZE) -> None:
        self._by_name: dict[str, NodeInfo] = {}
        self._list: list[NodeInfo] = []
        #: node name -> position in ``_list``, so a changed node is replaced in place in O(1).
        self._index: dict[str, int] = {}
        #: The affinity lists keep the node list's order; next to each, the ascending positions in
        #: ``_list`` of its nodes, so that a node is found, added or removed by bisection.
        self._with_affinity: list[NodeInfo] = []
        self._with_affinity_positions: list[int] = []
        self._with_required_anti_affinity: list[NodeInfo] = []
        self._anti_affinity_positions: list[int] = []
        self._table = NodeTable()
        #: "namespace/name" of each claim used by a pod on a node here -> how many nodes have one.
        self._used_pvcs: Counter[str] = Counter()
        #: Names of the nodes replaced, added or dropped, in the order logged; ``_change_log_start`` is
        #: the mark of its first entry (the changes before it were trimmed away).
        self._change_log: list[str] = []
        self._change_log_start = 0
        self._change_log_size = change_log_size
        #: The newest NodeInfo generation copied in: nodes of a later generation changed since.
        self.generation = 0
        #: The NodeTree version the node list was built from (-1: never built).
        self.tree_version = -1

    # ------------------------------------------------------------------------ SharedLister

    def node_infos(self) -> Snapshot:
        return self

    def storage_infos(self) -> Snapshot:
        return self

    # ------------------------------------------------------------------- StorageInfoLister

    def is_pvc_used_by_pods(self, key: str) -> bool:
        """Whether a pod on one of the nodes uses the claim ``key`` ("namespace/name")."""
        return key in self._used_pvcs

    # ---------------------------------------------------------------------- NodeInfoLister

    def list(self) -> Sequence[NodeInfo]:
        return self._list

    def get(self, node_name: str) -> NodeInfo:
        """The node's info; raises KeyError for a node the snapshot does not have."""
        return self._by_name[node_name]

    def have_pods_with_affinity(self) -> Sequence[NodeInfo]:
        return self._with_affinity

    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]:
        return self._with_required_anti_affinity

    def change_mark(self) -> int:
        """How many node changes the snapshot has logged so far: ``changed_since`` takes it back."""
        return self._change_log_start + len(self._change_log)

    def changed_since(self, mark: int) -> Sequence[str] | None:
        """The names of the nodes replaced, added or dropped after ``mark`` (an earlier ``change_mark()``),
        update by update, a node once per update that changed it; None when the log no longer reaches
        back to ``mark``."""
        start = mark - self._change_log_start
        if start < 0 or start > len(self._change_log):
            return None
        return self._change_log[start:]

    def num_nodes(self) -> int:
        return len(self._list)

    def node_set(self, nodes: Sequence[NodeInfo]) -> NodeSet:
        """``nodes``, this snapshot's own NodeInfos, with their rows in its node data."""
        index = self._index
        rows = np.fromiter((index[info.name] for info in nodes), dtype=np.intp, count=len(nodes))
        return NodeSet(list(nodes), rows, self._table)

    def rotated(self, first: int) -> NodeSet:
        """The whole node list from position ``first`` round to the one before it, with their rows."""
        rows = self._table.positions
        return NodeSet([*self._list[first:], *self._list[:first]],
                       np.concatenate((rows[first:], rows[:first])), self._table)

    def __repr__(self) -> str:
        return f"<Snapshot nodes={len(self._list)} generation={self.generation}>"

    # --------------------------------------------------------------- maintenance (by Cache)

    def _add(self, info: NodeInfo) -> None:
        """A node new to the snapshot (the caller rebuilds the node list)."""
        self._by_name[info.name] = info
        self._log_change(info.name)
        if info.pvc_ref_counts:
            self._used_pvcs.update(info.pvc_ref_counts.keys())

    def _drop(self, name: str) -> None:
        """A node deleted since (the caller rebuilds the node list)."""
        info = self._by_name.pop(name)
        self._log_change(name)
        if info.pvc_ref_counts:
            self._unuse(info.pvc_ref_counts.keys())

    def _replace(self, info: NodeInfo) -> None:
        """Put a fresh copy of a node already in the lists where the old one was, and add it to or drop
        it from the affinity lists if it started or stopped having such pods."""
        name = info.name
        old = self._by_name[name]
        if old.pvc_ref_counts or info.pvc_ref_counts:
            self._count_pvcs(old, info)
        self._by_name[name] = info
        self._log_change(name)
        position = self._index.get(name)
        if position is None:
            return  # not laid out yet: the rebuild that lays it out fills the affinity lists too
        self._list[position] = info
        self._table.set_row(position, info)
        _place(self._with_affinity, self._with_affinity_positions, position, info,
               bool(info.pods_with_affinity))
        _place(self._with_required_anti_affinity, self._anti_affinity_positions, position, info,
               bool(info.pods_with_required_anti_affinity))

    def _log_change(self, name: str) -> None:
        log = self._change_log
        log.append(name)
        if len(log) > 2 * self._change_log_size:
            trimmed = len(log) - self._change_log_size
            del log[:trimmed]
            self._change_log_start += trimmed

    def _count_pvcs(self, old: NodeInfo, new: NodeInfo) -> None:
        self._used_pvcs.update(new.pvc_ref_counts.keys() - old.pvc_ref_counts.keys())
        self._unuse(old.pvc_ref_counts.keys() - new.pvc_ref_counts.keys())

    def _unuse(self, keys: Iterable[str]) -> None:
        """One node fewer uses each of ``keys``."""
        used = self._used_pvcs
        for key in keys:
            used[key] -= 1
            if used[key] <= 0:
                del used[key]

    def _rebuild_node_list(self, order: Sequence[str], tree_version: int) -> None:
        """Lay the nodes out in ``order`` (the NodeTree's), and the affinity lists with them."""
        self._list = [self._by_name[name] for name in order]
        self._index = {name: position for position, name in enumerate(order)}
        self._table.rebuild(self._list)
        self.tree_version = tree_version
        self._rebuild_affinity_lists()

    def _rebuild_affinity_lists(self) -> None:
        nodes = self._list
        self._with_affinity_positions = [i for i, info in enumerate(nodes) if info.pods_with_affinity]
        self._with_affinity = [nodes[i] for i in self._with_affinity_positions]
        self._anti_affinity_positions = [
            i for i, info in enumerate(nodes) if info.pods_with_required_anti_affinity
        ]
        self._with_required_anti_affinity = [nodes[i] for i in self._anti_affinity_positions]


def _place(
    members: list[NodeInfo], positions: list[int], position: int, info: NodeInfo, member: bool
) -> None:
    """Make ``info`` (at ``position`` in the node list) one of ``members`` if ``member``, else not one,
    keeping ``members`` in node-list order (``positions``: theirs, ascending)."""
    i = bisect_left(positions, position)
    present = i < len(positions) and positions[i] == position
    if member and present:
        members[i] = info
    elif member:
        positions.insert(i, position)
        members.insert(i, info)
    elif present:
        del positions[i]
        del members[i]
