"""Validation of a pod's spec: containers, ports, tolerations, affinity, spreading, scheduling gates, and
which of its fields an update may change."""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Sequence
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from cluster.api import objects_pb2
from cluster.api.containers import SIDECAR_RESTART_POLICY
from cluster.api.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    max_len_error,
)
from cluster.api.validation.field import (
    IMMUTABLE,
    check,
    duplicate,
    forbidden,
    invalid,
    not_found,
    not_supported,
    required,
)
from cluster.api.validation.meta import validate_label_selector
from cluster.api.validation.resources import validate_resource_requirements

PREEMPTION_POLICIES = ("Never", "PreemptLowerPriority")


TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


TOLERATION_OPERATORS = ("Equal", "Exists")


WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")


NODE_INCLUSION_POLICIES = ("Honor", "Ignore")


PROTOCOLS = ("SCTP", "TCP", "UDP")


RESTART_POLICIES = ("Always", "OnFailure", "Never")


PULL_POLICIES = ("Always", "IfNotPresent", "Never")


_POD_UPDATE_FORBIDDEN = (
    "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
    "`spec.tolerations` (only additions to existing tolerations)"
)


def validate_scheduling_gates(spec: objects_pb2.PodSpec) -> list[str]:
    """Gates are qualified names, each once; a pod is not created on a node while it has gates."""
    problems = []
    seen: set[str] = set()
    for i, gate in enumerate(spec.scheduling_gates):
        path = f"spec.schedulingGates[{i}]"
        problems += check(f"{path}.name", gate.name, is_qualified_name)
        if gate.name in seen:
            problems.append(duplicate(path, gate.name))
        seen.add(gate.name)
    if spec.scheduling_gates and spec.node_name:
        problems.append(
            forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared")
        )
    return problems


def validate_container_restart_policies(spec: objects_pb2.PodSpec) -> list[str]:
    """An init container may be a sidecar (restartPolicy Always) and nothing else; an app container
    restarts as the pod's restartPolicy says and may not set its own (Kubernetes' GA rules)."""
    problems = []
    for i, container in enumerate(spec.init_containers):
        if container.HasField("restart_policy") and container.restart_policy != SIDECAR_RESTART_POLICY:
            problems.append(not_supported(
                f"spec.initContainers[{i}].restartPolicy", container.restart_policy, (SIDECAR_RESTART_POLICY,)
            ))
    for i, container in enumerate(spec.containers):
        if container.HasField("restart_policy"):
            problems.append(forbidden(
                f"spec.containers[{i}].restartPolicy", "may not be set for non-init containers"
            ))
    return problems


def validate_container(
    container: objects_pb2.Container, path: str, seen_names: set[str], host_ports: set[str]
) -> list[str]:
    problems = []
    if not container.name:
        problems.append(required(f"{path}.name"))
    else:
        problems += check(f"{path}.name", container.name, is_dns1123_label)
        if container.name in seen_names:
            problems.append(duplicate(f"{path}.name", container.name))
        seen_names.add(container.name)
    if not container.image:
        problems.append(required(f"{path}.image"))
    elif container.image != container.image.strip():
        problems.append(
            invalid(f"{path}.image", container.image, "must not have leading or trailing whitespace")
        )
    if container.image_pull_policy and container.image_pull_policy not in PULL_POLICIES:
        problems.append(not_supported(f"{path}.imagePullPolicy", container.image_pull_policy, PULL_POLICIES))
    for i, env in enumerate(container.env):
        if not env.name:
            problems.append(required(f"{path}.env[{i}].name"))
        elif "=" in env.name or not env.name.isprintable() or not env.name.isascii():
            problems.append(
                invalid(
                    f"{path}.env[{i}].name",
                    env.name,
                    "a valid environment variable name must consist only of printable ASCII "
                    "characters other than '='",
                )
            )
    port_names: set[str] = set()
    for i, port in enumerate(container.ports):
        problems += _validate_port(port, f"{path}.ports[{i}]", port_names, host_ports)
    problems += validate_resource_requirements(container.resources, f"{path}.resources")
    return problems


_PORT_NAME = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?", re.ASCII)


_PORT_RANGE = "must be between 1 and 65535, inclusive"


