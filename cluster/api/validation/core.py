"""Validation of the core group's kinds (v1): Pod, Node, Event, Namespace, ResourceQuota, Service,
ReplicationController, and PersistentVolume and PersistentVolumeClaim from persistentvolumes.py
(Kubernetes' pkg/apis/core/validation)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cluster.api import kinds, objects_pb2
from cluster.api.names import is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_label_value
from cluster.api.quota import FINISHED_PHASES, format_requirements
from cluster.api.validation.field import (
    IMMUTABLE,
    NOT_NEGATIVE,
    check,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    quote,
    required,
)
from cluster.api.validation.meta import validate_labels
from cluster.api.validation.persistentvolumes import PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM
from cluster.api.validation.podspec import (
    PREEMPTION_POLICIES,
    RESTART_POLICIES,
    TAINT_EFFECTS,
    validate_affinity,
    validate_container,
    validate_container_claims,
    validate_container_restart_policies,
    validate_pod_claim_statuses,
    validate_pod_extended_resource_claim_status,
    validate_pod_resource_claims,
    validate_pod_spec_update,
    validate_scheduling_gates,
    validate_spread_constraints,
    validate_tolerations,
)
from cluster.api.validation.podvolumes import validate_pod_volumes
from cluster.api.validation.replicas import SELECTOR_MISMATCH, validate_replicas
from cluster.api.validation.resources import check_amount, check_quantities
from cluster.api.validation.rules import KindValidation

EVENT_TYPES = ("Normal", "Warning")



def validate_pod(pod: objects_pb2.Pod) -> list[str]:
    spec = pod.spec
    problems = []
    if not spec.containers:
        problems.append(required("spec.containers"))
    seen_names: set[str] = set()
    host_ports: set[str] = set()
    for field_name, containers in (("initContainers", spec.init_containers), ("containers", spec.containers)):
        for i, container in enumerate(containers):
            problems += validate_container(container, f"spec.{field_name}[{i}]", seen_names, host_ports)
    pod_claims = [claim.name for claim in spec.resource_claims]
    for field_name, containers in (("initContainers", spec.init_containers), ("containers", spec.containers)):
        for i, container in enumerate(containers):
            problems += validate_container_claims(
                container.resources.claims, pod_claims, f"spec.{field_name}[{i}].resources.claims")
    problems += validate_pod_resource_claims(pod.metadata.name, spec.resource_claims)
    problems += validate_pod_volumes(pod)
    problems += validate_container_restart_policies(spec)
    problems += validate_scheduling_gates(spec)
    if spec.node_name:
        problems += check("spec.nodeName", spec.node_name, is_dns1123_subdomain)
    if spec.scheduler_name:
        problems += check("spec.schedulerName", spec.scheduler_name, is_dns1123_subdomain)
    if spec.priority_class_name:
        problems += check("spec.priorityClassName", spec.priority_class_name, is_dns1123_subdomain)
    if spec.HasField("preemption_policy") and spec.preemption_policy not in PREEMPTION_POLICIES:
        problems.append(not_supported("spec.preemptionPolicy", spec.preemption_policy, PREEMPTION_POLICIES))
    if spec.restart_policy and spec.restart_policy not in RESTART_POLICIES:
        problems.append(not_supported("spec.restartPolicy", spec.restart_policy, RESTART_POLICIES))
    if spec.service_account_name:
        problems += check("spec.serviceAccountName", spec.service_account_name, is_dns1123_subdomain)
    if spec.scheduling_group.HasField("pod_group_name"):
        problems += check(
            "spec.schedulingGroup.podGroupName", spec.scheduling_group.pod_group_name, is_dns1123_subdomain
        )
    if spec.HasField("termination_grace_period_seconds") and spec.termination_grace_period_seconds < 0:
        problems.append(
            invalid(
                "spec.terminationGracePeriodSeconds", spec.termination_grace_period_seconds, NOT_NEGATIVE
            )
        )
    problems += validate_labels(spec.node_selector, "spec.nodeSelector")
    problems += validate_tolerations(spec.tolerations, "spec.tolerations")
    if spec.HasField("affinity"):
        problems += validate_affinity(spec.affinity, "spec.affinity")
    problems += validate_spread_constraints(
        spec.topology_spread_constraints, "spec.topologySpreadConstraints"
    )
    problems += check_quantities(spec.overhead, "spec.overhead", container=False)[0]
    problems += validate_pod_status(pod)
    return problems


def validate_pod_status(pod: objects_pb2.Pod) -> list[str]:
    problems = validate_pod_claim_statuses(pod) + validate_pod_extended_resource_claim_status(pod)
    if pod.status.nominated_node_name:
        problems += check("status.nominatedNodeName", pod.status.nominated_node_name, is_dns1123_subdomain)
    return problems


def validate_node(node: objects_pb2.Node) -> list[str]:
    problems = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(node.spec.taints):
        where = f"spec.taints[{i}]"
        if not taint.key:
            problems.append(required(f"{where}.key"))
        else:
            problems += check(f"{where}.key", taint.key, is_qualified_name)
        if taint.value:
            problems += check(f"{where}.value", taint.value, is_valid_label_value)
        if not taint.effect:
            problems.append(required(f"{where}.effect"))
        elif taint.effect not in TAINT_EFFECTS:
            problems.append(not_supported(f"{where}.effect", taint.effect, TAINT_EFFECTS))
        pair = (taint.key, taint.effect)
        if pair in seen:
            problems.append(
                duplicate(where, f"{taint.key}:{taint.effect}")
                + ": taints must be unique by key and effect pair"
            )
        seen.add(pair)
    problems += validate_node_status(node)
    return problems


def validate_node_status(node: objects_pb2.Node) -> list[str]:
    problems = check_quantities(node.status.capacity, "status.capacity", container=False)[0]
    problems += check_quantities(node.status.allocatable, "status.allocatable", container=False)[0]
    problems += _validate_node_images(node.status.images)
    return problems


def _validate_node_images(images: Sequence[objects_pb2.ContainerImage]) -> list[str]:
    """What a node reports of its images feeds ImageLocality's arithmetic: every image needs a name to
    be matched by, and a size that is not negative."""
    problems = []
    for i, image in enumerate(images):
        where = f"status.images[{i}]"
        if not image.names:
            problems.append(required(f"{where}.names"))
        for j, name in enumerate(image.names):
            if not name:
                problems.append(required(f"{where}.names[{j}]"))
        if image.size_bytes < 0:
            problems.append(
                invalid(f"{where}.sizeBytes", image.size_bytes, "must be greater than or equal to 0"))
    return problems


#: The resources a ResourceQuota may limit: podsched counts pods (Kubernetes' "pods" and its object-count
#: twin "count/pods"), not compute resources.
QUOTA_RESOURCES = ("pods", "count/pods")


#: The quota scopes podsched evaluates (Kubernetes also has Terminating, BestEffort, ...).
QUOTA_SCOPES = ("PriorityClass",)


SCOPE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def _validate_quota_amounts(amounts: Mapping[str, str], path: str) -> list[str]:
    problems = []
    for name, text in amounts.items():
        where = f"{path}[{name}]"
        if name not in QUOTA_RESOURCES:
            problems.append(not_supported(where, name, QUOTA_RESOURCES))
            continue
        problems += check_amount(where, text, whole=True)[1]
    return problems


def _validate_scope_requirement(
    requirement: objects_pb2.ScopedResourceSelectorRequirement, path: str
) -> list[str]:
    """Kubernetes' ValidateScopedResourceSelectorRequirement, for the scopes podsched has."""
    problems = []
    if requirement.scope_name not in QUOTA_SCOPES:
        problems.append(not_supported(f"{path}.scopeName", requirement.scope_name, QUOTA_SCOPES))
    operator, values = requirement.operator, list(requirement.values)
    if operator in ("In", "NotIn"):
        if not values:
            problems.append(required(
                f"{path}.values",
                "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
            ))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            problems.append(invalid(
                f"{path}.values", f"[{' '.join(values)}]",
                "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
            ))
    else:
        problems.append(not_supported(f"{path}.operator", operator, SCOPE_SELECTOR_OPERATORS))
    return problems


