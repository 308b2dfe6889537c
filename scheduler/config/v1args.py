"""The plugins' arguments as a ``pluginConfig`` entry writes them (kubescheduler.config.k8s.io/v1
types_pluginargs.go): the schemas ``cluster.api.decoding.decode`` reads ``args`` into.

As in ``v1``, every field is optional (None: not written) until ``argdefaults`` fills it. Of the Kubernetes
API types the args embed (a NodeAffinity, TopologySpreadConstraints) the fields are checked here and
their nested selectors stay mappings, which ``convert`` reads with the API's own JSON mapping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class ResourceSpec:
    name: str | None = None
    weight: int | None = None
    field_path: str = ""


@dataclass(slots=True)
class UtilizationShapePoint:
    utilization: int | None = None
    score: int | None = None


@dataclass(slots=True)
class RequestedToCapacityRatioParam:
    shape: list[UtilizationShapePoint] | None = None


@dataclass(slots=True)
class ScoringStrategy:
    type: str | None = None
    resources: list[ResourceSpec] | None = None
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


@dataclass(slots=True)
class NodeResourcesFitArgs:
    ignored_resources: list[str] | None = None
    ignored_resource_groups: list[str] | None = None
    scoring_strategy: ScoringStrategy | None = None


@dataclass(slots=True)
class NodeResourcesBalancedAllocationArgs:
    resources: list[ResourceSpec] | None = None


@dataclass(slots=True)
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int | None = None
    ignore_preferred_terms_of_existing_pods: bool | None = None


@dataclass(slots=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int | None = None
    min_candidate_nodes_absolute: int | None = None


@dataclass(slots=True)
class NodeAffinity:
    """core/v1 NodeAffinity: its two fields are read by the API's JSON mapping (``convert``)."""

    required_during_scheduling_ignored_during_execution: dict[str, Any] | None = None
    preferred_during_scheduling_ignored_during_execution: list[dict[str, Any]] | None = None
    field_path: str = ""


@dataclass(slots=True)
class NodeAffinityArgs:
    added_affinity: NodeAffinity | None = None


@dataclass(slots=True)
class TopologySpreadConstraint:
    """core/v1 TopologySpreadConstraint; ``labelSelector`` is read by the API's JSON mapping."""

    max_skew: int | None = None
    topology_key: str | None = None
    when_unsatisfiable: str | None = None
    label_selector: dict[str, Any] | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] | None = None
    field_path: str = ""


@dataclass(slots=True)
class PodTopologySpreadArgs:
    default_constraints: list[TopologySpreadConstraint] | None = None
    defaulting_type: str | None = None


@dataclass(slots=True)
class VolumeBindingArgs:
    bind_timeout_seconds: int | None = None
    shape: list[UtilizationShapePoint] | None = None
