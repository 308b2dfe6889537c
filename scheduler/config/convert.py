"""A defaulted, valid ``v1.KubeSchedulerConfiguration`` as the values the scheduler runs with
(``types``): durations in seconds, plugin lists as the framework's ``PluginSet``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cluster.api.decoding import Duration
from scheduler.config import v1
from scheduler.config.types import (
    ExtenderConfig,
    ExtenderManagedResource,
    ExtenderTLSConfig,
    LeaderElectionConfig,
    Profile,
    SchedulerConfiguration,
)
from scheduler.framework.registry import MULTI_POINT, PluginRef, PluginSet, PointPlugins


def configuration(
    config: v1.KubeSchedulerConfiguration, plugin_args: Sequence[Mapping[str, Any]], source: str
) -> SchedulerConfiguration:
    assert config.pod_initial_backoff_seconds is not None and config.pod_max_backoff_seconds is not None
    assert config.leader_election is not None, "defaults set leaderElection"
    return SchedulerConfiguration(
        profiles=[_profile(profile, args)
                  for profile, args in zip(config.profiles or (), plugin_args, strict=True)],
        percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
        pod_initial_backoff_seconds=float(config.pod_initial_backoff_seconds),
        pod_max_backoff_seconds=float(config.pod_max_backoff_seconds),
        leader_election=_leader_election(config.leader_election),
        extenders=[_extender(extender) for extender in config.extenders or ()],
        source=source,
    )


def _seconds(duration: Duration | None) -> float:
    assert duration is not None, "defaults set every duration"
    return duration.seconds


def _leader_election(config: v1.LeaderElection) -> LeaderElectionConfig:
    assert config.resource_lock and config.resource_name and config.resource_namespace
    return LeaderElectionConfig(
        leader_elect=bool(config.leader_elect),
        lease_duration_seconds=_seconds(config.lease_duration),
        renew_deadline_seconds=_seconds(config.renew_deadline),
        retry_period_seconds=_seconds(config.retry_period),
        resource_lock=config.resource_lock,
        resource_name=config.resource_name,
        resource_namespace=config.resource_namespace,
    )


def _profile(profile: v1.Profile, args: Mapping[str, Any]) -> Profile:
    assert profile.plugins is not None and profile.scheduler_name, "defaulted and valid"
    points = {point: _point(plugins) for point, plugins in profile.plugins.sets()}
    multi_point = points.pop(MULTI_POINT)
    return Profile(profile.scheduler_name, PluginSet(multi_point, points), dict(args),
                   profile.percentage_of_nodes_to_score)


def _point(plugins: v1.PluginSet | None) -> PointPlugins:
    assert plugins is not None, "defaults set every extension point"
    enabled = tuple(PluginRef(plugin.name or "", plugin.weight or 0) for plugin in plugins.enabled or ())
    disabled = frozenset(plugin.name or "" for plugin in plugins.disabled or ())
    return PointPlugins(enabled, disabled)


def _extender(extender: v1.Extender) -> ExtenderConfig:
    tls = extender.tls_config
    return ExtenderConfig(
        url_prefix=extender.url_prefix or "",
        filter_verb=extender.filter_verb or "",
        prioritize_verb=extender.prioritize_verb or "",
        preempt_verb=extender.preempt_verb or "",
        bind_verb=extender.bind_verb or "",
        weight=extender.weight or 0,
        enable_https=bool(extender.enable_https),
        tls_config=None if tls is None else ExtenderTLSConfig(
            insecure=bool(tls.insecure),
            server_name=tls.server_name or "",
            cert_file=tls.cert_file or "",
            key_file=tls.key_file or "",
            ca_file=tls.ca_file or "",
            cert_data=tls.cert_data or b"",
            key_data=tls.key_data or b"",
            ca_data=tls.ca_data or b"",
        ),
        http_timeout_seconds=_seconds(extender.http_timeout),
        node_cache_capable=bool(extender.node_cache_capable),
        managed_resources=tuple(
            ExtenderManagedResource(resource.name or "", bool(resource.ignored_by_scheduler))
            for resource in extender.managed_resources or ()
        ),
        ignorable=bool(extender.ignorable),
    )
