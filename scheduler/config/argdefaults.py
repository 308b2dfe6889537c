"""kube-scheduler v1's defaults of the plugins' arguments (pkg/scheduler/apis/config/v1/defaults.go,
SetDefaults_*Args), applied in place to decoded ``v1args``. As ``defaults``, they judge nothing: a value
out of range stays as written for ``argvalidation`` to report.
"""

from __future__ import annotations

from scheduler.config import argtypes, v1args

_DEFAULT_RESOURCES = tuple((spec.name, spec.weight) for spec in argtypes.DEFAULT_RESOURCES)


def _default_resources() -> list[v1args.ResourceSpec]:
    return [v1args.ResourceSpec(name, weight) for name, weight in _DEFAULT_RESOURCES]


def _resources(given: list[v1args.ResourceSpec] | None) -> list[v1args.ResourceSpec]:
    """No resources (or none listed): CPU and memory; a weight not set or 0: 1."""
    resources = given or _default_resources()
    for resource in resources:
        if not resource.weight:
            resource.weight = 1
    return resources


def set_defaults_node_resources_fit_args(args: v1args.NodeResourcesFitArgs) -> None:
    if args.scoring_strategy is None:
        args.scoring_strategy = v1args.ScoringStrategy(type=argtypes.LEAST_ALLOCATED)
    args.scoring_strategy.resources = _resources(args.scoring_strategy.resources)


def set_defaults_node_resources_balanced_allocation_args(
    args: v1args.NodeResourcesBalancedAllocationArgs,
) -> None:
    args.resources = _resources(args.resources)


def set_defaults_inter_pod_affinity_args(args: v1args.InterPodAffinityArgs) -> None:
    if args.hard_pod_affinity_weight is None:
        args.hard_pod_affinity_weight = argtypes.DEFAULT_HARD_POD_AFFINITY_WEIGHT


def set_defaults_default_preemption_args(args: v1args.DefaultPreemptionArgs) -> None:
    if args.min_candidate_nodes_percentage is None:
        args.min_candidate_nodes_percentage = argtypes.DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
    if args.min_candidate_nodes_absolute is None:
        args.min_candidate_nodes_absolute = argtypes.DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE


def set_defaults_pod_topology_spread_args(args: v1args.PodTopologySpreadArgs) -> None:
    if not args.defaulting_type:
        args.defaulting_type = argtypes.SYSTEM_DEFAULTING


def set_defaults_volume_binding_args(args: v1args.VolumeBindingArgs) -> None:
    if args.bind_timeout_seconds is None:
        args.bind_timeout_seconds = argtypes.DEFAULT_BIND_TIMEOUT_SECONDS
    if not args.shape:
        args.shape = [v1args.UtilizationShapePoint(point.utilization, point.score)
                      for point in argtypes.DEFAULT_VOLUME_BINDING_SHAPE]
