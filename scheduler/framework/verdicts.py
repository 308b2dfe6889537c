"""Tallying Filter's verdicts on a batch of nodes: which nodes fit, and each distinct failed Status with
the number of nodes that have it.

A verdict list holds None for a node that fits and a Status for one that does not; plugins hand one
Status object to every node with the same verdict, so thousands of verdicts are a handful of objects,
told apart by identity. ``fitting_positions`` and ``counted_failures`` answer with passes over the
list. A signature's memo (framework/batching.py) returns ``CodedVerdicts`` instead, which also carry,
per node, the index of its verdict in the memo's table of distinct verdicts: the same answers then come
from NumPy over those indices, without looking at the objects (a property test holds the two equal).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from scheduler.framework.status import Status, counted_by_identity

_NONES = itertools.repeat(None)

#: A CodedVerdicts index meaning "fits" (the verdict is None) ...
FITS = -1
#: ... and one meaning "a verdict not in the table" (an error, kept out of the memo's table).
UNLISTED = -2

Codes = npt.NDArray[np.int32]


class CodedVerdicts(list[Status | None]):
    """Verdicts that also know the index of each in ``table`` (FITS for None, UNLISTED for a Status the
    table does not hold): ``self[i] is table[codes[i]]`` wherever ``codes[i] >= 0``."""

    __slots__ = ("codes", "table")

    def __init__(self, verdicts: Iterable[Status | None], codes: Codes, table: Sequence[Status]) -> None:
        super().__init__(verdicts)
        self.codes = codes
        self.table = table


def fitting_positions(verdicts: Sequence[Status | None]) -> list[int]:
    """The positions of the nodes that fit (their verdict is None), in order."""
    if isinstance(verdicts, CodedVerdicts):
        positions: list[int] = np.flatnonzero(verdicts.codes == FITS).tolist()
        return positions
    return list(itertools.compress(itertools.count(), map(operator.is_, verdicts, _NONES)))


def counted_failures(verdicts: Sequence[Status | None], stop: int | None = None) -> list[tuple[Status, int]]:
    """Each distinct failed Status object among the first ``stop`` verdicts (all by default), with how
    many of them it is, in no particular order (what reads them sums or sorts)."""
    if isinstance(verdicts, CodedVerdicts):
        codes = verdicts.codes[:stop]
        if not (codes == UNLISTED).any():
            return _counted_codes(codes, verdicts.table)
    prefix = verdicts if stop is None else verdicts[:stop]
    return [(status, times) for status, times in counted_by_identity(prefix) if status is not None]


def _counted_codes(codes: Codes, table: Sequence[Status]) -> list[tuple[Status, int]]:
    times = np.bincount(codes + 1, minlength=1)[1:]  # FITS is -1: shifted to 0, and dropped
    present = np.flatnonzero(times)
    return list(zip(map(table.__getitem__, present.tolist()), times[present].tolist(), strict=True))
