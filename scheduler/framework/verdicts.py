"""Filter's verdicts on a set of nodes, and their tally: which nodes fit, and each distinct failed Status
with the number of nodes that have it.

``Verdicts.statuses`` holds None for a node that fits and a Status for one that does not; plugins hand
one Status object to every node with the same verdict, so thousands of verdicts are a handful of
objects, told apart by identity. ``fitting_positions`` and ``counted_failures`` answer with passes over
that list, or, for the failures of the whole list, with the tally the batch Filter kept as it went
(``tally``). A signature's memo (framework/batching.py) makes coded verdicts, which also carry, per
node, the index of its verdict in the memo's table of distinct verdicts (``codes``): the same answers
then come from NumPy over those indices, without looking at the objects (property tests hold each
equal to the passes over the list).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from scheduler.framework.status import Status, counted_by_identity

_NONES = itertools.repeat(None)

#: A coded verdict's index meaning "fits" (the verdict is None) ...
FITS = -1
#: ... and one meaning "a verdict not in the table" (an error, kept out of the memo's table).
UNLISTED = -2

Codes = npt.NDArray[np.int32]


class Verdicts:
    """Per node, None where it fits and the Status where it does not; coded verdicts also know the index
    of each in ``table`` (FITS for None, UNLISTED for a Status the table does not hold):
    ``statuses[i] is table[codes[i]]`` wherever ``codes[i] >= 0``."""

    __slots__ = ("codes", "statuses", "table", "tally")

    def __init__(self, statuses: list[Status | None], codes: Codes | None = None,
                 table: Sequence[Status] = (),
                 tally: Callable[[], list[tuple[Status, int]]] | None = None) -> None:
        self.statuses = statuses
        self.codes = codes
        self.table = table
        #: ``counted_failures()`` of all the verdicts, from what whoever made them knew already.
        self.tally = tally

    def __len__(self) -> int:
        return len(self.statuses)

    def all_fit(self) -> bool:
        """Whether every node fits (the common case)."""
        if self.codes is not None:
            return bool((self.codes == FITS).all())
        # Identity, not list.count(None): that calls Status.__eq__ on every failed verdict.
        return all(map(operator.is_, self.statuses, _NONES))

    def fitting_positions(self) -> list[int]:
        """The positions of the nodes that fit (their verdict is None), in order."""
        if self.codes is not None:
            positions: list[int] = np.flatnonzero(self.codes == FITS).tolist()
            return positions
        return list(itertools.compress(itertools.count(), map(operator.is_, self.statuses, _NONES)))

    def counted_failures(self, stop: int | None = None) -> list[tuple[Status, int]]:
        """Each distinct failed Status object among the first ``stop`` verdicts (all by default), with how
        many of them it is, in no particular order (what reads them sums or sorts)."""
        if self.codes is not None:
            codes = self.codes[:stop]
            if not (codes == UNLISTED).any():
                return _counted_codes(codes, self.table)
        statuses = self.statuses
        if self.tally is not None and (stop is None or stop >= len(statuses)):
            return self.tally()
        prefix = statuses if stop is None else statuses[:stop]
        return [(status, times) for status, times in counted_by_identity(prefix) if status is not None]


def _counted_codes(codes: Codes, table: Sequence[Status]) -> list[tuple[Status, int]]:
    times = np.bincount(codes + 1, minlength=1)[1:]  # FITS is -1: shifted to 0, and dropped
    present = np.flatnonzero(times)
    return list(zip(map(table.__getitem__, present.tolist()), times[present].tolist(), strict=True))
