"""Each enabled plugin's arguments: its ``pluginConfig`` entry's ``args`` (or nothing) as the object the
plugin is built with, as kube-scheduler decodes each plugin's typed args and appends defaults for enabled
plugins without an entry.

An in-tree plugin's args (an ``argtypes`` type) are decoded strictly into their ``v1args`` schema by
``cluster.api.decoding.decode``, defaulted (``argdefaults``), converted (``convert``) and validated
(``argvalidation``), every problem named by its field path under the entry
(``profiles[0].pluginConfig[1].args.scoringStrategy.type``). An out-of-tree plugin's ``ARGS`` is a
dataclass decoded by the same ``decode``, as strictly; a ValueError its ``__post_init__`` raises (its own
checks) is reported at the entry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from cluster.api.decoding import Findings, YamlMapping, decode, with_duplicates_of
from cluster.api.validation import invalid, not_supported
from scheduler.config import argdefaults, argtypes, argvalidation, convert, v1, v1args
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
    raw, kind, api_version = without_type_meta(data)
    if kind is not None and kind != f"{name}Args":
        problems.append(not_supported(f"{path}.kind", kind, [f"{name}Args"]))
    if api_version is not None and api_version != API_VERSION:
        problems.append(not_supported(f"{path}.apiVersion", api_version, [API_VERSION]))
    if entry.args_type is None:
        if raw:
            problems.append(invalid(path, ", ".join(sorted(map(str, raw))), f"plugin {name} takes no args"))
        return _MISSING
    if entry.args_type in IN_TREE_ARGS:
        args, found = decode_in_tree_args(entry.args_type, raw, path)
        problems += found
        return _MISSING if args is None else args
    findings = Findings(strict=True)
    try:
        value = decode(entry.args_type, raw, path, findings)
    except Exception as exc:  # the plugin's own code (its __post_init__): report whatever it raised
        # Its own checks, or a field decode cannot fill (no default, a type it cannot read); a field of
        # the wrong type (left None, which its checks may trip on) is the better message, when there is one.
        value = _MISSING
        if not findings.errors:
            problems.append(f"{path}: {exc}")
    problems += findings.errors
    return _MISSING if findings.errors else value


def without_type_meta(data: Mapping[str, Any] | None) -> tuple[YamlMapping, Any, Any]:
    """Args without the type meta they may carry, as kube-scheduler's decoder allows (and its kind and
    apiVersion, None when not given); the keys given twice are remembered."""
    raw = with_duplicates_of(data, YamlMapping(data or {}))
    return raw, raw.pop("kind", None), raw.pop("apiVersion", None)


W = TypeVar("W")
A = TypeVar("A")


@dataclass(frozen=True, slots=True)
class _Steps(Generic[W, A]):
    """How one in-tree args type is read: its wire schema, SetDefaults, conversion, validation."""

    schema: type[W]
    set_defaults: Callable[[W], None] | None
    convert: Callable[[W, str, list[str]], A]
    validate: Callable[[A, str], list[str]] | None


#: Every in-tree args type, by the ``argtypes`` class a plugin module names as ``ARGS``.
IN_TREE_ARGS: Mapping[type, _Steps[Any, Any]] = {
    argtypes.NodeResourcesFitArgs: _Steps(
        v1args.NodeResourcesFitArgs, argdefaults.set_defaults_node_resources_fit_args,
        lambda wire, path, problems: convert.node_resources_fit_args(wire),
        argvalidation.validate_node_resources_fit_args),
    argtypes.NodeResourcesBalancedAllocationArgs: _Steps(
        v1args.NodeResourcesBalancedAllocationArgs,
        argdefaults.set_defaults_node_resources_balanced_allocation_args,
        lambda wire, path, problems: convert.node_resources_balanced_allocation_args(wire),
        argvalidation.validate_node_resources_balanced_allocation_args),
    argtypes.InterPodAffinityArgs: _Steps(
        v1args.InterPodAffinityArgs, argdefaults.set_defaults_inter_pod_affinity_args,
        lambda wire, path, problems: convert.inter_pod_affinity_args(wire),
        argvalidation.validate_inter_pod_affinity_args),
    argtypes.DefaultPreemptionArgs: _Steps(
        v1args.DefaultPreemptionArgs, argdefaults.set_defaults_default_preemption_args,
        lambda wire, path, problems: convert.default_preemption_args(wire),
        argvalidation.validate_default_preemption_args),
    argtypes.NodeAffinityArgs: _Steps(
        v1args.NodeAffinityArgs, None, convert.node_affinity_args, None),
    argtypes.PodTopologySpreadArgs: _Steps(
        v1args.PodTopologySpreadArgs, argdefaults.set_defaults_pod_topology_spread_args,
        convert.pod_topology_spread_args, argvalidation.validate_pod_topology_spread_args),
    argtypes.VolumeBindingArgs: _Steps(
        v1args.VolumeBindingArgs, argdefaults.set_defaults_volume_binding_args,
        lambda wire, path, problems: convert.volume_binding_args(wire),
        argvalidation.validate_volume_binding_args),
    # podsched's GPU-sharing policies: read as they are (absent fields keep their defaults).
    argtypes.GpuShareArgs: _Steps(
        argtypes.GpuShareArgs, None, lambda wire, path, problems: wire,
        argvalidation.validate_gpu_share_args),
    argtypes.FGDScoreArgs: _Steps(
        argtypes.FGDScoreArgs, None, lambda wire, path, problems: wire,
        argvalidation.validate_fgd_score_args),
}


def decode_in_tree_args(args_type: type[A], data: Mapping[str, Any], path: str) -> tuple[A | None, list[str]]:
    """``data`` (without type meta) as ``args_type``: decoded strictly, defaulted, converted and
    validated; None and every problem when it cannot be used."""
    steps = IN_TREE_ARGS[args_type]
    findings = Findings(strict=True)
    wire = decode(steps.schema, data, path, findings)
    if findings.errors:
        return None, findings.errors
    if steps.set_defaults is not None:
        steps.set_defaults(wire)
    problems: list[str] = []
    args = steps.convert(wire, path, problems)
    if problems:  # an embedded API object that does not parse: nothing to validate
        return None, problems
    if steps.validate is not None:
        problems = steps.validate(args, path)
    return (None if problems else args), problems
