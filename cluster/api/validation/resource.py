"""Validation of resource.k8s.io's kinds (Dynamic Resource Allocation): DeviceClass, ResourceSlice,
ResourceClaim, ResourceClaimTemplate, with the limits and wording of Kubernetes' resource validation."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.message import Message

from cluster.api import kinds, objects_pb2, semver
from cluster.api.dra import cel
from cluster.api.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    regex_error,
)
from cluster.api.quantity import parse_quantity
from cluster.api.validation.field import (
    IMMUTABLE,
    check,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from cluster.api.validation.meta import validate_template_meta
from cluster.api.validation.podspec import validate_node_selector
from cluster.api.validation.rules import KindValidation

T = TypeVar("T")

# Limits of resource.k8s.io/v1 (its types.go).
DRIVER_NAME_MAX_LENGTH = 63
POOL_NAME_MAX_LENGTH = 253
MAX_DEVICES = 128
MAX_DEVICES_WITH_ADVANCED_FEATURES = 64  # with taints, counter consumption or list attributes
MAX_ATTRIBUTES_AND_CAPACITIES = 32
MAX_ATTRIBUTE_VALUES = 48
DEVICE_MAX_DOMAIN_LENGTH = 63
DEVICE_MAX_ID_LENGTH = 32
ATTRIBUTE_MAX_VALUE_LENGTH = 64
MAX_TAINTS = 16
MAX_COUNTER_SETS = 8
MAX_COUNTERS_PER_SET = 32
MAX_COUNTER_CONSUMPTIONS = 2
MAX_BINDING_CONDITIONS = 4
MAX_REQUESTS = 32
MAX_CONSTRAINTS = 32
MAX_CONFIGS = 32
MAX_SELECTORS = 32
MAX_FIRST_AVAILABLE = 8
MAX_TOLERATIONS = 16
MAX_VALID_VALUES = 10
OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024
RESERVED_FOR_MAX_SIZE = 256
MAX_ALLOCATION_RESULTS = 32

ALLOCATION_MODES = ("All", "ExactCount")
TOLERATION_OPERATORS = ("Equal", "Exists")
TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")
CONFIG_SOURCES = ("FromClaim", "FromClass")
SKIP_NODE_OPERATIONS = ("*", "NodePrepareResources", "NodeUnprepareResources")

_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_C_IDENTIFIER = re.compile(_C_IDENTIFIER_FMT, re.ASCII)
_REQUEST_REF = (
    "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
)
_UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.ASCII)


def _json(message: Message) -> str:
    return json.dumps(json_format.MessageToDict(message), separators=(",", ":"), sort_keys=True)


def _each(
    items: Sequence[T],
    limit: int,
    path: str,
    validate: Callable[[T, str], list[str]],
    key: Callable[[T], object] | None = None,
) -> list[str]:
    """Upstream's validateSlice / validateSet: too many items is the only error (it says nothing of
    a list that large); otherwise each item's errors, and a duplicate key at its index."""
    if limit >= 0 and len(items) > limit:
        return [too_many(path, len(items), limit)]
    problems = []
    seen: set[object] = set()
    for i, item in enumerate(items):
        problems += validate(item, f"{path}[{i}]")
        if key is not None:
            item_key = key(item)
            if item_key in seen:
                problems.append(duplicate(f"{path}[{i}]", item_key))
            seen.add(item_key)
    return problems


def _driver_name(name: str, path: str) -> list[str]:
    """The CSI driver name rule DRA drivers share: a DNS subdomain (any case) of at most 63 bytes."""
    if not name:
        return [required(path)]
    problems = []
    if len(name) > DRIVER_NAME_MAX_LENGTH:
        problems.append(too_long(path, DRIVER_NAME_MAX_LENGTH))
    problems += check(path, name, lambda value: is_dns1123_subdomain(value.lower()))
    return problems


def _pool_name(name: str, path: str) -> list[str]:
    if not name:
        return [required(path)]
    problems = []
    if len(name) > POOL_NAME_MAX_LENGTH:
        problems.append(too_long(path, POOL_NAME_MAX_LENGTH))
    for part in name.split("/"):
        problems += [invalid(path, part, p) for p in is_dns1123_subdomain(part)]
    return problems


def _c_identifier(value: str, path: str) -> list[str]:
    problems = []
    if len(value) > DEVICE_MAX_ID_LENGTH:
        problems.append(too_long(path, DEVICE_MAX_ID_LENGTH))
    if not _C_IDENTIFIER.fullmatch(value):
        problems.append(
            invalid(
                path,
                value,
                regex_error(
                    "a valid C identifier must start with alphabetic character or '_', followed by a "
                    "string of alphanumeric characters or '_'",
                    _C_IDENTIFIER_FMT,
                    "my_name",
                    "MY_NAME",
                    "MyName",
                ),
            )
        )
    return problems


def qualified_name_problems(name: str, path: str) -> list[str]:
    """An attribute or capacity name: a C identifier, optionally behind a driver-name domain and '/'."""
    parts = name.split("/")
    if len(parts) == 1:
        return _c_identifier(name, path)
    if len(parts) > 2:
        return [invalid(path, name, "must not contain more than one slash")]
    domain, identifier = parts
    problems = _driver_name(domain, path) if domain else [invalid(path, "", "the domain must not be empty")]
    problems += (
        _c_identifier(identifier, path) if identifier else [invalid(path, "", "the name must not be empty")]
    )
    return problems