def _validate_port(
    port: objects_pb2.ContainerPort, path: str, port_names: set[str], host_ports: set[str]
) -> list[str]:
    problems = []
    if port.name:
        problems += check(f"{path}.name", port.name, _is_valid_port_name)
        if port.name in port_names:
            problems.append(duplicate(f"{path}.name", port.name))
        port_names.add(port.name)
    if port.container_port == 0:
        problems.append(required(f"{path}.containerPort"))
    elif not 1 <= port.container_port <= 65535:
        problems.append(invalid(f"{path}.containerPort", port.container_port, _PORT_RANGE))
    if port.host_port != 0 and not 1 <= port.host_port <= 65535:
        problems.append(invalid(f"{path}.hostPort", port.host_port, _PORT_RANGE))
    if port.protocol and port.protocol not in PROTOCOLS:
        problems.append(not_supported(f"{path}.protocol", port.protocol, PROTOCOLS))
    if port.host_ip:
        try:
            ipaddress.ip_address(port.host_ip)
        except ValueError:
            problems.append(invalid(f"{path}.hostIP", port.host_ip, "must be a valid IP address"))
    if port.host_port:
        # Two containers of one pod cannot both take a host port (per protocol and host IP).
        key = f"{port.protocol or 'TCP'}/{port.host_ip}/{port.host_port}"
        if key in host_ports:
            problems.append(duplicate(f"{path}.hostPort", key))
        host_ports.add(key)
    return problems


def _is_valid_port_name(name: str) -> list[str]:
    problems = []
    if len(name) > 15:
        problems.append(max_len_error(15))
    if not _PORT_NAME.fullmatch(name):
        problems.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if "--" in name:
        problems.append("must not contain consecutive hyphens")
    if not any(ch.isalpha() for ch in name):
        problems.append("must contain at least one letter (a-z)")
    return problems


def validate_tolerations(tolerations: Sequence[objects_pb2.Toleration], path: str) -> list[str]:
    problems = []
    for i, toleration in enumerate(tolerations):
        where = f"{path}[{i}]"
        if toleration.key:
            problems += check(f"{where}.key", toleration.key, is_qualified_name)
        elif toleration.operator != "Exists":
            problems.append(
                invalid(
                    f"{where}.operator",
                    toleration.operator,
                    'operator must be Exists when `key` is empty, which means "match all values '
                    'and all keys"',
                )
            )
        if toleration.HasField("toleration_seconds") and toleration.effect != "NoExecute":
            problems.append(
                invalid(
                    f"{where}.effect",
                    toleration.effect,
                    "effect must be 'NoExecute' when `tolerationSeconds` is set",
                )
            )
        if toleration.operator in ("", "Equal"):
            problems += check(f"{where}.value", toleration.value, is_valid_label_value)
        elif toleration.operator == "Exists":
            if toleration.value:
                problems.append(
                    invalid(
                        f"{where}.operator",
                        toleration.value,
                        "value must be empty when `operator` is 'Exists'",
                    )
                )
        else:
            problems.append(not_supported(f"{where}.operator", toleration.operator, TOLERATION_OPERATORS))
        if toleration.effect and toleration.effect not in TAINT_EFFECTS:
            problems.append(not_supported(f"{where}.effect", toleration.effect, TAINT_EFFECTS))
    return problems


def _validate_weight(weight: int, path: str) -> list[str]:
    if 1 <= weight <= 100:
        return []
    return [invalid(path, weight, "must be in the range 1-100")]


def validate_affinity(affinity: objects_pb2.Affinity, path: str) -> list[str]:
    problems = []
    if affinity.HasField("node_affinity"):
        node_path = f"{path}.nodeAffinity"
        node = affinity.node_affinity
        if node.HasField("required_during_scheduling_ignored_during_execution"):
            where = f"{node_path}.requiredDuringSchedulingIgnoredDuringExecution"
            terms = node.required_during_scheduling_ignored_during_execution.node_selector_terms
            if not terms:
                problems.append(
                    required(f"{where}.nodeSelectorTerms", "must have at least one node selector term")
                )
            for i, term in enumerate(terms):
                problems += _validate_node_selector_term(term, f"{where}.nodeSelectorTerms[{i}]")
        for i, preferred in enumerate(node.preferred_during_scheduling_ignored_during_execution):
            where = f"{node_path}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            problems += _validate_weight(preferred.weight, f"{where}.weight")
            problems += _validate_node_selector_term(preferred.preference, f"{where}.preference")
    for field_name, json_name in (("pod_affinity", "podAffinity"), ("pod_anti_affinity", "podAntiAffinity")):
        if not affinity.HasField(field_name):
            continue
        pod_affinity = getattr(affinity, field_name)
        base = f"{path}.{json_name}"
        for i, term in enumerate(pod_affinity.required_during_scheduling_ignored_during_execution):
            problems += _validate_pod_affinity_term(
                term, f"{base}.requiredDuringSchedulingIgnoredDuringExecution[{i}]"
            )
        for i, weighted in enumerate(pod_affinity.preferred_during_scheduling_ignored_during_execution):
            where = f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            problems += _validate_weight(weighted.weight, f"{where}.weight")
            problems += _validate_pod_affinity_term(weighted.pod_affinity_term, f"{where}.podAffinityTerm")
    return problems


