"""The Score phase's totals: per node, the sum over the Score plugins of its normalized score times the
plugin's weight, once every score is checked to be within MIN_NODE_SCORE..MAX_NODE_SCORE.

One function, two implementations: ``totals_by_node``, the reference, a Python step per score; and
``weighted_totals``, a few NumPy operations for the hundreds of feasible nodes times every Score plugin
of each cycle, which hands over to the reference wherever int64 arithmetic could differ from Python's
(a score that is not an int64, weights large enough to overflow) and where a score is out of range (the
reference names the first one). A hypothesis test holds them equal.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from scheduler.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE

#: Weights whose absolute values sum to less than this keep every total of in-range scores in an int64.
_INT64_SAFE_WEIGHT_SUM = 2**63 // (MAX_NODE_SCORE + 1)


class InvalidScore(NamedTuple):
    """The first score out of range: the plugin (in ``per_plugin``'s order) and the value."""

    plugin: str
    value: int


def totals_by_node(
    per_plugin: Mapping[str, Sequence[int]], weights: Mapping[str, int], count: int
) -> list[int] | InvalidScore:
    """The reference: ``per_plugin`` holds each plugin's ``count`` scores, ``weights`` its weight."""
    totals = [0] * count
    for name, values in per_plugin.items():
        if values and (min(values) < MIN_NODE_SCORE or max(values) > MAX_NODE_SCORE):
            return InvalidScore(name, next(v for v in values if not MIN_NODE_SCORE <= v <= MAX_NODE_SCORE))
        weight = weights[name]
        totals = list(map(operator.add, totals, map(operator.mul, values, itertools.repeat(weight))))
    return totals


def weighted_totals(
    per_plugin: Mapping[str, Sequence[int]], weights: Mapping[str, int], count: int
) -> list[int] | InvalidScore:
    """``totals_by_node``, in NumPy where int64 gives the same numbers."""
    if count and per_plugin and sum(abs(weights[name]) for name in per_plugin) < _INT64_SAFE_WEIGHT_SUM:
        scores = np.array(list(per_plugin.values()))
        if scores.dtype == np.int64 and scores.min() >= MIN_NODE_SCORE and scores.max() <= MAX_NODE_SCORE:
            plugin_weights = np.array([weights[name] for name in per_plugin], dtype=np.int64)
            totals: list[int] = (plugin_weights @ scores).tolist()
            return totals
    return totals_by_node(per_plugin, weights, count)