def validate_resource_quota(quota: objects_pb2.ResourceQuota) -> list[str]:
    spec = quota.spec
    problems = _validate_quota_amounts(spec.hard, "spec.hard")
    seen: set[str] = set()
    for index, scope in enumerate(spec.scopes):
        where = f"spec.scopes[{index}]"
        if scope not in QUOTA_SCOPES:
            problems.append(not_supported(where, scope, QUOTA_SCOPES))
        elif scope in seen:
            problems.append(duplicate(where, scope))
        seen.add(scope)
    for index, requirement in enumerate(spec.scope_selector.match_expressions):
        problems += _validate_scope_requirement(requirement, f"spec.scopeSelector.matchExpressions[{index}]")
    problems += validate_resource_quota_status(quota)
    return problems


def validate_resource_quota_status(quota: objects_pb2.ResourceQuota) -> list[str]:
    problems = _validate_quota_amounts(quota.status.hard, "status.hard")
    problems += _validate_quota_amounts(quota.status.used, "status.used")
    return problems


def validate_event(event: objects_pb2.Event) -> list[str]:
    involved = event.involved_object
    problems = []
    if not involved.kind:
        problems.append(required("involvedObject.kind"))
    if not involved.name:
        problems.append(required("involvedObject.name"))
    if involved.namespace and event.metadata.namespace and involved.namespace != event.metadata.namespace:
        problems.append(
            invalid("involvedObject.namespace", involved.namespace, "does not match event.namespace")
        )
    if event.type and event.type not in EVENT_TYPES:
        problems.append(not_supported("type", event.type, EVENT_TYPES))
    if event.count < 0:
        problems.append(invalid("count", event.count, NOT_NEGATIVE))
    return problems


#: A Namespace's phases (the server sets Active on create; Terminating is its namespace controller's).
NAMESPACE_PHASES = ("Active", "Terminating")


