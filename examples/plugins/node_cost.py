"""NodeCost: a scheduler plugin written outside podsched, enabled by name in the config.

It prefers cheaper nodes. Each node may carry its price in a label (``example.com/hourly-cost: "0.35"``);
among the nodes a pod fits on, the cheapest scores 100, the dearest 0, and nodes without the label (or
with a label that is not a number) score 0, as if they were the dearest. With a weight above the default
plugins' (they sum to 11), cost decides where pods go; with weight 1 it only breaks near-ties.

How a plugin like this one is put together (the in-tree plugins in ``scheduler/plugins/`` follow the
same recipe):

* ``NAME``, the name the config enables it by;
* a class with a ``name`` property and the methods of the extension points it implements, here
  ``score`` and ``score_extensions`` (Score) with ``normalize_score`` (``scheduler/framework/interface.py``
  lists every extension point and what its return values mean);
* ``ARGS``, a dataclass the configuration decodes the plugin's ``pluginConfig`` args into, as strictly as
  its own (a field unknown, given twice or of the wrong type is refused); every field has a default, and
  ``__post_init__`` may raise ``ValueError`` for what the types alone do not say (the scheduler refuses
  to start with that message, under the entry's path);
* ``new(args, handle)``, the factory: ``args`` is that ``ARGS`` instance.

Run it (the module must be importable: here from the repository root)::

    podsched scheduler --leader-elect=false --plugin NodeCost=examples.plugins.node_cost \\
        --config examples/plugins/node-cost-scheduler.yaml

Score runs once per feasible node per pod, so it parses nothing it has parsed before: label values are
turned into numbers once each (``_price``, memoized on the label's text).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from scheduler.framework import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    CycleState,
    Handle,
    NodeInfo,
    NodeScore,
    PodInfo,
    Status,
)

NAME = "NodeCost"
DEFAULT_LABEL = "example.com/hourly-cost"
#: Prices are compared in millionths (Score returns integers).
_SCALE = 1_000_000
#: The raw score of a node without a (valid) price: below any real one.
_NO_PRICE = -1


@dataclass(frozen=True, slots=True)
class NodeCostArgs:
    #: The node label holding the price (any non-negative decimal number).
    label: str = DEFAULT_LABEL

    def __post_init__(self) -> None:
        if not self.label:
            raise ValueError(f"label: must be a non-empty string, got {self.label!r}")


@functools.lru_cache(maxsize=4096)
def _price(text: str) -> int:
    """A label value as millionths, or _NO_PRICE when it is not a non-negative number."""
    try:
        value = float(text)
    except ValueError:
        return _NO_PRICE
    if not math.isfinite(value) or value < 0:
        return _NO_PRICE
    return round(value * _SCALE)


class NodeCost:
    def __init__(self, args: NodeCostArgs) -> None:
        self._label = args.label

    @property
    def name(self) -> str:
        return NAME

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        assert node_info.node is not None
        text = node_info.node.metadata.labels.get(self._label)
        return _price(text) if text is not None else _NO_PRICE

    def score_extensions(self) -> NodeCost:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        """Cheapest → MAX_NODE_SCORE, dearest (and unpriced) → MIN_NODE_SCORE, linear in between."""
        prices = [s.score for s in scores if s.score != _NO_PRICE]
        if not prices:
            scores[:] = [NodeScore(s.name, MIN_NODE_SCORE) for s in scores]
            return None
        low, high = min(prices), max(prices)
        span = high - low
        scores[:] = [
            NodeScore(s.name, MIN_NODE_SCORE if s.score == _NO_PRICE
                      else MAX_NODE_SCORE if span == 0
                      else MAX_NODE_SCORE * (high - s.score) // span)
            for s in scores
        ]
        return None


ARGS = NodeCostArgs


def new(args: NodeCostArgs, handle: Handle) -> NodeCost:
    return NodeCost(args)
