"""A defaulted, valid ``v1.KubeSchedulerConfiguration`` as the values the scheduler runs with
(``types``): durations in seconds, plugin lists as the framework's ``PluginSet``; and defaulted
``v1args`` as the ``argtypes`` the plugins receive (kube-scheduler's generated conversions), the
Kubernetes API types they embed read by protobuf's JSON mapping."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.message import Message

from cluster.api import objects_pb2
from cluster.api.decoding import Duration
from scheduler.config import argtypes, v1, v1args
from scheduler.config.types import (
    ExtenderConfig,
    ExtenderManagedResource,
    ExtenderTLSConfig,
    LeaderElectionConfig,
    Profile,
    SchedulerConfiguration,
)
from scheduler.framework.registry import MULTI_POINT, PluginRef, PluginSet, PointPlugins
from scheduler.plugins.helpers import NodeSelector, PreferredSchedulingTerms


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


# ------------------------------------------------------------------------------------- plugin args


def _resources(given: list[v1args.ResourceSpec] | None) -> tuple[argtypes.ResourceSpec, ...]:
    assert given, "defaults set the resources"
    return tuple(argtypes.ResourceSpec(spec.name or "", spec.weight or 0) for spec in given)


def node_resources_fit_args(args: v1args.NodeResourcesFitArgs) -> argtypes.NodeResourcesFitArgs:
    strategy = args.scoring_strategy
    assert strategy is not None, "defaults set the scoring strategy"
    ratio = strategy.requested_to_capacity_ratio
    shape = None if ratio is None else tuple(
        argtypes.UtilizationShapePoint(point.utilization or 0, point.score or 0)
        for point in ratio.shape or ()
    )
    return argtypes.NodeResourcesFitArgs(
        tuple(args.ignored_resources or ()),
        tuple(args.ignored_resource_groups or ()),
        argtypes.ScoringStrategy(strategy.type or "", _resources(strategy.resources), shape),
    )


def node_resources_balanced_allocation_args(
    args: v1args.NodeResourcesBalancedAllocationArgs,
) -> argtypes.NodeResourcesBalancedAllocationArgs:
    return argtypes.NodeResourcesBalancedAllocationArgs(_resources(args.resources))


def inter_pod_affinity_args(args: v1args.InterPodAffinityArgs) -> argtypes.InterPodAffinityArgs:
    assert args.hard_pod_affinity_weight is not None, "defaulted"
    return argtypes.InterPodAffinityArgs(args.hard_pod_affinity_weight,
                                         bool(args.ignore_preferred_terms_of_existing_pods))


def default_preemption_args(args: v1args.DefaultPreemptionArgs) -> argtypes.DefaultPreemptionArgs:
    percentage, absolute = args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute
    assert percentage is not None and absolute is not None, "defaulted"
    return argtypes.DefaultPreemptionArgs(percentage, absolute)


def volume_binding_args(args: v1args.VolumeBindingArgs) -> argtypes.VolumeBindingArgs:
    assert args.bind_timeout_seconds is not None and args.shape is not None, "defaulted"
    shape = tuple(argtypes.UtilizationShapePoint(point.utilization or 0, point.score or 0)
                  for point in args.shape)
    return argtypes.VolumeBindingArgs(args.bind_timeout_seconds, shape)


def node_affinity_args(
    args: v1args.NodeAffinityArgs, path: str, problems: list[str]
) -> argtypes.NodeAffinityArgs:
    """The added affinity parsed as a pod's would be, every expression that does not parse a problem."""
    given = args.added_affinity
    if given is None:
        return argtypes.NodeAffinityArgs()
    where = f"{path}.addedAffinity"
    data: dict[str, Any] = {}
    if given.required_during_scheduling_ignored_during_execution is not None:
        data["requiredDuringSchedulingIgnoredDuringExecution"] = (
            given.required_during_scheduling_ignored_during_execution)
    if given.preferred_during_scheduling_ignored_during_execution is not None:
        data["preferredDuringSchedulingIgnoredDuringExecution"] = (
            given.preferred_during_scheduling_ignored_during_execution)
    affinity = _message(data, objects_pb2.NodeAffinity(), where, problems)
    required = preferred = None
    try:
        if affinity.HasField("required_during_scheduling_ignored_during_execution"):
            required = NodeSelector.from_proto(
                affinity.required_during_scheduling_ignored_during_execution,
                f"{where}.requiredDuringSchedulingIgnoredDuringExecution", strict=True)
    except ValueError as exc:
        problems.append(str(exc))
    terms = affinity.preferred_during_scheduling_ignored_during_execution
    try:
        if terms:
            preferred = PreferredSchedulingTerms.from_proto(
                terms, f"{where}.preferredDuringSchedulingIgnoredDuringExecution")
    except ValueError as exc:
        problems.append(str(exc))
    return argtypes.NodeAffinityArgs(required, preferred)


def pod_topology_spread_args(
    args: v1args.PodTopologySpreadArgs, path: str, problems: list[str]
) -> argtypes.PodTopologySpreadArgs:
    assert args.defaulting_type is not None, "defaulted"
    constraints = []
    for index, given in enumerate(args.default_constraints or ()):
        constraint = objects_pb2.TopologySpreadConstraint(
            max_skew=given.max_skew or 0,
            topology_key=given.topology_key or "",
            when_unsatisfiable=given.when_unsatisfiable or "",
            node_affinity_policy=given.node_affinity_policy or "",
            node_taints_policy=given.node_taints_policy or "",
            match_label_keys=given.match_label_keys or (),
        )
        if given.min_domains is not None:  # optional: unset means 1, not 0
            constraint.min_domains = given.min_domains
        if given.label_selector is not None:
            where = f"{path}.defaultConstraints[{index}].labelSelector"
            constraint.label_selector.CopyFrom(
                _message(given.label_selector, objects_pb2.LabelSelector(), where, problems))
        constraints.append(constraint)
    return argtypes.PodTopologySpreadArgs(tuple(constraints), args.defaulting_type)


_M = TypeVar("_M", bound=Message)


def _message(data: dict[str, Any], message: _M, path: str, problems: list[str]) -> _M:
    try:
        return json_format.ParseDict(data, message)
    except json_format.ParseError as exc:
        problems.append(f"{path}: {exc}")
        return message
