"""The Score totals' NumPy path against its reference, on generated scores and weights: in range or
not, ints or not, weights small or large enough to overflow an int64."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.framework.score_totals import InvalidScore, totals_by_node, weighted_totals

SCORE = st.one_of(st.integers(0, 100), st.integers(-5, 105), st.integers(-2**70, 2**70), st.floats(0, 100),
                  st.booleans())
WEIGHT = st.one_of(st.integers(1, 10), st.integers(-2**62, 2**62))


@st.composite
def scores(draw: st.DrawFn) -> tuple[dict[str, list[int]], dict[str, int], int]:
    count = draw(st.integers(0, 8))
    plugins = draw(st.lists(st.sampled_from("ABCDE"), unique=True, max_size=5))
    in_range = draw(st.booleans())
    value = st.integers(0, 100) if in_range else SCORE
    per_plugin = {name: draw(st.lists(value, min_size=count, max_size=count)) for name in plugins}
    weights = {name: draw(st.integers(1, 10) if in_range else WEIGHT) for name in plugins}
    return per_plugin, weights, count


@settings(max_examples=500, deadline=None)
@given(scores())
def test_weighted_totals_are_the_references(case: tuple[dict[str, list[int]], dict[str, int], int]) -> None:
    per_plugin, weights, count = case
    fast, reference = weighted_totals(per_plugin, weights, count), totals_by_node(per_plugin, weights, count)
    assert fast == reference
    assert [type(total) for total in fast] == [type(total) for total in reference]


def test_the_first_score_out_of_range_is_named() -> None:
    assert weighted_totals({"A": [1, 2], "B": [3, 101], "C": [-1, 0]}, {"A": 1, "B": 2, "C": 1}, 2) == (
        InvalidScore("B", 101))
    assert weighted_totals({"A": [1, 2], "B": [3, 4]}, {"A": 1, "B": 2}, 2) == [7, 10]
