"""kube-scheduler v1's defaults (pkg/scheduler/apis/config/v1/defaults.go, default_plugins.go), applied
in place to a decoded ``v1.KubeSchedulerConfiguration``: after ``set_defaults`` every field the later
steps read is set, and each profile's plugins are its own merged into the default plugins.

Defaulting judges nothing: a value out of range stays as written for validation to report.
"""

from __future__ import annotations

from cluster.api.decoding import Duration
from cluster.api.fencing import SCHEDULER_LEASE
from scheduler.config import v1
from scheduler.config.types import DEFAULT_EXTENDER_HTTP_TIMEOUT_SECONDS
from scheduler.framework.registry import ALL_PLUGINS, MULTI_POINT, PluginRef
from scheduler.leaderelection.timings import (
    DEFAULT_LEASE_DURATION_S,
    DEFAULT_RENEW_DEADLINE_S,
    DEFAULT_RETRY_PERIOD_S,
)

DEFAULT_SCHEDULER_NAME = "default-scheduler"
#: The name scheduler-plugins' chart gives its scheduler, which Kubeflow's training operator and KubeRay
#: write into the pods of their gangs: a configuration that names no profile serves it too, so that
#: their manifests schedule unchanged.
SCHEDULER_PLUGINS_SCHEDULER_NAME = "scheduler-plugins-scheduler"

#: kube-scheduler v1's default plugins (getDefaultPlugins), all through multiPoint and in its order,
#: restricted to the plugins podsched has, with the workload plugins its feature gates add. Weights
#: matter only for Score and PlacementScore.
DEFAULT_MULTI_POINT: tuple[PluginRef, ...] = (
    PluginRef("SchedulingGates"),
    PluginRef("PrioritySort"),
    PluginRef("NodeUnschedulable"),
    PluginRef("NodeName"),
    PluginRef("TaintToleration", 3),
    PluginRef("NodeAffinity", 2),
    PluginRef("NodePorts"),
    PluginRef("NodeResourcesFit", 1),
    PluginRef("VolumeRestrictions"),
    PluginRef("NodeVolumeLimits"),
    PluginRef("VolumeBinding"),
    PluginRef("VolumeZone"),
    PluginRef("PodTopologySpread", 2),
    PluginRef("InterPodAffinity", 2),
    # Before DefaultPreemption, as kube-scheduler puts it: deallocating an idle claim is better than
    # evicting a pod.
    PluginRef("DynamicResources"),
    PluginRef("DefaultPreemption"),
    PluginRef("NodeResourcesBalancedAllocation", 1),
    PluginRef("ImageLocality", 1),
    PluginRef("DefaultBinder"),
    PluginRef("GangScheduling"),
    # Topology-aware workload scheduling: NodeResourcesFit above scores placements too (weight 1).
    PluginRef("TopologyPlacementGenerator"),
    PluginRef("PodGroupPodsCount", 1),
)

DEFAULT_POD_INITIAL_BACKOFF_SECONDS = 1
DEFAULT_POD_MAX_BACKOFF_SECONDS = 10

DEFAULT_EXTENDER_HTTP_TIMEOUT = Duration(
    f"{DEFAULT_EXTENDER_HTTP_TIMEOUT_SECONDS:g}s", DEFAULT_EXTENDER_HTTP_TIMEOUT_SECONDS)

DEFAULT_LEADER_ELECTION = v1.LeaderElection(
    leader_elect=True,
    lease_duration=Duration(f"{DEFAULT_LEASE_DURATION_S:g}s", DEFAULT_LEASE_DURATION_S),
    renew_deadline=Duration(f"{DEFAULT_RENEW_DEADLINE_S:g}s", DEFAULT_RENEW_DEADLINE_S),
    retry_period=Duration(f"{DEFAULT_RETRY_PERIOD_S:g}s", DEFAULT_RETRY_PERIOD_S),
    resource_lock="leases",
    resource_name=SCHEDULER_LEASE.name,
    resource_namespace=SCHEDULER_LEASE.namespace,
)