def validate_node_selector(selector: objects_pb2.NodeSelector, path: str) -> list[str]:
    """Kubernetes' ValidateNodeSelector: at least one term, each valid."""
    if not selector.node_selector_terms:
        return [required(f"{path}.nodeSelectorTerms", "must have at least one node selector term")]
    problems = []
    for i, term in enumerate(selector.node_selector_terms):
        problems += _validate_node_selector_term(term, f"{path}.nodeSelectorTerms[{i}]")
    return problems


def validate_pod_resource_claims(pod_name: str, claims: Sequence[objects_pb2.PodResourceClaim]) -> list[str]:
    """spec.resourceClaims: unique DNS-label names, each naming exactly one of a ResourceClaim or a
    ResourceClaimTemplate; a template's entry must also make a valid claim name (<pod>-<entry>)."""
    problems = []
    names: set[str] = set()
    for i, claim in enumerate(claims):
        where = f"spec.resourceClaims[{i}]"
        if not claim.name:
            problems.append(required(f"{where}.name"))
        elif claim.name in names:
            problems.append(duplicate(f"{where}.name", claim.name))
        else:
            name_problems = check(f"{where}.name", claim.name, is_dns1123_label)
            problems += name_problems
            if not name_problems and pod_name and claim.HasField("resource_claim_template_name"):
                generated = f"{pod_name}-{claim.name}"
                problems += [invalid(f"{where}.name", generated, "final ResourceClaim name: " + p)
                             for p in is_dns1123_subdomain(generated)]
            names.add(claim.name)
        by_name = claim.HasField("resource_claim_name")
        by_template = claim.HasField("resource_claim_template_name")
        if by_name and by_template:
            problems.append(invalid(where, _short_json(claim),
                                    "at most one of `resourceClaimName` or `resourceClaimTemplateName` "
                                    "may be specified"))
        elif not by_name and not by_template:
            problems.append(invalid(where, _short_json(claim),
                                    "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"))
        if by_name:
            problems += check(f"{where}.resourceClaimName", claim.resource_claim_name, is_dns1123_subdomain)
        if by_template:
            problems += check(f"{where}.resourceClaimTemplateName", claim.resource_claim_template_name,
                              is_dns1123_subdomain)
    return problems


def validate_container_claims(
    claims: Sequence[objects_pb2.ContainerResourceClaim], pod_claims: Sequence[str], path: str
) -> list[str]:
    """A container's resources.claims: each names an entry of spec.resourceClaims (and optionally one
    request of it), no entry twice."""
    problems = []
    seen: set[str] = set()
    for i, claim in enumerate(claims):
        where = f"{path}[{i}]"
        if not claim.name:
            problems.append(required(where))
            continue
        key = f"{claim.name}/{claim.request}" if claim.request else claim.name
        if key in seen:
            problems.append(duplicate(where, key))
        seen.add(key)
        if claim.name not in pod_claims:
            known = ", ".join(sorted(pod_claims))
            detail = "must be one of the names in pod.spec.resourceClaims" + (
                f": {known}" if known else " which is empty")
            problems.append(not_found(where, claim.name, detail))
        if claim.request:
            problems += check(f"{where}.request", claim.request, is_dns1123_label)
    return problems


