"""The in-tree registry: every listed plugin loads, answers to its name and has a factory."""

from __future__ import annotations

import pytest

from scheduler.plugins import registry

DEFAULT_PROFILE = {
    "PrioritySort",
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "PodTopologySpread",
    "InterPodAffinity",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
    "DefaultBinder",
    "DefaultPreemption",
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
        # Defaults come from an empty mapping, and an unknown field is refused by name.
        assert isinstance(args.from_dict({}), args)
        with pytest.raises(ValueError, match="surely-not-a-field"):
            args.from_dict({"surely-not-a-field": 1})


def test_an_unknown_name_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="NoSuchPlugin"):
        registry.load("NoSuchPlugin")