def set_defaults(config: v1.KubeSchedulerConfiguration) -> None:
    """SetDefaults_KubeSchedulerConfiguration: what was not written gets kube-scheduler v1's value."""
    if not config.profiles:
        config.profiles = [
            v1.Profile(field_path="profiles[0]", scheduler_name=DEFAULT_SCHEDULER_NAME),
            v1.Profile(field_path="profiles[1]", scheduler_name=SCHEDULER_PLUGINS_SCHEDULER_NAME),
        ]
    if len(config.profiles) == 1 and config.profiles[0].scheduler_name is None:
        config.profiles[0].scheduler_name = DEFAULT_SCHEDULER_NAME  # only a single profile gets a name
    for profile in config.profiles:
        set_profile_defaults(profile)
    if config.pod_initial_backoff_seconds is None:
        config.pod_initial_backoff_seconds = DEFAULT_POD_INITIAL_BACKOFF_SECONDS
    if config.pod_max_backoff_seconds is None:
        config.pod_max_backoff_seconds = DEFAULT_POD_MAX_BACKOFF_SECONDS
    config.leader_election = _leader_election(config.leader_election or v1.LeaderElection())
    for extender in config.extenders or ():
        if extender.weight is None:
            extender.weight = 0
        if extender.http_timeout is None or extender.http_timeout.seconds == 0:
            extender.http_timeout = DEFAULT_EXTENDER_HTTP_TIMEOUT


def _leader_election(given: v1.LeaderElection) -> v1.LeaderElection:
    default = DEFAULT_LEADER_ELECTION
    return v1.LeaderElection(
        leader_elect=default.leader_elect if given.leader_elect is None else given.leader_elect,
        lease_duration=given.lease_duration or default.lease_duration,
        renew_deadline=given.renew_deadline or default.renew_deadline,
        retry_period=given.retry_period or default.retry_period,
        # An empty string is unset too, as componentbase's defaulting treats it.
        resource_lock=given.resource_lock or default.resource_lock,
        resource_name=given.resource_name or default.resource_name,
        resource_namespace=given.resource_namespace or default.resource_namespace,
    )


def set_profile_defaults(profile: v1.Profile) -> None:
    """setDefaults_KubeSchedulerProfile: every extension point set, each merged into its defaults."""
    plugins = profile.plugins or v1.Plugins(field_path=f"{profile.field_path}.plugins")
    profile.plugins = plugins
    for point, attribute in v1.POINT_ATTRIBUTES.items():
        given = getattr(plugins, attribute) or v1.PluginSet(field_path=f"{plugins.field_path}.{point}")
        defaults = DEFAULT_MULTI_POINT if point == MULTI_POINT else ()
        given.enabled = merge_plugins(defaults, given)
        given.disabled = given.disabled or []
        setattr(plugins, attribute, given)
    if profile.plugin_config is None:
        profile.plugin_config = []


def merge_plugins(defaults: tuple[PluginRef, ...], given: v1.PluginSet) -> list[v1.Plugin]:
    """kube-scheduler's mergePluginSet: ``disabled`` drops defaults ("*" all of them), an ``enabled``
    entry naming a default replaces it in place (its weight too), the others follow. Default plugins
    have no field path: nobody wrote them."""
    enabled = given.enabled or []
    disabled = {plugin.name for plugin in given.disabled or ()}
    custom = {plugin.name: position for position, plugin in enumerate(enabled)}
    replaced: set[int] = set()
    merged: list[v1.Plugin] = []
    for ref in defaults if ALL_PLUGINS not in disabled else ():
        if ref.name in disabled:
            continue
        position = custom.get(ref.name)
        if position is None:
            merged.append(v1.Plugin(ref.name, ref.weight))
        else:
            merged.append(enabled[position])
            replaced.add(position)
    merged.extend(plugin for position, plugin in enumerate(enabled) if position not in replaced)
    return merged
