"""The in-tree registry: every listed plugin loads, answers to its name and has a factory; every plugin
that takes args declares a type the configuration reads."""

from __future__ import annotations

import re

import pytest

from scheduler.config import ConfigError
from scheduler.config.pluginargs import IN_TREE_ARGS
from scheduler.plugins import registry
from tests.builders import PLUGIN_ARGS_PATH, plugin_args

DEFAULT_PROFILE = {
    "PrioritySort",
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeBinding",
    "PodTopologySpread",
    "InterPodAffinity",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
    "DefaultBinder",
    "DefaultPreemption",
    "DynamicResources",
}


def test_the_default_profile_is_in_tree() -> None:
    assert DEFAULT_PROFILE <= set(registry.IN_TREE)


@pytest.mark.parametrize("name", sorted(registry.IN_TREE))
def test_every_in_tree_plugin_loads(name: str) -> None:
    module = registry.load(name)
    assert module.NAME == name
    assert callable(module.new)
    args = getattr(module, "ARGS", None)
    if args is not None:
        # The configuration decodes, defaults, converts and validates it.
        assert args in IN_TREE_ARGS
        assert isinstance(plugin_args(name), args)
        unknown = f'{re.escape(PLUGIN_ARGS_PATH)}: unknown field "surely-not-a-field"'
        with pytest.raises(ConfigError, match=unknown):
            plugin_args(name, {"surely-not-a-field": 1})


def test_every_typed_args_type_belongs_to_an_in_tree_plugin() -> None:
    declared = {getattr(registry.load(name), "ARGS", None) for name in registry.IN_TREE}
    assert set(IN_TREE_ARGS) <= declared


def test_an_unknown_name_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="NoSuchPlugin"):
        registry.load("NoSuchPlugin")
