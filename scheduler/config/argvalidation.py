"""kube-scheduler's validation of the plugins' arguments (pkg/scheduler/apis/config/validation/
validation_pluginargs.go, ValidateXArgs), on the defaulted ``argtypes``, with its messages; plus
podsched's own rules, each marked so. ``path`` is where the args stand
(``profiles[0].pluginConfig[1].args``), and every problem names its field below it.
"""

from __future__ import annotations

from collections.abc import Sequence

from cluster.api import objects_pb2
from cluster.api.validation import (
    duplicate,
    forbidden,
    invalid,
    is_qualified_name,
    not_supported,
    required,
)
from cluster.api.validation.podspec import WHEN_UNSATISFIABLE
from scheduler.config import argtypes
from scheduler.config.argtypes import (
    DEFAULTING_TYPES,
    MAX_CUSTOM_PRIORITY_SCORE,
    MAX_HARD_POD_AFFINITY_WEIGHT,
    MAX_RESOURCE_WEIGHT,
    MAX_UTILIZATION,
    MIN_HARD_POD_AFFINITY_WEIGHT,
    REQUESTED_TO_CAPACITY_RATIO,
    SCORING_STRATEGY_TYPES,
    SYSTEM_DEFAULTING,
)


def validate_default_preemption_args(args: argtypes.DefaultPreemptionArgs, path: str) -> list[str]:
    percentage, absolute = args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute
    percentage_path = f"{path}.minCandidateNodesPercentage"
    absolute_path = f"{path}.minCandidateNodesAbsolute"
    problems = []
    if not 0 <= percentage <= 100:
        problems.append(invalid(percentage_path, percentage, "not in valid range [0, 100]"))
    if absolute < 0:
        problems.append(invalid(absolute_path, absolute, "not in valid range [0, inf)"))
    if percentage == 0 and absolute == 0:
        detail = "cannot be zero at the same time as "
        problems.append(invalid(percentage_path, 0, detail + "minCandidateNodesAbsolute"))
        problems.append(invalid(absolute_path, 0, detail + "minCandidateNodesPercentage"))
    return problems


def validate_inter_pod_affinity_args(args: argtypes.InterPodAffinityArgs, path: str) -> list[str]:
    weight = args.hard_pod_affinity_weight
    if not MIN_HARD_POD_AFFINITY_WEIGHT <= weight <= MAX_HARD_POD_AFFINITY_WEIGHT:
        bounds = f"[{MIN_HARD_POD_AFFINITY_WEIGHT}, {MAX_HARD_POD_AFFINITY_WEIGHT}]"
        return [invalid(f"{path}.hardPodAffinityWeight", weight, f"not in valid range {bounds}")]
    return []


def validate_pod_topology_spread_args(args: argtypes.PodTopologySpreadArgs, path: str) -> list[str]:
    problems = []
    defaulting = args.defaulting_type
    if defaulting not in DEFAULTING_TYPES:
        problems.append(not_supported(f"{path}.defaultingType", defaulting, DEFAULTING_TYPES))
    elif defaulting == SYSTEM_DEFAULTING and args.default_constraints:
        detail = "when .defaultConstraints are not empty"
        problems.append(invalid(f"{path}.defaultingType", defaulting, detail))
    for index, constraint in enumerate(args.default_constraints):
        where = f"{path}.defaultConstraints[{index}]"
        problems += _default_constraint(constraint, where, args.default_constraints[:index])
    return problems


def _default_constraint(
    c: objects_pb2.TopologySpreadConstraint,
    path: str,
    earlier: Sequence[objects_pb2.TopologySpreadConstraint],
) -> list[str]:
    problems = []
    if c.max_skew <= 0:
        problems.append(invalid(f"{path}.maxSkew", c.max_skew, "not in valid range (0, inf)"))
    if not c.topology_key:
        problems.append(required(f"{path}.topologyKey", "can not be empty"))
    else:
        key = c.topology_key
        problems += [invalid(f"{path}.topologyKey", key, p) for p in is_qualified_name(key)]
    if not c.when_unsatisfiable:
        problems.append(required(f"{path}.whenUnsatisfiable", "can not be empty"))
    elif c.when_unsatisfiable not in WHEN_UNSATISFIABLE:
        problems.append(
            not_supported(f"{path}.whenUnsatisfiable", c.when_unsatisfiable, WHEN_UNSATISFIABLE))
    if c.HasField("label_selector"):
        problems.append(forbidden(
            f"{path}.labelSelector", "constraint must not define a selector, as they deduced for each pod"
        ))
    if any((o.topology_key, o.when_unsatisfiable) == (c.topology_key, c.when_unsatisfiable) for o in earlier):
        problems.append(duplicate(path, f"{{{c.topology_key}, {c.when_unsatisfiable}}}"))
    return problems


def validate_node_resources_balanced_allocation_args(
    args: argtypes.NodeResourcesBalancedAllocationArgs, path: str
) -> list[str]:
    problems = _resource_names(args.resources, f"{path}.resources")
    seen: set[str] = set()
    for index, spec in enumerate(args.resources):
        if spec.name in seen:
            problems.append(duplicate(f"{path}.resources[{index}].name", spec.name))
        seen.add(spec.name)
        # Balance is about the spread of fractions: a weight would mean nothing here.
        if spec.weight != 1:
            problems.append(invalid(f"{path}.resources[{index}].weight", spec.weight, "must be 1"))
    return problems


