"""Opportunistic batching (kube-scheduler's KEP-5598): pods that every Filter and Score plugin signs
alike reuse each other's per-node work.

Every plugin of the cycle signs the pod (``SignPlugin.sign``); the framework joins the signatures into
the pod's, or finds none when one plugin cannot sign. For each signature seen, a ``SignatureMemo``
keeps, per row of the snapshot's node table, the Filter verdict (as its index in the memo's table of
distinct verdicts) and each Score plugin's raw score (before NormalizeScore), with the generation of
the NodeInfo they were computed on. A NodeInfo's
generation changes with anything in it (framework/types.py), so a row whose generation is still the
one remembered gives the same verdict and raw scores again: only rows whose node changed since (the
last pod's node, nodes an event touched) are evaluated again. Everything else of the cycle runs as for
any pod: PreFilter and PreScore, the round robin over nodes that stops at percentageOfNodesToScore,
NormalizeScore over the nodes scored, the weighted totals, the seeded choice among equals and the
explanation. The decisions are therefore those of the unbatched cycle, node for node.

Nodes with nominated pods are filtered as the pods nominated there make them look (not a function of
their NodeInfo alone): their verdicts are neither remembered nor reused.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.framework.interface import Signature
from scheduler.framework.nodedata import NodeSet, Rows
from scheduler.framework.status import Code, Status, by_identity
from scheduler.framework.types import NodeInfo
from scheduler.framework.verdicts import FITS, UNLISTED, Codes, Verdicts

#: The memory one profile's memos may take. A memo holds a value and a generation (at most 16 bytes) per
#: node for the Filter verdict and for each Score plugin; how many signatures keep memos follows from
#: this and the cluster's size (``signatures_within_budget``), the least recently used memo dropped
#: beyond. Pods of many shapes (a trace of GPU jobs has hundreds) are scheduled with their memo only
#: while it is kept.
MEMO_BUDGET_BYTES = 32 * 2**20
MEMO_BYTES_PER_VALUE = 16
#: The signatures kept whatever the cluster's size.
MIN_SIGNATURES, MAX_SIGNATURES = 32, 1024

Generations = npt.NDArray[np.int64]

#: The raw scores a memo holds (int64); a plugin scoring beyond them is asked every time.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class NodeGenerations:
    """Node data (framework/nodedata.py): the generation of the NodeInfo in each row. A rebuilt table
    makes a new one, which is how a memo learns that rows now mean other nodes."""

    __slots__ = ("values",)

    def __init__(self, nodes: Sequence[NodeInfo]) -> None:
        self.values: Generations = np.fromiter((info.generation for info in nodes), dtype=np.int64,
                                               count=len(nodes))

    def set_row(self, row: int, info: NodeInfo) -> None:
        self.values[row] = info.generation


class _Column:
    """One kind of per-node value (the index of the Filter verdict, or one plugin's raw score), by row,
    each with the generation it was computed on (0: never). NumPy arrays, so that a window of rows is
    read in C."""

    __slots__ = ("generations", "values")

    def __init__(self, size: int, dtype: type) -> None:
        self.generations: Generations = np.zeros(size, dtype=np.int64)
        self.values: npt.NDArray[Any] = np.zeros(size, dtype=dtype)

    def unknown(self, rows: npt.NDArray[np.intp], generations: Generations) -> npt.NDArray[np.bool_]:
        changed: npt.NDArray[np.bool_] = self.generations[rows] != generations
        return changed

    def remember(self, rows: npt.NDArray[np.intp], generations: Generations, values: Any) -> None:
        self.generations[rows] = generations
        self.values[rows] = values


class SignatureMemo:
    """What Filter and Score made of each node for pods of one signature."""

    __slots__ = ("_filter", "_fitting", "_layout", "_objects", "_scores", "_table", "_unseen", "_verdicts",
                 "evaluated", "reused")

    def __init__(self) -> None:
        self._layout: NodeGenerations | None = None
        #: Per row, the index of the node's Filter verdict in ``_table`` (FITS: it fits).
        self._filter = _Column(0, np.int32)
        #: Each distinct Filter verdict (code, reasons, plugin) once, as one object, and its index.
        self._table: list[Status] = []
        self._verdicts: dict[tuple[Code, tuple[str, ...], str], int] = {}
        #: The verdict of each index, shifted by two: [UNLISTED, FITS, *table].
        self._objects: npt.NDArray[np.object_] = _object_array([None, None])
        self._scores: dict[str, _Column] = {}
        #: How many rows the memo remembers as fitting, and how many it has no verdict for (the Filter
        #: column's tally, kept as rows are remembered: ``predicts_failure`` reads it in O(1)).
        self._fitting = 0
        self._unseen = 0
        #: Node evaluations this memo answered, and those it had to have done (for tests and metrics).
        self.reused = 0
        self.evaluated = 0

    def _generations(self, nodes: NodeSet) -> tuple[Rows, Generations]:
        """The rows of ``nodes`` and the generations of their NodeInfos, forgetting everything if the
        table was rebuilt. ``nodes`` must have rows (the framework asks a memo about no others)."""
        found = nodes.node_data(NodeGenerations)
        if found is None:
            raise ValueError("a signature's memo answers for the snapshot's nodes only (nodes with rows)")
        layout, rows = found
        if layout is not self._layout:
            self._layout = layout
            self._filter = _Column(len(layout.values), np.int32)
            self._scores = {}
            self._fitting, self._unseen = 0, len(layout.values)
        return rows, layout.values[rows]

    def filter(
        self, nodes: NodeSet, excluded: Sequence[bool],
        evaluate: Callable[[NodeSet], list[Status | None]],
    ) -> Verdicts:
        """The Filter verdict of each node: remembered ones reused, the others from ``evaluate`` (called
        once, with those nodes), with the index of each in the memo's table of verdicts. ``excluded``
        nodes (with nominated pods) are always evaluated and never remembered; nor is an ERROR."""
        rows, generations = self._generations(nodes)
        column = self._filter
        unknown = column.unknown(rows, generations)
        any_excluded = any(excluded)
        if any_excluded:
            unknown |= np.asarray(excluded, dtype=bool)
        positions = np.flatnonzero(unknown)
        codes: Codes = column.values[rows]
        self.reused += len(rows) - len(positions)
        if not len(positions):
            return Verdicts(self._objects[codes + 2].tolist(), codes, self._table)
        self.evaluated += len(positions)
        # Verdicts are values: equal ones are kept as one object, so that the nodes that fail for the
        # same reason share it across cycles too, and are told apart by their index. Plugins hand one
        # object to many nodes: each distinct one is looked up once.
        answers = evaluate(nodes.subset(positions.tolist()))
        code_of = {ident: self._code(status) for ident, status in by_identity(answers).items()}
        fresh = np.fromiter(map(code_of.__getitem__, map(id, answers)), dtype=np.int32, count=len(answers))
        codes[positions] = fresh
        kept = fresh != UNLISTED
        if any_excluded:
            kept &= ~np.asarray(excluded, dtype=bool)[positions]
        at = positions[kept]
        self._tally(rows[at], fresh[kept])
        column.remember(rows[at], generations[at], fresh[kept])
        statuses: list[Status | None] = self._objects[codes + 2].tolist()
        if not kept.all():  # an ERROR is nobody's verdict but its own node's
            for i in np.flatnonzero(fresh == UNLISTED).tolist():
                statuses[positions[i]] = answers[i]
        return Verdicts(statuses, codes, self._table)

    def predicts_failure(self) -> bool:
        """Whether the memo has a verdict for every row of the table and none of them fits: a pod of this
        signature then most likely fits nowhere (only the nodes changed since could), so Filter asks
        about every node at once instead of a window at a time (the verdicts are the same either way)."""
        return self._layout is not None and not self._unseen and not self._fitting

    def _tally(self, rows: npt.NDArray[np.intp], codes: Codes) -> None:
        """Count the rows that fit, and those never remembered, as ``codes`` are remembered at ``rows``."""
        column = self._filter
        seen = column.generations[rows] != 0
        self._unseen -= len(rows) - int(np.count_nonzero(seen))
        self._fitting += int(np.count_nonzero(codes == FITS)) - int(
            np.count_nonzero(column.values[rows][seen] == FITS))

    def _code(self, status: Status | None) -> int:
        """The index of ``status`` in the table, added if new; FITS for None, UNLISTED for an error."""
        if status is None:
            return FITS
        if status.code is Code.ERROR or status.error is not None:
            return UNLISTED
        key = (status.code, status.reasons, status.plugin)
        code = self._verdicts.get(key)
        if code is None:
            code = self._verdicts[key] = len(self._table)
            self._table.append(status)
            self._objects = _object_array([None, None, *self._table])
        return code

    def score(self, plugin: str, nodes: NodeSet, evaluate: Callable[[NodeSet], list[int]]) -> list[int]:
        """Plugin ``plugin``'s raw score of each node: remembered ones reused, the others from
        ``evaluate`` (called once, with those nodes; what it raises goes to the caller)."""
        rows, generations = self._generations(nodes)
        column = self._scores.get(plugin)
        if column is None:
            column = self._scores[plugin] = _Column(len(self._filter.values), np.int64)
        positions = np.flatnonzero(column.unknown(rows, generations))
        if len(positions):
            fresh = list(evaluate(nodes.subset(positions.tolist())))
            if len(fresh) != len(positions):
                return fresh  # the caller reports the wrong count
            if min(fresh) < INT64_MIN or max(fresh) > INT64_MAX:
                return list(evaluate(nodes))  # beyond what the memo holds: not remembered
            column.remember(rows[positions], generations[positions], fresh)
        remembered: list[int] = column.values[rows].tolist()
        return remembered


def signatures_within_budget(num_nodes: int, columns: int) -> int:
    """How many memos of ``columns`` per-node columns (the Filter verdict and the Score plugins') fit in
    MEMO_BUDGET_BYTES at ``num_nodes`` nodes, within MIN_SIGNATURES..MAX_SIGNATURES."""
    per_memo = max(num_nodes, 1) * max(columns, 1) * MEMO_BYTES_PER_VALUE
    return min(max(MEMO_BUDGET_BYTES // per_memo, MIN_SIGNATURES), MAX_SIGNATURES)


def _object_array(items: Sequence[Any]) -> npt.NDArray[np.object_]:
    array = np.empty(len(items), dtype=object)
    array[:] = items
    return array


class BatchMemos:
    """One profile's memos, by signature, the least recently used dropped beyond the number asked for."""

    __slots__ = ("_memos",)

    def __init__(self) -> None:
        self._memos: OrderedDict[Signature, SignatureMemo] = OrderedDict()

    def get(self, signature: Signature, keep: int = MIN_SIGNATURES) -> tuple[SignatureMemo, bool]:
        """The memo of ``signature``, and whether it existed already; at most ``keep`` memos stay."""
        memo = self._memos.get(signature)
        if memo is not None:
            self._memos.move_to_end(signature)
            return memo, True
        memo = self._memos[signature] = SignatureMemo()
        while len(self._memos) > max(keep, 1):
            self._memos.popitem(last=False)
        return memo, False

    def peek(self, signature: Signature) -> SignatureMemo | None:
        """The memo of ``signature`` if there is one, leaving the order of use as it is."""
        return self._memos.get(signature)

    def __len__(self) -> int:
        return len(self._memos)
