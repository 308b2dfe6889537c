"""Validation of API objects, with Kubernetes' rules and Kubernetes' wording.

Each check returns field errors as strings formatted like apimachinery's ``field.Error``
(``metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain ...``), so a client sees the
message kube-apiserver would print. ``ensure_valid`` joins them into one ``errors.Invalid``.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import re
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from cluster.api import errors, kinds, objects_pb2, podgroups, semver
from cluster.api.containers import SIDECAR_RESTART_POLICY
from cluster.api.quantity import parse_quantity
from cluster.api.quota import FINISHED_PHASES, format_requirements

# ---------------------------------------------------------------------------------- field error texts


#: Characters of a bad value an error quotes; a longer one is cut, so that the error stays readable (and
#: fits a gRPC status) when a request carries a value of megabytes.
MAX_QUOTED_VALUE = 256


def _quote(value: object) -> str:
    """A bad value as Go's field errors print it: strings quoted (%q), numbers and bools bare."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    text = str(value)
    omitted = ""
    if len(text) > MAX_QUOTED_VALUE:
        omitted = f" (cut: {len(text)} characters in all)"
        text = text[:MAX_QUOTED_VALUE] + "..."
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"' + omitted


def invalid(path: str, value: object, detail: str) -> str:
    return f"{path}: Invalid value: {_quote(value)}: {detail}"


def required(path: str, detail: str = "") -> str:
    return f"{path}: Required value: {detail}" if detail else f"{path}: Required value"


def forbidden(path: str, detail: str) -> str:
    return f"{path}: Forbidden: {detail}"


def not_supported(path: str, value: object, supported: Sequence[str]) -> str:
    choices = ", ".join(_quote(choice) for choice in supported)
    return f"{path}: Unsupported value: {_quote(value)}: supported values: {choices}"


def duplicate(path: str, value: object) -> str:
    return f"{path}: Duplicate value: {_quote(value)}"


def too_long(path: str, limit: int) -> str:
    return f"{path}: Too long: must have at most {limit} bytes"


def too_many(path: str, count: int, limit: int) -> str:
    return f"{path}: Too many: {count}: must have at most {limit} items"


# ------------------------------------------------------------------------------------- name checks
# Each returns the problems with a value (empty when it is fine), worded as apimachinery words them.

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + r"(\." + _DNS1123_LABEL_FMT + ")*"
_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"

_DNS1123_LABEL = re.compile(_DNS1123_LABEL_FMT, re.ASCII)
_DNS1123_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT, re.ASCII)
_QUALIFIED_NAME = re.compile(_QUALIFIED_NAME_FMT, re.ASCII)
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT, re.ASCII)

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def _check(path: str, value: str, check: Callable[[str], list[str]]) -> list[str]:
    """``check``'s problems with ``value`` as field errors at ``path``."""
    return [invalid(path, value, problem) for problem in check(value)]


def _max_len_error(limit: int) -> str:
    return f"must be no more than {limit} characters"