def validate_namespace(namespace: objects_pb2.Namespace) -> list[str]:
    """Kubernetes' ValidateNamespace: the name is a DNS-1123 label (stricter than other kinds'
    subdomain, checked by ``validate_meta``, so only a valid subdomain is checked again), finalizers are
    qualified names."""
    meta = namespace.metadata
    problems = []
    if meta.name and not is_dns1123_subdomain(meta.name):
        problems += check("metadata.name", meta.name, is_dns1123_label)
    for index, finalizer in enumerate(namespace.spec.finalizers):
        problems += check(f"spec.finalizers[{index}]", finalizer, is_qualified_name)
    problems += validate_namespace_status(namespace)
    return problems


def validate_namespace_status(namespace: objects_pb2.Namespace) -> list[str]:
    if namespace.status.phase and namespace.status.phase not in NAMESPACE_PHASES:
        return [not_supported("status.phase", namespace.status.phase, NAMESPACE_PHASES)]
    return []


SERVICE_TYPES = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")


def validate_service(service: objects_pb2.Service) -> list[str]:
    """The parts of ValidateService for what podsched keeps: the selector's labels, the type, the
    ports' numbers."""
    spec = service.spec
    problems = validate_labels(spec.selector, "spec.selector")
    if spec.type and spec.type not in SERVICE_TYPES:
        problems.append(not_supported("spec.type", spec.type, SERVICE_TYPES))
    in_range = "must be between 1 and 65535, inclusive"
    for i, port in enumerate(spec.ports):
        if not 1 <= port.port <= 65535:
            problems.append(invalid(f"spec.ports[{i}].port", port.port, in_range))
        if port.node_port and not 1 <= port.node_port <= 65535:
            problems.append(invalid(f"spec.ports[{i}].nodePort", port.node_port, in_range))
    return problems


def validate_replication_controller(rc: objects_pb2.ReplicationController) -> list[str]:
    """ValidateReplicationControllerSpec: a selector (defaulted from the template's labels) that the
    template's labels match."""
    spec = rc.spec
    problems = validate_replicas(spec)
    if not spec.selector:
        problems.append(required("spec.selector"))
    problems += validate_labels(spec.selector, "spec.selector")
    if not spec.HasField("template"):
        problems.append(required("spec.template"))
    else:
        labels = spec.template.metadata.labels
        if spec.selector and any(labels.get(k) != v for k, v in spec.selector.items()):
            problems.append(invalid("spec.template.metadata.labels", dict(labels), SELECTOR_MISMATCH))
        problems += validate_labels(labels, "spec.template.metadata.labels")
    return problems


def _validate_pod_update(old: objects_pb2.Pod, new: objects_pb2.Pod) -> list[str]:
    return validate_pod_spec_update(old.spec, new.spec)


def _validate_pod_status_update(old: objects_pb2.Pod, new: objects_pb2.Pod) -> list[str]:
    """A pod that has finished (Succeeded or Failed) stays in its phase, as a kubelet keeps it (a pod
    brought back to a running phase would run again, counted by no quota)."""
    before, after = old.status.phase, new.status.phase
    if before in FINISHED_PHASES and after != before:
        detail = f"may not be transitioned from terminal phase {quote(before)} to {quote(after)}"
        return [forbidden("status.phase", detail)]
    return []


def _validate_resource_quota_update(
    old: objects_pb2.ResourceQuota, new: objects_pb2.ResourceQuota
) -> list[str]:
    # As Kubernetes: which pods a quota counts never changes, so its usage stays right.
    problems = []
    if list(new.spec.scopes) != list(old.spec.scopes):
        problems.append(invalid("spec.scopes", f"[{' '.join(new.spec.scopes)}]", IMMUTABLE))
    if new.spec.scope_selector != old.spec.scope_selector:
        shown = format_requirements(list(new.spec.scope_selector.match_expressions))
        problems.append(invalid("spec.scopeSelector", shown, IMMUTABLE))
    return problems


POD = KindValidation(
    kinds.POD, validate_pod, _validate_pod_update, validate_pod_status, _validate_pod_status_update
)
NODE = KindValidation(kinds.NODE, validate_node, validate_status=validate_node_status)
EVENT = KindValidation(kinds.EVENT, validate_event)
NAMESPACE = KindValidation(kinds.NAMESPACE, validate_namespace, validate_status=validate_namespace_status)
RESOURCE_QUOTA = KindValidation(
    kinds.RESOURCE_QUOTA, validate_resource_quota, _validate_resource_quota_update,
    validate_resource_quota_status,
)
SERVICE = KindValidation(kinds.SERVICE, validate_service)
REPLICATION_CONTROLLER = KindValidation(kinds.REPLICATION_CONTROLLER, validate_replication_controller)

VALIDATIONS: tuple[KindValidation[Any], ...] = (
    POD, NODE, EVENT, NAMESPACE, RESOURCE_QUOTA, SERVICE, REPLICATION_CONTROLLER, PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
)
