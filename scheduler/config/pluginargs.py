"""Each enabled plugin's arguments: its ``pluginConfig`` entry's ``args`` (or nothing) through the
plugin's own ``ARGS.from_dict``, which applies the plugin's defaults and rejects what it cannot use, as
kube-scheduler decodes each plugin's typed args and appends defaults for enabled plugins without an entry.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cluster.api.validation import invalid, not_supported
from scheduler.config import v1
from scheduler.config.types import API_VERSION
from scheduler.framework.registry import ALL_PLUGINS, PluginLoadError, Registry

_MISSING = object()


def enabled_names(profile: v1.Profile) -> list[str]:
    """Every plugin a defaulted profile enables somewhere, once each, in first-seen order."""
    assert profile.plugins is not None, "defaults set every profile's plugins"
    seen: dict[str, None] = {}
    for _, plugins in profile.plugins.sets():
        names = (plugin.name for plugin in (plugins.enabled if plugins else None) or ())
        seen.update(dict.fromkeys(name for name in names if name and name != ALL_PLUGINS))
    return list(seen)


def configured(profile: v1.Profile, registry: Registry) -> Iterator[v1.PluginConfig]:
    """The pluginConfig entries that can be used: a registered, enabled plugin's first entry. Validation
    reports the others."""
    enabled = set(enabled_names(profile))
    seen: set[str] = set()
    for entry in profile.plugin_config or ():
        if entry.name and entry.name in registry and entry.name not in seen:
            seen.add(entry.name)
            if entry.name in enabled:
                yield entry


def decode_plugin_args(profile: v1.Profile, registry: Registry) -> tuple[dict[str, Any], list[str]]:
    """Plugin name -> its args object, for every enabled plugin that takes args; and the problems."""
    problems: list[str] = []
    args: dict[str, Any] = {}
    given = {entry.name: entry for entry in configured(profile, registry)}
    for name in enabled_names(profile):
        if name not in registry:
            continue  # validation names it
        entry = given.get(name)
        if entry is None:
            value = _args(registry, name, None, f"{profile.field_path}.plugins ({name})", problems)
        else:
            value = _args(registry, name, entry.args, f"{entry.field_path}.args", problems)
        if value is not _MISSING:
            args[name] = value
    return args, problems


def _args(registry: Registry, name: str, data: dict[str, Any] | None, path: str, problems: list[str]) -> Any:
    """The plugin's args object, or _MISSING when it takes none (or they are wrong: reported)."""
    try:
        entry = registry.load(name)
    except PluginLoadError as exc:
        problems.append(f"{path}: {exc}")
        return _MISSING
    raw = dict(data or {})
    # Args may carry their own type meta, as kube-scheduler's decoder allows.
    kind = raw.pop("kind", None)
    api_version = raw.pop("apiVersion", None)
    if kind is not None and kind != f"{name}Args":
        problems.append(not_supported(f"{path}.kind", kind, [f"{name}Args"]))
    if api_version is not None and api_version != API_VERSION:
        problems.append(not_supported(f"{path}.apiVersion", api_version, [API_VERSION]))
    if entry.args_type is None:
        if raw:
            problems.append(invalid(path, ", ".join(sorted(map(str, raw))), f"plugin {name} takes no args"))
        return _MISSING
    try:
        return entry.args_type.from_dict(raw)
    except ValueError as exc:
        problems.append(f"{path}: {exc}")
        return _MISSING
