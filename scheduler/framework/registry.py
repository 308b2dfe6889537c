"""Plugins by name: where each plugin's code lives, and which plugins a profile enables where.

A ``Registry`` maps a plugin name to an import target, loaded only when a profile needs it:

* ``"package.module"``: a plugin module, as the in-tree ones are: a ``new(args, handle)`` factory and,
  when the plugin takes arguments, ``ARGS``: the dataclass the configuration decodes its ``pluginConfig``
  args into, the instance the factory is given;
* ``"package.module:attribute"``: a factory (a function, or the plugin class itself) inside a module;
  its own ``ARGS`` attribute, if any, plays the same part. This is how a user plugin is enabled.

Tests may register a module object or a factory directly. The framework never imports
``scheduler.plugins``: whoever builds it (the scheduler, simulate) passes the registry in.

``PluginSet`` is a profile's plugin configuration after kube-scheduler's defaulting (the default
plugins merged with the user's enabled / disabled lists, per extension point and for multiPoint). It
stays in that form because expanding multiPoint needs to know which extension points each plugin
implements, which only the built plugins can tell: ``runtime.build_framework`` does it.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from scheduler.framework.interface import PluginFactory

#: The extension points a profile configures, in kube-scheduler's spelling (the keys of ``plugins`` in
#: a KubeSchedulerConfiguration profile, besides ``multiPoint``).
EXTENSION_POINTS: tuple[str, ...] = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "podGroupPostFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
    "placementGenerate",
    "placementScore",
)

MULTI_POINT = "multiPoint"

#: In a ``disabled`` list: every default plugin of that extension point.
ALL_PLUGINS = "*"


class PluginLoadError(Exception):
    """A registered plugin cannot be loaded (import failure, or no factory where the target points)."""


@dataclass(frozen=True, slots=True)
class PluginEntry:
    """A loaded plugin: how to make it and how to read its arguments."""

    name: str
    factory: PluginFactory
    #: The dataclass of its arguments, or None when the plugin takes none.
    args_type: type[Any] | None
    #: Where it came from, for messages ("scheduler.plugins.nodename", "my.mod:new").
    source: str


Target = str | ModuleType | PluginFactory


class Registry(Mapping[str, Target]):
    """Plugin name -> where the plugin is. A read-only mapping plus ``register`` and ``load``."""

    def __init__(self, targets: Mapping[str, Target] | None = None) -> None:
        self._targets: dict[str, Target] = {}
        self._loaded: dict[str, PluginEntry] = {}
        for name, target in (targets or {}).items():
            self.register(name, target)

    def register(self, name: str, target: Target) -> None:
        """Add a plugin. A name is registered once: a user plugin cannot silently replace an in-tree one."""
        if not name or not isinstance(name, str):
            raise ValueError(f"plugin name must be a non-empty string, not {name!r}")
        if name in self._targets:
            raise ValueError(f'plugin "{name}" is already registered (as {_describe(self._targets[name])})')
        if isinstance(target, str):
            module, _, attribute = target.partition(":")
            if not module or (":" in target and not attribute):
                raise ValueError(
                    f'plugin "{name}": "{target}" is not an import path ("package.module" or '
                    '"package.module:attribute")'
                )
        elif not isinstance(target, ModuleType) and not callable(target):
            raise ValueError(f'plugin "{name}": {target!r} is neither an import path, a module nor a factory')
        self._targets[name] = target

    def load(self, name: str) -> PluginEntry:
        """The plugin's factory and args type, importing its module on first use."""
        entry = self._loaded.get(name)
        if entry is None:
            try:
                target = self._targets[name]
            except KeyError:
                raise KeyError(f'no plugin "{name}" is registered') from None
            entry = _load(name, target)
            self._loaded[name] = entry
        return entry

    def __getitem__(self, name: str) -> Target:
        return self._targets[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._targets)

    def __len__(self) -> int:
        return len(self._targets)


def _describe(target: Target) -> str:
    if isinstance(target, str):
        return target
    if isinstance(target, ModuleType):
        return target.__name__
    return f"{getattr(target, '__module__', '?')}:{getattr(target, '__qualname__', repr(target))}"


def _load(name: str, target: Target) -> PluginEntry:
    source = _describe(target)
    if isinstance(target, str):
        module_name, _, attribute = target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # an import runs arbitrary code: report whatever it raised
            raise PluginLoadError(f'plugin "{name}": cannot import {module_name}: {exc}') from exc
        if attribute:
            try:
                target = getattr(module, attribute)
            except AttributeError:
                raise PluginLoadError(
                    f'plugin "{name}": module {module_name} has no attribute "{attribute}"'
                ) from None
        else:
            target = module
    if isinstance(target, ModuleType):
        factory = getattr(target, "new", None)
        if not callable(factory):
            raise PluginLoadError(
                f'plugin "{name}": module {target.__name__} has no factory new(args, handle)'
            )
        args_type = getattr(target, "ARGS", None)
    elif callable(target):
        factory = target
        args_type = getattr(target, "ARGS", None)
    else:
        raise PluginLoadError(f'plugin "{name}": {source} is not callable')
    if args_type is not None and not (isinstance(args_type, type) and dataclasses.is_dataclass(args_type)):
        raise PluginLoadError(f'plugin "{name}": its ARGS is not a dataclass')
    return PluginEntry(name, factory, args_type, source)


# ------------------------------------------------------------------------------- profile plugin sets


@dataclass(frozen=True, slots=True)
class PluginRef:
    """A plugin named in an ``enabled`` list."""

    name: str
    #: The score weight as configured; 0 when not given (kube-scheduler then uses 1).
    weight: int = 0


@dataclass(frozen=True, slots=True)
class PointPlugins:
    """One extension point's (or multiPoint's) plugins after defaulting, as kube-scheduler's PluginSet."""

    enabled: tuple[PluginRef, ...] = ()
    #: Names disabled at this point; ``"*"`` disables every default plugin here and, for an extension
    #: point, also stops multiPoint plugins from being added to it.
    disabled: frozenset[str] = frozenset()

    def names(self) -> list[str]:
        return [ref.name for ref in self.enabled]


@dataclass(frozen=True, slots=True)
class PluginSet:
    """A profile's plugins: the multiPoint set and one set per extension point."""

    multi_point: PointPlugins = PointPlugins()
    points: Mapping[str, PointPlugins] = field(default_factory=dict)

    def point(self, name: str) -> PointPlugins:
        return self.points.get(name, _EMPTY)

    def enabled_names(self) -> list[str]:
        """Every plugin enabled somewhere, once each, in first-seen order (multiPoint first)."""
        seen: dict[str, None] = dict.fromkeys(self.multi_point.names())
        for point in EXTENSION_POINTS:
            seen.update(dict.fromkeys(self.point(point).names()))
        return list(seen)


_EMPTY = PointPlugins()
