"""The plugins' arguments as the plugins receive them: defaulted, validated, immutable
(kube-scheduler's pkg/scheduler/apis/config/types_pluginargs.go).

A ``pluginConfig`` entry's ``args`` is decoded into its versioned schema (``v1args``), defaulted
(``argdefaults``), converted into one of these (``convert``) and validated (``argvalidation``);
``pluginargs`` runs those steps. A plugin module names its type as ``ARGS`` and its factory takes an
instance; each type's own defaults are kube-scheduler's, so ``XArgs()`` is what an entry without args gives.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cluster.api import objects_pb2
from scheduler.framework.resource import CPU, MEMORY
from scheduler.plugins.helpers import NodeSelector, PreferredSchedulingTerms

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
DEFAULTING_TYPES = (SYSTEM_DEFAULTING, LIST_DEFAULTING)

#: The shape's scores are 0..MAX_CUSTOM_PRIORITY_SCORE; NodeResourcesFit scales them to MAX_NODE_SCORE.
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100
MAX_RESOURCE_WEIGHT = 100

#: kube-scheduler's bounds for hardPodAffinityWeight, and its default.
MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1

#: kube-scheduler's defaults for DefaultPreemptionArgs.
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    name: str
    weight: int = 1


#: kube-scheduler's defaultResourceSpec: CPU and memory, weight 1 each.
DEFAULT_RESOURCES = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))


@dataclass(frozen=True, slots=True)
class UtilizationShapePoint:
    #: Percent, 0..100.
    utilization: int
    #: 0..10 (scaled by 10 when scoring).
    score: int


@dataclass(frozen=True, slots=True)
class ScoringStrategy:
    type: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    #: The RequestedToCapacityRatio shape; None for the other strategies.
    shape: tuple[UtilizationShapePoint, ...] | None = None


@dataclass(frozen=True, slots=True)
class NodeResourcesFitArgs:
    #: Extended resources the fit check ignores.
    ignored_resources: tuple[str, ...] = ()
    #: Extended-resource groups (the part before "/") the fit check ignores.
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)


@dataclass(frozen=True, slots=True)
class NodeResourcesBalancedAllocationArgs:
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES


@dataclass(frozen=True, slots=True)
class InterPodAffinityArgs:
    #: Score given, per existing pod, for each of its *required* affinity terms that the incoming pod
    #: matches (symmetry of hard affinity). kube-scheduler's default 1; 0 turns it off.
    hard_pod_affinity_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT
    #: When the incoming pod has no preferred terms, skip scoring by existing pods' terms altogether (a
    #: speed-up that kube-scheduler offers; off by default).
    ignore_preferred_terms_of_existing_pods: bool = False


@dataclass(frozen=True, slots=True)
class DefaultPreemptionArgs:
    #: The dry run stops after finding candidates on this percentage of the potential nodes ...
    min_candidate_nodes_percentage: int = DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
    #: ... but no fewer than this many (all of them when there are fewer potential nodes). Finding more
    #: candidates gives a better choice at a higher cost per preemption.
    min_candidate_nodes_absolute: int = DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE


@dataclass(frozen=True, slots=True)
class NodeAffinityArgs:
    """Node affinity every pod of the profile gets on top of its own (``addedAffinity``), parsed once by
    the conversion, so that a bad expression fails the configuration and the plugin parses nothing."""

    #: Its required part; None: none.
    added_required: NodeSelector | None = None
    #: Its preferred terms; None: none given.
    added_preferred: PreferredSchedulingTerms | None = None


@dataclass(frozen=True, slots=True)
class PodTopologySpreadArgs:
    """How default constraints apply: see scheduler.plugins.podtopologyspread.plugin."""

    default_constraints: tuple[objects_pb2.TopologySpreadConstraint, ...] = ()
    #: "System" (kube-scheduler's default: its built-in constraints) or "List" (``default_constraints``).
    defaulting_type: str = SYSTEM_DEFAULTING


#: kube-scheduler's default VolumeBindingArgs.bindTimeoutSeconds.
DEFAULT_BIND_TIMEOUT_SECONDS = 600
#: kube-scheduler's default VolumeBinding shape with StorageCapacityScoring: the more of a class's capacity
#: the pod's volumes leave free on a node, the better.
DEFAULT_VOLUME_BINDING_SHAPE = (UtilizationShapePoint(0, MAX_CUSTOM_PRIORITY_SCORE),
                                UtilizationShapePoint(MAX_UTILIZATION, 0))


@dataclass(frozen=True, slots=True)
class VolumeBindingArgs:
    #: How long PreBind waits for the PV controller to complete the pod's bindings (0: it does not wait).
    bind_timeout_seconds: int = DEFAULT_BIND_TIMEOUT_SECONDS
    #: Score by the utilization of the storage capacity the pod's volumes come from (StorageCapacityScoring).
    shape: tuple[UtilizationShapePoint, ...] = DEFAULT_VOLUME_BINDING_SHAPE


#: A whole GPU in milli, the unit of the GPU-sharing policies' args.
GPU_MILLI = 1000


@dataclass(frozen=True, slots=True)
class GpuShareArgs:
    """The GPU-sharing policies' args (scheduler.plugins.gpushare): which devices are GPUs and how they
    are shared (scheduler.gpus.GpuSpec)."""

    #: The DeviceClass whose devices are the GPUs.
    device_class: str = "gpu.podsched.io"
    #: The capacity whose free part, scaled to 0..1000, is a GPU's free milli.
    share_capacity: str = "milli"
    #: The string attribute naming a GPU's model.
    model_attribute: str = "model"


@dataclass(frozen=True, slots=True)
class TypicalPod:
    """One kind of typical pod of FGD's workload and its weight (the FGD artifact's TargetPod)."""

    milli_cpu: int = 0
    #: Per GPU, 1..1000; 0 without GPUs.
    gpu_milli: int = 0
    gpu_count: int = 0
    #: The GPU models it accepts; none: any.
    models: list[str] | None = None
    #: Its share of the workload, in (0, 1].
    weight: float = 0.0


@dataclass(frozen=True, slots=True)
class FGDScoreArgs(GpuShareArgs):
    #: The typical pods; empty: those of the pods the scheduler holds (scheduler.plugins.gpushare.fgd).
    workload: list[TypicalPod] = field(default_factory=list)
