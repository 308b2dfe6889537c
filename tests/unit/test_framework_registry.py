"""The plugin registry: the import targets it accepts, what it loads from each, and its errors."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from scheduler.framework.registry import PluginLoadError, PluginRef, PluginSet, PointPlugins, Registry


@dataclass(frozen=True)
class Args:
    size: int = 1


def new(args: Any, handle: Any) -> str:
    return "plugin"


class PluginClass:
    """A plugin class used directly as its factory, with its args type attached."""

    ARGS = Args

    def __init__(self, args: Any, handle: Any) -> None:
        self.args = args


@pytest.fixture
def plugin_module() -> Iterator[str]:
    """An importable plugin module in the style of the in-tree ones (NAME, new, ARGS)."""
    module = types.ModuleType("podsched_test_plugin")
    module.NAME = "Mine"  # type: ignore[attr-defined]
    module.new = new  # type: ignore[attr-defined]
    module.ARGS = Args  # type: ignore[attr-defined]
    module.factory = new  # type: ignore[attr-defined]
    module.not_callable = 42  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    yield module.__name__
    del sys.modules[module.__name__]


def test_a_module_path_loads_its_factory_and_args(plugin_module: str) -> None:
    entry = Registry({"Mine": plugin_module}).load("Mine")
    assert (entry.name, entry.factory, entry.args_type, entry.source) == ("Mine", new, Args, plugin_module)


def test_a_module_attribute_is_a_factory_whose_own_args_count(plugin_module: str) -> None:
    registry = Registry({"Fn": f"{plugin_module}:factory", "Cls": PluginClass})
    assert registry.load("Fn").args_type is None and registry.load("Fn").factory is new
    assert registry.load("Cls").args_type is Args


def test_a_plugin_is_imported_once_and_on_first_use(plugin_module: str) -> None:
    registry = Registry({"Mine": plugin_module, "Later": "module_that_does_not_exist"})
    assert registry.load("Mine") is registry.load("Mine")
    assert sorted(registry) == ["Later", "Mine"] and len(registry) == 2 and registry["Mine"] == plugin_module


@pytest.mark.parametrize(
    ("name", "target", "message"),
    [
        ("", "x.y", "plugin name must be a non-empty string"),
        ("Bad", "x.y:", '"x.y:" is not an import path'),
        ("Bad", ":attr", '":attr" is not an import path'),
        ("Bad", 42, "is neither an import path, a module nor a factory"),
    ],
    ids=["empty-name", "empty-attribute", "empty-module", "not-a-target"],
)
def test_bad_registrations_are_refused(name: str, target: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Registry().register(name, target)


def test_a_name_is_registered_once(plugin_module: str) -> None:
    registry = Registry({"Mine": plugin_module})
    with pytest.raises(ValueError, match=f'plugin "Mine" is already registered \\(as {plugin_module}\\)'):
        registry.register("Mine", "other.module")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_such_module_anywhere", 'plugin "P": cannot import no_such_module_anywhere: No module named'),
        ("{module}:missing", 'plugin "P": module {module} has no attribute "missing"'),
        ("{module}:not_callable", 'plugin "P": {module}:not_callable is not callable'),
        ("sys", 'plugin "P": module sys has no factory new\\(args, handle\\)'),
    ],
    ids=["import-fails", "missing-attribute", "not-callable", "module-without-new"],
)
def test_load_errors_name_the_plugin_and_target(plugin_module: str, target: str, message: str) -> None:
    registry = Registry({"P": target.format(module=plugin_module)})
    with pytest.raises(PluginLoadError, match=message.format(module=plugin_module)):
        registry.load("P")


@pytest.mark.parametrize("args", [object, Args()], ids=["a class", "an instance"])
def test_args_that_are_not_a_dataclass_are_refused(args: Any) -> None:
    def factory(args: Any, handle: Any) -> None:
        return None

    factory.ARGS = args  # type: ignore[attr-defined]
    with pytest.raises(PluginLoadError, match='plugin "P": its ARGS is not a dataclass'):
        Registry({"P": factory}).load("P")


def test_loading_an_unregistered_plugin_is_a_key_error() -> None:
    with pytest.raises(KeyError, match='no plugin "Nope" is registered'):
        Registry().load("Nope")


def test_plugin_set_names_every_enabled_plugin_once_in_first_seen_order() -> None:
    plugin_set = PluginSet(
        PointPlugins((PluginRef("Sort"), PluginRef("Fit", 1))),
        {
            "filter": PointPlugins((PluginRef("Gpu"), PluginRef("Fit"))),
            "score": PointPlugins((), frozenset("*")),
        },
    )
    assert plugin_set.enabled_names() == ["Sort", "Fit", "Gpu"]
    assert plugin_set.point("bind") == PointPlugins()
