"""kube-scheduler's validation of a defaulted configuration (pkg/scheduler/apis/config/validation/
validation.go), plus podsched's own rules: every plugin named must be in the plugin registry, Score
weights stay in [1, 100], and extenders are checked as KEP-1819 describes them.

Every rule reports with the field path of what it judges; nothing here changes the configuration.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

from cluster.api.validation import duplicate, invalid, is_qualified_name, not_supported, required
from scheduler.config import v1
from scheduler.config.pluginargs import enabled_names
from scheduler.config.types import API_VERSION, KIND, MAX_WEIGHT, MIN_WEIGHT
from scheduler.framework.registry import ALL_PLUGINS, Registry
from scheduler.leaderelection.timings import (
    JITTER_FACTOR,
    LEASE_ABOVE_RENEW,
    RENEW_ABOVE_JITTERED_RETRY,
    timing_violations,
)

#: componentbase's words for the two ordering rules, where client-go's differ (``timings`` keeps those).
_COMPONENTBASE_WORDS = {
    LEASE_ABOVE_RENEW: "LeaseDuration must be greater than RenewDeadline",
    RENEW_ABOVE_JITTERED_RETRY:
        f"renewDeadline must be greater than retryPeriod*JitterFactor ({JITTER_FACTOR:g})",
}


def validate(
    config: v1.KubeSchedulerConfiguration, registry: Registry, plugin_args: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Every problem of a defaulted configuration; ``plugin_args`` is each profile's decoded args."""
    problems: list[str] = []
    problems += _type_meta(config)
    if config.parallelism is not None and config.parallelism <= 0:
        problems.append(invalid("parallelism", config.parallelism,
                                "should be an integer value greater than zero"))
    problems += _percentage(config.percentage_of_nodes_to_score, "percentageOfNodesToScore")
    initial, maximum = config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds
    assert initial is not None and maximum is not None, "defaults set the backoffs"
    if initial <= 0:
        problems.append(invalid("podInitialBackoffSeconds", initial, "must be greater than 0"))
    if maximum < initial:
        problems.append(invalid("podMaxBackoffSeconds", maximum,
                                "must be greater than or equal to PodInitialBackoffSeconds"))
    assert config.leader_election is not None, "defaults set leaderElection"
    problems += validate_leader_election(config.leader_election, "leaderElection")
    problems += _profiles(config.profiles or [], registry, plugin_args)
    problems += _extenders(config.extenders or [])
    return problems


def _type_meta(config: v1.KubeSchedulerConfiguration) -> list[str]:
    problems = []
    if config.api_version is None:
        problems.append(required("apiVersion", f'must be "{API_VERSION}"'))
    elif config.api_version != API_VERSION:
        problems.append(not_supported("apiVersion", config.api_version, [API_VERSION]))
    if config.kind is None:
        problems.append(required("kind", f'must be "{KIND}"'))
    elif config.kind != KIND:
        problems.append(not_supported("kind", config.kind, [KIND]))
    return problems


def _percentage(value: int | None, path: str) -> list[str]:
    if value is not None and not 0 <= value <= 100:
        return [invalid(path, value, "not in valid range [0-100]")]
    return []


def validate_leader_election(config: v1.LeaderElection, path: str) -> list[str]:
    """componentbase's ValidateLeaderElectionConfiguration, with client-go's timing rules
    (``scheduler.leaderelection.timings``); the timings are judged only when electing."""
    if not config.leader_elect:
        return []
    durations = {"leaseDuration": config.lease_duration, "renewDeadline": config.renew_deadline,
                 "retryPeriod": config.retry_period}
    written = {name: value for name, value in durations.items() if value is not None}
    assert len(written) == len(durations), "defaults set every duration"
    problems = []
    for violation in timing_violations(written["leaseDuration"].seconds, written["renewDeadline"].seconds,
                                       written["retryPeriod"].seconds):
        words = _COMPONENTBASE_WORDS.get(violation.rule, violation.requirement)
        problems.append(invalid(f"{path}.{violation.field}", written[violation.field].text, words))
    if config.resource_lock != "leases":
        problems.append(invalid(f"{path}.resourceLock", config.resource_lock,
                                'resourceLock value must be "leases"'))
    return problems


# ------------------------------------------------------------------------------------------ profiles


def _profiles(profiles: list[v1.Profile], registry: Registry,
              plugin_args: Sequence[Mapping[str, Any]]) -> list[str]:
    problems = []
    names: set[str] = set()
    for profile in profiles:
        path = profile.field_path
        name = profile.scheduler_name
        if not name:
            problems.append(required(f"{path}.schedulerName"))
        elif name in names:
            problems.append(duplicate(f"{path}.schedulerName", name))
        else:
            names.add(name)
        problems += _plugins(profile, registry)
        problems += _plugin_config(profile, registry)
        problems += _percentage(profile.percentage_of_nodes_to_score, f"{path}.percentageOfNodesToScore")
    problems += _common_queue_sort(profiles, plugin_args)
    return problems


def _plugins(profile: v1.Profile, registry: Registry) -> list[str]:
    assert profile.plugins is not None, "defaults set every profile's plugins"
    problems = []
    for point, plugins in profile.plugins.sets():
        assert plugins is not None, "defaults set every extension point"
        problems += _plugin_list(plugins, "enabled", registry)
        problems += _plugin_list(plugins, "disabled", registry)
        if point == "queueSort" and len(plugins.enabled or ()) > 1:
            problems.append(invalid(f"{plugins.field_path}.enabled", len(plugins.enabled or ()),
                                    "only one queue sort plugin can be enabled"))
    return problems