def validate_pod_claim_statuses(pod: objects_pb2.Pod) -> list[str]:
    """status.resourceClaimStatuses: each names an entry of spec.resourceClaims, once, and its claim name
    (when there is one) is a valid ResourceClaim name."""
    problems = []
    pod_claims = {claim.name for claim in pod.spec.resource_claims}
    seen: set[str] = set()
    for i, status in enumerate(pod.status.resource_claim_statuses):
        where = f"status.resourceClaimStatuses[{i}].name"
        if status.name not in pod_claims:
            problems.append(
                invalid(where, status.name, "must match the name of an entry in `spec.resourceClaims`"))
        if status.name in seen:
            problems.append(duplicate(where, status.name))
        seen.add(status.name)
        if status.HasField("resource_claim_name"):
            problems += check(where, status.resource_claim_name, is_dns1123_subdomain)
    return problems


def validate_pod_extended_resource_claim_status(pod: objects_pb2.Pod) -> list[str]:
    """status.extendedResourceClaimStatus (the claim the scheduler made for the pod's extended resources
    backed by DRA), as upstream: at least one mapping, each of a container and a resource it requests,
    with a request name that is a DNS label, each (container, resource, request) once; the claim's name a
    valid ResourceClaim name."""
    if not pod.status.HasField("extended_resource_claim_status"):
        return []
    status = pod.status.extended_resource_claim_status
    path = "status.extendedResourceClaimStatus"
    containers = {c.name: c for c in (*pod.spec.init_containers, *pod.spec.containers)}
    problems = []
    if not status.request_mappings:
        problems.append(required(f"{path}.requestMappings", "at least one request mapping is required"))
    seen: set[tuple[str, str, str]] = set()
    for i, mapping in enumerate(status.request_mappings):
        where = f"{path}.requestMappings[{i}]"
        container = containers.get(mapping.container_name)
        if container is None:
            problems.append(invalid(f"{where}.containerName", mapping.container_name,
                                    "must match the name of an entry in spec.initContainers.name or "
                                    "spec.containers.name"))
        elif mapping.resource_name not in container.resources.requests:
            problems.append(invalid(f"{where}.resourceName", mapping.resource_name,
                                    "must match the extended resource name of an entry in "
                                    "spec.initContainers.resources.requests or "
                                    "spec.containers.resources.requests"))
        # Upstream reports a bad request name at the status's path, not the mapping's.
        problems += check(f"{path}.requestName", mapping.request_name, is_dns1123_label)
        key = (mapping.container_name, mapping.resource_name, mapping.request_name)
        if key in seen:
            problems += [duplicate(f"{where}.containerName", mapping.container_name),
                         duplicate(f"{where}.resourceName", mapping.resource_name),
                         duplicate(f"{where}.requestName", mapping.request_name)]
        seen.add(key)
    if not status.resource_claim_name:
        problems.append(required(f"{path}.resourceClaimName"))
    else:
        problems += check(f"{path}.resourceClaimName", status.resource_claim_name, is_dns1123_subdomain)
    return problems


def _short_json(message: Message) -> str:
    return json.dumps(json_format.MessageToDict(message), separators=(",", ":"), sort_keys=True)


