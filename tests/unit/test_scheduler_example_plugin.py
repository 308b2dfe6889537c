"""The example user plugin (examples/plugins/node_cost.py): its scores, its args, and its config file
loading through the same registry `podsched scheduler --plugin` fills."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.api import objects_pb2
from examples.plugins import node_cost
from scheduler.config import ConfigError, in_tree_registry, load_config
from scheduler.framework import CycleState, NodeInfo, NodeScore, PodInfo
from tests import builders
from tests.builders import PLUGIN_ARGS_PATH, plugin_args
from tests.unit.framework_fakes import Snapshot, fake_handle

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_CONFIG = REPO / "examples" / "plugins" / "node-cost-scheduler.yaml"


def node(name: str, price: str | None) -> NodeInfo:
    labels = {"kubernetes.io/hostname": name}
    if price is not None:
        labels[node_cost.DEFAULT_LABEL] = price
    return NodeInfo(builders.node(name, labels=labels))


def normalized(prices: dict[str, str | None]) -> dict[str, int]:
    plugin = node_cost.new(node_cost.NodeCostArgs(), handle=fake_handle(Snapshot([])))
    pod = PodInfo(objects_pb2.Pod(metadata=objects_pb2.ObjectMeta(name="p", namespace="default")))
    state = CycleState()
    scores = [NodeScore(name, plugin.score(state, pod, node(name, price))) for name, price in prices.items()]
    assert plugin.score_extensions().normalize_score(state, pod, scores) is None
    return {s.name: s.score for s in scores}


@pytest.mark.parametrize(
    ("prices", "expected"),
    [
        ({"a": "0.10", "b": "0.55", "c": "1.00"}, {"a": 100, "b": 50, "c": 0}),
        ({"a": "0.10", "b": None}, {"a": 100, "b": 0}),
        ({"a": "0.10", "b": "cheap", "c": "-1"}, {"a": 100, "b": 0, "c": 0}),
        ({"a": "2", "b": "2"}, {"a": 100, "b": 100}),
        ({"a": None, "b": None}, {"a": 0, "b": 0}),
    ],
    ids=["linear", "unpriced-is-dearest", "not-a-price", "equal-prices", "nothing-priced"],
)
def test_cheaper_nodes_score_higher(prices: dict[str, str | None], expected: dict[str, int]) -> None:
    assert normalized(prices) == expected


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"label": ""}, f"{PLUGIN_ARGS_PATH}: label: must be a non-empty string, got ''"),
        ({"labels": "x"}, f'{PLUGIN_ARGS_PATH}: unknown field "labels"'),
        ({"label": 5}, f"{PLUGIN_ARGS_PATH}.label: Invalid value: 5: must be a string"),
    ],
    ids=["empty-label", "unknown-field", "not-a-string"],
)
def test_bad_args_name_the_field(data: dict, error: str) -> None:
    registry = in_tree_registry()
    registry.register(node_cost.NAME, "examples.plugins.node_cost")
    with pytest.raises(ConfigError) as raised:
        plugin_args(node_cost.NAME, data, registry)
    assert raised.value.problems == [error]


def test_args_default_to_the_price_label() -> None:
    registry = in_tree_registry()
    registry.register(node_cost.NAME, "examples.plugins.node_cost")
    assert plugin_args(node_cost.NAME, None, registry) == node_cost.NodeCostArgs(node_cost.DEFAULT_LABEL)


def test_the_example_config_enables_it_by_name() -> None:
    registry = in_tree_registry()
    registry.register(node_cost.NAME, "examples.plugins.node_cost")
    config = load_config(str(EXAMPLE_CONFIG), registry=registry)
    (profile,) = config.profiles
    assert [(ref.name, ref.weight) for ref in profile.plugins.point("score").enabled] == [("NodeCost", 20)]
    assert profile.plugin_args["NodeCost"] == node_cost.NodeCostArgs(label="example.com/hourly-cost")


def test_without_registering_it_the_config_is_refused() -> None:
    with pytest.raises(ConfigError, match='"NodeCost": no plugin of that name is registered'):
        load_config(str(EXAMPLE_CONFIG))
