"""Where an Allocator gets its index of the slices (``SliceIndexes``).

``FreshSliceIndexes`` is the reference: every allocator (one per pod) indexes every slice anew, parsing
each device and evaluating the selectors on it again. ``ReusedSliceIndexes`` is the fast path the
scheduler uses: the index of the last slice list is reused while the list is the same object (the
scheduler's lister hands out the same sequence until a slice changes), and on a change a slice that is
the same object keeps its parsed devices and their selector results. Both give the same allocations
(tests/unit/test_dra_allocator.py checks that as a property).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from cluster.api import objects_pb2
from scheduler.dra.pools import SliceIndex


class SliceIndexes(Protocol):
    def index(self, slices: Sequence[objects_pb2.ResourceSlice]) -> SliceIndex:
        """An index of ``slices``, which the caller does not change afterwards."""


class FreshSliceIndexes:
    """The reference: a new index every time."""

    def index(self, slices: Sequence[objects_pb2.ResourceSlice]) -> SliceIndex:
        return SliceIndex(slices)


class ReusedSliceIndexes:
    """The fast path: the last index while the slice list is the same object; otherwise a new one that
    keeps the entries of the slices that did not change."""

    def __init__(self) -> None:
        self._last: SliceIndex | None = None

    def index(self, slices: Sequence[objects_pb2.ResourceSlice]) -> SliceIndex:
        last = self._last
        if last is None or last.slices is not slices:
            last = self._last = SliceIndex(slices, last)
        return last