def _validate_node_selector_term(term: objects_pb2.NodeSelectorTerm, path: str) -> list[str]:
    problems = []
    for i, requirement in enumerate(term.match_expressions):
        where = f"{path}.matchExpressions[{i}]"
        problems += check(f"{where}.key", requirement.key, is_qualified_name)
        operator, values = requirement.operator, requirement.values
        if operator in ("In", "NotIn"):
            if not values:
                problems.append(
                    required(f"{where}.values", "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                problems.append(
                    forbidden(
                        f"{where}.values",
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        elif operator in ("Gt", "Lt"):
            if len(values) != 1:
                problems.append(
                    required(
                        f"{where}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'"
                    )
                )
            elif not re.fullmatch(r"[-+]?[0-9]+", values[0]):
                problems.append(invalid(f"{where}.values[0]", values[0], "must be an integer"))
        else:
            problems.append(invalid(f"{where}.operator", operator, "not a valid selector operator"))
    for i, requirement in enumerate(term.match_fields):
        where = f"{path}.matchFields[{i}]"
        if requirement.key != "metadata.name":
            problems.append(invalid(f"{where}.key", requirement.key, "not a valid field selector key"))
        if requirement.operator not in ("In", "NotIn"):
            problems.append(
                invalid(f"{where}.operator", requirement.operator, "not a valid selector operator")
            )
        elif len(requirement.values) != 1:
            problems.append(
                required(
                    f"{where}.values",
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )
            )
        else:
            problems += [
                invalid(f"{where}.values[0]", requirement.values[0], p)
                for p in is_dns1123_subdomain(requirement.values[0])
            ]
    return problems


def _validate_pod_affinity_term(term: objects_pb2.PodAffinityTerm, path: str) -> list[str]:
    problems = []
    if term.HasField("label_selector"):
        problems += validate_label_selector(term.label_selector, f"{path}.labelSelector")
    if term.HasField("namespace_selector"):
        problems += validate_label_selector(term.namespace_selector, f"{path}.namespaceSelector")
    for i, namespace in enumerate(term.namespaces):
        problems += [invalid(f"{path}.namespaces[{i}]", namespace, p) for p in is_dns1123_label(namespace)]
    if not term.topology_key:
        problems.append(required(f"{path}.topologyKey", "can not be empty"))
    else:
        problems += check(f"{path}.topologyKey", term.topology_key, is_qualified_name)
    for field_name, json_name in (
        ("match_label_keys", "matchLabelKeys"),
        ("mismatch_label_keys", "mismatchLabelKeys"),
    ):
        for i, key in enumerate(getattr(term, field_name)):
            problems += [invalid(f"{path}.{json_name}[{i}]", key, p) for p in is_qualified_name(key)]
    return problems


def validate_spread_constraints(
    constraints: Sequence[objects_pb2.TopologySpreadConstraint], path: str
) -> list[str]:
    problems = []
    seen: set[tuple[str, str]] = set()
    for i, constraint in enumerate(constraints):
        where = f"{path}[{i}]"
        if constraint.max_skew <= 0:
            problems.append(invalid(f"{where}.maxSkew", constraint.max_skew, "must be greater than zero"))
        if not constraint.topology_key:
            problems.append(required(f"{where}.topologyKey", "can not be empty"))
        else:
            problems += check(f"{where}.topologyKey", constraint.topology_key, is_qualified_name)
        action = constraint.when_unsatisfiable
        if not action:
            problems.append(required(f"{where}.whenUnsatisfiable"))
        elif action not in WHEN_UNSATISFIABLE:
            problems.append(not_supported(f"{where}.whenUnsatisfiable", action, WHEN_UNSATISFIABLE))
        if constraint.HasField("min_domains"):
            if constraint.min_domains <= 0:
                problems.append(
                    invalid(f"{where}.minDomains", constraint.min_domains, "must be greater than 0")
                )
            elif action and action != "DoNotSchedule":
                problems.append(
                    invalid(
                        f"{where}.minDomains",
                        constraint.min_domains,
                        f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}",
                    )
                )
        pair = (constraint.topology_key, action)
        if constraint.topology_key and action:
            if pair in seen:
                problems.append(duplicate(where, f"{{{pair[0]}, {pair[1]}}}"))
            seen.add(pair)
        for field_name, json_name in (
            ("node_affinity_policy", "nodeAffinityPolicy"),
            ("node_taints_policy", "nodeTaintsPolicy"),
        ):
            policy = getattr(constraint, field_name)
            if policy and policy not in NODE_INCLUSION_POLICIES:
                problems.append(not_supported(f"{where}.{json_name}", policy, NODE_INCLUSION_POLICIES))
        if constraint.HasField("label_selector"):
            problems += validate_label_selector(constraint.label_selector, f"{where}.labelSelector")
        for j, key in enumerate(constraint.match_label_keys):
            problems += [invalid(f"{where}.matchLabelKeys[{j}]", key, p) for p in is_qualified_name(key)]
    return problems


def validate_pod_spec_update(old: objects_pb2.PodSpec, new: objects_pb2.PodSpec) -> list[str]:
    """Kubernetes lets an update change container images and add tolerations; nothing else in spec."""
    problems = []
    if new.scheduling_group != old.scheduling_group:
        shown = new.scheduling_group.pod_group_name if new.scheduling_group.HasField("pod_group_name") else ""
        problems.append(invalid("spec.schedulingGroup", shown, IMMUTABLE))
    old_tolerations = list(old.tolerations)
    for before in old_tolerations:
        # An existing toleration may stay anywhere in the list, with any tolerationSeconds.
        if not any(_same_toleration(before, after) for after in new.tolerations):
            problems.append(
                forbidden(
                    "spec.tolerations", "existing toleration can not be modified except its tolerationSeconds"
                )
            )
            break
    problems += _validate_gated_pod_update(old, new)
    masked_old, masked_new = objects_pb2.PodSpec(), objects_pb2.PodSpec()
    masked_old.CopyFrom(old)
    masked_new.CopyFrom(new)
    for spec in (masked_old, masked_new):
        for container in (*spec.containers, *spec.init_containers):
            container.image = ""
        spec.ClearField("tolerations")
        spec.ClearField("scheduling_group")  # its own error above
        spec.ClearField("scheduling_gates")  # judged above
        if old.scheduling_gates:
            # A gated pod's nodeSelector and node affinity may narrow, judged above.
            spec.ClearField("node_selector")
            spec.affinity.ClearField("node_affinity")
            if not spec.affinity.ListFields():
                spec.ClearField("affinity")  # set or not, an empty affinity is none
    if masked_old != masked_new:
        changed = sorted(
            fd.json_name
            for fd in objects_pb2.PodSpec.DESCRIPTOR.fields
            if _field_value(masked_old, fd) != _field_value(masked_new, fd)
        )
        problems.append(
            forbidden(
                "spec", f"{_POD_UPDATE_FORBIDDEN}; changed: " + ", ".join(f"spec.{name}" for name in changed)
            )
        )
    return problems


def _validate_gated_pod_update(old: objects_pb2.PodSpec, new: objects_pb2.PodSpec) -> list[str]:
    """Scheduling gates may only be removed. While the pod is gated, whoever holds the gate (Kueue, an
    admission controller) may narrow where it runs by adding to its nodeSelector, as Kubernetes allows."""
    problems = []
    before = {gate.name for gate in old.scheduling_gates}
    for i, gate in enumerate(new.scheduling_gates):
        if gate.name not in before:
            problems.append(forbidden(
                f"spec.schedulingGates[{i}].name",
                f"only deletion is allowed, but found new scheduling gate '{gate.name}'",
            ))
    if not old.scheduling_gates:
        return problems
    if not all(new.node_selector.get(key) == value for key, value in old.node_selector.items()):
        problems.append(forbidden(
            "spec.nodeSelector", "only additions to spec.nodeSelector are allowed (no mutations or deletions)"
        ))
    return problems + _validate_gated_node_affinity_update(
        old.affinity.node_affinity, new.affinity.node_affinity
    )


def _validate_gated_node_affinity_update(
    old: objects_pb2.NodeAffinity, new: objects_pb2.NodeAffinity
) -> list[str]:
    """Required node affinity may be set where there was none (or no term); existing terms stay, as
    many, each only gaining requirements at its end. Preferred terms may change freely."""
    if not old.HasField("required_during_scheduling_ignored_during_execution"):
        return []
    old_terms = old.required_during_scheduling_ignored_during_execution.node_selector_terms
    new_terms = new.required_during_scheduling_ignored_during_execution.node_selector_terms
    if not old_terms:
        return []
    path = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    if len(old_terms) != len(new_terms):
        return [invalid(path, _shown_terms(new_terms),
                        "no additions/deletions to non-empty NodeSelectorTerms list are allowed")]
    return [
        invalid(f"{path}[{i}]", _shown_terms([after]).strip("[]"),
                "only additions are allowed (no mutations or deletions)")
        for i, (before, after) in enumerate(zip(old_terms, new_terms, strict=True))
        if not _only_additions(before, after)
    ]


def _only_additions(before: objects_pb2.NodeSelectorTerm, after: objects_pb2.NodeSelectorTerm) -> bool:
    return all(
        list(new_list[:len(old_list)]) == list(old_list)
        for old_list, new_list in ((before.match_expressions, after.match_expressions),
                                   (before.match_fields, after.match_fields))
    )


def _shown_terms(terms: Sequence[objects_pb2.NodeSelectorTerm]) -> str:
    return json.dumps([json_format.MessageToDict(term) for term in terms], separators=(",", ":"))


def _same_toleration(before: objects_pb2.Toleration, after: objects_pb2.Toleration) -> bool:
    return (before.key, before.operator, before.value, before.effect) == (
        after.key,
        after.operator,
        after.value,
        after.effect,
    )


def _field_value(msg: Message, fd: Any) -> Any:
    if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
        return dict(getattr(msg, fd.name))
    if fd.is_repeated:
        return list(getattr(msg, fd.name))
    if fd.has_presence:
        return (msg.HasField(fd.name), getattr(msg, fd.name))
    return getattr(msg, fd.name)