def is_dns1123_label(value: str) -> list[str]:
    problems = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        problems.append(_max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL.fullmatch(value):
        if _DNS1123_SUBDOMAIN.fullmatch(value):
            problems.append("must not contain dots")
        else:
            problems.append(
                _regex_error(
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                    "and must start and end with an alphanumeric character",
                    _DNS1123_LABEL_FMT,
                    "my-name",
                    "123-abc",
                )
            )
    return problems


def is_dns1123_subdomain(value: str) -> list[str]:
    problems = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        problems.append(_max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        problems.append(
            _regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                "'-' or '.', and must start and end with an alphanumeric character",
                _DNS1123_SUBDOMAIN_FMT,
                "example.com",
            )
        )
    return problems


_QUALIFIED_NAME_RULE = _regex_error(
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character",
    _QUALIFIED_NAME_FMT,
    "MyName",
    "my.name",
    "123-abc",
)


def is_qualified_name(value: str) -> list[str]:
    """Label keys, annotation keys, topology keys: ``[prefix/]name``, the prefix a DNS subdomain."""
    parts = value.split("/")
    if len(parts) > 2:
        return [
            f"a qualified name {_QUALIFIED_NAME_RULE} with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
    problems = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            problems.extend("prefix part " + problem for problem in is_dns1123_subdomain(prefix))
    if not name:
        problems.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX_LENGTH:
        problems.append("name part " + _max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _QUALIFIED_NAME.fullmatch(name):
        problems.append("name part " + _QUALIFIED_NAME_RULE)
    return problems


_CONFIG_MAP_KEY_FMT = r"[-._a-zA-Z0-9]+"
_CONFIG_MAP_KEY = re.compile(_CONFIG_MAP_KEY_FMT, re.ASCII)


def is_config_map_key(value: str) -> list[str]:
    """Kubernetes' IsConfigMapKey, which also names LeaseCandidates (so "host_uuid" identities fit)."""
    problems = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        problems.append(_max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _CONFIG_MAP_KEY.fullmatch(value):
        problems.append(_regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            _CONFIG_MAP_KEY_FMT, "key.name", "KEY_NAME", "key-name",
        ))
    if value == ".":
        problems.append("must not be '.'")
    elif value == "..":
        problems.append("must not be '..'")
    elif value.startswith(".."):
        problems.append("must not start with '..'")
    return problems


def is_valid_label_value(value: str) -> list[str]:
    problems = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        problems.append(_max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE.fullmatch(value):
        problems.append(
            _regex_error(
                "a valid label must be an empty string or consist of alphanumeric characters, "
                "'-', '_' or '.', and must start and end with an alphanumeric character",
                _LABEL_VALUE_FMT,
                "MyValue",
                "my_value",
                "12345",
            )
        )
    return problems


# --------------------------------------------------------------------------------- object checks

#: Kubernetes' limit on the total size of an object's annotations (keys plus values).
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
#: Labels per object. Kubernetes sets no number, but every label is indexed by every selector match and
#: copied into every watch event; 64 is far above what workloads use (a handful) and keeps both bounded.
MAX_LABELS = 64

PREEMPTION_POLICIES = ("Never", "PreemptLowerPriority")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("Equal", "Exists")
WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
NODE_INCLUSION_POLICIES = ("Honor", "Ignore")
PROTOCOLS = ("SCTP", "TCP", "UDP")
RESTART_POLICIES = ("Always", "OnFailure", "Never")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
EVENT_TYPES = ("Normal", "Warning")
UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")

IMMUTABLE = "field is immutable"
_POD_UPDATE_FORBIDDEN = (
    "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
    "`spec.tolerations` (only additions to existing tolerations)"
)


def validate_object(obj: Message) -> list[str]:
    """Every field error of ``obj`` (an object of a served kind), in Kubernetes' words; empty when valid."""
    kind = kinds.kind_of(obj)
    problems = _validate_meta(kinds.metadata_of(obj), kind)
    problems += _KIND_VALIDATORS[kind.name](obj)
    return problems


def validate_status(obj: Message) -> list[str]:
    """The errors of ``obj``'s status: those of ``validate_object(obj)`` whose field is under status."""
    validator = _STATUS_VALIDATORS.get(kinds.kind_of(obj).name)
    return validator(obj) if validator is not None else []


def validate_status_update(old: Message, new: Message) -> list[str]:
    """The errors of changing ``old``'s status into ``new``'s beyond ``validate_status(new)``: a pod that
    has finished (Succeeded or Failed) stays in its phase, as a kubelet keeps it (a pod brought back to
    a running phase would run again, counted by no quota)."""
    if isinstance(new, objects_pb2.Pod) and isinstance(old, objects_pb2.Pod):
        before, after = old.status.phase, new.status.phase
        if before in FINISHED_PHASES and after != before:
            detail = f"may not be transitioned from terminal phase {_quote(before)} to {_quote(after)}"
            return [forbidden("status.phase", detail)]
    return []


def validate_update(old: Message, new: Message) -> list[str]:
    """The errors of changing ``old`` into ``new`` beyond ``validate_object(new)``: immutable metadata,
    Pod spec immutability (only container images change, tolerations may be added), PriorityClass value and
    preemptionPolicy, a PodGroup's scheduling fields, a ResourceQuota's scopes and scopeSelector, a
    RuntimeClass's handler, a LeaseCandidate's leaseName."""
    problems = []
    for field_name, path in (
        ("name", "metadata.name"),
        ("namespace", "metadata.namespace"),
        ("uid", "metadata.uid"),
    ):
        before = getattr(kinds.metadata_of(old), field_name)
        after = getattr(kinds.metadata_of(new), field_name)
        # An update that leaves uid out means "the same object", as kubectl apply sends it.
        if before != after and not (field_name == "uid" and not after):
            problems.append(invalid(path, after, IMMUTABLE))
    if isinstance(new, objects_pb2.Pod) and isinstance(old, objects_pb2.Pod):
        problems += _validate_pod_spec_update(old.spec, new.spec)
    elif isinstance(new, objects_pb2.PriorityClass) and isinstance(old, objects_pb2.PriorityClass):
        if new.value != old.value:
            problems.append(forbidden("value", "may not be changed in an update."))
        if new.preemption_policy != old.preemption_policy:
            problems.append(invalid("preemptionPolicy", new.preemption_policy, IMMUTABLE))
    elif isinstance(new, objects_pb2.PodGroup) and isinstance(old, objects_pb2.PodGroup):
        problems += _validate_pod_group_update(old, new)
    elif isinstance(new, objects_pb2.RuntimeClass) and isinstance(old, objects_pb2.RuntimeClass):
        if new.handler != old.handler:
            problems.append(invalid("handler", new.handler, IMMUTABLE))
    elif isinstance(new, objects_pb2.LeaseCandidate) and isinstance(old, objects_pb2.LeaseCandidate):
        if new.spec.lease_name != old.spec.lease_name:
            problems.append(invalid("spec.leaseName", new.spec.lease_name, IMMUTABLE))
    elif isinstance(new, objects_pb2.ResourceQuota) and isinstance(old, objects_pb2.ResourceQuota):
        # As Kubernetes: which pods a quota counts never changes, so its usage stays right.
        if list(new.spec.scopes) != list(old.spec.scopes):
            problems.append(invalid("spec.scopes", f"[{' '.join(new.spec.scopes)}]", IMMUTABLE))
        if new.spec.scope_selector != old.spec.scope_selector:
            shown = format_requirements(list(new.spec.scope_selector.match_expressions))
            problems.append(invalid("spec.scopeSelector", shown, IMMUTABLE))
    return problems


def ensure_valid(obj: Message, problems: Sequence[str] | None = None) -> None:
    """Raise ``errors.Invalid`` as kube-apiserver words it (``Pod "web" is invalid: <problems>``) when there
    are problems; with ``problems`` None, validate ``obj`` first. Repeated messages are reported once."""
    if problems is None:
        problems = validate_object(obj)
    unique = list(dict.fromkeys(problems))
    if not unique:
        return
    detail = unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
    raise errors.Invalid(f'{qualified_kind(obj)} "{kinds.metadata_of(obj).name}" is invalid: {detail}')


def qualified_kind(obj: Message) -> str:
    """The kind as Kubernetes names it in errors: Pod, PriorityClass.scheduling.k8s.io, ..."""
    kind = kinds.kind_of(obj)
    # A kind served in several groups is named by the one the object is written in.
    written = kinds.as_api_object(obj).api_version
    group = (written if written in kind.api_versions else kind.api_version).rpartition("/")[0]
    return f"{kind.name}.{group}" if group else kind.name


# ------------------------------------------------------------------------------------------- meta


def _validate_meta(meta: objects_pb2.ObjectMeta, kind: kinds.Kind[Any]) -> list[str]:
    problems = []
    name_check = is_config_map_key if kind is kinds.LEASE_CANDIDATE else is_dns1123_subdomain
    if meta.name:
        problems += _check("metadata.name", meta.name, name_check)
    elif not meta.generate_name:
        problems.append(required("metadata.name", "name or generateName is required"))
    if meta.generate_name:
        # A generated name is the prefix plus random characters, so a trailing '-' is fine.
        prefix = meta.generate_name[:-1] if meta.generate_name.endswith("-") else meta.generate_name
        problems += [
            invalid("metadata.generateName", meta.generate_name, p) for p in name_check(prefix)
        ]
    if kind.namespaced:
        if meta.namespace:
            problems += _check("metadata.namespace", meta.namespace, is_dns1123_label)
    elif meta.namespace:
        problems.append(forbidden("metadata.namespace", "not allowed on this type"))
    if len(meta.labels) > MAX_LABELS:
        problems.append(too_many("metadata.labels", len(meta.labels), MAX_LABELS))
    problems += validate_labels(meta.labels, "metadata.labels")
    problems += _validate_annotations(meta.annotations, "metadata.annotations")
    if meta.generation < 0:
        problems.append(invalid("metadata.generation", meta.generation, "must be greater than or equal to 0"))
    if meta.HasField("deletion_grace_period_seconds") and meta.deletion_grace_period_seconds < 0:
        problems.append(
            invalid(
                "metadata.deletionGracePeriodSeconds",
                meta.deletion_grace_period_seconds,
                "must be greater than or equal to 0",
            )
        )
    problems += _validate_owner_references(meta.owner_references)
    return problems


def _validate_owner_references(references: Sequence[objects_pb2.OwnerReference]) -> list[str]:
    """apimachinery's ValidateOwnerReferences: apiVersion (with a version), kind, name and uid given; at
    most one reference is the controller."""
    problems = []
    controller = ""
    for i, ref in enumerate(references):
        path = f"metadata.ownerReferences[{i}]"
        group_version = ref.api_version.split("/")
        if len(group_version) > 2 or not group_version[-1]:
            problems.append(invalid(f"{path}.apiVersion", ref.api_version, "version must not be empty"))
        if not ref.kind:
            problems.append(invalid(f"{path}.kind", ref.kind, "kind must not be empty"))
        if not ref.name:
            problems.append(invalid(f"{path}.name", ref.name, "name must not be empty"))
        if not ref.uid:
            problems.append(invalid(f"{path}.uid", ref.uid, "uid must not be empty"))
        if ref.controller:
            name = f"{ref.kind}/{ref.name}"
            if controller:
                problems.append(invalid(
                    "metadata.ownerReferences", f"{controller}, {name}",
                    f'Only one reference can have Controller set to true. Found "true" in references for '
                    f"{controller} and {name}",
                ))
            else:
                controller = name
    return problems


def validate_labels(labels: Mapping[str, str], path: str) -> list[str]:
    """Label keys and values (also node selectors), reported at ``path`` as Kubernetes reports them."""
    problems = []
    for key, value in labels.items():
        problems += _check(path, key, is_qualified_name)
        problems += _check(path, value, is_valid_label_value)
    return problems


def _validate_annotations(annotations: Mapping[str, str], path: str) -> list[str]:
    problems = []
    total = 0
    for key, value in annotations.items():
        # Kubernetes lowercases the key first: annotation keys may use capitals.
        problems += [invalid(path, key, p) for p in is_qualified_name(key.lower())]
        total += len(key.encode()) + len(value.encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        problems.append(too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return problems


def validate_label_selector(selector: objects_pb2.LabelSelector, path: str) -> list[str]:
    """A LabelSelector message (metav1 ValidateLabelSelector)."""
    problems = validate_labels(selector.match_labels, f"{path}.matchLabels")
    for i, expression in enumerate(selector.match_expressions):
        where = f"{path}.matchExpressions[{i}]"
        problems += _check(f"{where}.key", expression.key, is_qualified_name)
        if expression.operator in ("In", "NotIn"):
            if not expression.values:
                problems.append(
                    required(f"{where}.values", "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif expression.operator in ("Exists", "DoesNotExist"):
            if expression.values:
                problems.append(
                    forbidden(
                        f"{where}.values",
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            problems.append(
                invalid(f"{where}.operator", expression.operator, "not a valid selector operator")
            )
        for j, value in enumerate(expression.values):
            problems += [invalid(f"{where}.values[{j}]", value, p) for p in is_valid_label_value(value)]
    return problems


# -------------------------------------------------------------------------------------- resources

_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_HUGEPAGES_PREFIX = "hugepages-"
_NOT_NEGATIVE = "must be greater than or equal to 0"


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


@functools.lru_cache(maxsize=1024)  # a name's answer never changes; pod creates ask for the same few
def _is_extended(name: str) -> bool:
    """A resource a device plugin or operator defines ("example.com/gpu"): integral, not overcommitted."""
    return (
        not _is_native(name)
        and not name.startswith("requests.")
        and not is_qualified_name("requests." + name)
    )


@functools.lru_cache(maxsize=1024)  # every pod create checks the same few names ("cpu", "memory")
def _resource_name_problems(name: str, container: bool) -> tuple[str, ...]:
    """What is wrong with a resource name, without the field path (``invalid`` adds it)."""
    problems = is_qualified_name(name)
    if not problems and container:
        if "/" not in name:
            if name not in _STANDARD_CONTAINER_RESOURCES and not name.startswith(_HUGEPAGES_PREFIX):
                problems.append("must be a standard resource for containers")
        elif not _is_native(name) and not _is_extended(name):
            problems.append("doesn't follow extended resource name standard")
    return tuple(problems)


def _check_quantities(
    resources: Mapping[str, str], path: str, *, container: bool
) -> tuple[list[str], dict[str, Fraction]]:
    """Names and quantities of a resource map; returns the problems and the values that parsed."""
    problems: list[str] = []
    values: dict[str, Fraction] = {}
    for name, text in resources.items():
        where = f"{path}[{name}]"
        problems += [invalid(where, name, detail) for detail in _resource_name_problems(name, container)]
        try:
            value = parse_quantity(text)
        except ValueError as exc:
            problems.append(invalid(where, text, str(exc).partition(": ")[2] or str(exc)))
            continue
        if value < 0:
            problems.append(invalid(where, text, _NOT_NEGATIVE))
        elif (_is_extended(name) or name == "pods") and value.denominator != 1:
            problems.append(invalid(where, text, "must be an integer"))
        values[name] = value
    return problems, values


def _validate_resource_requirements(resources: objects_pb2.ResourceRequirements, path: str) -> list[str]:
    problems, limits = _check_quantities(resources.limits, f"{path}.limits", container=True)
    request_problems, requests = _check_quantities(resources.requests, f"{path}.requests", container=True)
    problems += request_problems
    for name, request in requests.items():
        where = f"{path}.requests[{name}]"
        overcommit_allowed = _is_native(name) and not name.startswith(_HUGEPAGES_PREFIX)
        limit = limits.get(name)
        if limit is not None:
            if request != limit and not overcommit_allowed:
                problems.append(
                    invalid(
                        where,
                        resources.requests[name],
                        f"must be equal to {name} limit of {resources.limits[name]}",
                    )
                )
            elif request > limit:
                problems.append(
                    invalid(
                        where,
                        resources.requests[name],
                        f"must be less than or equal to {name} limit of {resources.limits[name]}",
                    )
                )
        elif name not in resources.limits and not overcommit_allowed:
            problems.append(required(f"{path}.limits", "Limit must be set for non overcommitable resources"))
    return problems


# -------------------------------------------------------------------------------------------- Pod


def _validate_pod(pod: objects_pb2.Pod) -> list[str]:
    spec = pod.spec
    problems = []
    if not spec.containers:
        problems.append(required("spec.containers"))
    seen_names: set[str] = set()
    host_ports: set[str] = set()
    for field_name, containers in (("initContainers", spec.init_containers), ("containers", spec.containers)):
        for i, container in enumerate(containers):
            problems += _validate_container(container, f"spec.{field_name}[{i}]", seen_names, host_ports)
    problems += _validate_container_restart_policies(spec)
    problems += _validate_scheduling_gates(spec)
    if spec.node_name:
        problems += _check("spec.nodeName", spec.node_name, is_dns1123_subdomain)
    if spec.scheduler_name:
        problems += _check("spec.schedulerName", spec.scheduler_name, is_dns1123_subdomain)
    if spec.priority_class_name:
        problems += _check("spec.priorityClassName", spec.priority_class_name, is_dns1123_subdomain)
    if spec.HasField("preemption_policy") and spec.preemption_policy not in PREEMPTION_POLICIES:
        problems.append(not_supported("spec.preemptionPolicy", spec.preemption_policy, PREEMPTION_POLICIES))
    if spec.restart_policy and spec.restart_policy not in RESTART_POLICIES:
        problems.append(not_supported("spec.restartPolicy", spec.restart_policy, RESTART_POLICIES))
    if spec.service_account_name:
        problems += _check("spec.serviceAccountName", spec.service_account_name, is_dns1123_subdomain)
    if spec.scheduling_group.HasField("pod_group_name"):
        problems += _check(
            "spec.schedulingGroup.podGroupName", spec.scheduling_group.pod_group_name, is_dns1123_subdomain
        )
    if spec.HasField("termination_grace_period_seconds") and spec.termination_grace_period_seconds < 0:
        problems.append(
            invalid(
                "spec.terminationGracePeriodSeconds", spec.termination_grace_period_seconds, _NOT_NEGATIVE
            )
        )
    problems += validate_labels(spec.node_selector, "spec.nodeSelector")
    problems += _validate_tolerations(spec.tolerations, "spec.tolerations")
    if spec.HasField("affinity"):
        problems += _validate_affinity(spec.affinity, "spec.affinity")
    problems += _validate_spread_constraints(
        spec.topology_spread_constraints, "spec.topologySpreadConstraints"
    )
    problems += _check_quantities(spec.overhead, "spec.overhead", container=False)[0]
    problems += _validate_pod_status(pod)
    return problems


def _validate_pod_status(pod: objects_pb2.Pod) -> list[str]:
    if pod.status.nominated_node_name:
        return _check("status.nominatedNodeName", pod.status.nominated_node_name, is_dns1123_subdomain)
    return []


def _validate_scheduling_gates(spec: objects_pb2.PodSpec) -> list[str]:
    """Gates are qualified names, each once; a pod is not created on a node while it has gates."""
    problems = []
    seen: set[str] = set()
    for i, gate in enumerate(spec.scheduling_gates):
        path = f"spec.schedulingGates[{i}]"
        problems += _check(f"{path}.name", gate.name, is_qualified_name)
        if gate.name in seen:
            problems.append(duplicate(path, gate.name))
        seen.add(gate.name)
    if spec.scheduling_gates and spec.node_name:
        problems.append(
            forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared")
        )
    return problems


def _validate_container_restart_policies(spec: objects_pb2.PodSpec) -> list[str]:
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


def _validate_container(
    container: objects_pb2.Container, path: str, seen_names: set[str], host_ports: set[str]
) -> list[str]:
    problems = []
    if not container.name:
        problems.append(required(f"{path}.name"))
    else:
        problems += _check(f"{path}.name", container.name, is_dns1123_label)
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
    problems += _validate_resource_requirements(container.resources, f"{path}.resources")
    return problems


_PORT_NAME = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?", re.ASCII)
_PORT_RANGE = "must be between 1 and 65535, inclusive"


def _validate_port(
    port: objects_pb2.ContainerPort, path: str, port_names: set[str], host_ports: set[str]
) -> list[str]:
    problems = []
    if port.name:
        problems += _check(f"{path}.name", port.name, _is_valid_port_name)
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
        problems.append(_max_len_error(15))
    if not _PORT_NAME.fullmatch(name):
        problems.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if "--" in name:
        problems.append("must not contain consecutive hyphens")
    if not any(ch.isalpha() for ch in name):
        problems.append("must contain at least one letter (a-z)")
    return problems


def _validate_tolerations(tolerations: Sequence[objects_pb2.Toleration], path: str) -> list[str]:
    problems = []
    for i, toleration in enumerate(tolerations):
        where = f"{path}[{i}]"
        if toleration.key:
            problems += _check(f"{where}.key", toleration.key, is_qualified_name)
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
            problems += _check(f"{where}.value", toleration.value, is_valid_label_value)
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


def _validate_affinity(affinity: objects_pb2.Affinity, path: str) -> list[str]:
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


def _validate_node_selector_term(term: objects_pb2.NodeSelectorTerm, path: str) -> list[str]:
    problems = []
    for i, requirement in enumerate(term.match_expressions):
        where = f"{path}.matchExpressions[{i}]"
        problems += _check(f"{where}.key", requirement.key, is_qualified_name)
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
        problems += _check(f"{path}.topologyKey", term.topology_key, is_qualified_name)
    for field_name, json_name in (
        ("match_label_keys", "matchLabelKeys"),
        ("mismatch_label_keys", "mismatchLabelKeys"),
    ):
        for i, key in enumerate(getattr(term, field_name)):
            problems += [invalid(f"{path}.{json_name}[{i}]", key, p) for p in is_qualified_name(key)]
    return problems


def _validate_spread_constraints(
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
            problems += _check(f"{where}.topologyKey", constraint.topology_key, is_qualified_name)
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


def _validate_pod_spec_update(old: objects_pb2.PodSpec, new: objects_pb2.PodSpec) -> list[str]:
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


# ------------------------------------------------------------------------------------------- Node


def _validate_node(node: objects_pb2.Node) -> list[str]:
    problems = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(node.spec.taints):
        where = f"spec.taints[{i}]"
        if not taint.key:
            problems.append(required(f"{where}.key"))
        else:
            problems += _check(f"{where}.key", taint.key, is_qualified_name)
        if taint.value:
            problems += _check(f"{where}.value", taint.value, is_valid_label_value)
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
    problems += _validate_node_status(node)
    return problems


def _validate_node_status(node: objects_pb2.Node) -> list[str]:
    problems = _check_quantities(node.status.capacity, "status.capacity", container=False)[0]
    problems += _check_quantities(node.status.allocatable, "status.allocatable", container=False)[0]
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


# -------------------------------------------------------------------------------- other kinds


def _validate_priority_class(pc: objects_pb2.PriorityClass) -> list[str]:
    if pc.HasField("preemption_policy") and pc.preemption_policy not in PREEMPTION_POLICIES:
        return [not_supported("preemptionPolicy", pc.preemption_policy, PREEMPTION_POLICIES)]
    return []


_PERCENT = re.compile(r"[0-9]+%", re.ASCII)
_INT32_MAX = 2**31 - 1


def _validate_int_or_percent(value: Any, path: str) -> list[str]:
    """A PDB's minAvailable/maxUnavailable: an integer ≥ 0 or a percentage "0%".."100%"."""
    kind = value.WhichOneof("kind")
    if kind == "number_value":
        number = value.number_value
        if not number.is_integer():
            return [invalid(path, number, "must be an integer")]
        if number < 0:
            return [invalid(path, int(number), _NOT_NEGATIVE)]
        if number > _INT32_MAX:
            # IntOrString holds an int32 in Kubernetes; a larger number does not even decode there.
            return [invalid(path, int(number), f"must be less than or equal to {_INT32_MAX}")]
        return []
    if kind == "string_value":
        text = value.string_value
        if not _PERCENT.fullmatch(text):
            return [
                invalid(
                    path,
                    text,
                    _regex_error(
                        "a valid percent string must be a numeric string followed by an ending '%'",
                        "[0-9]+%",
                        "1%",
                        "93%",
                    ),
                )
            ]
        if int(text[:-1]) > 100:
            return [invalid(path, text, "must not be greater than 100%")]
        return []
    return [invalid(path, kind or "null", "must be an integer or a percentage string")]


def _validate_pdb(pdb: objects_pb2.PodDisruptionBudget) -> list[str]:
    spec = pdb.spec
    problems = []
    if spec.HasField("min_available") and spec.HasField("max_unavailable"):
        problems.append(
            invalid(
                "spec",
                "minAvailable and maxUnavailable",
                "minAvailable and maxUnavailable cannot be both set",
            )
        )
    if spec.HasField("min_available"):
        problems += _validate_int_or_percent(spec.min_available, "spec.minAvailable")
    if spec.HasField("max_unavailable"):
        problems += _validate_int_or_percent(spec.max_unavailable, "spec.maxUnavailable")
    if spec.HasField("selector"):
        problems += validate_label_selector(spec.selector, "spec.selector")
    policy = spec.unhealthy_pod_eviction_policy
    if policy and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        problems.append(
            not_supported("spec.unhealthyPodEvictionPolicy", policy, UNHEALTHY_POD_EVICTION_POLICIES)
        )
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
        try:
            value = parse_quantity(text)
        except ValueError as exc:
            problems.append(invalid(where, text, str(exc).partition(": ")[2] or str(exc)))
            continue
        if value < 0:
            problems.append(invalid(where, text, _NOT_NEGATIVE))
        elif value.denominator != 1:
            problems.append(invalid(where, text, "must be an integer"))
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


def _validate_resource_quota(quota: objects_pb2.ResourceQuota) -> list[str]:
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
    problems += _validate_resource_quota_status(quota)
    return problems


def _validate_resource_quota_status(quota: objects_pb2.ResourceQuota) -> list[str]:
    problems = _validate_quota_amounts(quota.status.hard, "status.hard")
    problems += _validate_quota_amounts(quota.status.used, "status.used")
    return problems


# ------------------------------------------------------------------------------------------ PodGroup

#: The spec fields of each PodGroup spelling, as (proto field, manifest path); the other spelling's are
#: refused.
_UPSTREAM_GROUP_FIELDS = (
    ("pod_group_template_ref", "spec.podGroupTemplateRef"),
    ("scheduling_policy", "spec.schedulingPolicy"),
    ("disruption_mode", "spec.disruptionMode"),
    ("priority_class_name", "spec.priorityClassName"),
    ("priority", "spec.priority"),
)
_COSCHEDULING_GROUP_FIELDS = (
    ("min_member", "spec.minMember"),
    ("min_resources", "spec.minResources"),
    ("schedule_timeout_seconds", "spec.scheduleTimeoutSeconds"),
)
CONDITION_STATUSES = ("True", "False", "Unknown")


def _is_set(message: Message, field_name: str) -> bool:
    field = message.DESCRIPTOR.fields_by_name[field_name]
    if field.has_presence:
        return message.HasField(field_name)
    return bool(getattr(message, field_name))  # scalars other than 0/"", non-empty maps


def _exactly_one(message: Message, path: str, choices: tuple[str, ...]) -> list[str]:
    """Upstream's one-of structs (schedulingPolicy, disruptionMode): exactly one member set (the members'
    proto and JSON names are the same)."""
    chosen = [name for name in choices if message.HasField(name)]
    if len(chosen) == 1:
        return []
    wanted = ", ".join(f"`{name}`" for name in choices)
    if not chosen:
        return [required(path, f"must specify exactly one of: {wanted}")]
    return [invalid(path, ", ".join(chosen), f"must specify exactly one of: {wanted}")]


def _validate_upstream_pod_group(spec: objects_pb2.PodGroupSpec) -> list[str]:
    problems = []
    if not spec.HasField("scheduling_policy"):
        problems.append(required("spec.schedulingPolicy", "must specify exactly one of: `basic`, `gang`"))
    else:
        policy = spec.scheduling_policy
        problems += _exactly_one(policy, "spec.schedulingPolicy", ("basic", "gang"))
        if policy.HasField("gang") and policy.gang.min_count < 1:
            problems.append(invalid("spec.schedulingPolicy.gang.minCount", policy.gang.min_count,
                                    "must be greater than zero"))
    if spec.pod_group_template_ref.HasField("workload"):
        workload, path = spec.pod_group_template_ref.workload, "spec.podGroupTemplateRef.workload"
        if not workload.workload_name:
            problems.append(required(f"{path}.workloadName"))
        else:
            problems += _check(f"{path}.workloadName", workload.workload_name, is_dns1123_subdomain)
        if not workload.pod_group_template_name:
            problems.append(required(f"{path}.podGroupTemplateName"))
        else:
            problems += _check(f"{path}.podGroupTemplateName", workload.pod_group_template_name,
                               is_dns1123_label)
    if spec.HasField("disruption_mode"):
        problems += _exactly_one(spec.disruption_mode, "spec.disruptionMode", ("single", "all"))
    if spec.priority_class_name:
        problems += _check("spec.priorityClassName", spec.priority_class_name, is_dns1123_subdomain)
    return problems


def _validate_coscheduling_pod_group(spec: objects_pb2.PodGroupSpec) -> list[str]:
    problems = []
    if spec.min_member < 0:
        problems.append(invalid("spec.minMember", spec.min_member, _NOT_NEGATIVE))
    problems += _check_quantities(spec.min_resources, "spec.minResources", container=False)[0]
    if spec.HasField("schedule_timeout_seconds") and spec.schedule_timeout_seconds < 0:
        problems.append(invalid("spec.scheduleTimeoutSeconds", spec.schedule_timeout_seconds, _NOT_NEGATIVE))
    return problems


def _validate_pod_group_status(group: objects_pb2.PodGroup) -> list[str]:
    status = group.status
    problems = []
    for index, condition in enumerate(status.conditions):
        where = f"status.conditions[{index}]"
        if not condition.type:
            problems.append(required(f"{where}.type"))
        else:
            problems += _check(f"{where}.type", condition.type, is_qualified_name)
        if condition.status not in CONDITION_STATUSES:
            problems.append(not_supported(f"{where}.status", condition.status, CONDITION_STATUSES))
        if condition.observed_generation < 0:
            problems.append(
                invalid(f"{where}.observedGeneration", condition.observed_generation, _NOT_NEGATIVE)
            )
    if status.phase and status.phase not in podgroups.PHASES:
        problems.append(not_supported("status.phase", status.phase, podgroups.PHASES))
    for field_name, path in (("scheduled", "status.scheduled"), ("running", "status.running"),
                             ("succeeded", "status.succeeded"), ("failed", "status.failed")):
        value = getattr(status, field_name)
        if value < 0:
            problems.append(invalid(path, value, _NOT_NEGATIVE))
    return problems


def _validate_pod_group(group: objects_pb2.PodGroup) -> list[str]:
    spec = group.spec
    coscheduling = podgroups.is_coscheduling(group)
    others = _UPSTREAM_GROUP_FIELDS if coscheduling else _COSCHEDULING_GROUP_FIELDS
    version = group.api_version or kinds.POD_GROUP.api_version
    problems = [
        forbidden(path, f"not a field of {version} PodGroup")
        for field_name, path in others if _is_set(spec, field_name)
    ]
    problems += _validate_coscheduling_pod_group(spec) if coscheduling else _validate_upstream_pod_group(spec)
    problems += _validate_pod_group_status(group)
    return problems


def _validate_pod_group_update(old: objects_pb2.PodGroup, new: objects_pb2.PodGroup) -> list[str]:
    """Upstream's PodGroup keeps its scheduling fields for life (a gang's size and priority are what the
    scheduler admitted it with); Coscheduling's CRD has no such rule."""
    if podgroups.is_coscheduling(new):
        return []
    problems = []
    for field_name, path in _UPSTREAM_GROUP_FIELDS:
        if field_name == "priority":
            continue  # admission's, kept from the stored object
        before, after = getattr(old.spec, field_name), getattr(new.spec, field_name)
        if before != after:
            shown = after if isinstance(after, str) else _short_text(after)
            problems.append(invalid(path, shown, IMMUTABLE))
    return problems


def _short_text(message: Message) -> str:
    """A struct as its JSON, for an error that shows the new value."""
    return json.dumps(json_format.MessageToDict(message), separators=(",", ":"), sort_keys=True)


def _validate_lease(lease: objects_pb2.Lease) -> list[str]:
    spec = lease.spec
    problems = []
    if spec.HasField("lease_duration_seconds") and spec.lease_duration_seconds <= 0:
        problems.append(
            invalid("spec.leaseDurationSeconds", spec.lease_duration_seconds, "must be greater than 0")
        )
    if spec.HasField("lease_transitions") and spec.lease_transitions < 0:
        problems.append(invalid("spec.leaseTransitions", spec.lease_transitions, _NOT_NEGATIVE))
    return problems


#: The coordinated leader election strategy Kubernetes defines; others are qualified names ("x.io/mine").
OLDEST_EMULATION_VERSION = "OldestEmulationVersion"
_SEMVER_ERROR = "must be a valid semantic version"


def _validate_lease_candidate(candidate: objects_pb2.LeaseCandidate) -> list[str]:
    """ValidateLeaseCandidateSpec: leaseName and binaryVersion required, versions semantic with the binary
    not older than the emulated one, a strategy Kubernetes defines or a qualified name (OldestEmulationVersion
    needs an emulationVersion). pingTime and renewTime are MicroTimes with nothing more to check."""
    spec = candidate.spec
    problems = []
    if not spec.lease_name:
        problems.append(required("spec.leaseName"))
    emulation = semver.parse(spec.emulation_version) if spec.emulation_version else None
    if spec.emulation_version and emulation is None:
        problems.append(invalid("spec.emulationVersion", spec.emulation_version, _SEMVER_ERROR))
    binary = semver.parse(spec.binary_version) if spec.binary_version else None
    if not spec.binary_version:
        problems.append(required("spec.binaryVersion"))
    elif binary is None:
        problems.append(invalid("spec.binaryVersion", spec.binary_version, _SEMVER_ERROR))
    if binary is not None and emulation is not None and binary < emulation:
        problems.append(invalid("spec.binaryVersion", spec.binary_version,
                                "must be greater than or equal to `emulationVersion`"))
    if not spec.strategy:
        problems.append(required("spec.strategy"))
        return problems
    if spec.strategy == OLDEST_EMULATION_VERSION and emulation is None:
        problems.append(required("spec.emulationVersion",
                                 f"must be specified when `strategy` is '{OLDEST_EMULATION_VERSION}'"))
    if "/" not in spec.strategy:
        if spec.strategy != OLDEST_EMULATION_VERSION:
            problems.append(not_supported("spec.strategy", spec.strategy, [OLDEST_EMULATION_VERSION]))
    else:
        problems += _check("spec.strategy", spec.strategy, is_qualified_name)
    return problems


def _validate_event(event: objects_pb2.Event) -> list[str]:
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
        problems.append(invalid("count", event.count, _NOT_NEGATIVE))
    return problems


# ----------------------------------------------------------------------------------------- Namespace

#: A Namespace's phases (the server sets Active on create; Terminating is its namespace controller's).
NAMESPACE_PHASES = ("Active", "Terminating")


def _validate_namespace(namespace: objects_pb2.Namespace) -> list[str]:
    """Kubernetes' ValidateNamespace: the name is a DNS-1123 label (stricter than other kinds'
    subdomain, checked by ``_validate_meta``, so only a valid subdomain is checked again), finalizers are
    qualified names."""
    meta = namespace.metadata
    problems = []
    if meta.name and not is_dns1123_subdomain(meta.name):
        problems += _check("metadata.name", meta.name, is_dns1123_label)
    for index, finalizer in enumerate(namespace.spec.finalizers):
        problems += _check(f"spec.finalizers[{index}]", finalizer, is_qualified_name)
    problems += _validate_namespace_status(namespace)
    return problems


def _validate_namespace_status(namespace: objects_pb2.Namespace) -> list[str]:
    if namespace.status.phase and namespace.status.phase not in NAMESPACE_PHASES:
        return [not_supported("status.phase", namespace.status.phase, NAMESPACE_PHASES)]
    return []


# -------------------------------------------------------------------------------------- RuntimeClass


def _validate_runtime_class(runtime_class: objects_pb2.RuntimeClass) -> list[str]:
    """Kubernetes' ValidateRuntimeClass: the handler is a DNS-1123 label, the overhead valid resource
    quantities, the scheduling nodeSelector valid labels and its tolerations valid tolerations."""
    problems = []
    if not runtime_class.handler:
        problems.append(required("handler"))
    else:
        problems += _check("handler", runtime_class.handler, is_dns1123_label)
    problems += _check_quantities(runtime_class.overhead.pod_fixed, "overhead.podFixed", container=True)[0]
    scheduling = runtime_class.scheduling
    problems += validate_labels(scheduling.node_selector, "scheduling.nodeSelector")
    problems += _validate_tolerations(scheduling.tolerations, "scheduling.tolerations")
    return problems


# ------------------------------------------------------------- Service and the workload controllers

SERVICE_TYPES = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")
POD_MANAGEMENT_POLICIES = ("OrderedReady", "Parallel")
_SELECTOR_MISMATCH = "`selector` does not match template `labels`"


def _validate_service(service: objects_pb2.Service) -> list[str]:
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


def _validate_replicas(spec: Any) -> list[str]:
    problems = []
    if spec.replicas < 0:
        problems.append(invalid("spec.replicas", spec.replicas, "must be greater than or equal to 0"))
    if spec.min_ready_seconds < 0:
        problems.append(
            invalid("spec.minReadySeconds", spec.min_ready_seconds, "must be greater than or equal to 0")
        )
    return problems


def _validate_selected_template(spec: Any, kind_name: str) -> list[str]:
    """ReplicaSet and StatefulSet (apps/v1): a non-empty selector that the template's labels match."""
    problems = _validate_replicas(spec)
    if not spec.HasField("selector"):
        return [*problems, required("spec.selector")]
    problems += validate_label_selector(spec.selector, "spec.selector")
    if problems:
        return problems
    if not spec.selector.match_labels and not spec.selector.match_expressions:
        return [invalid("spec.selector", "{}", f"empty selector is invalid for {kind_name}")]
    # selectors imports this module's name checks, so it is imported when first needed.
    from cluster.api.selectors import LabelSelector

    labels = spec.template.metadata.labels
    if not LabelSelector.from_proto(spec.selector).matches(labels):
        problems.append(invalid("spec.template.metadata.labels", dict(labels), _SELECTOR_MISMATCH))
    problems += validate_labels(labels, "spec.template.metadata.labels")
    return problems


def _validate_replica_set(rs: objects_pb2.ReplicaSet) -> list[str]:
    return _validate_selected_template(rs.spec, "deployment")


def _validate_stateful_set(sts: objects_pb2.StatefulSet) -> list[str]:
    problems = _validate_selected_template(sts.spec, "statefulset")
    policy = sts.spec.pod_management_policy
    if policy and policy not in POD_MANAGEMENT_POLICIES:
        problems.append(not_supported("spec.podManagementPolicy", policy, POD_MANAGEMENT_POLICIES))
    return problems


def _validate_replication_controller(rc: objects_pb2.ReplicationController) -> list[str]:
    """ValidateReplicationControllerSpec: a selector (defaulted from the template's labels) that the
    template's labels match."""
    spec = rc.spec
    problems = _validate_replicas(spec)
    if not spec.selector:
        problems.append(required("spec.selector"))
    problems += validate_labels(spec.selector, "spec.selector")
    if not spec.HasField("template"):
        problems.append(required("spec.template"))
    else:
        labels = spec.template.metadata.labels
        if spec.selector and any(labels.get(k) != v for k, v in spec.selector.items()):
            problems.append(invalid("spec.template.metadata.labels", dict(labels), _SELECTOR_MISMATCH))
        problems += validate_labels(labels, "spec.template.metadata.labels")
    return problems


_KIND_VALIDATORS: dict[str, Callable[[Any], list[str]]] = {
    kinds.POD.name: _validate_pod,
    kinds.NODE.name: _validate_node,
    kinds.PRIORITY_CLASS.name: _validate_priority_class,
    kinds.POD_DISRUPTION_BUDGET.name: _validate_pdb,
    kinds.RESOURCE_QUOTA.name: _validate_resource_quota,
    kinds.POD_GROUP.name: _validate_pod_group,
    kinds.LEASE.name: _validate_lease,
    kinds.LEASE_CANDIDATE.name: _validate_lease_candidate,
    kinds.EVENT.name: _validate_event,
    kinds.NAMESPACE.name: _validate_namespace,
    kinds.RUNTIME_CLASS.name: _validate_runtime_class,
    kinds.SERVICE.name: _validate_service,
    kinds.REPLICA_SET.name: _validate_replica_set,
    kinds.STATEFUL_SET.name: _validate_stateful_set,
    kinds.REPLICATION_CONTROLLER.name: _validate_replication_controller,
}

#: The part of each kind's validation that is about its status (the kinds without are not listed).
_STATUS_VALIDATORS: dict[str, Callable[[Any], list[str]]] = {
    kinds.POD.name: _validate_pod_status,
    kinds.NODE.name: _validate_node_status,
    kinds.RESOURCE_QUOTA.name: _validate_resource_quota_status,
    kinds.POD_GROUP.name: _validate_pod_group_status,
    kinds.NAMESPACE.name: _validate_namespace_status,
}