def _fully_qualified_name(name: str, path: str) -> list[str]:
    problems = qualified_name_problems(name, path)
    if "/" not in name:
        problems.append(
            invalid(path, name, "a fully qualified name must be a domain and a name separated by a slash")
        )
    return problems


def _quantity(text: str, path: str) -> tuple[Fraction | None, list[str]]:
    try:
        return parse_quantity(text), []
    except ValueError:
        return None, [
            invalid(path, text, "must match the regex ^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")
        ]


def _opaque(config: objects_pb2.OpaqueDeviceConfiguration, path: str) -> list[str]:
    problems = _driver_name(config.driver, f"{path}.driver")
    if not config.HasField("parameters"):
        problems.append(required(f"{path}.parameters"))
    elif len(json_format.MessageToJson(config.parameters, indent=None)) > OPAQUE_PARAMETERS_MAX_LENGTH:
        problems.append(too_long(f"{path}.parameters", OPAQUE_PARAMETERS_MAX_LENGTH))
    return problems


def _device_configuration(message: Any, path: str) -> list[str]:
    if not message.HasField("opaque"):
        return [required(f"{path}.opaque")]
    return _opaque(message.opaque, f"{path}.opaque")


def _too_costly(problem: str) -> bool:
    """Whether a selector's problem is its worst-case cost, which upstream reports as Forbidden rather than
    as an invalid value."""
    return problem.startswith("too complex")


def _selectors(selectors: Sequence[objects_pb2.DeviceSelector], path: str) -> list[str]:
    def one(selector: objects_pb2.DeviceSelector, where: str) -> list[str]:
        if not selector.HasField("cel"):
            return [required(f"{where}.cel")]
        expression, at = selector.cel.expression, f"{where}.cel.expression"
        if len(expression) > cel.MAX_LENGTH:
            return [too_long(at, cel.MAX_LENGTH)]  # not compiled: it would only cost time
        problem = cel.validate_device_selector(expression)
        if problem is None:
            return []
        if _too_costly(problem):
            return [forbidden(at, problem)]
        return [invalid(at, expression, problem)]

    return _each(selectors, MAX_SELECTORS, path, one)


# ----------------------------------------------------------------------------------------- DeviceClass


def validate_device_class(device_class: objects_pb2.DeviceClass) -> list[str]:
    spec = device_class.spec
    problems = _selectors(spec.selectors, "spec.selectors")
    problems += _each(spec.config, MAX_CONFIGS, "spec.config", _device_configuration)
    if spec.HasField("extended_resource_name") and not _is_extended_resource_name(
        spec.extended_resource_name
    ):
        problems.append(
            invalid(
                "spec.extendedResourceName",
                spec.extended_resource_name,
                "must be a valid extended resource name",
            )
        )
    return problems


def _is_extended_resource_name(name: str) -> bool:
    """core's IsExtendedResourceName: a qualified name outside kubernetes.io, valid as a quota key."""
    return (
        "/" in name
        and "kubernetes.io/" not in name
        and not name.startswith("requests.")
        and not is_qualified_name("requests." + name)
    )


# --------------------------------------------------------------------------------------- ResourceSlice


def _one_of_true(message: Any, path: str, field_name: str, json_name: str, chosen: list[str]) -> list[str]:
    """An optional bool of a one-of (allNodes, perDeviceNodeSelection): unset or true."""
    if not message.HasField(field_name):
        return []
    if getattr(message, field_name):
        chosen.append(f"`{json_name}`")
        return []
    return [invalid(f"{path}.{json_name}", False, "must be either unset or set to true")]