def _plugin_list(plugins: v1.PluginSet, key: str, registry: Registry) -> list[str]:
    problems = []
    seen: set[str] = set()
    for plugin in getattr(plugins, key) or ():
        where = plugin.field_path
        if not where:  # a default plugin: nobody wrote it, but it must still exist
            if plugin.name not in registry:
                problems.append(f'{plugins.field_path}: default plugin "{plugin.name}" is not in the plugin '
                                "registry")
            continue
        name = plugin.name
        if not name:
            problems.append(required(f"{where}.name"))
        elif name == ALL_PLUGINS:
            if key != "disabled":
                problems.append(invalid(f"{where}.name", name, '"*" can only be disabled'))
        elif name not in registry:
            problems.append(invalid(f"{where}.name", name, _unknown_plugin(registry)))
        elif name in seen:
            problems.append(duplicate(f"{where}.name", name))
        else:
            seen.add(name)
            if plugin.weight and not MIN_WEIGHT <= plugin.weight <= MAX_WEIGHT:
                problems.append(invalid(f"{where}.weight", plugin.weight,
                                        f"must be in the range [{MIN_WEIGHT}, {MAX_WEIGHT}] "
                                        "(0 or unset means 1)"))
    return problems


def _unknown_plugin(registry: Registry) -> str:
    return "no plugin of that name is registered (known: " + ", ".join(sorted(registry)) + ")"


def _plugin_config(profile: v1.Profile, registry: Registry) -> list[str]:
    enabled = set(enabled_names(profile))
    problems = []
    seen: set[str] = set()
    for entry in profile.plugin_config or ():
        where = entry.field_path
        name = entry.name
        if not name:
            problems.append(required(f"{where}.name"))
        elif name not in registry:
            problems.append(invalid(f"{where}.name", name, _unknown_plugin(registry)))
        elif name in seen:
            problems.append(duplicate(f"{where}.name", name))
        else:
            seen.add(name)
            if name not in enabled:
                problems.append(invalid(f"{where}.name", name, "the plugin is not enabled in this profile"))
    return problems


def _common_queue_sort(profiles: list[v1.Profile], plugin_args: Sequence[Mapping[str, Any]]) -> list[str]:
    """One scheduling queue serves every profile, so they must sort it alike (validateCommonQueueSort)."""
    if not profiles:
        return []

    def queue_sort(profile: v1.Profile) -> v1.PluginSet:
        assert profile.plugins is not None and profile.plugins.queue_sort is not None
        return profile.plugins.queue_sort

    def names(plugins: v1.PluginSet) -> list[str | None]:
        return [plugin.name for plugin in plugins.enabled or ()]

    def weights(plugins: v1.PluginSet) -> list[int]:
        return [plugin.weight or 0 for plugin in plugins.enabled or ()]

    def disabled(plugins: v1.PluginSet) -> set[str | None]:
        return {plugin.name for plugin in plugins.disabled or ()}

    first = queue_sort(profiles[0])
    first_names = names(first)
    first_args = plugin_args[0].get(first_names[0]) if first_names and first_names[0] else None
    problems = []
    for profile, args in zip(profiles[1:], plugin_args[1:], strict=True):
        point = queue_sort(profile)
        point_names = names(point)
        if (point_names, weights(point), disabled(point)) != (first_names, weights(first), disabled(first)):
            problems.append(invalid(f"{profile.field_path}.plugins.queueSort",
                                    ", ".join(map(str, point_names)) or "<default>",
                                    "must be the same for all profiles"))
        elif (args.get(point_names[0]) if point_names and point_names[0] else None) != first_args:
            problems.append(invalid(f"{profile.field_path}.pluginConfig",
                                    point_names[0] if point_names else "",
                                    "queueSort must be the same for all profiles"))
    return problems


# ----------------------------------------------------------------------------------------- extenders


def _extenders(extenders: list[v1.Extender]) -> list[str]:
    problems = []
    managed_names: set[str] = set()
    binders = 0
    for extender in extenders:
        path = extender.field_path
        url = extender.url_prefix
        if not url:
            problems.append(required(f"{path}.urlPrefix"))
        else:
            parsed = urllib.parse.urlsplit(url)
            if parsed.scheme not in ("http", "https") or not parsed.hostname:
                problems.append(invalid(f"{path}.urlPrefix", url, "must be an http:// or https:// URL"))
        weight = extender.weight or 0
        if weight < 0 or (extender.prioritize_verb and weight <= 0):
            problems.append(invalid(f"{path}.weight", weight, "must have a positive weight applied to it"))
        binders += bool(extender.bind_verb)
        assert extender.http_timeout is not None, "defaults set httpTimeout"
        if extender.http_timeout.seconds < 0:
            problems.append(invalid(f"{path}.httpTimeout", extender.http_timeout.text,
                                    "must not be negative"))
        for resource in extender.managed_resources or ():
            where = resource.field_path
            name = resource.name or ""
            for problem in _extended_resource_problems(name):
                problems.append(invalid(f"{where}.name", name, problem))
            if name in managed_names:
                problems.append(invalid(f"{where}.name", name, "duplicate extender managed resource name"))
            managed_names.add(name)
    if binders > 1:
        problems.append(invalid("extenders", f"found {binders} extenders implementing bind",
                                "only one extender can implement bind"))
    return problems


def _extended_resource_problems(name: str) -> list[str]:
    """apimachinery's validateExtendedResourceName: a qualified name outside kubernetes.io that is not
    a quota "requests." name."""
    problems = is_qualified_name(name)
    if problems:
        return problems
    native = "/" not in name or "kubernetes.io/" in name
    if native or name.startswith("requests.") or is_qualified_name("requests." + name):
        return ["is an invalid extended resource name"]
    return []
