"""How many signatures keep memos: as many as fit the memory budget at the cluster's size, within fixed
bounds, the least recently used dropped first."""

from __future__ import annotations

from scheduler.framework.batching import (
    MAX_SIGNATURES,
    MEMO_BUDGET_BYTES,
    MEMO_BYTES_PER_VALUE,
    MIN_SIGNATURES,
    BatchMemos,
    signatures_within_budget,
)


def test_the_budget_decides_how_many_signatures_keep_memos() -> None:
    # The default profile: the Filter verdict and seven Score plugins, 16 bytes each per node.
    assert signatures_within_budget(1523, 8) == MEMO_BUDGET_BYTES // (1523 * 8 * MEMO_BYTES_PER_VALUE) == 172
    assert signatures_within_budget(5000, 8) == 52
    assert signatures_within_budget(10, 8) == MAX_SIGNATURES
    assert signatures_within_budget(100_000, 8) == MIN_SIGNATURES
    assert signatures_within_budget(0, 0) == MAX_SIGNATURES  # no nodes yet: nothing to hold


def test_the_least_recently_used_memo_is_dropped_beyond_what_is_kept() -> None:
    memos = BatchMemos()
    first, known = memos.get(("a",), keep=2)
    assert not known
    memos.get(("b",), keep=2)
    assert memos.get(("a",), keep=2) == (first, True)  # "a" is now the most recently used
    memos.get(("c",), keep=2)
    assert len(memos) == 2
    assert memos.peek(("b",)) is None and memos.peek(("a",)) is first and memos.peek(("c",)) is not None