def validate_resource_slice(resource_slice: objects_pb2.ResourceSlice) -> list[str]:
    spec, path = resource_slice.spec, "spec"
    problems = _driver_name(spec.driver, "spec.driver")
    problems += _pool_name(spec.pool.name, "spec.pool.name")
    if spec.pool.resource_slice_count <= 0:
        problems.append(
            invalid(
                "spec.pool.resourceSliceCount", spec.pool.resource_slice_count, "must be greater than zero"
            )
        )
    if spec.pool.generation < 0:
        problems.append(
            invalid("spec.pool.generation", spec.pool.generation, "must be greater than or equal to zero")
        )
    chosen: list[str] = []
    if spec.HasField("node_name"):
        if spec.node_name:
            chosen.append("`nodeName`")
            problems += check("spec.nodeName", spec.node_name, is_dns1123_subdomain)
        else:
            problems.append(invalid("spec.nodeName", "", "must be either unset or set to a non-empty string"))
    if spec.HasField("node_selector"):
        chosen.append("`nodeSelector`")
        problems += validate_node_selector(spec.node_selector, "spec.nodeSelector")
        if len(spec.node_selector.node_selector_terms) != 1:
            problems.append(
                invalid(
                    "spec.nodeSelector.nodeSelectorTerms",
                    len(spec.node_selector.node_selector_terms),
                    "must have exactly one node selector term",
                )
            )
    problems += _one_of_true(spec, path, "all_nodes", "allNodes", chosen)
    problems += _one_of_true(spec, path, "per_device_node_selection", "perDeviceNodeSelection", chosen)
    where = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
    if not chosen:
        problems.append(required("spec", where))
    elif len(chosen) > 1:
        problems.append(
            invalid("spec", "{" + ", ".join(chosen) + "}", where + ", but multiple fields are set")
        )
    if spec.shared_counters and spec.devices:
        problems.append(invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed"))
    advanced = any(
        device.taints or device.consumes_counters or _has_list_attributes(device) for device in spec.devices
    )
    per_device = spec.HasField("per_device_node_selection") and spec.per_device_node_selection
    problems += _each(
        spec.devices,
        MAX_DEVICES_WITH_ADVANCED_FEATURES if advanced else MAX_DEVICES,
        "spec.devices",
        lambda device, where: _validate_device(device, where, per_device),
        key=lambda device: device.name,
    )
    problems += _each(
        spec.shared_counters,
        MAX_COUNTER_SETS,
        "spec.sharedCounters",
        _counter_set,
        key=lambda counter_set: counter_set.name,
    )
    problems += _counter_references(spec)
    if spec.HasField("partition_type_attribute"):
        problems += _partition_type_attribute(spec)
    problems += _skip_node_operations(spec.skip_node_operations, "spec.skipNodeOperations")
    return problems


def _has_list_attributes(device: objects_pb2.Device) -> bool:
    return any(
        a.int_values or a.bool_values or a.string_values or a.version_values
        for a in device.attributes.values()
    )


def _counter_set(counter_set: objects_pb2.CounterSet, path: str) -> list[str]:
    problems = (
        check(f"{path}.name", counter_set.name, is_dns1123_label)
        if counter_set.name
        else [required(f"{path}.name")]
    )
    problems += _counters(counter_set.counters, MAX_COUNTERS_PER_SET, f"{path}.counters")
    return problems


def _counters(counters: Mapping[str, objects_pb2.Counter], limit: int, path: str) -> list[str]:
    if not counters:
        return [required(path)]
    if len(counters) > limit:
        return [too_many(path, len(counters), limit)]
    problems = []
    for name in sorted(counters):
        problems += check(path, name, is_dns1123_label)
        problems += _quantity(counters[name].value, f"{path}[{name}].value")[1]
    return problems


def _counter_references(spec: objects_pb2.ResourceSliceSpec) -> list[str]:
    """A device's consumesCounters name a counter set of the slice (when the slice declares them) and
    counters of that set. Sets may also be declared by another slice of the pool, so a slice that has
    none is not checked."""
    declared = {counter_set.name: counter_set.counters for counter_set in spec.shared_counters}
    if not declared:
        return []
    problems = []
    for i, device in enumerate(spec.devices):
        for j, consumption in enumerate(device.consumes_counters):
            where = f"spec.devices[{i}].consumesCounters[{j}]"
            counters = declared.get(consumption.counter_set)
            if counters is None:
                problems.append(
                    invalid(
                        f"{where}.counterSet",
                        consumption.counter_set,
                        "must reference a counter set defined in the ResourceSlice",
                    )
                )
                continue
            problems += [
                invalid(
                    f"{where}.counters",
                    name,
                    f"must reference a counter defined in the counter set {consumption.counter_set!r}",
                )
                for name in sorted(consumption.counters)
                if name not in counters
            ]
    return problems


def _partition_type_attribute(spec: objects_pb2.ResourceSliceSpec) -> list[str]:
    name = spec.partition_type_attribute
    if not any(device.consumes_counters for device in spec.devices):
        return [
            invalid(
                "spec.partitionTypeAttribute",
                name,
                "may only be set on a slice which declares devices that consume counters",
            )
        ]
    problems = _fully_qualified_name(name, "spec.partitionTypeAttribute")
    if problems:
        return problems
    bare = name.removeprefix(spec.driver + "/") if name.startswith(spec.driver + "/") else ""
    for i, device in enumerate(spec.devices):
        if not device.consumes_counters:
            continue
        where = f"spec.devices[{i}].attributes[{name}]"
        attribute = device.attributes.get(name) or (device.attributes.get(bare) if bare else None)
        if attribute is None:
            problems.append(
                required(
                    where,
                    "device consumes counters and `partitionTypeAttribute` names "
                    "this attribute, so it must be set",
                )
            )
        elif not attribute.HasField("string_value"):
            problems.append(
                invalid(
                    where,
                    _json(attribute),
                    "must be a string value because `partitionTypeAttribute` names this attribute",
                )
            )
    return problems


def _skip_node_operations(operations: Sequence[str], path: str) -> list[str]:
    problems = [
        not_supported(f"{path}[{i}]", op, SKIP_NODE_OPERATIONS)
        for i, op in enumerate(operations)
        if op not in SKIP_NODE_OPERATIONS
    ]
    problems += [duplicate(f"{path}[{i}]", op) for i, op in enumerate(operations) if op in operations[:i]]
    chosen = set(operations)
    if "NodePrepareResources" in chosen and not chosen & {"NodeUnprepareResources", "*"}:
        problems.append(
            invalid(
                path,
                ", ".join(operations),
                "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped",
            )
        )
    return problems


def _validate_device(device: objects_pb2.Device, path: str, per_device_node_selection: bool) -> list[str]:
    problems = (
        check(f"{path}.name", device.name, is_dns1123_label) if device.name else [required(f"{path}.name")]
    )
    entries = len(device.attributes) + len(device.capacity)
    if entries > MAX_ATTRIBUTES_AND_CAPACITIES:
        problems.append(
            invalid(
                path,
                entries,
                "the total number of attributes and capacities must not exceed "
                f"{MAX_ATTRIBUTES_AND_CAPACITIES}",
            )
        )
    values = sum(
        max(1, len(a.int_values) + len(a.bool_values) + len(a.string_values) + len(a.version_values))
        for a in device.attributes.values()
    )
    if values > MAX_ATTRIBUTE_VALUES:
        problems.append(
            invalid(
                path, values, f"the total number of attribute values must not exceed {MAX_ATTRIBUTE_VALUES}"
            )
        )
    for name in sorted(device.attributes):
        problems += qualified_name_problems(name, f"{path}.attributes")
        problems += _attribute(device.attributes[name], f"{path}.attributes[{name}]")
    shared = device.HasField("allow_multiple_allocations") and device.allow_multiple_allocations
    for name in sorted(device.capacity):
        problems += qualified_name_problems(name, f"{path}.capacity")
        problems += _capacity(device.capacity[name], f"{path}.capacity[{name}]", shared)
    problems += _each(device.taints, MAX_TAINTS, f"{path}.taints", _taint)
    problems += _each(
        device.consumes_counters,
        MAX_COUNTER_CONSUMPTIONS,
        f"{path}.consumesCounters",
        _counter_consumption,
        key=lambda consumption: consumption.counter_set,
    )
    problems += _device_node(device, path, per_device_node_selection)
    problems += _binding_conditions(device.binding_conditions, device.binding_failure_conditions, path)
    return problems


def _device_node(device: objects_pb2.Device, path: str, per_device_node_selection: bool) -> list[str]:
    placed = device.HasField("node_name") or device.HasField("node_selector") or device.HasField("all_nodes")
    if not per_device_node_selection:
        if placed:
            return [
                invalid(
                    path,
                    "null",
                    "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
                    "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
                )
            ]
        return []
    problems = []
    chosen: list[str] = []
    if device.HasField("node_name"):
        if device.node_name:
            chosen.append("`nodeName`")
            problems += check(f"{path}.nodeName", device.node_name, is_dns1123_subdomain)
        else:
            problems.append(invalid(f"{path}.nodeName", "", "must not be empty"))
    if device.HasField("node_selector"):
        chosen.append("`nodeSelector`")
        problems += validate_node_selector(device.node_selector, f"{path}.nodeSelector")
    problems += _one_of_true(device, path, "all_nodes", "allNodes", chosen)
    rule = (
        "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` "
        "is set to true in the ResourceSlice spec"
    )
    if not chosen:
        problems.append(required(path, rule))
    elif len(chosen) > 1:
        problems.append(invalid(path, "{" + ", ".join(chosen) + "}", rule))
    return problems


def _attribute(attribute: objects_pb2.DeviceAttribute, path: str) -> list[str]:
    problems = []
    set_fields = [field.json_name for field, _ in attribute.ListFields()]
    if attribute.HasField("string_value") and len(attribute.string_value) > ATTRIBUTE_MAX_VALUE_LENGTH:
        problems.append(too_long(f"{path}.string", ATTRIBUTE_MAX_VALUE_LENGTH))
    if attribute.HasField("version_value"):
        problems += _version(attribute.version_value, f"{path}.version")
    for i, value in enumerate(attribute.string_values):
        if len(value) > ATTRIBUTE_MAX_VALUE_LENGTH:
            problems.append(too_long(f"{path}.strings[{i}]", ATTRIBUTE_MAX_VALUE_LENGTH))
    for i, value in enumerate(attribute.version_values):
        problems += _version(value, f"{path}.versions[{i}]")
    if len(set_fields) != 1:
        problems.append(
            invalid(path, _json(attribute) if set_fields else "", "exactly one value must be specified")
        )
    return problems


def _version(value: str, path: str) -> list[str]:
    problems = []
    if semver.parse(value) is None:
        problems.append(invalid(path, value, "must be a string compatible with semver.org spec 2.0.0"))
    if len(value) > ATTRIBUTE_MAX_VALUE_LENGTH:
        problems.append(too_long(path, ATTRIBUTE_MAX_VALUE_LENGTH))
    return problems


def _capacity(capacity: objects_pb2.DeviceCapacity, path: str, shared: bool) -> list[str]:
    value, problems = _quantity(capacity.value, f"{path}.value")
    if not capacity.HasField("request_policy"):
        return problems
    policy_path = f"{path}.requestPolicy"
    if not shared:
        return [*problems, forbidden(policy_path, "allowMultipleAllocations must be true")]
    if value is None:
        return problems
    return problems + _request_policy(capacity.request_policy, value, capacity.value, policy_path)


def _request_policy(
    policy: objects_pb2.CapacityRequestPolicy, maximum: Fraction, shown_maximum: str, path: str
) -> list[str]:
    if policy.valid_values and policy.HasField("valid_range"):
        return [
            forbidden(
                path,
                'exactly one policy can be specified, cannot specify "validValues" and '
                '"validRange" at the same time',
            )
        ]
    default: Fraction | None = None
    problems: list[str] = []
    if policy.HasField("default"):
        default, problems = _quantity(policy.default, f"{path}.default")
    if policy.valid_values:
        if not policy.HasField("default"):
            return [required(f"{path}.default", "required when validValues is defined")]
        return problems + _valid_values(policy, default, maximum, shown_maximum, f"{path}.validValues")
    if policy.HasField("valid_range"):
        if not policy.HasField("default"):
            return [required(f"{path}.default", "required when validRange is defined")]
        return problems + _valid_range(policy, default, maximum, shown_maximum, f"{path}.validRange")
    return problems


def _valid_values(
    policy: objects_pb2.CapacityRequestPolicy,
    default: Fraction | None,
    maximum: Fraction,
    shown_maximum: str,
    path: str,
) -> list[str]:
    if len(policy.valid_values) > MAX_VALID_VALUES:
        return [too_many(path, len(policy.valid_values), MAX_VALID_VALUES)]
    problems = []
    values: list[Fraction] = []
    for i, text in enumerate(policy.valid_values):
        value, bad = _quantity(text, f"{path}[{i}]")
        problems += bad
        if value is None:
            continue
        if values and values[-1] > value:
            problems.append(invalid(f"{path}[{i}]", text, "values must be sorted in ascending order"))
        if value > maximum:
            problems.append(
                invalid(f"{path}[{i}]", text, f"option is larger than capacity value: {shown_maximum}")
            )
        if value in values:
            problems.append(duplicate(f"{path}[{i}]", text))
        values.append(value)
    if default is not None and default not in values:
        problems.append(
            invalid(path, policy.default, "default value is not valid according to the requestPolicy")
        )
    return problems


def _valid_range(
    policy: objects_pb2.CapacityRequestPolicy,
    default: Fraction | None,
    maximum: Fraction,
    shown_maximum: str,
    path: str,
) -> list[str]:
    valid_range = policy.valid_range
    if not valid_range.HasField("min"):
        return [required(f"{path}.min", "required when validRange is defined")]
    low, problems = _quantity(valid_range.min, f"{path}.min")
    if low is None or default is None:
        return problems
    if low > maximum:
        problems.append(
            invalid(f"{path}.min", valid_range.min, f"min is larger than capacity value: {shown_maximum}")
        )
    if default < low:
        problems.append(
            invalid(f"{path}.default", policy.default, f"default is less than min: {valid_range.min}")
        )
    high: Fraction | None = None
    if valid_range.HasField("max"):
        high, bad = _quantity(valid_range.max, f"{path}.max")
        problems += bad
        if high is not None:
            if low > high:
                problems.append(
                    invalid(f"{path}.max", valid_range.min, f"min is larger than max: {valid_range.max}")
                )
            if high > maximum:
                problems.append(
                    invalid(
                        f"{path}.max", valid_range.max, f"max is larger than capacity value: {shown_maximum}"
                    )
                )
            if default > high:
                problems.append(
                    invalid(f"{path}.default", policy.default, f"default is more than max: {valid_range.max}")
                )
    if valid_range.HasField("step"):
        step, bad = _quantity(valid_range.step, f"{path}.step")
        problems += bad
        if step is not None:
            if step <= 0:
                problems.append(invalid(f"{path}.step", valid_range.step, "must be greater than zero"))
                return problems
            if low + step > maximum:
                problems.append(
                    invalid(
                        f"{path}.step",
                        valid_range.step,
                        f"one step {low + step} is larger than capacity value: {shown_maximum}",
                    )
                )
            for value, shown in ((default, policy.default), (high, valid_range.max)):
                if value is not None and (value - low) % step:
                    problems.append(
                        invalid(
                            f"{path}.step",
                            shown,
                            f"value is not a multiple of a given step "
                            f"({valid_range.step}) from ({valid_range.min})",
                        )
                    )
    return problems


def _counter_consumption(consumption: objects_pb2.DeviceCounterConsumption, path: str) -> list[str]:
    problems = (
        check(f"{path}.counterSet", consumption.counter_set, is_dns1123_label)
        if consumption.counter_set
        else [required(f"{path}.counterSet")]
    )
    problems += _counters(consumption.counters, MAX_COUNTERS_PER_SET, f"{path}.counters")
    return problems


def _taint(taint: objects_pb2.DeviceTaint, path: str) -> list[str]:
    problems = check(f"{path}.key", taint.key, is_qualified_name) if taint.key else [required(f"{path}.key")]
    if taint.value:
        problems += check(f"{path}.value", taint.value, is_valid_label_value)
    if not taint.effect:
        problems.append(required(f"{path}.effect"))
    elif taint.effect not in TAINT_EFFECTS:
        problems.append(not_supported(f"{path}.effect", taint.effect, TAINT_EFFECTS))
    return problems


def _binding_conditions(conditions: Sequence[str], failures: Sequence[str], path: str) -> list[str]:
    problems = []
    for json_name, items in (("bindingConditions", conditions), ("bindingFailureConditions", failures)):
        problems += _each(
            list(items),
            MAX_BINDING_CONDITIONS,
            f"{path}.{json_name}",
            lambda value, where: check(where, value, is_qualified_name),
            key=lambda value: value,
        )
    problems += [
        invalid(
            f"{path}.bindingFailureConditions[{i}]",
            value,
            "bindingFailureConditions must not overlap with bindingConditions",
        )
        for i, value in enumerate(failures)
        if value in conditions
    ]
    if failures and not conditions:
        problems.append(
            invalid(
                f"{path}.bindingConditions",
                "[]",
                "bindingConditions are required to use bindingFailureConditions",
            )
        )
    if conditions and not failures:
        problems.append(
            invalid(
                f"{path}.bindingFailureConditions",
                "[]",
                "bindingFailureConditions are required to use bindingConditions",
            )
        )
    return problems


def _validate_resource_slice_update(
    old: objects_pb2.ResourceSlice, new: objects_pb2.ResourceSlice
) -> list[str]:
    problems = []
    if new.spec.pool.name != old.spec.pool.name:
        problems.append(invalid("spec.pool.name", new.spec.pool.name, IMMUTABLE))
    if new.spec.driver != old.spec.driver:
        problems.append(invalid("spec.driver", new.spec.driver, IMMUTABLE))
    if new.spec.node_name != old.spec.node_name or new.spec.HasField("node_name") != old.spec.HasField(
        "node_name"
    ):
        problems.append(invalid("spec.nodeName", new.spec.node_name, IMMUTABLE))
    return problems


# -------------------------------------------------------------------------------------- ResourceClaim

#: A claim's request names: each request's name, with the names of its subrequests (None for a request
#: with exactly one device kind).
RequestNames = dict[str, set[str] | None]


def request_names(claim: objects_pb2.DeviceClaim) -> RequestNames:
    return {
        request.name: ({sub.name for sub in request.first_available} if request.first_available else None)
        for request in claim.requests
    }


def _names_request(names: RequestNames, reference: str) -> bool:
    parts = reference.split("/")
    if len(parts) > 2 or parts[0] not in names:
        return False
    if len(parts) == 1:
        return True
    subrequests = names[parts[0]]
    return subrequests is not None and parts[1] in subrequests


def _request_reference(reference: str, path: str, names: RequestNames) -> list[str]:
    parts = reference.split("/")
    if len(parts) > 2:
        return [invalid(path, reference, _REQUEST_REF)]
    problems = []
    for part in parts:
        problems += check(path, part, is_dns1123_label)
    if not _names_request(names, reference):
        problems.append(invalid(path, reference, _REQUEST_REF))
    return problems


def _request_references(references: Sequence[str], path: str, names: RequestNames) -> list[str]:
    return _each(
        list(references),
        MAX_REQUESTS,
        path,
        lambda reference, where: _request_reference(reference, where, names),
        key=lambda ref: ref,
    )


def validate_claim_spec(spec: objects_pb2.ResourceClaimSpec, path: str) -> list[str]:
    """A ResourceClaim's spec (also a template's spec.spec): its requests, constraints and config."""
    devices, path = spec.devices, f"{path}.devices"
    names = request_names(devices)
    problems = _each(
        devices.requests, MAX_REQUESTS, f"{path}.requests", _device_request, key=lambda request: request.name
    )
    problems += _each(
        devices.constraints,
        MAX_CONSTRAINTS,
        f"{path}.constraints",
        lambda constraint, where: _constraint(constraint, where, names),
    )
    problems += _each(
        devices.config,
        MAX_CONFIGS,
        f"{path}.config",
        lambda config, where: (
            _request_references(config.requests, f"{where}.requests", names)
            + _device_configuration(config, where)
        ),
    )
    return problems


def _request_name(name: str, path: str) -> list[str]:
    return check(path, name, is_dns1123_label) if name else [required(path)]


def _device_request(request: objects_pb2.DeviceRequest, path: str) -> list[str]:
    problems = _request_name(request.name, f"{path}.name")
    exactly, first_available = request.HasField("exactly"), bool(request.first_available)
    if exactly and first_available:
        problems.append(
            invalid(
                path,
                "null",
                "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
            )
        )
    elif first_available:
        problems += _each(
            request.first_available,
            MAX_FIRST_AVAILABLE,
            f"{path}.firstAvailable",
            _subrequest,
            key=lambda subrequest: subrequest.name,
        )
    elif exactly:
        problems += _device_kind(request.exactly, f"{path}.exactly")
        if request.exactly.capacity.requests:
            problems += _capacity_requests(request.exactly.capacity, f"{path}.exactly.capacity")
    else:
        problems.append(required(path, "exactly one of `exactly` or `firstAvailable` is required"))
    return problems


def _subrequest(subrequest: objects_pb2.DeviceSubRequest, path: str) -> list[str]:
    problems = _request_name(subrequest.name, f"{path}.name") + _device_kind(subrequest, path)
    if subrequest.capacity.requests:
        problems += _capacity_requests(subrequest.capacity, f"{path}.capacity")
    return problems


def _device_kind(
    request: objects_pb2.ExactDeviceRequest | objects_pb2.DeviceSubRequest, path: str
) -> list[str]:
    """What a request (exactly) and a subrequest share: class, selectors, how many, tolerations."""
    problems = (
        check(f"{path}.deviceClassName", request.device_class_name, is_dns1123_subdomain)
        if request.device_class_name
        else [required(f"{path}.deviceClassName")]
    )
    problems += _selectors(request.selectors, f"{path}.selectors")
    if request.allocation_mode == "All":
        if request.count:
            problems.append(
                invalid(f"{path}.count", request.count, "must not be specified when allocationMode is 'All'")
            )
    elif request.allocation_mode == "ExactCount":
        if request.count <= 0:
            problems.append(invalid(f"{path}.count", request.count, "must be greater than zero"))
    else:
        problems.append(not_supported(f"{path}.allocationMode", request.allocation_mode, ALLOCATION_MODES))
    problems += _each(request.tolerations, MAX_TOLERATIONS, f"{path}.tolerations", _toleration)
    return problems


def _capacity_requests(capacity: objects_pb2.CapacityRequirements, path: str) -> list[str]:
    problems = []
    for name in sorted(capacity.requests):
        problems += qualified_name_problems(name, f"{path}.requests")
        value, bad = _quantity(capacity.requests[name], f"{path}.requests[{name}]")
        problems += bad
        if value is not None and value < 0:
            problems.append(
                invalid(
                    f"{path}.requests[{name}]", capacity.requests[name], "must be greater than or equal to 0"
                )
            )
    return problems


def _toleration(toleration: objects_pb2.DeviceToleration, path: str) -> list[str]:
    problems = check(f"{path}.key", toleration.key, is_qualified_name) if toleration.key else []
    if toleration.operator == "Exists":
        if toleration.value:
            problems.append(invalid(f"{path}.value", toleration.value, "must be empty for operator `Exists`"))
    elif toleration.operator == "Equal":
        problems += check(f"{path}.value", toleration.value, is_valid_label_value)
    elif not toleration.operator:
        problems.append(required(f"{path}.operator"))
    else:
        problems.append(not_supported(f"{path}.operator", toleration.operator, TOLERATION_OPERATORS))
    if toleration.effect and toleration.effect not in TAINT_EFFECTS:
        problems.append(not_supported(f"{path}.effect", toleration.effect, TAINT_EFFECTS))
    return problems


def _constraint(constraint: objects_pb2.DeviceConstraint, path: str, names: RequestNames) -> list[str]:
    problems = _request_references(constraint.requests, f"{path}.requests", names)
    if constraint.HasField("match_attribute"):
        problems += _fully_qualified_name(constraint.match_attribute, f"{path}.matchAttribute")
    elif constraint.HasField("distinct_attribute"):
        problems += _fully_qualified_name(constraint.distinct_attribute, f"{path}.distinctAttribute")
    else:
        problems.append(
            required(
                path,
                'exactly one of "matchAttribute" or "distinctAttribute" is required, '
                "but multiple fields are set",
            )
        )
    return problems


def validate_resource_claim(claim: objects_pb2.ResourceClaim) -> list[str]:
    return validate_claim_spec(claim.spec, "spec") + validate_resource_claim_status(claim)


def _validate_resource_claim_update(
    old: objects_pb2.ResourceClaim, new: objects_pb2.ResourceClaim
) -> list[str]:
    if new.spec != old.spec:
        return [invalid("spec", _json(new.spec), IMMUTABLE)]
    return []


def validate_resource_claim_status(claim: objects_pb2.ResourceClaim) -> list[str]:
    """What a claim's status must hold on its own: unique, complete consumers (at most 256, and only with
    an allocation), allocation results that name requests of the claim."""
    status, names = claim.status, request_names(claim.spec.devices)
    problems = _each(
        status.reserved_for,
        RESERVED_FOR_MAX_SIZE,
        "status.reservedFor",
        _consumer,
        key=lambda consumer: consumer.uid,
    )
    if status.reserved_for and not status.HasField("allocation"):
        problems.append(forbidden("status.reservedFor", "may not be specified when `allocated` is not set"))
    if status.HasField("allocation"):
        problems += _allocation(status.allocation, "status.allocation", names)
    allocated = {(r.driver, r.pool, r.device, r.share_id) for r in status.allocation.devices.results}
    problems += _each(
        status.devices,
        -1,
        "status.devices",
        lambda device, where: _device_status(device, where, allocated),
        key=lambda d: f"{d.driver}/{d.pool}/{d.device}" + (f"/{d.share_id}" if d.share_id else ""),
    )
    return problems


def _consumer(consumer: objects_pb2.ResourceClaimConsumerReference, path: str) -> list[str]:
    return [
        required(f"{path}.{json_name}")
        for json_name, value in (
            ("resource", consumer.resource),
            ("name", consumer.name),
            ("uid", consumer.uid),
        )
        if not value
    ]


def _allocation(allocation: objects_pb2.AllocationResult, path: str, names: RequestNames) -> list[str]:
    problems = _each(
        allocation.devices.results,
        MAX_ALLOCATION_RESULTS,
        f"{path}.devices.results",
        lambda result, where: _allocation_result(result, where, names),
    )
    problems += _each(
        allocation.devices.config,
        2 * MAX_CONFIGS,
        f"{path}.devices.config",
        lambda config, where: _allocation_config(config, where, names),
    )
    if allocation.HasField("node_selector"):
        problems += validate_node_selector(allocation.node_selector, f"{path}.nodeSelector")
    return problems


def _allocation_result(
    result: objects_pb2.DeviceRequestAllocationResult, path: str, names: RequestNames
) -> list[str]:
    problems = _request_reference(result.request, f"{path}.request", names)
    problems += _driver_name(result.driver, f"{path}.driver")
    problems += _pool_name(result.pool, f"{path}.pool")
    problems += (
        check(f"{path}.device", result.device, is_dns1123_label)
        if result.device
        else [required(f"{path}.device")]
    )
    problems += _binding_conditions(result.binding_conditions, result.binding_failure_conditions, path)
    problems += _each(result.tolerations, -1, f"{path}.tolerations", _toleration)
    if result.HasField("share_id"):
        problems += _share_id(result.share_id, f"{path}.shareID")
    for name in sorted(result.consumed_capacity):
        problems += qualified_name_problems(name, f"{path}.consumedCapacity")
        problems += _quantity(result.consumed_capacity[name], f"{path}.consumedCapacity[{name}]")[1]
    problems += _skip_node_operations(result.skip_node_operations, f"{path}.skipNodeOperations")
    return problems


def _share_id(share_id: str, path: str) -> list[str]:
    if _UID.fullmatch(share_id):
        return []
    return [
        invalid(
            path,
            share_id,
            "uid must be in RFC 4122 normalized form, "
            "`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters",
        )
    ]


def _allocation_config(
    config: objects_pb2.DeviceAllocationConfiguration, path: str, names: RequestNames
) -> list[str]:
    problems = []
    if not config.source:
        problems.append(required(f"{path}.source"))
    elif config.source not in CONFIG_SOURCES:
        problems.append(not_supported(f"{path}.source", config.source, CONFIG_SOURCES))
    problems += _request_references(config.requests, f"{path}.requests", names)
    problems += _device_configuration(config, path)
    return problems


def _device_status(
    device: objects_pb2.AllocatedDeviceStatus, path: str, allocated: set[tuple[str, str, str, str]]
) -> list[str]:
    problems = _driver_name(device.driver, f"{path}.driver") + _pool_name(device.pool, f"{path}.pool")
    problems += (
        check(f"{path}.device", device.device, is_dns1123_label)
        if device.device
        else [required(f"{path}.device")]
    )
    if device.HasField("share_id"):
        problems += _share_id(device.share_id, f"{path}.shareID")
    if (device.driver, device.pool, device.device, device.share_id) not in allocated:
        shown = f"{device.driver}/{device.pool}/{device.device}" + (
            f"/{device.share_id}" if device.share_id else ""
        )
        problems.append(invalid(path, shown, "must be an allocated device in the claim"))
    return problems


def validate_resource_claim_status_update(
    old: objects_pb2.ResourceClaim, new: objects_pb2.ResourceClaim
) -> list[str]:
    """An allocation is set once and may be cleared, never changed; a claim being deleted gains no
    consumers."""
    problems = []
    if (
        old.status.HasField("allocation")
        and new.status.HasField("allocation")
        and new.status.allocation != old.status.allocation
    ):
        problems.append(invalid("status.allocation", _json(new.status.allocation), IMMUTABLE))
    if new.metadata.HasField("deletion_timestamp"):
        before = {consumer.uid for consumer in old.status.reserved_for}
        if any(consumer.uid not in before for consumer in new.status.reserved_for):
            problems.append(
                forbidden(
                    "status.reservedFor",
                    "new entries may not be added while "
                    "`deallocationRequested` or `deletionTimestamp` are set",
                )
            )
    return problems


# ------------------------------------------------------------------------------ ResourceClaimTemplate


def validate_resource_claim_template(template: objects_pb2.ResourceClaimTemplate) -> list[str]:
    problems = validate_template_meta(template.spec.metadata, "spec.metadata")
    problems += validate_claim_spec(template.spec.spec, "spec.spec")
    return problems


def _validate_resource_claim_template_update(
    old: objects_pb2.ResourceClaimTemplate, new: objects_pb2.ResourceClaimTemplate
) -> list[str]:
    if new.spec != old.spec:
        return [invalid("spec", _json(new.spec), IMMUTABLE)]
    return []


DEVICE_CLASS = KindValidation(kinds.DEVICE_CLASS, validate_device_class)
RESOURCE_SLICE = KindValidation(
    kinds.RESOURCE_SLICE, validate_resource_slice, _validate_resource_slice_update
)
RESOURCE_CLAIM = KindValidation(
    kinds.RESOURCE_CLAIM,
    validate_resource_claim,
    _validate_resource_claim_update,
    validate_resource_claim_status,
    validate_resource_claim_status_update,
)
RESOURCE_CLAIM_TEMPLATE = KindValidation(
    kinds.RESOURCE_CLAIM_TEMPLATE, validate_resource_claim_template, _validate_resource_claim_template_update
)

VALIDATIONS: tuple[KindValidation[Any], ...] = (
    DEVICE_CLASS,
    RESOURCE_SLICE,
    RESOURCE_CLAIM,
    RESOURCE_CLAIM_TEMPLATE,
)