def validate_node_resources_fit_args(args: argtypes.NodeResourcesFitArgs, path: str) -> list[str]:
    problems = []
    for index, name in enumerate(args.ignored_resources):
        problems += [invalid(f"{path}.ignoredResources[{index}]", name, p) for p in is_qualified_name(name)]
    for index, group in enumerate(args.ignored_resource_groups):
        where = f"{path}.ignoredResourceGroups[{index}]"
        if "/" in group:
            problems.append(invalid(where, group, "resource group name can't contain '/'"))
        problems += [invalid(where, group, p) for p in is_qualified_name(group)]
    strategy = args.scoring_strategy
    where = f"{path}.scoringStrategy"
    if strategy.type not in SCORING_STRATEGY_TYPES:
        problems.append(not_supported(f"{where}.type", strategy.type, SCORING_STRATEGY_TYPES))
    problems += _resource_names(strategy.resources, f"{where}.resources")
    for index, spec in enumerate(strategy.resources):
        if not 0 < spec.weight <= MAX_RESOURCE_WEIGHT:
            detail = f"resource weight of {spec.name} not in valid range (0, {MAX_RESOURCE_WEIGHT}]"
            problems.append(invalid(f"{where}.resources[{index}].weight", spec.weight, detail))
    ratio = f"{where}.requestedToCapacityRatio"
    # podsched's rules: the shape is what RequestedToCapacityRatio scores by, and means nothing to the
    # other strategies.
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO and strategy.shape is None:
        problems.append(required(ratio, "must be specified when type is RequestedToCapacityRatio"))
    elif strategy.type != REQUESTED_TO_CAPACITY_RATIO and strategy.shape is not None:
        problems.append(forbidden(ratio, "must be nil when type is not RequestedToCapacityRatio"))
    elif strategy.shape is not None:
        problems += _function_shape(strategy.shape, f"{ratio}.shape")
    return problems


def validate_volume_binding_args(args: argtypes.VolumeBindingArgs, path: str) -> list[str]:
    problems = []
    if args.bind_timeout_seconds < 0:
        problems.append(invalid(f"{path}.bindTimeoutSeconds", args.bind_timeout_seconds,
                                "invalid BindTimeoutSeconds, should not be a negative value"))
    return problems + _function_shape(args.shape, f"{path}.shape")


def _resource_names(resources: Sequence[argtypes.ResourceSpec], path: str) -> list[str]:
    """podsched's rule: a resource is named (kube-scheduler would score an unnamed one as nothing)."""
    return [required(f"{path}[{index}].name", "a resource name")
            for index, spec in enumerate(resources) if not spec.name]


def _function_shape(shape: Sequence[argtypes.UtilizationShapePoint], path: str) -> list[str]:
    if not shape:
        return [required(path, "at least one point must be specified")]
    problems = []
    for index in range(1, len(shape)):
        if shape[index - 1].utilization >= shape[index].utilization:
            problems.append(invalid(f"{path}[{index}].utilization", shape[index].utilization,
                                    "values must be sorted in increasing order"))
            break
    for index, point in enumerate(shape):
        if not 0 <= point.utilization <= MAX_UTILIZATION:
            problems.append(invalid(f"{path}[{index}].utilization", point.utilization,
                                    f"not in valid range [0, {MAX_UTILIZATION}]"))
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            problems.append(invalid(f"{path}[{index}].score", point.score,
                                    f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"))
    return problems


def validate_gpu_share_args(args: argtypes.GpuShareArgs, path: str) -> list[str]:
    """podsched's own: the GPU-sharing policies' names are not empty."""
    return [required(f"{path}.{wire}") for wire, value in (
        ("deviceClass", args.device_class), ("shareCapacity", args.share_capacity),
        ("modelAttribute", args.model_attribute)) if not value]


def validate_fgd_score_args(args: argtypes.FGDScoreArgs, path: str) -> list[str]:
    """podsched's own: each typical pod a kind the fragmentation measure takes, with a weight in (0, 1]."""
    problems = validate_gpu_share_args(args, path)
    for at, kind in enumerate(args.workload or ()):
        where = f"{path}.workload[{at}]"
        # A null field decodes to None.
        if kind.milli_cpu is None or kind.milli_cpu < 0:
            problems.append(invalid(f"{where}.milliCpu", kind.milli_cpu, "must not be negative"))
        if kind.gpu_count is None or kind.gpu_count < 0:
            problems.append(invalid(f"{where}.gpuCount", kind.gpu_count, "must not be negative"))
        elif kind.gpu_milli is None or not 0 <= kind.gpu_milli <= argtypes.GPU_MILLI \
                or (kind.gpu_milli == 0) != (kind.gpu_count == 0):
            problems.append(invalid(f"{where}.gpuMilli", kind.gpu_milli,
                                    f"must be in [1, {argtypes.GPU_MILLI}] with GPUs and 0 without"))
        if kind.weight is None or not 0 < kind.weight <= 1:
            problems.append(invalid(f"{where}.weight", kind.weight, "not in valid range (0, 1]"))
    return problems
