"""The structured-parameters allocator (scheduler/dra), with upstream's allocator test table
(k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting) translated case by case:
every case whose features podsched has (all of them on), under upstream's names. Upstream's cases that
check what happens with a feature gate off are left out, as are its counts of search steps."""

from __future__ import annotations

import random
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pytest
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster.api import objects_pb2
from cluster.api.dra import cel
from cluster.api.quantity import parse_quantity
from scheduler.dra import (
    AllocatedState,
    AllocationError,
    Allocator,
    DeviceID,
    FreshSliceIndexes,
    NodeAllocationError,
    ReusedSliceIndexes,
    ShareIDSource,
    allocated_state_of,
    share_ids_from,
)
from scheduler.dra import allocator as allocator_module
from tests.builders import device_class, device_request, node, resource_claim, resource_slice

REGION1, REGION2 = "region-1", "region-2"
NODE1, NODE2 = "node-1", "node-2"
CLASS_A, CLASS_B = "class-a", "class-b"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"
POOL1, POOL2, POOL3, POOL4 = "pool-1", "pool-2", "pool-3", "pool-4"
REQ0, REQ1, REQ2, REQ3 = "req-0", "req-1", "req-2", "req-3"
SUB0, SUB1 = "subReq-0", "subReq-1"
CLAIM0, CLAIM1 = "claim-0", "claim-1"
SLICE1, SLICE2, SLICE3, SLICE4 = "slice-1", "slice-2", "slice-3", "slice-4"
DEVICE0, DEVICE1, DEVICE2, DEVICE3, DEVICE4 = "device-0", "device-1", "device-2", "device-3", "device-4"
COUNTER_SET1, COUNTER_SET2 = "counter-set-1", "counter-set-2"
CAPACITY0, CAPACITY1 = "capacity-0", "capacity-1"
MAX_RESULTS = 32
ALL = "nodeSelectionAll"
PER_DEVICE = "nodeSelectionPerDevice"

BOOL_ATTRIBUTE = f"{DRIVER_A}/boolAttribute"
STRING_ATTRIBUTE = f"{DRIVER_A}/stringAttribute"
VERSION_ATTRIBUTE = f"{DRIVER_A}/driverVersion"
INT_ATTRIBUTE = f"{DRIVER_A}/numa"
NON_EXISTENT_ATTRIBUTE = f"{DRIVER_A}/NonExistentAttribute"

TAINT_NONE = {"key": "taint-key", "value": "taint-value", "effect": "None"}
TAINT_NO_SCHEDULE = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
TAINT_NO_EXECUTE = {"key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}
TOLERATION_NO_SCHEDULE = {"operator": "Exists", "key": "taint-key", "effect": "NoSchedule"}
TOLERATION_NO_EXECUTE = {
    "operator": "Equal",
    "key": "taint-key",
    "value": "taint-value-2",
    "effect": "NoExecute",
}
TOLERATION_NO_SCHEDULE_KEY1 = {"operator": "Exists", "key": "key1", "effect": "NoSchedule"}


# ----------------------------------------------------------------------------------- test objects


def node_in(name: str, region: str) -> objects_pb2.Node:
    return node(name, labels={"region": region, "planet": "earth"})


def cls(name: str, driver: str) -> objects_pb2.DeviceClass:
    return device_class(name, f'device.driver == "{driver}"')


def class_with_config(name: str, driver: str, attribute: str) -> objects_pb2.DeviceClass:
    return device_class(name, f'device.driver == "{driver}"', config=[opaque(driver, attribute)])


def class_multi(name: str, driver: str, multiple: bool) -> objects_pb2.DeviceClass:
    flag = "true" if multiple else "false"
    return device_class(name, f'device.driver == "{driver}" && device.allowMultipleAllocations == {flag}')


def opaque(driver: str, attribute: str) -> dict[str, Any]:
    return {"driver": driver, "parameters": {attribute: attribute + "Value"}}


def memory_at_least(quantity: str) -> str:
    return f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("{quantity}")) >= 0'


def request(name: str, class_name: str, count: int = 1, *selectors: str, **fields: Any) -> dict[str, Any]:
    return device_request(name, class_name, count, *selectors, **fields)


def all_request(name: str, class_name: str, *selectors: str, **fields: Any) -> dict[str, Any]:
    return device_request(name, class_name, 0, *selectors, all_devices=True, **fields)


def capacity(quantity: str) -> dict[str, Any]:
    return {"requests": {CAPACITY0: quantity}}


def sub(name: str, class_name: str, count: int = 1, *selectors: str, mode: str = "ExactCount", **fields: Any):
    subrequest = {
        "name": name,
        "deviceClassName": class_name,
        "allocationMode": mode,
        "selectors": [{"cel": {"expression": expression}} for expression in selectors],
        **fields,
    }
    if mode == "ExactCount":
        subrequest["count"] = count
    return subrequest


def prioritized(name: str, *subrequests: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": name, "firstAvailable": list(subrequests)}


def claim(name: str, *requests: Mapping[str, Any], **fields: Any) -> objects_pb2.ResourceClaim:
    return resource_claim(name, *requests, **fields)


def match(attribute: str, *requests: str) -> dict[str, Any]:
    return {"matchAttribute": attribute, "requests": list(requests)}


def distinct(attribute: str, *requests: str) -> dict[str, Any]:
    return {"distinctAttribute": attribute, "requests": list(requests)}


def counters(values: Mapping[str, str]) -> dict[str, Any]:
    return {name: {"value": value} for name, value in values.items()}


def consumes(counter_set: str, values: Mapping[str, str]) -> dict[str, Any]:
    return {"counterSet": counter_set, "counters": counters(values)}


def counter_set(name: str, values: Mapping[str, str] | None = None) -> dict[str, Any]:
    return {"name": name, "counters": counters(values or {})}


def dev(
    name: str,
    capacity: Mapping[str, str] | None = None,
    attributes: Mapping[str, Any] | None = None,
    *,
    consumes: Sequence[Mapping[str, Any]] = (),
    from_counters: bool = False,
    taints: Sequence[Mapping[str, str]] = (),
    node_selection: Any = None,
    binding: tuple[Sequence[str], Sequence[str]] | None = None,
    binds_to_node: bool = False,
    multiple: bool = False,
    policy_range: Mapping[str, str] | None = None,
    policy_values: tuple[str, Mapping[str, str], Sequence[str]] | None = None,
) -> dict[str, Any]:
    """A device as upstream's device() wrapper builds it: ``from_counters`` gives it the capacity its
    counters consume; ``policy_range`` adds capacities with the request policy default 2, range 2..4 step
    2; ``policy_values`` (default, capacities, more valid values) ones with valid values."""
    device: dict[str, Any] = {"name": name, "attributes": dict(attributes or {})}
    caps: dict[str, Any] = {key: {"value": value} for key, value in (capacity or {}).items()}
    if consumes:
        device["consumesCounters"] = list(consumes)
        if from_counters:
            for consumption in consumes:
                caps.update({key: dict(value) for key, value in consumption["counters"].items()})
    if taints:
        device["taints"] = list(taints)
    if node_selection == ALL:
        device["allNodes"] = True
    elif isinstance(node_selection, str):
        device["nodeName"] = node_selection
    elif node_selection is not None:
        device["nodeSelector"] = node_selection
    if binding is not None:
        device["bindingConditions"] = list(binding[0])
        device["bindingFailureConditions"] = list(binding[1])
    if binds_to_node:
        device["bindsToNode"] = True
    if multiple:
        device["allowMultipleAllocations"] = True
    for key, value in (policy_range or {}).items():
        caps[key] = {
            "value": value,
            "requestPolicy": {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}},
        }
    if policy_values is not None:
        default, values, more = policy_values
        for key, value in values.items():
            caps[key] = {
                "value": value,
                "requestPolicy": {"default": default, "validValues": [default, *more]},
            }
    if caps:
        device["capacity"] = caps
    return device


def slice_(
    name: str,
    node_selection: Any,
    pool: str,
    driver: str,
    *devices: Mapping[str, Any],
    count: int = 1,
    generation: int = 1,
    counter_sets: Sequence[Mapping[str, Any]] = (),
) -> objects_pb2.ResourceSlice:
    where: dict[str, Any] = {}
    if node_selection == ALL:
        where["all_nodes"] = True
    elif node_selection == PER_DEVICE:
        where["per_device_node_selection"] = True
    elif isinstance(node_selection, str):
        where["node_name"] = node_selection
    else:
        where["node_selector"] = node_selection
    return resource_slice(
        name,
        driver,
        pool,
        *devices,
        slice_count=count,
        generation=generation,
        shared_counters=counter_sets,
        **where,
    )


def one_device_slice(name: str, node_selection: Any, pool: str, driver: str, **fields: Any):
    return slice_(name, node_selection, pool, driver, dev(DEVICE1), **fields)


def many_devices_slice(name: str, node_selection: Any, pool: str, driver: str, count: int):
    return slice_(name, node_selection, pool, driver, *(dev(f"device-{i}") for i in range(count)))


def counter_slice(
    name: str, node_selection: Any, pool: str, driver: str, *sets: Mapping[str, Any], count: int = 1
):
    return slice_(name, node_selection, pool, driver, count=count, counter_sets=sets)


def label_selector(key: str, *values: str) -> dict[str, Any]:
    return {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}]
    }


def local_selector(node_name: str) -> dict[str, Any]:
    return {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
        ]
    }


# ------------------------------------------------------------------------------ expected results


def result(
    request: str,
    driver: str,
    pool: str,
    device: str,
    admin_access: bool = False,
    *tolerations: Mapping[str, str],
    shared: bool = False,
    consumed: Mapping[str, str] | None = None,
    binding: tuple[Sequence[str], Sequence[str]] = ((), ()),
) -> tuple[Any, ...]:
    return (
        request,
        driver,
        pool,
        device,
        admin_access,
        tuple(_toleration(json_format.ParseDict(t, objects_pb2.DeviceToleration())) for t in tolerations),
        shared,
        {name: parse_quantity(value) for name, value in (consumed or {}).items()},
        (tuple(binding[0]), tuple(binding[1])),
    )


def shared_result(
    request: str, driver: str, pool: str, device: str, consumed: Mapping[str, str] | None = None
):
    return result(request, driver, pool, device, shared=True, consumed=consumed)


def _toleration(toleration: objects_pb2.DeviceToleration) -> tuple[str, str, str, str]:
    return (toleration.key, toleration.operator, toleration.value, toleration.effect)


@dataclass
class Expected:
    """One claim's expected AllocationResult; ``ordered``: its results in exactly this order."""

    selector: Mapping[str, Any] | None
    results: Sequence[tuple[Any, ...]]
    config: Sequence[tuple[str, tuple[str, ...], dict[str, Any]]] = ()
    ordered: bool = False


def allocation(selector: Mapping[str, Any] | None, *results: tuple[Any, ...], config=(), ordered=False):
    return Expected(selector, results, config, ordered)


def class_config(driver: str, attribute: str, *requests: str):
    return ("FromClass", requests, opaque(driver, attribute))


def claim_config(driver: str, attribute: str, *requests: str):
    return ("FromClaim", requests, opaque(driver, attribute))


def _selector(selector: objects_pb2.NodeSelector | None) -> frozenset[Any] | None:
    if selector is None:
        return None

    def requirements(items: Sequence[objects_pb2.NodeSelectorRequirement]) -> frozenset[Any]:
        return frozenset((r.key, r.operator, frozenset(r.values)) for r in items)

    return frozenset(
        (requirements(term.match_expressions), requirements(term.match_fields))
        for term in selector.node_selector_terms
    )


def _parsed_selector(selector: Mapping[str, Any] | None) -> frozenset[Any] | None:
    return (
        None if selector is None else _selector(json_format.ParseDict(selector, objects_pb2.NodeSelector()))
    )


def _actual(allocation: objects_pb2.AllocationResult, ordered: bool) -> tuple[Any, ...]:
    results = [
        (
            r.request,
            r.driver,
            r.pool,
            r.device,
            r.admin_access,
            tuple(_toleration(t) for t in r.tolerations),
            r.HasField("share_id"),
            {name: parse_quantity(value) for name, value in r.consumed_capacity.items()},
            (tuple(r.binding_conditions), tuple(r.binding_failure_conditions)),
        )
        for r in allocation.devices.results
    ]
    config = [
        (c.source, tuple(c.requests), json_format.MessageToDict(c.opaque)) for c in allocation.devices.config
    ]
    selector = _selector(allocation.node_selector if allocation.HasField("node_selector") else None)
    return (results if ordered else sorted(results, key=repr), config, selector)


def _expected(expected: Expected) -> tuple[Any, ...]:
    results = list(expected.results)
    return (
        results if expected.ordered else sorted(results, key=repr),
        [(source, tuple(requests), config) for source, requests, config in expected.config],
        _parsed_selector(expected.selector),
    )


@dataclass
class Case:
    claims: Sequence[objects_pb2.ResourceClaim] = ()
    classes: Sequence[objects_pb2.DeviceClass] = ()
    slices: Sequence[objects_pb2.ResourceSlice] = ()
    node: objects_pb2.Node = field(default_factory=lambda: node_in(NODE1, REGION1))
    allocated: Sequence[DeviceID] = ()
    allocated_capacity: Mapping[DeviceID, Mapping[str, str]] = field(default_factory=dict)
    #: None: the claims do not fit on the node.
    expect: Sequence[Expected] | None = None
    #: A part of the error allocation reports.
    error: str = ""
    #: The error is NodeAllocationError (only this node fails).
    node_error: bool = False


N1 = node_in(NODE1, REGION1)
N2 = node_in(NODE2, REGION2)
A = cls(CLASS_A, DRIVER_A)
B = cls(CLASS_B, DRIVER_B)


def _attrs(**values: Any) -> dict[str, Any]:
    """Device attributes: ``numa=1`` -> {"numa": {"int": 1}}, by the Python type of the value."""
    kinds = {bool: "bool", int: "int", str: "string"}
    return {name: {kinds[type(value)]: value} for name, value in values.items()}


def _version(value: str) -> dict[str, Any]:
    return {"version": value}


ALL_FOUR = {
    "driverVersion": _version("1.0.0"),
    "numa": {"int": 1},
    "stringAttribute": {"string": "stringAttributeValue"},
    "boolAttribute": {"bool": True},
}

CASES: dict[str, Case] = {
    "empty": Case(expect=[]),
    "simple": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=[A],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
        expect=[allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "other-node": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=[A],
        slices=[
            one_device_slice(SLICE1, NODE1, POOL1, DRIVER_B),
            one_device_slice(SLICE2, NODE2, POOL2, DRIVER_A),
        ],
        node=N2,
        expect=[allocation(local_selector(NODE2), result(REQ0, DRIVER_A, POOL2, DEVICE1))],
    ),
    "small-and-large": Case(
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1, memory_at_least("1Gi")),
                request(REQ1, CLASS_A, 1, memory_at_least("2Gi")),
            )
        ],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                dev(DEVICE1, {"memory": "1Gi"}),
                dev(DEVICE2, {"memory": "2Gi"}),
            )
        ],
        expect=[
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ1, DRIVER_A, POOL1, DEVICE2),
            )
        ],
    ),
    "small-and-large-backtrack-requests": Case(
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1, memory_at_least("1Gi")),
                request(REQ1, CLASS_A, 1, memory_at_least("2Gi")),
            )
        ],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                dev(DEVICE2, {"memory": "2Gi"}),
                dev(DEVICE1, {"memory": "1Gi"}),
            )
        ],
        expect=[
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ1, DRIVER_A, POOL1, DEVICE2),
            )
        ],
    ),
    "small-and-large-backtrack-claims": Case(
        claims=[
            claim(CLAIM0, request(REQ0, CLASS_A, 1, memory_at_least("1Gi"))),
            claim(CLAIM1, request(REQ1, CLASS_A, 1, memory_at_least("2Gi"))),
        ],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                dev(DEVICE2, {"memory": "2Gi"}),
                dev(DEVICE1, {"memory": "1Gi"}),
            )
        ],
        expect=[
            allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1)),
            allocation(local_selector(NODE1), result(REQ1, DRIVER_A, POOL1, DEVICE2)),
        ],
    ),
    "devices-split-across-different-slices": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))],
        classes=[A],
        slices=[
            one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A),
            one_device_slice(SLICE2, NODE1, POOL2, DRIVER_A),
        ],
        expect=[
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL2, DEVICE1),
            )
        ],
    ),
    "obsolete-slice": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=[A],
        slices=[
            slice_("slice-1-obsolete", NODE1, POOL1, DRIVER_A, dev(DEVICE1), count=2),
            slice_("slice-1-obsolete", NODE1, POOL1, DRIVER_A, dev(DEVICE2), count=2, generation=2),
        ],
        expect=None,
    ),
    "duplicate-slice": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=[A],
        slices=[
            one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A, count=2),
            one_device_slice(SLICE1 + "-2", NODE1, POOL1, DRIVER_A, count=2),
        ],
        error="invalid resource pools were encountered",
        node_error=True,
    ),
    "no-slices": Case(claims=[claim(CLAIM0, request(REQ0, CLASS_A))], classes=[A]),
    "not-enough-suitable-devices": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A)), claim(CLAIM0, request(REQ1, CLASS_A))],
        classes=[A],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    "no-classes": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="could not retrieve device class class-a",
    ),
    "unknown-class": Case(
        claims=[claim(CLAIM0, request(REQ0, "unknown-class"))],
        classes=[A],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="could not retrieve device class unknown-class",
    ),
    "empty-class": Case(
        claims=[claim(CLAIM0, request(REQ0, ""))],
        classes=[A],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="claim claim-0, request req-0: missing device class name (unsupported request type?)",
    ),
    "no-claims-to-allocate": Case(
        classes=[A], slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)], expect=[]
    ),
    "all-devices-single": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[A],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
        expect=[allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "all-devices-many": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[A],
        slices=[
            one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A),
            one_device_slice(SLICE1, NODE1, POOL2, DRIVER_A),
        ],
        expect=[
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL2, DEVICE1),
            )
        ],
    ),
    "all-devices-of-the-incomplete-pool": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[A],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A, count=2)],
        error="claim claim-0, request req-0: asks for all devices, "
        "but resource pool driver-a/pool-1 is currently being updated",
    ),
    "all-devices-plus-another": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_B))],
        classes=[A, B],
        slices=[
            one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A),
            one_device_slice(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
        expect=[
            allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1)),
            allocation(local_selector(NODE1), result(REQ0, DRIVER_B, POOL1, DEVICE1)),
        ],
    ),
    "all-devices-plus-another-reversed": Case(
        claims=[claim(CLAIM1, request(REQ0, CLASS_B)), claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[A, B],
        slices=[
            one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A),
            one_device_slice(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
        expect=[
            allocation(local_selector(NODE1), result(REQ0, DRIVER_B, POOL1, DEVICE1)),
            allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1)),
        ],
    ),
    "all-devices-many-plus-another": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_B))],
        classes=[A, B],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), dev(DEVICE2)),
            one_device_slice(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
        expect=[
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE2),
            ),
            allocation(local_selector(NODE1), result(REQ0, DRIVER_B, POOL1, DEVICE1)),
        ],
    ),
    "all-devices-many-plus-another-reversed": Case(
        claims=[claim(CLAIM1, request(REQ0, CLASS_B)), claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[A, B],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), dev(DEVICE2)),
            one_device_slice(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
        expect=[
            allocation(local_selector(NODE1), result(REQ0, DRIVER_B, POOL1, DEVICE1)),
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE2),
            ),
        ],
    ),
    "all-devices-no-solution": Case(
        claims=[claim(CLAIM1, request(REQ0, CLASS_A)), claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[A],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    "all-devices-no-solution-reversed": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_A))],
        classes=[A],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    "all-devices-slice-without-devices": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    "all-devices-no-slices": Case(claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))], classes=[A]),
    "all-devices-some-allocated": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1)],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), dev(DEVICE2))],
    ),
    "all-devices-some-allocated-admin-access": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A, adminAccess=True))],
        allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1)],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), dev(DEVICE2))],
        expect=[
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1, True),
                result(REQ0, DRIVER_A, POOL1, DEVICE2, True),
            )
        ],
    ),
    "all-devices-some-allocating-admin-access": Case(
        claims=[
            claim(
                CLAIM0, request(REQ0, CLASS_A, adminAccess=True), all_request(REQ1, CLASS_A, adminAccess=True)
            )
        ],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), dev(DEVICE2))],
    ),
    "count-devices-some-allocated-admin-access": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2, adminAccess=True))],
        allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1)],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), dev(DEVICE2))],
        expect=[
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1, True),
                result(REQ0, DRIVER_A, POOL1, DEVICE2, True),
            )
        ],
    ),
    "separate-claims-share-device-admin-access": Case(
        claims=[
            claim(CLAIM0, request(REQ0, CLASS_A, adminAccess=True)),
            claim(CLAIM1, request(REQ0, CLASS_A, adminAccess=True)),
        ],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), dev(DEVICE2))],
        expect=[
            allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1, True)),
            allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1, True)),
        ],
    ),
    "admin-access-claims-device-allocating-for-non-admin-access": Case(
        claims=[
            claim(CLAIM0, request(REQ0, CLASS_A)),
            claim(CLAIM1, request(REQ0, CLASS_A, adminAccess=True)),
        ],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), dev(DEVICE2))],
        expect=[
            allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1)),
            allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1, True)),
        ],
    ),
    "all-devices-slice-without-devices-prioritized-list": Case(
        claims=[claim(CLAIM0, prioritized(REQ0, sub(SUB0, CLASS_A, mode="All"), sub(SUB1, CLASS_B)))],
        classes=[A, B],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A), one_device_slice(SLICE2, NODE1, POOL2, DRIVER_B)],
        expect=[allocation(local_selector(NODE1), result(f"{REQ0}/{SUB1}", DRIVER_B, POOL2, DEVICE1))],
    ),
    "all-devices-no-slices-prioritized-list": Case(
        claims=[claim(CLAIM0, prioritized(REQ0, sub(SUB0, CLASS_A, mode="All"), sub(SUB1, CLASS_B)))],
        classes=[A, B],
        slices=[one_device_slice(SLICE2, NODE1, POOL2, DRIVER_B)],
        expect=[allocation(local_selector(NODE1), result(f"{REQ0}/{SUB1}", DRIVER_B, POOL2, DEVICE1))],
    ),
    "all-devices-some-allocated-prioritized-list": Case(
        claims=[claim(CLAIM0, prioritized(REQ0, sub(SUB0, CLASS_A, mode="All"), sub(SUB1, CLASS_B)))],
        allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1)],
        classes=[A, B],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), dev(DEVICE2)),
            one_device_slice(SLICE2, NODE1, POOL2, DRIVER_B),
        ],
        expect=[allocation(local_selector(NODE1), result(f"{REQ0}/{SUB1}", DRIVER_B, POOL2, DEVICE1))],
    ),
    "network-attached-device": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=[A],
        slices=[one_device_slice(SLICE1, label_selector("region", REGION1), POOL1, DRIVER_A)],
        expect=[allocation(label_selector("region", REGION1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
    ),
    "unsuccessful-allocation-network-attached-device": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=[A],
        slices=[one_device_slice(SLICE1, label_selector("region", REGION1), POOL1, DRIVER_A)],
        node=N2,
    ),
    "many-network-attached-devices": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 4))],
        classes=[A],
        slices=[
            one_device_slice(SLICE1, label_selector("region", REGION1), POOL1, DRIVER_A),
            one_device_slice(SLICE1, ALL, POOL2, DRIVER_A),
            one_device_slice(SLICE1, label_selector("planet", "earth"), POOL3, DRIVER_A),
            one_device_slice(SLICE1, local_selector(NODE1), POOL4, DRIVER_A),
        ],
        expect=[
            allocation(
                {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "region", "operator": "In", "values": [REGION1]},
                                {"key": "planet", "operator": "In", "values": ["earth"]},
                            ],
                            "matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE1]}],
                        }
                    ]
                },
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL2, DEVICE1),
                result(REQ0, DRIVER_A, POOL3, DEVICE1),
                result(REQ0, DRIVER_A, POOL4, DEVICE1),
            )
        ],
    ),
    "local-and-network-attached-devices": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))],
        classes=[A],
        slices=[
            one_device_slice(SLICE1, label_selector("region", REGION1), POOL1, DRIVER_A),
            one_device_slice(SLICE1, NODE1, POOL2, DRIVER_A),
        ],
        expect=[
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL2, DEVICE1),
            )
        ],
    ),
    "several-different-drivers": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A)), claim(CLAIM0, request(REQ0, CLASS_B))],
        classes=[A, B],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), dev(DEVICE2)),
            one_device_slice(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
        expect=[
            allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1)),
            allocation(local_selector(NODE1), result(REQ0, DRIVER_B, POOL1, DEVICE1)),
        ],
    ),
    "already-allocated-devices": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1), DeviceID(DRIVER_A, POOL1, DEVICE2)],
        classes=[A],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    "admin-access-enabled": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, adminAccess=True))],
        allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1), DeviceID(DRIVER_A, POOL1, DEVICE2)],
        classes=[A],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
        expect=[allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1, True))],
    ),
    "with-constraint": Case(
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A),
                request(REQ1, CLASS_A),
                constraints=[
                    match(INT_ATTRIBUTE),
                    match(VERSION_ATTRIBUTE),
                    match(STRING_ATTRIBUTE),
                    match(BOOL_ATTRIBUTE),
                ],
            )
        ],
        classes=[A],
        slices=[
            slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, None, ALL_FOUR), dev(DEVICE2, None, ALL_FOUR))
        ],
        expect=[
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ1, DRIVER_A, POOL1, DEVICE2),
            )
        ],
    ),
    "with-constraint-non-existent-attribute": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A), constraints=[match(NON_EXISTENT_ATTRIBUTE)])],
        classes=[A],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    "with-constraint-not-matching-int-attribute": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=[match(INT_ATTRIBUTE)])],
        classes=[A, B],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                dev(DEVICE1, None, _attrs(numa=1)),
                dev(DEVICE2, None, _attrs(numa=2)),
            )
        ],
    ),
    "with-constraint-not-matching-int-attribute-all-devices": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A), constraints=[match(INT_ATTRIBUTE)])],
        classes=[A, B],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                dev(DEVICE1, None, _attrs(numa=1)),
                dev(DEVICE2, None, _attrs(numa=2)),
            )
        ],
        error="claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 "
        "because a claim constraint would not be satisfied",
    ),
    "with-constraint-not-matching-string-attribute": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=[match(STRING_ATTRIBUTE)])],
        classes=[A, B],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                dev(DEVICE1, None, _attrs(stringAttribute="stringAttributeValue")),
                dev(DEVICE2, None, _attrs(stringAttribute="stringAttributeValue2")),
            )
        ],
    ),
    "with-constraint-not-matching-bool-attribute": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=[match(BOOL_ATTRIBUTE)])],
        classes=[A, B],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                dev(DEVICE1, None, _attrs(boolAttribute=True)),
                dev(DEVICE2, None, _attrs(boolAttribute=False)),
            )
        ],
    ),
    "with-constraint-not-matching-version-attribute": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=[match(VERSION_ATTRIBUTE)])],
        classes=[A, B],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                dev(DEVICE1, None, {"driverVersion": _version("1.0.0")}),
                dev(DEVICE2, None, {"driverVersion": _version("2.0.0")}),
            )
        ],
    ),
    "with-constraint-for-request": Case(
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A),
                request(REQ1, CLASS_A),
                constraints=[match(VERSION_ATTRIBUTE, REQ0)],
            )
        ],
        classes=[A, B],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                dev(DEVICE1, None, {"driverVersion": _version("1.0.0")}),
                dev(DEVICE2, None, {"driverVersion": _version("2.0.0")}),
            )
        ],
        expect=[
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ1, DRIVER_A, POOL1, DEVICE2),
            )
        ],
    ),
    "with-constraint-for-request-retry": Case(
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A),
                request(REQ1, CLASS_A),
                constraints=[match(VERSION_ATTRIBUTE, REQ0), match(STRING_ATTRIBUTE)],
            )
        ],
        classes=[A, B],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                dev(DEVICE1, None, {"driverVersion": _version("1.0.0"), **_attrs(stringAttribute="a")}),
                dev(DEVICE2, None, {"driverVersion": _version("2.0.0"), **_attrs(stringAttribute="b")}),
                dev(DEVICE3, None, {"driverVersion": _version("3.0.0"), **_attrs(stringAttribute="b")}),
            )
        ],
        expect=[
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE2),
                result(REQ1, DRIVER_A, POOL1, DEVICE3),
            )
        ],
    ),
    "with-class-device-config": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=[class_with_config(CLASS_A, DRIVER_A, "classAttribute")],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
        expect=[
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                config=[class_config(DRIVER_A, "classAttribute", REQ0)],
            )
        ],
    ),
    "with-class-device-config-with-multiple-request-and-configs": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A), request(REQ1, CLASS_A), request(REQ2, CLASS_B))],
        classes=[
            class_with_config(CLASS_A, DRIVER_A, "classAttribute-A"),
            class_with_config(CLASS_B, DRIVER_B, "classAttribute-B"),
        ],
        slices=[
            many_devices_slice(SLICE1, NODE1, POOL1, DRIVER_A, 2),
            one_device_slice(SLICE2, NODE1, POOL1, DRIVER_B),
        ],
        expect=[
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE0),
                result(REQ1, DRIVER_A, POOL1, DEVICE1),
                result(REQ2, DRIVER_B, POOL1, DEVICE1),
                config=[
                    class_config(DRIVER_A, "classAttribute-A", REQ0, REQ1),
                    class_config(DRIVER_B, "classAttribute-B", REQ2),
                ],
            )
        ],
    ),
    "claim-with-device-config": Case(
        claims=[
            claim(CLAIM0, request(REQ0, CLASS_A), config=[{"opaque": opaque(DRIVER_A, "deviceAttribute")}])
        ],
        classes=[A],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
        expect=[
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                config=[claim_config(DRIVER_A, "deviceAttribute")],
            )
        ],
    ),
    "unknown-selector": Case(
        claims=[
            claim(CLAIM0, {"name": REQ0, "exactly": {**request(REQ0, CLASS_A)["exactly"], "selectors": [{}]}})
        ],
        classes=[A],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="CEL expression empty (unsupported selector type?)",
    ),
    "unknown-allocation-mode": Case(
        claims=[
            claim(
                CLAIM0,
                {
                    "name": REQ0,
                    "exactly": {**request(REQ0, CLASS_A)["exactly"], "allocationMode": "future-mode"},
                },
            )
        ],
        classes=[A],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="unsupported count mode future-mode",
    ),
    "unknown-constraint": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A), constraints=[{}])],
        classes=[A],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="empty constraint (unsupported constraint type?)",
    ),
    "invalid-CEL-one-device": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, "noSuchVar"))],
        classes=[A],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="undeclared reference",
    ),
    "invalid-CEL-one-device-class": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=[device_class(CLASS_A, "noSuchVar")],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="undeclared reference",
    ),
    # The driver's name compared with a string literal that CEL's grammar refuses (a literal may not hold a
    # line break; CEL's blanks are not Python's): the class selects nothing, it fails to compile.
    "invalid-CEL-driver-literal-with-line-break": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=[device_class(CLASS_A, f'device.driver == "{DRIVER_A}\n"')],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="CEL compile error",
    ),
    "invalid-CEL-driver-after-vertical-tab": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=[device_class(CLASS_A, f'\vdevice.driver == "{DRIVER_A}"')],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="CEL compile error",
    ),
    "invalid-CEL-all-devices": Case(
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A, "noSuchVar"))],
        classes=[A],
        slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="undeclared reference",
    ),
    "too-many-devices-single-request": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 500))], classes=[A], error="exceeds the claim limit"
    ),
    "many-devices-okay": Case(claims=[claim(CLAIM0, request(REQ0, CLASS_A, MAX_RESULTS))], classes=[A]),
    "too-many-devices-total": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, MAX_RESULTS), request(REQ1, CLASS_A))],
        classes=[A],
        slices=[many_devices_slice(SLICE1, NODE1, POOL1, DRIVER_A, MAX_RESULTS + 1)],
        error="exceeds the claim limit",
    ),
    "all-devices-invalid-CEL": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 500))], classes=[A], error="exceeds the claim limit"
    ),
}


def _r(request: str, sub_request: str) -> str:
    return f"{request}/{sub_request}"


def _counter_pool_slices(
    *devices: Mapping[str, Any], sets: Sequence[Mapping[str, Any]], node_selection: Any = NODE1
):
    """Upstream's usual partitionable pool: slice-1 with the devices, slice-2 with the counter sets."""
    return [
        slice_(SLICE1, node_selection, POOL1, DRIVER_A, *devices, count=2),
        counter_slice(SLICE2, node_selection, POOL1, DRIVER_A, *sets, count=2),
    ]


def _from_counters(name: str, *consumptions: Mapping[str, Any], **fields: Any) -> dict[str, Any]:
    return dev(name, consumes=consumptions, from_counters=True, **fields)


def _type_is(value: str) -> str:
    return f'device.attributes["{DRIVER_A}"].type == "{value}"'


def _generation_is(value: str) -> str:
    return f'device.attributes["{DRIVER_A}"].generation == "{value}"'


_MEM4 = consumes(COUNTER_SET1, {"memory": "4Gi"})
_MEM6 = consumes(COUNTER_SET1, {"memory": "6Gi"})
_SET1_8GI = counter_set(COUNTER_SET1, {"memory": "8Gi"})
_SET1_18GI = counter_set(COUNTER_SET1, {"memory": "18Gi"})

CASES.update(
    {
        "prioritized-list-first-unavailable": Case(
            claims=[claim(CLAIM0, prioritized(REQ0, sub(SUB0, CLASS_B), sub(SUB1, CLASS_A)))],
            classes=[A, B],
            slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
            expect=[allocation(local_selector(NODE1), result(_r(REQ0, SUB1), DRIVER_A, POOL1, DEVICE1))],
        ),
        "prioritized-list-non-available": Case(
            claims=[claim(CLAIM0, prioritized(REQ0, sub(SUB0, CLASS_B, 2), sub(SUB1, CLASS_A, 2)))],
            classes=[A, B],
            slices=[
                one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A),
                one_device_slice(SLICE2, NODE1, POOL2, DRIVER_B),
            ],
        ),
        "prioritized-list-device-config": Case(
            claims=[
                claim(
                    CLAIM0,
                    prioritized(REQ0, sub(SUB0, CLASS_A), sub(SUB1, CLASS_B, 2)),
                    config=[
                        {"requests": [_r(REQ0, SUB0)], "opaque": opaque(DRIVER_A, "foo")},
                        {"requests": [_r(REQ0, SUB1)], "opaque": opaque(DRIVER_B, "bar")},
                    ],
                )
            ],
            classes=[A, B],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_B, dev(DEVICE1), dev(DEVICE2))],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(_r(REQ0, SUB1), DRIVER_B, POOL1, DEVICE1),
                    result(_r(REQ0, SUB1), DRIVER_B, POOL1, DEVICE2),
                    config=[claim_config(DRIVER_B, "bar", _r(REQ0, SUB1))],
                )
            ],
        ),
        "prioritized-list-class-config": Case(
            claims=[claim(CLAIM0, prioritized(REQ0, sub(SUB0, CLASS_A, 2), sub(SUB1, CLASS_B, 2)))],
            classes=[
                class_with_config(CLASS_A, DRIVER_A, "foo"),
                class_with_config(CLASS_B, DRIVER_B, "bar"),
            ],
            slices=[
                slice_(SLICE1, NODE1, POOL1, DRIVER_B, dev(DEVICE1), dev(DEVICE2)),
                slice_(SLICE2, NODE1, POOL2, DRIVER_A, dev(DEVICE3)),
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(_r(REQ0, SUB1), DRIVER_B, POOL1, DEVICE1),
                    result(_r(REQ0, SUB1), DRIVER_B, POOL1, DEVICE2),
                    config=[class_config(DRIVER_B, "bar", _r(REQ0, SUB1))],
                )
            ],
        ),
        "prioritized-list-subrequests-with-expressions": Case(
            claims=[
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 1, memory_at_least("1Gi")),
                    prioritized(
                        REQ1,
                        sub(SUB0, CLASS_A, 1, memory_at_least("4Gi")),
                        sub(SUB1, CLASS_A, 2, memory_at_least("2Gi")),
                    ),
                )
            ],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, {"memory": "2Gi"}),
                    dev(DEVICE2, {"memory": "2Gi"}),
                    dev(DEVICE3, {"memory": "1Gi"}),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE3),
                    result(_r(REQ1, SUB1), DRIVER_A, POOL1, DEVICE1),
                    result(_r(REQ1, SUB1), DRIVER_A, POOL1, DEVICE2),
                )
            ],
        ),
        "prioritized-list-subrequests-with-constraints-ref-parent-request": Case(
            claims=[
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 1, memory_at_least("8Gi")),
                    prioritized(
                        REQ1,
                        sub(SUB0, CLASS_A, 1, memory_at_least("2Gi")),
                        sub(SUB1, CLASS_A, 1, memory_at_least("1Gi")),
                    ),
                    constraints=[match(VERSION_ATTRIBUTE, REQ0, REQ1)],
                )
            ],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, {"memory": "8Gi"}, {"driverVersion": _version("1.0.0")}),
                ),
                slice_(
                    SLICE2,
                    NODE1,
                    POOL2,
                    DRIVER_A,
                    dev(DEVICE2, {"memory": "2Gi"}, {"driverVersion": _version("2.0.0")}),
                    dev(DEVICE3, {"memory": "1Gi"}, {"driverVersion": _version("1.0.0")}),
                ),
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE1),
                    result(_r(REQ1, SUB1), DRIVER_A, POOL2, DEVICE3),
                )
            ],
        ),
        "prioritized-list-subrequests-with-constraints-ref-sub-request": Case(
            claims=[
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 1, memory_at_least("8Gi")),
                    prioritized(
                        REQ1,
                        sub(SUB0, CLASS_A, 1, memory_at_least("2Gi")),
                        sub(SUB1, CLASS_A, 1, memory_at_least("1Gi")),
                    ),
                    constraints=[match(VERSION_ATTRIBUTE, REQ0, _r(REQ1, SUB0))],
                )
            ],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, {"memory": "8Gi"}, {"driverVersion": _version("1.0.0")}),
                ),
                slice_(
                    SLICE2,
                    NODE1,
                    POOL2,
                    DRIVER_A,
                    dev(DEVICE2, {"memory": "2Gi"}, {"driverVersion": _version("2.0.0")}),
                ),
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE1),
                    result(_r(REQ1, SUB1), DRIVER_A, POOL2, DEVICE2),
                )
            ],
        ),
        "prioritized-list-subrequests-with-allocation-mode-all": Case(
            claims=[claim(CLAIM0, prioritized(REQ0, sub(SUB0, CLASS_A, mode="All"), sub(SUB1, CLASS_A)))],
            classes=[A],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), dev(DEVICE2))],
            allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1)],
            expect=[allocation(local_selector(NODE1), result(_r(REQ0, SUB1), DRIVER_A, POOL1, DEVICE2))],
        ),
        "prioritized-list-allocation-mode-all-multiple-requests": Case(
            claims=[
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A),
                    prioritized(REQ1, sub(SUB0, CLASS_A, mode="All"), sub(SUB1, CLASS_A)),
                )
            ],
            classes=[A],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), dev(DEVICE2))],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE1),
                    result(_r(REQ1, SUB1), DRIVER_A, POOL1, DEVICE2),
                )
            ],
        ),
        "prioritized-list-multi-request": Case(
            claims=[
                claim(
                    CLAIM0,
                    request(REQ1, CLASS_A, 1, memory_at_least("8Gi")),
                    prioritized(
                        REQ0,
                        sub(SUB0, CLASS_A, 1, memory_at_least("8Gi")),
                        sub(SUB1, CLASS_A, 1, memory_at_least("4Gi")),
                    ),
                )
            ],
            classes=[A],
            slices=[
                slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, {"memory": "8Gi"})),
                slice_(SLICE2, NODE1, POOL2, DRIVER_A, dev(DEVICE2, {"memory": "4Gi"})),
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ1, DRIVER_A, POOL1, DEVICE1),
                    result(_r(REQ0, SUB1), DRIVER_A, POOL2, DEVICE2),
                )
            ],
        ),
        "prioritized-list-with-backtracking": Case(
            claims=[
                claim(
                    CLAIM0,
                    prioritized(
                        REQ0,
                        sub(SUB0, CLASS_A, 1, memory_at_least("8Gi")),
                        sub(SUB1, CLASS_A, 1, memory_at_least("4Gi")),
                    ),
                    request(REQ1, CLASS_A, 1, memory_at_least("8Gi")),
                )
            ],
            classes=[A],
            slices=[
                slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, {"memory": "8Gi"})),
                slice_(SLICE2, NODE1, POOL2, DRIVER_A, dev(DEVICE2, {"memory": "4Gi"})),
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(_r(REQ0, SUB1), DRIVER_A, POOL2, DEVICE2),
                    result(REQ1, DRIVER_A, POOL1, DEVICE1),
                )
            ],
        ),
        "prioritized-list-too-many-in-first-subrequest": Case(
            claims=[claim(CLAIM0, prioritized(REQ0, sub(SUB0, CLASS_B, 500), sub(SUB1, CLASS_A)))],
            classes=[A, B],
            slices=[one_device_slice(SLICE1, NODE1, POOL1, DRIVER_A)],
            expect=[allocation(local_selector(NODE1), result(_r(REQ0, SUB1), DRIVER_A, POOL1, DEVICE1))],
        ),
        "partitionable-devices-single-device": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=_counter_pool_slices(dev(DEVICE1, consumes=[_MEM4]), sets=[_SET1_8GI]),
            expect=[allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
        ),
        "partitionable-devices-prioritized-list": Case(
            claims=[
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A),
                    prioritized(
                        REQ1,
                        sub(SUB0, CLASS_A, 1, memory_at_least("6Gi")),
                        sub(SUB1, CLASS_A, 1, memory_at_least("4Gi")),
                    ),
                )
            ],
            classes=[A],
            slices=_counter_pool_slices(
                _from_counters(DEVICE1, _MEM4),
                _from_counters(DEVICE2, _MEM6),
                _from_counters(DEVICE3, _MEM4),
                sets=[_SET1_8GI],
            ),
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE1),
                    result(_r(REQ1, SUB1), DRIVER_A, POOL1, DEVICE3),
                )
            ],
        ),
        "partitionable-devices-multiple-devices": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A), request(REQ1, CLASS_A))],
            classes=[A],
            slices=_counter_pool_slices(
                _from_counters(DEVICE1, _MEM4),
                _from_counters(DEVICE2, _MEM6),
                _from_counters(DEVICE3, _MEM4),
                sets=[_SET1_8GI],
            ),
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE1),
                    result(REQ1, DRIVER_A, POOL1, DEVICE3),
                )
            ],
        ),
        "partitionable-devices-multiple-capacity-pools": Case(
            claims=[
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A),
                    prioritized(
                        REQ1,
                        sub(SUB0, CLASS_A, 1, memory_at_least("6Gi")),
                        sub(SUB1, CLASS_A, 1, memory_at_least("4Gi")),
                    ),
                )
            ],
            classes=[A],
            slices=_counter_pool_slices(
                _from_counters(DEVICE1, _MEM4, consumes(COUNTER_SET2, {"cpus": "4"})),
                _from_counters(DEVICE2, _MEM6, consumes(COUNTER_SET2, {"cpus": "6"})),
                _from_counters(DEVICE3, _MEM4, consumes(COUNTER_SET2, {"cpus": "4"})),
                sets=[_SET1_18GI, counter_set(COUNTER_SET2, {"cpus": "8"})],
            ),
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE1),
                    result(_r(REQ1, SUB1), DRIVER_A, POOL1, DEVICE3),
                )
            ],
        ),
        "partitionable-devices-multiple-counters": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A), request(REQ1, CLASS_A))],
            classes=[A],
            slices=_counter_pool_slices(
                _from_counters(
                    DEVICE1,
                    consumes(COUNTER_SET1, {"memory": "4Gi", "cpus": "6"}),
                    consumes(COUNTER_SET2, {"cpus": "4", "memory": "2Gi"}),
                ),
                _from_counters(
                    DEVICE2,
                    consumes(COUNTER_SET1, {"memory": "6Gi", "cpus": "4"}),
                    consumes(COUNTER_SET2, {"cpus": "6", "memory": "6Gi"}),
                ),
                _from_counters(
                    DEVICE3,
                    consumes(COUNTER_SET1, {"memory": "4Gi", "cpus": "4"}),
                    consumes(COUNTER_SET2, {"cpus": "4", "memory": "4Gi"}),
                ),
                sets=[
                    counter_set(COUNTER_SET1, {"cpus": "8", "memory": "18Gi"}),
                    counter_set(COUNTER_SET2, {"cpus": "12", "memory": "18Gi"}),
                ],
            ),
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE2),
                    result(REQ1, DRIVER_A, POOL1, DEVICE3),
                )
            ],
        ),
        "partitionable-devices-multiple-pools": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A), request(REQ1, CLASS_A))],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    _from_counters(DEVICE1, consumes(COUNTER_SET1, {"cpus": "6", "memory": "4Gi"})),
                    _from_counters(DEVICE2, consumes(COUNTER_SET1, {"cpus": "4", "memory": "6Gi"})),
                    _from_counters(DEVICE3, consumes(COUNTER_SET1, {"cpus": "4", "memory": "4Gi"})),
                    count=2,
                ),
                counter_slice(
                    SLICE2,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    counter_set(COUNTER_SET1, {"cpus": "8", "memory": "18Gi"}),
                    count=2,
                ),
                slice_(
                    SLICE3,
                    NODE1,
                    POOL2,
                    DRIVER_A,
                    _from_counters(DEVICE1, consumes(COUNTER_SET1, {"cpus": "6", "memory": "4Gi"})),
                    _from_counters(DEVICE2, consumes(COUNTER_SET1, {"cpus": "1", "memory": "7Gi"})),
                    _from_counters(DEVICE3, consumes(COUNTER_SET1, {"cpus": "1", "memory": "7Gi"})),
                    count=2,
                ),
                counter_slice(
                    SLICE4,
                    NODE1,
                    POOL2,
                    DRIVER_A,
                    counter_set(COUNTER_SET1, {"cpus": "8", "memory": "18Gi"}),
                    count=2,
                ),
            ],
            allocated=[
                DeviceID(DRIVER_A, POOL1, DEVICE2),
                DeviceID(DRIVER_A, POOL1, DEVICE3),
                DeviceID(DRIVER_A, POOL2, DEVICE1),
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL2, DEVICE2),
                    result(REQ1, DRIVER_A, POOL2, DEVICE3),
                )
            ],
        ),
        "partitionable-devices-unused-counters-in-counter-set": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))],
            classes=[A],
            slices=_counter_pool_slices(
                dev(DEVICE1, consumes=[consumes(COUNTER_SET1, {"memory": "5Gi"})]),
                dev(DEVICE2, consumes=[_MEM4]),
                dev(DEVICE3, consumes=[_MEM4]),
                sets=[counter_set(COUNTER_SET1, {"memory": "8Gi", "unused": "1Gi"})],
            ),
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE2),
                    result(REQ0, DRIVER_A, POOL1, DEVICE3),
                )
            ],
        ),
        "partitionable-devices-no-capacity-available": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    _from_counters(DEVICE1, _MEM4),
                    _from_counters(DEVICE2, consumes(COUNTER_SET1, {"memory": "16Gi"})),
                ),
                counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, _SET1_18GI),
            ],
            allocated=[DeviceID(DRIVER_A, POOL1, DEVICE2)],
        ),
        "partitionable-devices-overallocated-capacity-pool": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    _from_counters(DEVICE1, _MEM4),
                    _from_counters(DEVICE2, consumes(COUNTER_SET1, {"memory": "20Gi"})),
                ),
                counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, _SET1_18GI),
            ],
            allocated=[DeviceID(DRIVER_A, POOL1, DEVICE2)],
        ),
        "partitionable-devices-per-device-node-selection-nodename": Case(
            claims=[
                claim(
                    CLAIM0,
                    prioritized(
                        REQ0,
                        sub(SUB0, CLASS_A, 1, memory_at_least("6Gi")),
                        sub(SUB1, CLASS_A, 1, memory_at_least("4Gi")),
                    ),
                )
            ],
            classes=[A],
            slices=_counter_pool_slices(
                _from_counters(DEVICE1, _MEM4, node_selection=NODE1),
                _from_counters(DEVICE2, _MEM6, node_selection=NODE2),
                sets=[_SET1_18GI],
                node_selection=PER_DEVICE,
            ),
            expect=[allocation(local_selector(NODE1), result(_r(REQ0, SUB1), DRIVER_A, POOL1, DEVICE1))],
        ),
        "partitionable-devices-per-device-node-selection-node-selector": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=_counter_pool_slices(
                _from_counters(DEVICE1, _MEM4, node_selection=label_selector("region", REGION1)),
                sets=[_SET1_18GI],
                node_selection=PER_DEVICE,
            ),
            expect=[allocation(label_selector("region", REGION1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
        ),
        "partitionable-devices-per-device-node-selection-node-selector-multiple-devices": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, 3), request(REQ1, CLASS_B, 3))],
            classes=[A, B],
            slices=[
                *_counter_pool_slices(
                    _from_counters(DEVICE1, _MEM4, node_selection=label_selector("region", REGION1)),
                    _from_counters(DEVICE2, _MEM4, node_selection=NODE1),
                    _from_counters(DEVICE3, _MEM4, node_selection=ALL),
                    sets=[_SET1_18GI],
                    node_selection=PER_DEVICE,
                ),
                slice_(
                    SLICE3,
                    NODE1,
                    POOL2,
                    DRIVER_B,
                    *(
                        _from_counters(d, consumes(COUNTER_SET2, {"memory": "4Gi"}))
                        for d in (DEVICE1, DEVICE2, DEVICE3)
                    ),
                    count=2,
                ),
                counter_slice(
                    SLICE4, NODE1, POOL2, DRIVER_B, counter_set(COUNTER_SET2, {"memory": "12Gi"}), count=2
                ),
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE2),
                    result(REQ0, DRIVER_A, POOL1, DEVICE3),
                    result(REQ1, DRIVER_B, POOL2, DEVICE1),
                    result(REQ1, DRIVER_B, POOL2, DEVICE2),
                    result(REQ1, DRIVER_B, POOL2, DEVICE3),
                )
            ],
        ),
        "tainted-two-devices": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, taints=[TAINT_NO_SCHEDULE]),
                    dev(DEVICE2, taints=[TAINT_NO_EXECUTE]),
                )
            ],
        ),
        "tainted-one-device-two-taints": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=[
                slice_(
                    SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, taints=[TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE])
                )
            ],
        ),
        "tainted-two-devices-tolerated": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, tolerations=[TOLERATION_NO_EXECUTE]))],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, taints=[TAINT_NO_SCHEDULE]),
                    dev(DEVICE2, taints=[TAINT_NO_EXECUTE]),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE2, False, TOLERATION_NO_EXECUTE),
                )
            ],
        ),
        "tainted-two-devices-prioritized-list-tolerated": Case(
            claims=[
                claim(
                    CLAIM0,
                    prioritized(
                        REQ0, sub(SUB0, CLASS_A), sub(SUB1, CLASS_A, tolerations=[TOLERATION_NO_EXECUTE])
                    ),
                )
            ],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, taints=[TAINT_NO_SCHEDULE]),
                    dev(DEVICE2, taints=[TAINT_NO_EXECUTE]),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(_r(REQ0, SUB1), DRIVER_A, POOL1, DEVICE2, False, TOLERATION_NO_EXECUTE),
                )
            ],
        ),
        "tainted-no-effect": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, taints=[TAINT_NONE]))],
            expect=[allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
        ),
        "tainted-one-device-two-taints-both-tolerated": Case(
            claims=[
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, tolerations=[TOLERATION_NO_SCHEDULE, TOLERATION_NO_EXECUTE]),
                )
            ],
            classes=[A],
            slices=[
                slice_(
                    SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, taints=[TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE])
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(
                        REQ0, DRIVER_A, POOL1, DEVICE1, False, TOLERATION_NO_SCHEDULE, TOLERATION_NO_EXECUTE
                    ),
                )
            ],
        ),
        "tainted-prioritized-list": Case(
            claims=[claim(CLAIM0, prioritized(REQ0, sub(SUB0, CLASS_B), sub(SUB1, CLASS_A)))],
            classes=[A, B],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, taints=[TAINT_NO_SCHEDULE]))],
        ),
        "tainted-admin-access": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, adminAccess=True))],
            allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1), DeviceID(DRIVER_A, POOL1, DEVICE2)],
            classes=[A],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, taints=[TAINT_NO_SCHEDULE]))],
        ),
        "tainted-all-devices-single": Case(
            claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
            classes=[A],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, taints=[TAINT_NO_SCHEDULE]))],
        ),
        "prioritized-list-allocation-mode-all": Case(
            claims=[claim(CLAIM0, prioritized(REQ0, sub(SUB0, CLASS_A, mode="All"), sub(SUB1, CLASS_A)))],
            classes=[A],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), dev(DEVICE2))],
            allocated=[DeviceID(DRIVER_A, POOL1, DEVICE2)],
            expect=[allocation(local_selector(NODE1), result(_r(REQ0, SUB1), DRIVER_A, POOL1, DEVICE1))],
        ),
        "prioritized-list-allocation-mode-all-with-selectors": Case(
            claims=[
                claim(
                    CLAIM0,
                    prioritized(
                        REQ0,
                        sub(SUB0, CLASS_A, 0, _generation_is("v6"), mode="All"),
                        sub(SUB1, CLASS_A, 0, _generation_is("v5"), mode="All"),
                    ),
                )
            ],
            classes=[A],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, None, _attrs(generation="v5")))],
            expect=[allocation(local_selector(NODE1), result(_r(REQ0, SUB1), DRIVER_A, POOL1, DEVICE1))],
        ),
        "prioritized-list-allocation-mode-all-with-selectors-multiple-pools": Case(
            claims=[
                claim(
                    CLAIM0,
                    prioritized(
                        REQ0,
                        sub(SUB0, CLASS_A, 0, _generation_is("v6"), mode="All"),
                        sub(SUB1, CLASS_A, 0, _generation_is("v5"), mode="All"),
                    ),
                )
            ],
            classes=[A],
            slices=[
                slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, None, _attrs(generation="v5"))),
                slice_(SLICE2, NODE1, POOL2, DRIVER_A, dev(DEVICE1, None, _attrs(generation="v5"))),
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(_r(REQ0, SUB1), DRIVER_A, POOL1, DEVICE1),
                    result(_r(REQ0, SUB1), DRIVER_A, POOL2, DEVICE1),
                )
            ],
        ),
        "prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes": Case(
            claims=[
                claim(
                    CLAIM0,
                    prioritized(
                        REQ0,
                        sub(SUB0, CLASS_A, 0, _generation_is("v6"), mode="All"),
                        sub(SUB1, CLASS_A, 0, _generation_is("v5"), mode="All"),
                    ),
                )
            ],
            classes=[A],
            slices=[
                slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, None, _attrs(generation="v5"))),
                slice_(
                    SLICE2,
                    NODE2,
                    POOL2,
                    DRIVER_A,
                    dev(DEVICE1, None, _attrs(generation="v5")),
                    dev(DEVICE2, None, _attrs(generation="v6")),
                ),
            ],
            expect=[allocation(local_selector(NODE1), result(_r(REQ0, SUB1), DRIVER_A, POOL1, DEVICE1))],
        ),
        "prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset": Case(
            claims=[
                claim(
                    CLAIM0,
                    prioritized(
                        REQ0,
                        sub(SUB0, CLASS_A, 0, _generation_is("v6"), mode="All"),
                        sub(SUB1, CLASS_A, 0, _generation_is("v5"), mode="All"),
                    ),
                )
            ],
            classes=[
                device_class(
                    CLASS_A, f'device.driver == "{DRIVER_A}" && device.attributes["{DRIVER_A}"].selected'
                )
            ],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, None, _attrs(generation="v6", selected=False)),
                    dev(DEVICE2, None, _attrs(generation="v5", selected=False)),
                    dev(DEVICE3, None, _attrs(generation="v5", selected=True)),
                )
            ],
            expect=[allocation(local_selector(NODE1), result(_r(REQ0, SUB1), DRIVER_A, POOL1, DEVICE3))],
        ),
        "max-number-devices": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, MAX_RESULTS))],
            classes=[A],
            slices=[many_devices_slice(SLICE1, NODE1, POOL1, DRIVER_A, MAX_RESULTS)],
            expect=[
                allocation(
                    local_selector(NODE1),
                    *(result(REQ0, DRIVER_A, POOL1, f"device-{i}") for i in range(MAX_RESULTS)),
                )
            ],
        ),
        "partitionable-devices-with-attribute-selector": Case(
            claims=[
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 2),
                    request(REQ1, CLASS_A, 1, f'device.attributes["{DRIVER_A}"].special'),
                )
            ],
            classes=[A],
            slices=_counter_pool_slices(
                *(
                    dev(
                        name,
                        None,
                        _attrs(special=special),
                        consumes=[
                            consumes(COUNTER_SET1, {cpu: "1"}),
                            consumes(COUNTER_SET2, {"mem": "10Gi"}),
                        ],
                    )
                    for name, special, cpu in (
                        (DEVICE1, True, "cpu1"),
                        (DEVICE2, False, "cpu2"),
                        (DEVICE3, False, "cpu3"),
                    )
                ),
                sets=[
                    counter_set(COUNTER_SET1, {"cpu1": "1", "cpu2": "1", "cpu3": "1"}),
                    counter_set(COUNTER_SET2, {"mem": "30Gi"}),
                ],
            ),
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE2),
                    result(REQ0, DRIVER_A, POOL1, DEVICE3),
                    result(REQ1, DRIVER_A, POOL1, DEVICE1),
                )
            ],
        ),
        "prioritized-list-max-allocation-limit-request": Case(
            claims=[
                claim(
                    CLAIM0,
                    prioritized(REQ0, sub(SUB0, CLASS_A, MAX_RESULTS), sub(SUB1, CLASS_A, MAX_RESULTS // 2)),
                    prioritized(REQ1, sub(SUB0, CLASS_A, MAX_RESULTS), sub(SUB1, CLASS_A, MAX_RESULTS // 2)),
                )
            ],
            classes=[A],
            slices=[many_devices_slice(SLICE1, NODE1, POOL1, DRIVER_A, MAX_RESULTS * 2)],
            expect=[
                allocation(
                    local_selector(NODE1),
                    *(
                        result(_r(REQ0, SUB1), DRIVER_A, POOL1, f"device-{i}")
                        for i in range(MAX_RESULTS // 2)
                    ),
                    *(
                        result(_r(REQ1, SUB1), DRIVER_A, POOL1, f"device-{i}")
                        for i in range(MAX_RESULTS // 2, MAX_RESULTS)
                    ),
                )
            ],
        ),
        "prioritized-list-max-allocation-allocation-mode-all": Case(
            claims=[
                claim(
                    CLAIM0,
                    prioritized(REQ0, sub(SUB0, CLASS_A, mode="All"), sub(SUB1, CLASS_A, 2)),
                    request(REQ1, CLASS_B, 2),
                )
            ],
            classes=[A, B],
            slices=[
                many_devices_slice(SLICE1, NODE1, POOL1, DRIVER_A, MAX_RESULTS - 1),
                many_devices_slice(SLICE2, NODE1, POOL2, DRIVER_B, 2),
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(_r(REQ0, SUB1), DRIVER_A, POOL1, "device-0"),
                    result(_r(REQ0, SUB1), DRIVER_A, POOL1, "device-1"),
                    result(REQ1, DRIVER_B, POOL2, "device-0"),
                    result(REQ1, DRIVER_B, POOL2, "device-1"),
                )
            ],
        ),
    }
)


def _prepare(name: str, failure: str) -> tuple[list[str], list[str]]:
    return ([name], [failure])


def _range4(**more: Any) -> dict[str, Any]:
    return {"multiple": True, "policy_range": {CAPACITY0: "4"}, **more}


def _list_case(
    constraint: Mapping[str, Any], count: int, *attributes: Mapping[str, Any], expect=None, error=""
):
    """A list-attribute constraint case: one request for ``count`` devices with these attributes."""
    devices = [dev(f"device-{i + 1}", None, attrs) for i, attrs in enumerate(attributes)]
    return Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, count), constraints=[constraint])],
        classes=[A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, *devices)],
        expect=expect,
        error=error,
    )


def _two(*devices: str) -> list[Expected]:
    return [allocation(local_selector(NODE1), *(result(REQ0, DRIVER_A, POOL1, d) for d in devices))]


def _strings(*values: str) -> dict[str, Any]:
    return {"stringAttribute": {"strings": list(values)}}


_STRING = {"stringAttribute": {"string": "value1"}}


def _multi_host(
    node1_generation: int, node2_generation: int, node2_slices: int, node1_first: bool
) -> list[Any]:
    node1 = [
        slice_(
            SLICE1 if node1_first else SLICE2,
            NODE1,
            POOL1,
            DRIVER_A,
            dev(d),
            count=2,
            generation=node1_generation,
        )
        for d in (DEVICE1, DEVICE2)
    ]
    node2 = [
        slice_(
            SLICE2 if node1_first else SLICE1,
            NODE2,
            POOL1,
            DRIVER_A,
            dev(d),
            count=2,
            generation=node2_generation,
        )
        for d in (DEVICE1, DEVICE2)[:node2_slices]
    ]
    return node1 + node2 if node1_first else node2 + node1


CASES.update(
    {
        "device-binding-conditions": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, binding=_prepare("IsPrepare", "BindingFailed")),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE1, binding=_prepare("IsPrepare", "BindingFailed")),
                    ordered=True,
                )
            ],
        ),
        "binding-conditions-multiple-devices": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), request(REQ1, CLASS_A))],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, binding=_prepare("IsPrepare", "BindingFailed")),
                    dev(DEVICE2, binding=_prepare("IsPrepare2", "BindingFailed2")),
                    dev(DEVICE3, binding=_prepare("IsPrepare3", "BindingFailed3")),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE1, binding=_prepare("IsPrepare", "BindingFailed")),
                    result(REQ0, DRIVER_A, POOL1, DEVICE2, binding=_prepare("IsPrepare2", "BindingFailed2")),
                    result(REQ1, DRIVER_A, POOL1, DEVICE3, binding=_prepare("IsPrepare3", "BindingFailed3")),
                    ordered=True,
                )
            ],
        ),
        "binding-conditions-with-and-without": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A), request(REQ1, CLASS_A))],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1),
                    dev(DEVICE2, binding=_prepare("IsPrepare", "BindingFailed")),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE1),
                    result(REQ1, DRIVER_A, POOL1, DEVICE2, binding=_prepare("IsPrepare", "BindingFailed")),
                    ordered=True,
                )
            ],
        ),
        "node-restriction": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    label_selector("planet", "earth"),
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, binds_to_node=True),
                )
            ],
            expect=[allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
        ),
        "partitionable-devices-with-binding-conditions": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=_counter_pool_slices(
                _from_counters(DEVICE1, _MEM4, binding=_prepare("IsPrepare", "BindingFailed")),
                sets=[_SET1_8GI],
            ),
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE1, binding=_prepare("IsPrepare", "BindingFailed")),
                    ordered=True,
                )
            ],
        ),
        "partitionable-devices-with-binding-conditions-multiple": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))],
            classes=[A],
            slices=_counter_pool_slices(
                _from_counters(DEVICE1, _MEM4, binding=_prepare("IsPrepare", "BindingFailed")),
                _from_counters(DEVICE2, _MEM4, binding=_prepare("IsPrepare2", "BindingFailed2")),
                sets=[_SET1_8GI],
            ),
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE1, binding=_prepare("IsPrepare", "BindingFailed")),
                    result(REQ0, DRIVER_A, POOL1, DEVICE2, binding=_prepare("IsPrepare2", "BindingFailed2")),
                    ordered=True,
                )
            ],
        ),
        "partitionable-devices-with-binding-conditions-some-devices-no-conditions": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, 3))],
            classes=[A],
            slices=_counter_pool_slices(
                _from_counters(
                    DEVICE1,
                    consumes(COUNTER_SET1, {"memory": "2Gi"}),
                    binding=_prepare("IsPrepare", "BindingFailed"),
                ),
                _from_counters(DEVICE2, consumes(COUNTER_SET1, {"memory": "2Gi"})),
                _from_counters(DEVICE3, _MEM4, binding=_prepare("IsReady", "BindingTimeout")),
                sets=[_SET1_8GI],
            ),
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE1, binding=_prepare("IsPrepare", "BindingFailed")),
                    result(REQ0, DRIVER_A, POOL1, DEVICE2),
                    result(REQ0, DRIVER_A, POOL1, DEVICE3, binding=_prepare("IsReady", "BindingTimeout")),
                    ordered=True,
                )
            ],
        ),
        "partitionable-devices-with-binding-conditions-multi-slices": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))],
            classes=[A],
            slices=[
                slice_(
                    SLICE4,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    _from_counters(DEVICE1, _MEM4, binding=_prepare("IsPrepare", "BindingFailed")),
                    count=4,
                ),
                counter_slice(SLICE3, NODE1, POOL1, DRIVER_A, _SET1_8GI, count=4),
                slice_(
                    SLICE2,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    _from_counters(DEVICE2, consumes(COUNTER_SET2, {"memory": "4Gi"})),
                    count=4,
                ),
                counter_slice(
                    SLICE1, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET2, {"memory": "8Gi"}), count=4
                ),
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ0, DRIVER_A, POOL1, DEVICE2),
                    result(REQ0, DRIVER_A, POOL1, DEVICE1, binding=_prepare("IsPrepare", "BindingFailed")),
                    ordered=True,
                )
            ],
        ),
        "partitionable-devices-with-binding-conditions-and-taints": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    _from_counters(
                        DEVICE1,
                        _MEM4,
                        binding=_prepare("IsPrepare", "BindingFailed"),
                        taints=[{"key": "key1", "value": "value1", "effect": "NoSchedule"}],
                    ),
                    _from_counters(DEVICE2, _MEM4),
                ),
                counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, _SET1_8GI),
            ],
        ),
        "partitionable-devices-with-binding-conditions-and-taints-tolerated": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2, tolerations=[TOLERATION_NO_SCHEDULE_KEY1]))],
            classes=[A],
            slices=_counter_pool_slices(
                _from_counters(
                    DEVICE1,
                    _MEM4,
                    binding=_prepare("IsPrepare", "BindingFailed"),
                    taints=[{"key": "key1", "value": "value1", "effect": "NoSchedule"}],
                ),
                _from_counters(DEVICE2, _MEM4),
                sets=[_SET1_8GI],
            ),
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(
                        REQ0,
                        DRIVER_A,
                        POOL1,
                        DEVICE1,
                        False,
                        TOLERATION_NO_SCHEDULE_KEY1,
                        binding=_prepare("IsPrepare", "BindingFailed"),
                    ),
                    result(REQ0, DRIVER_A, POOL1, DEVICE2, False, TOLERATION_NO_SCHEDULE_KEY1),
                    ordered=True,
                )
            ],
        ),
        "consumable-capacity-multi-allocatable-device-with-missing-capacity-request": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity("1")))],
            classes=[A],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, {CAPACITY1: "1"}, multiple=True))],
        ),
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request": Case(  # noqa: E501 (upstream's name)
            claims=[claim(CLAIM0, all_request(REQ0, CLASS_A, capacity=capacity("1")))],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, {CAPACITY1: "1"}, multiple=True))],
        ),
        "consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_A))],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, multiple=True))],
            expect=[
                allocation(local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE1)),
                allocation(local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE1)),
            ],
        ),
        "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_A))],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, {CAPACITY0: "1"}, multiple=True),
                    dev(DEVICE2, {CAPACITY0: "1"}, multiple=True),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "1"})
                ),
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE2, {CAPACITY0: "1"})
                ),
            ],
        ),
        "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_A))],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, {CAPACITY0: "2"}, multiple=True))],
        ),
        "consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request": Case(
            claims=[
                claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity("1"))),
                claim(CLAIM1, request(REQ0, CLASS_A, capacity=capacity("1"))),
            ],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, {CAPACITY0: "2"}, multiple=True))],
            expect=[
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "1"})
                ),
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "1"})
                ),
            ],
        ),
        "consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_A))],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, **_range4()))],
            expect=[
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"})
                ),
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"})
                ),
            ],
        ),
        "consumable-capacity-multi-allocatable-device-with-zero-request-policy": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_A))],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, multiple=True, policy_values=("0", {CAPACITY0: "1"}, ())),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "0"})
                ),
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "0"})
                ),
            ],
        ),
        "consumable-capacity-multi-allocatable-device-violates-zero-request-policy": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity("1")))],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, multiple=True, policy_values=("0", {CAPACITY0: "1"}, ())),
                )
            ],
        ),
        "consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request": Case(
            claims=[
                claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity("1"))),
                claim(CLAIM1, request(REQ0, CLASS_A, capacity=capacity("1"))),
            ],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, **_range4()))],
            expect=[
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"})
                ),
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"})
                ),
            ],
        ),
        "consumable-capacity-multi-allocatable-device-with-range-policy-step": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity("3")))],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, **_range4()))],
            expect=[
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "4"})
                )
            ],
        ),
        "consumable-capacity-multi-allocatable-device-with-valid-values-policy": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity("2")))],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, multiple=True, policy_values=("1", {CAPACITY0: "4"}, ["2"])),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"})
                )
            ],
        ),
        "consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity("2")))],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, multiple=True, policy_values=("1", {CAPACITY0: "3"}, ["3"])),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "3"})
                )
            ],
        ),
        "consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request": Case(
            claims=[
                claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity("1"))),
                claim(CLAIM1, request(REQ0, CLASS_A, capacity=capacity("2"))),
            ],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[
                slice_(
                    SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, multiple=True, policy_range={CAPACITY0: "2"})
                )
            ],
        ),
        "consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity("6")))],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, multiple=True, policy_range={CAPACITY0: "10"}),
                )
            ],
        ),
        "consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity("2")))],
            allocated_capacity={DeviceID(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: "2"}},
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, **_range4()))],
            expect=[
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"})
                )
            ],
        ),
        "consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity("2")))],
            allocated_capacity={DeviceID(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: "2"}},
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, multiple=True, policy_range={CAPACITY0: "2"}),
                    dev(DEVICE2, multiple=True, policy_range={CAPACITY0: "2"}),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE2, {CAPACITY0: "2"})
                )
            ],
        ),
        "consumable-capacity-with-multi-allocatable-device-backtrack": Case(
            claims=[
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, capacity=capacity("2")),
                    request(REQ1, CLASS_A, capacity=capacity("2")),
                    constraints=[match(STRING_ATTRIBUTE)],
                ),
                claim(CLAIM1, request(REQ0, CLASS_A, capacity=capacity("2"))),
            ],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(
                        DEVICE2,
                        None,
                        _attrs(stringAttribute="stringAttributeValue1"),
                        multiple=True,
                        policy_range={CAPACITY0: "2"},
                    ),
                    dev(DEVICE1, None, _attrs(stringAttribute="stringAttributeValue2"), **_range4()),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}),
                    shared_result(REQ1, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}),
                ),
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE2, {CAPACITY0: "2"})
                ),
            ],
        ),
        "consumable-capacity-multi-allocatable-device-with-subrequest": Case(
            claims=[
                claim(
                    CLAIM0,
                    prioritized(
                        REQ0,
                        sub(SUB0, CLASS_A, capacity=capacity("4")),
                        sub(SUB1, CLASS_A, capacity=capacity("2")),
                        sub(SUB1, CLASS_A),
                    ),
                )
            ],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[
                slice_(
                    SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, multiple=True, policy_range={CAPACITY0: "2"})
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    shared_result(_r(REQ0, SUB1), DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}),
                )
            ],
        ),
        "consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity("2")))],
            allocated_capacity={DeviceID(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: "2"}},
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[
                slice_(
                    SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, multiple=True, policy_range={CAPACITY0: "2"})
                )
            ],
        ),
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity": Case(
            claims=[claim(CLAIM0, all_request(REQ0, CLASS_A, capacity=capacity("2")))],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, {CAPACITY0: "2"}, multiple=True),
                    dev(DEVICE2, multiple=True),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"})
                )
            ],
        ),
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity": Case(  # noqa: E501 (upstream's name)
            claims=[claim(CLAIM0, all_request(REQ0, CLASS_A, capacity=capacity("2")))],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, {CAPACITY0: "2"}, multiple=True),
                    dev(DEVICE2, {CAPACITY0: "1"}, multiple=True),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"})
                )
            ],
        ),
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient": Case(
            claims=[
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, capacity=capacity("1")),
                    all_request(REQ1, CLASS_A, capacity=capacity("1")),
                )
            ],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, {CAPACITY0: "2"}, multiple=True),
                    dev(DEVICE2, {CAPACITY0: "1"}, multiple=True),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "1"}),
                    shared_result(REQ1, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "1"}),
                    shared_result(REQ1, DRIVER_A, POOL1, DEVICE2, {CAPACITY0: "1"}),
                )
            ],
        ),
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient": Case(
            allocated_capacity={DeviceID(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: "1"}},
            claims=[claim(CLAIM0, all_request(REQ0, CLASS_A, capacity=capacity("1")))],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, {CAPACITY0: "2"}, multiple=True),
                    dev(DEVICE2, {CAPACITY0: "1"}, multiple=True),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "1"}),
                    shared_result(REQ0, DRIVER_A, POOL1, DEVICE2, {CAPACITY0: "1"}),
                )
            ],
        ),
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient": Case(
            claims=[
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, capacity=capacity("1")),
                    all_request(REQ1, CLASS_A, capacity=capacity("1")),
                )
            ],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, {CAPACITY0: "1"}, multiple=True),
                    dev(DEVICE2, {CAPACITY0: "1"}, multiple=True),
                )
            ],
        ),
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient": Case(
            allocated_capacity={DeviceID(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: "1"}},
            claims=[claim(CLAIM0, all_request(REQ0, CLASS_A, capacity=capacity("1")))],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, {CAPACITY0: "1"}, multiple=True),
                    dev(DEVICE2, {CAPACITY0: "1"}, multiple=True),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1), shared_result(REQ0, DRIVER_A, POOL1, DEVICE2, {CAPACITY0: "1"})
                )
            ],
        ),
        "consumable-capacity-dedicated-device-with-consumable-capacity-request": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity("1")))],
            classes=[class_multi(CLASS_A, DRIVER_A, False)],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, {CAPACITY0: "1"}))],
            expect=[allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
        ),
        "consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request": Case(
            claims=[
                claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity("1"))),
                claim(CLAIM1, request(REQ0, CLASS_A, capacity=capacity("1"))),
            ],
            classes=[class_multi(CLASS_A, DRIVER_A, False)],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, policy_range={CAPACITY0: "2"}))],
        ),
        "allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity("1")))],
            classes=[class_multi(CLASS_A, DRIVER_A, False)],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, {CAPACITY0: "1"}, multiple=True))],
        ),
        "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated": Case(
            allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1)],
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity("1")))],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[
                slice_(
                    SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, multiple=True, policy_range={CAPACITY0: "2"})
                )
            ],
        ),
        "allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity("1")))],
            allocated_capacity={DeviceID(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: "1"}},
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, policy_range={CAPACITY0: "2"}))],
        ),
        "allow-multiple-allocations-with-partitionable-device": Case(
            claims=[
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A),
                    prioritized(
                        REQ1,
                        sub(SUB0, CLASS_A, 1, memory_at_least("6Gi")),
                        sub(SUB1, CLASS_A, 1, memory_at_least("4Gi")),
                    ),
                )
            ],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=_counter_pool_slices(
                _from_counters(DEVICE1, _MEM4, multiple=True),
                _from_counters(DEVICE2, _MEM6, multiple=True),
                _from_counters(DEVICE3, _MEM4, multiple=True),
                sets=[_SET1_8GI],
            ),
            expect=[
                allocation(
                    local_selector(NODE1),
                    shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {"memory": "4Gi"}),
                    shared_result(_r(REQ1, SUB1), DRIVER_A, POOL1, DEVICE3, {"memory": "4Gi"}),
                )
            ],
        ),
        "consumable-capacity-with-partitionable-device-multiple-capacity-pools": Case(
            claims=[
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, capacity=capacity("1")),
                    request(REQ2, CLASS_A, capacity=capacity("2")),
                    prioritized(
                        REQ1,
                        sub(
                            SUB0,
                            CLASS_A,
                            1,
                            f'device.capacity["{DRIVER_A}"]["{CAPACITY0}"].compareTo(quantity("4")) >= 0',
                            capacity=capacity("1"),
                        ),
                        sub(
                            SUB1,
                            CLASS_A,
                            1,
                            f'device.capacity["{DRIVER_A}"]["{CAPACITY0}"].compareTo(quantity("2")) >= 0',
                            capacity=capacity("1"),
                        ),
                    ),
                )
            ],
            classes=[A],
            slices=_counter_pool_slices(
                *(
                    _from_counters(
                        name,
                        consumes(COUNTER_SET1, {CAPACITY0: cap0}),
                        consumes(COUNTER_SET2, {CAPACITY1: "4"}),
                        multiple=True,
                        policy_range={CAPACITY1: "4"},
                    )
                    for name, cap0 in ((DEVICE1, "2"), (DEVICE2, "4"), (DEVICE3, "2"))
                ),
                sets=[
                    counter_set(COUNTER_SET1, {CAPACITY0: "4"}),
                    counter_set(COUNTER_SET2, {CAPACITY1: "8"}),
                ],
            ),
            expect=[
                allocation(
                    local_selector(NODE1),
                    shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "1", CAPACITY1: "2"}),
                    shared_result(REQ2, DRIVER_A, POOL1, DEVICE3, {CAPACITY0: "2", CAPACITY1: "2"}),
                    shared_result(_r(REQ1, SUB1), DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "1", CAPACITY1: "2"}),
                )
            ],
        ),
        "with-distinct-constraints": Case(
            claims=[
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A),
                    request(REQ1, CLASS_A),
                    request(REQ2, CLASS_A),
                    request(REQ3, CLASS_A),
                    constraints=[
                        distinct(BOOL_ATTRIBUTE, REQ0, REQ1),
                        distinct(VERSION_ATTRIBUTE, REQ0, REQ1, REQ2),
                        distinct(INT_ATTRIBUTE, REQ0, REQ1, REQ2, REQ3),
                    ],
                )
            ],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    *(
                        dev(
                            name,
                            None,
                            {"driverVersion": _version(version), **_attrs(numa=numa, boolAttribute=flag)},
                            multiple=True,
                        )
                        for name, version, numa, flag in (
                            (DEVICE1, "1.0.0", 0, True),
                            (DEVICE2, "1.0.1", 1, False),
                            (DEVICE3, "1.0.2", 2, True),
                            (DEVICE4, "1.0.0", 3, True),
                        )
                    ),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    shared_result(REQ0, DRIVER_A, POOL1, DEVICE1),
                    shared_result(REQ1, DRIVER_A, POOL1, DEVICE2),
                    shared_result(REQ2, DRIVER_A, POOL1, DEVICE3),
                    shared_result(REQ3, DRIVER_A, POOL1, DEVICE4),
                )
            ],
        ),
        "with-distinct-constraints-attribute-not-set": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A), constraints=[distinct(BOOL_ATTRIBUTE, REQ0)])],
            classes=[A],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, multiple=True))],
        ),
        "with-distinct-constraints-unknown-type-attribute": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A), constraints=[distinct(BOOL_ATTRIBUTE, REQ0)])],
            classes=[A],
            slices=[
                slice_(
                    SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, None, {"boolAttribute": {}}, multiple=True)
                )
            ],
            error="unsupported attribute value",
        ),
        "with-distinct-constraints-with-subrequests": Case(
            claims=[
                claim(
                    CLAIM0,
                    *(
                        prioritized(
                            name,
                            sub(SUB0, CLASS_A, 1, f'device.attributes["{DRIVER_A}"].boolAttribute'),
                            sub(SUB1, CLASS_A),
                        )
                        for name in (REQ0, REQ1, REQ2)
                    ),
                    constraints=[distinct(BOOL_ATTRIBUTE, REQ0, REQ1)],
                )
            ],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, None, _attrs(boolAttribute=True), multiple=True),
                    dev(DEVICE2, None, _attrs(boolAttribute=False), multiple=True),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    shared_result(_r(REQ0, SUB0), DRIVER_A, POOL1, DEVICE1),
                    shared_result(_r(REQ1, SUB1), DRIVER_A, POOL1, DEVICE2),
                    shared_result(_r(REQ2, SUB0), DRIVER_A, POOL1, DEVICE1),
                )
            ],
        ),
        "distinct-constraint-one-multi-allocatable-device-with-distinct-constraint": Case(
            claims=[
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, capacity=capacity("1")),
                    request(REQ1, CLASS_A, capacity=capacity("1")),
                    constraints=[distinct(STRING_ATTRIBUTE)],
                )
            ],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(
                        DEVICE1,
                        None,
                        _attrs(stringAttribute="stringAttributeValue"),
                        multiple=True,
                        policy_range={CAPACITY0: "2"},
                    ),
                )
            ],
        ),
        "distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint": Case(
            claims=[
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, capacity=capacity("2")),
                    request(REQ1, CLASS_A, capacity=capacity("2")),
                    constraints=[distinct(STRING_ATTRIBUTE)],
                )
            ],
            classes=[class_multi(CLASS_A, DRIVER_A, True)],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, None, _attrs(stringAttribute="stringAttributeValue1"), **_range4()),
                    count=2,
                ),
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE2, None, _attrs(stringAttribute="stringAttributeValue2"), **_range4()),
                    count=2,
                ),
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}),
                    shared_result(REQ1, DRIVER_A, POOL1, DEVICE2, {CAPACITY0: "2"}),
                )
            ],
        ),
        "list-attributes-match-constaint-scalar-string-values": _list_case(
            match(STRING_ATTRIBUTE), 2, _STRING, _STRING, expect=_two(DEVICE1, DEVICE2)
        ),
        "list-attributes-match-constaint-list-of-string-values-with-common-elements": _list_case(
            match(STRING_ATTRIBUTE),
            2,
            _strings("value1", "value2", "value3"),
            _strings("value2", "value3", "value4"),
            expect=_two(DEVICE1, DEVICE2),
        ),
        "list-attributes-match-constaint-list-of-string-values-with-partially-common-elements": _list_case(
            match(STRING_ATTRIBUTE),
            3,
            _strings("value1", "value2"),
            _strings("value2", "value3"),
            _strings("value3", "value1"),
        ),
        "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-common-elements": _list_case(  # noqa: E501 (upstream's name)
            match(STRING_ATTRIBUTE), 2, _STRING, _strings("value1", "value2"), expect=_two(DEVICE1, DEVICE2)
        ),
        "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-partially-common-elements": (  # noqa: E501 (upstream's name)
            _list_case(
                match(STRING_ATTRIBUTE),
                3,
                _STRING,
                _strings("value1", "value2"),
                _strings("value2", "value3"),
            )
        ),
        "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-without-common-elements": _list_case(  # noqa: E501 (upstream's name)
            match(STRING_ATTRIBUTE), 2, _STRING, _strings("value2", "value3")
        ),
        "list-attributes-match-constaint-list-of-int-values-with-common-elements": _list_case(
            match(INT_ATTRIBUTE),
            2,
            {"numa": {"ints": [0, 1, 2]}},
            {"numa": {"ints": [1, 2, 3]}},
            expect=_two(DEVICE1, DEVICE2),
        ),
        "list-attributes-match-constaint-list-of-bool-values-with-common-elements": _list_case(
            match(BOOL_ATTRIBUTE),
            2,
            {"boolAttribute": {"bools": [True, False]}},
            {"boolAttribute": {"bools": [True]}},
            expect=_two(DEVICE1, DEVICE2),
        ),
        "list-attributes-match-constaint-list-of-version-values-with-common-elements": _list_case(
            match(VERSION_ATTRIBUTE),
            2,
            {"driverVersion": {"versions": ["1.0.0", "1.1.0", "2.0.0"]}},
            {"driverVersion": {"versions": ["1.1.0", "2.0.0", "2.1.0"]}},
            expect=_two(DEVICE1, DEVICE2),
        ),
        "list-attributes-match-constaint-with-empty-or-unknown-type": _list_case(
            match(STRING_ATTRIBUTE),
            2,
            {"stringAttribute": {}},
            {"stringAttribute": {"strings": []}},
            error="unsupported attribute value",
        ),
        "list-attributes-distinct-constraint-scalar-string-values-all-distinct": _list_case(
            distinct(STRING_ATTRIBUTE),
            2,
            _STRING,
            {"stringAttribute": {"string": "value2"}},
            expect=_two(DEVICE1, DEVICE2),
        ),
        "list-attributes-distinct-constraint-scalar-string-values-not-distinct": _list_case(
            distinct(STRING_ATTRIBUTE), 2, _STRING, _STRING
        ),
        "list-attributes-distinct-constraint-list-of-string-values-all-distinct": _list_case(
            distinct(STRING_ATTRIBUTE),
            2,
            _strings("value1", "value2"),
            _strings("value2", "value3"),
            _strings("value3", "value4"),
            expect=_two(DEVICE1, DEVICE3),
        ),
        "list-attributes-distinct-constraint-list-of-string-values-with-common-elements": _list_case(
            distinct(STRING_ATTRIBUTE),
            2,
            _strings("value1", "value2", "value3"),
            _strings("value2", "value4", "value5"),
        ),
        "list-attributes-distinct-constraint-mixed-scalar-and-list-all-distinct": _list_case(
            distinct(STRING_ATTRIBUTE),
            2,
            _STRING,
            _strings("value1", "value2"),
            _strings("value2", "value3"),
            expect=_two(DEVICE1, DEVICE3),
        ),
        "list-attributes-distinct-constraint-mixed-scalar-and-list-with-common-elements": _list_case(
            distinct(STRING_ATTRIBUTE), 2, _STRING, _strings("value1", "value2")
        ),
        "list-attributes-distinct-constraint-list-of-int-values-all-distinct": _list_case(
            distinct(INT_ATTRIBUTE),
            2,
            {"numa": {"ints": [0, 1]}},
            {"numa": {"ints": [1, 2]}},
            {"numa": {"ints": [2, 3]}},
            expect=_two(DEVICE1, DEVICE3),
        ),
        "list-attributes-distinct-constraint-list-of-bool-values-all-distinct": _list_case(
            distinct(BOOL_ATTRIBUTE),
            2,
            {"boolAttribute": {"bools": [True]}},
            {"boolAttribute": {"bools": [True, False]}},
            {"boolAttribute": {"bools": [False]}},
            expect=_two(DEVICE1, DEVICE3),
        ),
        "list-attributes-distinct-constraint-list-of-version-values-all-distinct": _list_case(
            distinct(VERSION_ATTRIBUTE),
            2,
            {"driverVersion": {"versions": ["1.0.0", "1.1.0"]}},
            {"driverVersion": {"versions": ["1.1.0", "2.0.0"]}},
            {"driverVersion": {"versions": ["2.0.0", "2.1.0"]}},
            expect=_two(DEVICE1, DEVICE3),
        ),
        "list-attributes-distinct-constaint-with-empty-or-unknown-type": _list_case(
            distinct(VERSION_ATTRIBUTE),
            2,
            {"driverVersion": {"versions": []}},
            {"driverVersion": {}},
            error="unsupported attribute value",
        ),
        "allocation-mode-all-with-multi-host-resource-pool": Case(
            claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
            classes=[A],
            slices=[
                slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), count=2),
                slice_(SLICE2, NODE2, POOL1, DRIVER_A, dev(DEVICE2), count=2),
            ],
            expect=[allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
        ),
        "multi-host-resource-pool-with-stale-slice-for-current-node": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=[
                slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), count=2, generation=1),
                slice_(SLICE2, NODE2, POOL1, DRIVER_A, dev(DEVICE2), count=2, generation=2),
            ],
        ),
        "multi-host-resource-pool-complete-update-from-node-1-to-node-2": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=_multi_host(1, 2, 2, node1_first=True),
            expect=[allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
        ),
        "multi-host-resource-pool-complete-update-from-node-2-to-node-1": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=_multi_host(2, 1, 2, node1_first=False),
            expect=[allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
        ),
        "multi-host-resource-pool-incomplete-update-from-node-1-to-node-2": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=_multi_host(1, 2, 1, node1_first=True),
            expect=[allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE1))],
        ),
        "multi-host-resource-pool-incomplete-update-from-node-2-to-node-1": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=[
                slice_(SLICE1, NODE2, POOL1, DRIVER_A, dev(DEVICE1), count=2, generation=1),
                slice_(SLICE1, NODE2, POOL1, DRIVER_A, dev(DEVICE2), count=2, generation=1),
                slice_(SLICE2, NODE1, POOL1, DRIVER_A, dev(DEVICE1), count=2, generation=2),
            ],
        ),
        "partitionable-devices-same-counter-set-name-in-different-resource-slices": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=[
                slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), count=4),
                counter_slice(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1), count=4),
                slice_(SLICE3, NODE1, POOL1, DRIVER_A, dev(DEVICE2), count=4),
                counter_slice(SLICE4, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1), count=4),
            ],
            error="invalid resource pools were encountered",
            node_error=True,
        ),
        "partitionable-devices-device-counter-consumption-references-unknown-counter-set": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=_counter_pool_slices(
                dev(DEVICE1, consumes=[consumes(COUNTER_SET2, {})]), sets=[counter_set(COUNTER_SET1)]
            ),
            error="invalid resource pools were encountered",
            node_error=True,
        ),
        "partitionable-devices-device-counter-consumption-references-unknown-counter-in-counter-set": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=_counter_pool_slices(
                dev(DEVICE1, consumes=[consumes(COUNTER_SET1, {"memory": "8Gi"})]),
                sets=[counter_set(COUNTER_SET1, {"other-memory": "8Gi"})],
            ),
            error="invalid resource pools were encountered",
            node_error=True,
        ),
        "partitionable-devices-device-counter-consumption-references-counter-set-in-other-pool": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, consumes=[consumes(COUNTER_SET1, {"memory": "8Gi"})]),
                ),
                counter_slice(SLICE2, NODE1, POOL2, DRIVER_A, counter_set(COUNTER_SET1, {"memory": "8Gi"})),
            ],
            error="invalid resource pools were encountered",
            node_error=True,
        ),
        "partitionable-devices-devices-on-different-nodes-consume-same-counter-set": Case(
            claims=[
                claim(
                    CLAIM0,
                    prioritized(
                        REQ0,
                        sub(SUB0, CLASS_A, 1, memory_at_least("6Gi")),
                        sub(SUB1, CLASS_A, 1, memory_at_least("2Gi")),
                    ),
                )
            ],
            classes=[A],
            slices=[
                counter_slice(SLICE1, NODE1, POOL1, DRIVER_A, _SET1_8GI, count=3),
                slice_(
                    SLICE2,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    _from_counters(DEVICE1, _MEM6),
                    _from_counters(DEVICE2, consumes(COUNTER_SET1, {"memory": "2Gi"})),
                    count=3,
                ),
                slice_(SLICE3, NODE2, POOL1, DRIVER_A, dev(DEVICE3, consumes=[_MEM6]), count=3),
            ],
            allocated=[DeviceID(DRIVER_A, POOL1, DEVICE3)],
            expect=[allocation(local_selector(NODE1), result(_r(REQ0, SUB1), DRIVER_A, POOL1, DEVICE2))],
        ),
        "partitionable-devices-validation-error-on-non-targeting-slice": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=[
                counter_slice(SLICE1, NODE1, POOL1, DRIVER_A, _SET1_8GI, count=3),
                slice_(SLICE2, NODE1, POOL1, DRIVER_A, _from_counters(DEVICE1, _MEM6), count=3),
                slice_(
                    SLICE3,
                    NODE2,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE3, consumes=[consumes(COUNTER_SET2, {"memory": "6Gi"})]),
                    count=3,
                ),
            ],
            error="invalid resource pools were encountered",
            node_error=True,
        ),
        "different-resourceslices-in-pool-can-target-different-nodes": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=[
                slice_(SLICE1, NODE2, POOL1, DRIVER_A, dev(DEVICE1), count=2),
                slice_(SLICE2, NODE1, POOL1, DRIVER_A, dev(DEVICE2), count=2),
            ],
            expect=[allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, DEVICE2))],
        ),
        "invalid-pool-is-ok-if-devices-can-be-allocated-from-other": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=[
                slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), count=2),
                slice_(SLICE2, NODE1, POOL1, DRIVER_A, dev(DEVICE1), count=2),
                slice_(SLICE3, NODE1, POOL2, DRIVER_A, dev(DEVICE2)),
            ],
            expect=[allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL2, DEVICE2))],
        ),
        "invalid-pool-is-error-if-no-other-device-can-be-allocated": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=[
                slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), count=2),
                slice_(SLICE2, NODE1, POOL1, DRIVER_A, dev(DEVICE1), count=2),
                slice_(SLICE3, NODE1, POOL2, DRIVER_A, dev(DEVICE2)),
            ],
            allocated=[DeviceID(DRIVER_A, POOL2, DEVICE2)],
            error="invalid resource pools were encountered",
            node_error=True,
        ),
        "no-allocation-from-incomplete-pools": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
            classes=[A],
            slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), count=2)],
        ),
        "check-combinations-within-single-request-single-pool-single-slice": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, 5))],
            classes=[A],
            slices=[
                slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), dev(DEVICE2), dev(DEVICE3), dev(DEVICE4))
            ],
        ),
        "check-combinations-within-single-request-single-pool-multiple-slices": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, 5))],
            classes=[A],
            slices=[
                slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), dev(DEVICE2), count=2),
                slice_(SLICE2, NODE1, POOL1, DRIVER_A, dev(DEVICE3), dev(DEVICE4), count=2),
            ],
        ),
        "check-combinations-within-single-request-multiple-pools-multiple-slices": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, 5))],
            classes=[A],
            slices=[
                slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), count=2),
                slice_(SLICE2, NODE1, POOL1, DRIVER_A, dev(DEVICE2), count=2),
                slice_(SLICE3, NODE1, POOL2, DRIVER_A, dev(DEVICE3), dev(DEVICE4)),
            ],
        ),
        "check-combinations-within-single-request-many-pools": Case(
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, 5))],
            classes=[A],
            slices=[
                slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1)),
                slice_(SLICE2, NODE1, POOL2, DRIVER_A, dev(DEVICE2)),
                slice_(SLICE3, NODE1, POOL3, DRIVER_A, dev(DEVICE3)),
                slice_(SLICE4, NODE1, POOL4, DRIVER_A, dev(DEVICE4)),
            ],
        ),
        "check-combinations-with-backtracking": Case(
            claims=[claim(CLAIM0, request(REQ1, CLASS_A, 2), request(REQ2, CLASS_A, 1, _type_is("X")))],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, None, _attrs(type="X")),
                    dev(DEVICE2, None, _attrs(type="Y")),
                    dev(DEVICE3, None, _attrs(type="Y")),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ1, DRIVER_A, POOL1, DEVICE2),
                    result(REQ1, DRIVER_A, POOL1, DEVICE3),
                    result(REQ2, DRIVER_A, POOL1, DEVICE1),
                )
            ],
        ),
        "check-combinations-with-backtracking-across-slices-and-pools": Case(
            claims=[claim(CLAIM0, request(REQ1, CLASS_A, 2), request(REQ2, CLASS_A, 1, _type_is("X")))],
            classes=[A],
            slices=[
                slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, None, _attrs(type="X")), count=2),
                slice_(SLICE2, NODE1, POOL1, DRIVER_A, dev(DEVICE2, None, _attrs(type="Y")), count=2),
                slice_(
                    SLICE3,
                    NODE1,
                    POOL2,
                    DRIVER_A,
                    dev(DEVICE3, None, _attrs(type="Y"), binding=(["IsPrepare"], [])),
                ),
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(REQ1, DRIVER_A, POOL1, DEVICE2),
                    result(REQ1, DRIVER_A, POOL2, DEVICE3, binding=(["IsPrepare"], [])),
                    result(REQ2, DRIVER_A, POOL1, DEVICE1),
                )
            ],
        ),
        "check-combinations-with-prioritized-list": Case(
            claims=[
                claim(
                    CLAIM0,
                    prioritized(REQ1, sub(SUB0, CLASS_A, 3, _type_is("Y")), sub(SUB1, CLASS_A, 2)),
                    prioritized(REQ2, sub(SUB0, CLASS_A, 2), sub(SUB1, CLASS_A, 1, _type_is("X"))),
                )
            ],
            classes=[A],
            slices=[
                slice_(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    dev(DEVICE1, None, _attrs(type="X")),
                    dev(DEVICE2, None, _attrs(type="Y")),
                    dev(DEVICE3, None, _attrs(type="Y")),
                )
            ],
            expect=[
                allocation(
                    local_selector(NODE1),
                    result(_r(REQ1, SUB1), DRIVER_A, POOL1, DEVICE2),
                    result(_r(REQ1, SUB1), DRIVER_A, POOL1, DEVICE3),
                    result(_r(REQ2, SUB1), DRIVER_A, POOL1, DEVICE1),
                )
            ],
        ),
    }
)


#: One source for every allocator of this module: shareIDs never repeat across claims, as in a scheduler.
_SHARE_RNG = random.Random(0)


def share_ids() -> ShareIDSource:
    return share_ids_from(_SHARE_RNG)


def _allocate(case: Case) -> list[objects_pb2.AllocationResult] | None:
    allocated = AllocatedState(
        devices=set(case.allocated),
        consumed_capacity={
            device: {name: parse_quantity(value) for name, value in consumed.items()}
            for device, consumed in case.allocated_capacity.items()
        },
    )
    classes = {c.metadata.name: c for c in case.classes}
    return Allocator(case.claims, allocated, classes.get, case.slices, new_share_id=share_ids()).allocate(
        case.node
    )


@pytest.mark.parametrize("name", list(CASES))
def test_allocator(name: str) -> None:
    case = CASES[name]
    claims_before = [c.SerializeToString() for c in case.claims]
    slices_before = [s.SerializeToString() for s in case.slices]
    if case.error:
        with pytest.raises(AllocationError) as raised:
            _allocate(case)
        assert case.error in str(raised.value)
        assert isinstance(raised.value, NodeAllocationError) == case.node_error
    else:
        results = _allocate(case)
        if case.expect is None:
            assert results is None
        else:
            assert results is not None
            assert [_actual(r, e.ordered) for r, e in zip(results, case.expect, strict=True)] == [
                _expected(e) for e in case.expect
            ]
    # What the allocator reads, it leaves as it was.
    assert [c.SerializeToString() for c in case.claims] == claims_before
    assert [s.SerializeToString() for s in case.slices] == slices_before


def test_share_ids_are_new_for_every_allocation() -> None:
    case = CASES["consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request"]
    first, second = _allocate(case) or []
    share_ids = {first.devices.results[0].share_id, second.devices.results[0].share_id}
    assert len(share_ids) == 2 and all(share_ids)


def test_allocator_is_reused_across_nodes() -> None:
    """One Allocator per pod serves every node: results depend only on the node asked about."""
    claims = [claim(CLAIM0, request(REQ0, CLASS_A, 2))]
    slices = [
        slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), dev(DEVICE2)),
        slice_(SLICE2, NODE2, POOL2, DRIVER_A, dev(DEVICE1)),
        slice_(SLICE3, ALL, POOL3, DRIVER_A, dev(DEVICE1)),
    ]
    allocator = Allocator(claims, AllocatedState(), {CLASS_A: A}.get, slices, new_share_id=share_ids())
    on_node2 = allocator.allocate(N2)
    on_node1 = allocator.allocate(N1)
    assert on_node1 is not None and on_node2 is not None
    assert [(r.pool, r.device) for r in on_node1[0].devices.results] == [(POOL1, DEVICE1), (POOL1, DEVICE2)]
    assert [(r.pool, r.device) for r in on_node2[0].devices.results] == [(POOL2, DEVICE1), (POOL3, DEVICE1)]
    assert allocator.allocate(node_in("node-3", REGION1)) is None


def test_allocated_state_of_claims() -> None:
    def allocated(*results: dict[str, Any]) -> objects_pb2.ResourceClaim:
        return resource_claim(CLAIM0, allocation={"devices": {"results": list(results)}})

    state = allocated_state_of(
        [
            allocated({"request": REQ0, "driver": DRIVER_A, "pool": POOL1, "device": DEVICE1}),
            allocated(
                {"request": REQ0, "driver": DRIVER_A, "pool": POOL1, "device": DEVICE2, "adminAccess": True}
            ),
            allocated(
                {"request": REQ0, "driver": DRIVER_A, "pool": POOL1, "device": DEVICE3, "shareID": "a"},
                {
                    "request": REQ1,
                    "driver": DRIVER_A,
                    "pool": POOL1,
                    "device": DEVICE3,
                    "shareID": "b",
                    "consumedCapacity": {CAPACITY0: "1Gi"},
                },
            ),
            allocated(
                {
                    "request": REQ0,
                    "driver": DRIVER_A,
                    "pool": POOL1,
                    "device": DEVICE3,
                    "shareID": "c",
                    "consumedCapacity": {CAPACITY0: "512Mi"},
                }
            ),
            claim(CLAIM1, request(REQ0, CLASS_A)),
        ]
    )
    shared = DeviceID(DRIVER_A, POOL1, DEVICE3)
    assert state.devices == {DeviceID(DRIVER_A, POOL1, DEVICE1)}
    assert {s.share_id for s in state.shared_devices} == {"a", "b", "c"}
    assert state.consumed_capacity == {shared: {CAPACITY0: Fraction(3 * 2**29)}}


def _shares_of(seed: int) -> list[str]:
    """The shareIDs of two claims sharing one device, allocated one after the other, with shareIDs drawn
    from ``random.Random(seed)``."""
    rng = random.Random(seed)
    slices = [slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, **_range4()))]
    done: list[objects_pb2.ResourceClaim] = []
    for name in (CLAIM0, CLAIM1):
        new = claim(name, request(REQ0, CLASS_A, capacity=capacity("2")))
        results = Allocator(
            [new], allocated_state_of(done), {CLASS_A: A}.get, slices, new_share_id=share_ids_from(rng)
        ).allocate(N1)
        assert results is not None
        new.status.allocation.CopyFrom(results[0])
        done.append(new)
    return [c.status.allocation.devices.results[0].share_id for c in done]


def test_the_same_seed_gives_the_same_share_ids() -> None:
    """shareIDs come from the source the allocator is given: the same seed, the same shareIDs, each a
    version-4 UUID as Kubernetes makes them; another seed, others."""
    first = _shares_of(7)
    assert first == _shares_of(7)
    assert len(set(first)) == 2
    assert all(uuid.UUID(share).version == 4 and str(uuid.UUID(share)) == share for share in first)
    assert set(first).isdisjoint(_shares_of(8))


# --------------------------------------------------------------------------------------- properties

_SHAPES = st.lists(st.tuples(st.integers(1, 3), st.booleans()), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(device_count=st.integers(1, 6), shared_count=st.integers(0, 2), claims=_SHAPES)
def test_no_device_is_allocated_twice(
    device_count: int, shared_count: int, claims: list[tuple[int, bool]]
) -> None:
    """Claims allocated one after the other, each beside the allocations before it: no device is taken
    twice, a shared device never beyond its capacity, and a claim fails only when too few devices are
    left for it."""
    devices = [dev(f"device-{i}") for i in range(device_count)]
    devices += [dev(f"shared-{i}", **_range4()) for i in range(shared_count)]
    slices = [slice_(SLICE1, NODE1, POOL1, DRIVER_A, *devices)]
    done: list[objects_pb2.ResourceClaim] = []
    for index, (count, wants_share) in enumerate(claims):
        wanted = (
            request(REQ0, CLASS_A, count, "device.allowMultipleAllocations", capacity=capacity("2"))
            if wants_share
            else request(REQ0, CLASS_A, count, "!device.allowMultipleAllocations")
        )
        new = claim(f"claim-{index}", wanted)
        state = allocated_state_of(done)
        results = Allocator([new], state, {CLASS_A: A}.get, slices, new_share_id=share_ids()).allocate(N1)
        if wants_share:
            # A share takes 2 of a shared device's 4; one request may hold several shares of one device.
            room = sum(
                int(
                    4
                    - state.consumed_capacity.get(DeviceID(DRIVER_A, POOL1, f"shared-{i}"), {}).get(
                        CAPACITY0, 0
                    )
                )
                // 2
                for i in range(shared_count)
            )
        else:
            room = device_count - len(state.devices)
        assert (results is not None) == (room >= count)
        if results is not None:
            new.status.allocation.CopyFrom(results[0])
            done.append(new)
    state = allocated_state_of(done)
    exclusive = [
        (r.pool, r.device)
        for c in done
        for r in c.status.allocation.devices.results
        if not r.HasField("share_id")
    ]
    assert len(exclusive) == len(set(exclusive)) == len(state.devices)
    assert all(value <= 4 for consumed in state.consumed_capacity.values() for value in consumed.values())


@settings(max_examples=40, deadline=None)
@given(
    wanted=st.sampled_from([DRIVER_A, DRIVER_B, "gpu.example.com"]),
    spelling=st.sampled_from(['device.driver == "{}"', ' device.driver=="{}"\n', 'device.driver == "{}" ']),
    drivers=st.lists(st.sampled_from([DRIVER_A, DRIVER_B, "gpu.example.com"]), min_size=1, max_size=4),
)
def test_driver_selector_selects_as_cel_does(wanted: str, spelling: str, drivers: list[str]) -> None:
    """A class selecting by driver name picks exactly the devices the CEL expression itself accepts."""
    expression = spelling.format(wanted)
    slices = [
        slice_(f"slice-{i}", ALL, f"pool-{i}", driver, dev(DEVICE1)) for i, driver in enumerate(drivers)
    ]
    allocator = Allocator(
        [claim(CLAIM0, all_request(REQ0, CLASS_A))],
        AllocatedState(),
        {CLASS_A: device_class(CLASS_A, expression)}.get,
        slices,
        new_share_id=share_ids(),
    )
    results = allocator.allocate(N1)
    program = cel._runtime_program(expression)  # the runtime's, not the one answering without it
    accepted = {s.spec.pool.name for s in slices if program.matches(s.spec.driver, s.spec.devices[0])}
    chosen = {r.pool for r in results[0].devices.results} if results else set()
    assert chosen == accepted


# Where podsched's allocator knowingly does better than upstream's.


def test_distinct_attribute_within_one_request() -> None:
    """Every device of the request counts, not only the last one chosen for it."""
    case = Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 3), constraints=[distinct(INT_ATTRIBUTE)])],
        classes=[A],
        slices=[
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                *(dev(f"device-{i}", None, _attrs(numa=numa)) for i, numa in enumerate((1, 2, 1, 3))),
            )
        ],
    )
    (allocated,) = _allocate(case) or []
    assert [r.device for r in allocated.devices.results] == ["device-0", "device-1", "device-3"]


def test_counters_of_a_refused_device_are_given_back() -> None:
    """A device whose counters were counted in but whose taint is not tolerated leaves them to others."""
    case = Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A))],
        classes=[A],
        slices=_counter_pool_slices(
            dev(DEVICE1, consumes=[_MEM6], taints=[TAINT_NO_SCHEDULE]),
            dev(DEVICE2, consumes=[_MEM4]),
            sets=[_SET1_8GI],
        ),
    )
    (allocated,) = _allocate(case) or []
    assert [r.device for r in allocated.devices.results] == [DEVICE2]


# ---------------------------------------------------------------------------------- unfit requests

_D1, _D2, _D3 = (DeviceID(DRIVER_A, POOL1, name) for name in (DEVICE1, DEVICE2, DEVICE3))


@dataclass
class UnfitCase:
    claims: list[objects_pb2.ResourceClaim]
    slices: list[objects_pb2.ResourceSlice]
    #: What the allocator gives for ``unfit`` on NODE1, where the claims do not fit.
    expect: str
    allocated: AllocatedState = field(default_factory=AllocatedState)


_NUMA = {DEVICE1: 1, DEVICE2: 2}

UNFIT_CASES = {
    "no-device-of-the-class": UnfitCase(
        [claim(CLAIM0, request(REQ0, CLASS_B))],
        [slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1))],
        "claim claim-0, request req-0: no device of class class-b on the node",
    ),
    "selectors-match-none": UnfitCase(
        [claim(CLAIM0, request(REQ0, CLASS_A, 1, _type_is("gpu")))],
        [slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, None, {"type": {"string": "nic"}}))],
        "claim claim-0, request req-0: selectors matched none of the devices of class class-a",
    ),
    "devices-allocated": UnfitCase(
        [claim(CLAIM0, request(REQ0, CLASS_A))],
        [slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), dev(DEVICE2))],
        "claim claim-0, request req-0: not enough devices left: 1 needed",
        AllocatedState(devices={_D1, _D2}),
    ),
    "too-few-devices": UnfitCase(
        [claim(CLAIM0, request(REQ0, CLASS_A, 2))],
        [slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1))],
        "claim claim-0, request req-0: not enough devices left: 2 needed",
    ),
    "all-devices-one-allocated": UnfitCase(
        [claim(CLAIM0, all_request(REQ0, CLASS_A))],
        [slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1), dev(DEVICE2))],
        "claim claim-0, request req-0: not enough devices left: all 2 needed",
        AllocatedState(devices={_D2}),
    ),
    "tainted": UnfitCase(
        [claim(CLAIM0, request(REQ0, CLASS_A))],
        [slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, taints=[TAINT_NO_SCHEDULE]))],
        "claim claim-0, request req-0: tainted: 1 needed",
    ),
    "capacity-exhausted": UnfitCase(
        [claim(CLAIM0, request(REQ0, CLASS_A, capacity=capacity("2")))],
        [slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1, **_range4()))],
        "claim claim-0, request req-0: capacity exhausted: 1 needed",
        AllocatedState(consumed_capacity={_D1: {CAPACITY0: Fraction(4)}}),
    ),
    "shared-counters-exhausted": UnfitCase(
        [claim(CLAIM0, request(REQ0, CLASS_A))],
        _counter_pool_slices(
            *(
                _from_counters(name, consumes(COUNTER_SET1, {"memory": "4"}))
                for name in (DEVICE1, DEVICE2, DEVICE3)
            ),
            sets=[counter_set(COUNTER_SET1, {"memory": "4"})],
        ),
        "claim claim-0, request req-0: shared counters exhausted: 1 needed",
        AllocatedState(devices={_D1}),
    ),
    "match-attribute": UnfitCase(
        [claim(CLAIM0, request(REQ0, CLASS_A), request(REQ1, CLASS_A), constraints=[match(INT_ATTRIBUTE)])],
        [
            slice_(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                *(dev(name, None, {"numa": {"int": numa}}) for name, numa in _NUMA.items()),
            )
        ],
        f"claim claim-0, request req-1: constraint matchAttribute {INT_ATTRIBUTE} not satisfiable",
    ),
    "first-available": UnfitCase(
        [claim(CLAIM0, prioritized(REQ0, sub(SUB0, CLASS_B), sub(SUB1, CLASS_A, 2)))],
        [slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1))],
        "claim claim-0, request req-0/subReq-0: no device of class class-b on the node",
    ),
    "taken-by-the-pods-other-claim": UnfitCase(
        [claim(CLAIM0, request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_A))],
        [slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1))],
        "claim claim-1, request req-0: not enough devices left beside the pod's other requests: 1 needed",
    ),
}


@pytest.mark.parametrize("name", list(UNFIT_CASES))
def test_unfit_names_the_request_and_why(name: str) -> None:
    """Where the claims do not fit, the allocator tells the request its search got furthest to without
    devices, and why: the explanation of the node's verdict."""
    case = UNFIT_CASES[name]
    allocator = Allocator(
        case.claims, case.allocated, {CLASS_A: A, CLASS_B: B}.get, case.slices, new_share_id=share_ids()
    )
    assert allocator.allocate(N1) is None
    assert str(allocator.unfit(N1)) == case.expect


def test_unfit_for_a_node_not_tried_last_searches_it() -> None:
    slices = [
        slice_(SLICE1, NODE1, POOL1, DRIVER_A, dev(DEVICE1)),
        slice_(SLICE2, NODE2, POOL2, DRIVER_A, dev(DEVICE1, taints=[TAINT_NO_SCHEDULE])),
    ]
    allocator = Allocator(
        [claim(CLAIM0, request(REQ0, CLASS_A, 2))],
        AllocatedState(),
        {CLASS_A: A}.get,
        slices,
        new_share_id=share_ids(),
    )
    assert allocator.allocate(N1) is None and allocator.allocate(N2) is None
    assert allocator.unfit(N1).reason == "not enough devices left: 2 needed"
    assert allocator.unfit(N2).reason == "tainted: 2 needed"


# ------------------------------------------------------------------- reused slice indexes (fast path)

_TYPES = ("gpu", "nic")
#: Request selectors the property draws from (none, by attribute, a CEL error on devices without it).
_REQUEST_SELECTORS = ((), (_type_is("gpu"),), (f'device.attributes["{DRIVER_A}"].numa > 0',))


def _property_device(name: str, kind: int, numa: int, tainted: bool, shared: bool) -> dict[str, Any]:
    attributes = {"type": {"string": _TYPES[kind]}, "numa": {"int": numa}}
    return dev(
        name,
        None,
        attributes,
        taints=[TAINT_NO_SCHEDULE] if tainted else (),
        **(_range4() if shared else {}),
    )


_DEVICES = st.lists(
    st.tuples(st.integers(0, 1), st.integers(0, 2), st.booleans(), st.booleans()), min_size=0, max_size=3
)
_STEPS = st.lists(
    st.one_of(
        # Replace slice i (of the three) with one of these devices: a new object.
        st.tuples(st.just("slice"), st.integers(0, 2), _DEVICES),
        # Allocate a claim: selectors, count, a capacity request, a numa matchAttribute constraint.
        st.tuples(
            st.just("claim"),
            st.integers(0, len(_REQUEST_SELECTORS) - 1),
            st.integers(1, 2),
            st.booleans(),
            st.booleans(),
        ),
        # node-2 moves to the other region (a new Node object).
        st.tuples(st.just("relabel")),
    ),
    min_size=1,
    max_size=12,
)


def _outcome(allocator: Allocator, node_: objects_pb2.Node) -> Any:
    try:
        results = allocator.allocate(node_)
    except AllocationError as err:
        return f"error: {err}"
    if results is None:
        return f"unfit: {allocator.unfit(node_)}"
    return [r.SerializeToString(deterministic=True) for r in results]


@settings(max_examples=80, deadline=None)
@given(steps=_STEPS)
def test_reused_slice_indexes_allocate_as_fresh_ones(steps: list[tuple[Any, ...]]) -> None:
    """ReusedSliceIndexes (the scheduler's: one index kept across pods, a slice's parsed devices and
    selector results kept while it is the same object, pools kept per Node object) gives every pod the
    same allocations, failures and errors as FreshSliceIndexes (the reference), through slice changes,
    node label changes and claims allocated one after the other."""
    nodes = {NODE1: N1, NODE2: N2}
    placements = (NODE1, ALL, label_selector("region", REGION2))
    slices = tuple(
        slice_(f"slice-{i}", where, f"pool-{i}", DRIVER_A, dev(DEVICE1, None, {"type": {"string": "gpu"}}))
        for i, where in enumerate(placements)
    )
    reused = ReusedSliceIndexes()
    done: list[objects_pb2.ResourceClaim] = []
    for step_index, step in enumerate(steps):
        if step[0] == "slice":
            _, position, devices = step
            replaced = slice_(
                f"slice-{position}",
                placements[position],
                f"pool-{position}",
                DRIVER_A,
                *(_property_device(f"device-{i}", *shape) for i, shape in enumerate(devices)),
            )
            slices = (*slices[:position], replaced, *slices[position + 1 :])
            continue
        if step[0] == "relabel":
            region = REGION1 if nodes[NODE2].metadata.labels["region"] == REGION2 else REGION2
            nodes[NODE2] = node_in(NODE2, region)
            continue
        _, selectors, count, wants_capacity, constrained = step
        wanted = request(
            REQ0,
            CLASS_A,
            count,
            *_REQUEST_SELECTORS[selectors],
            **({"capacity": capacity("2")} if wants_capacity else {}),
        )
        new = claim(f"claim-{step_index}", wanted, constraints=[match(INT_ATTRIBUTE)] if constrained else [])
        state = allocated_state_of(done)
        outcomes = []
        for indexes in (FreshSliceIndexes(), reused):
            allocator = Allocator(
                [new],
                state,
                {CLASS_A: A}.get,
                slices,
                new_share_id=share_ids_from(random.Random(step_index)),
                slice_indexes=indexes,
            )
            outcomes.append([_outcome(allocator, nodes[name]) for name in (NODE1, NODE2)])
        fresh, fast = outcomes
        assert fast == fresh
        chosen = next((got for got in fresh if isinstance(got, list)), None)
        if chosen is not None:
            new.status.allocation.ParseFromString(chosen[0])
            done.append(new)


@pytest.mark.parametrize(
    ("free", "count", "attributes", "most_tries"),
    [
        # Fewer free devices than asked: refused without trying their orderings (7! of them before).
        (7, 8, None, 0),
        # Enough devices, but no two share the constraint's value: each pair is tried once, not twice.
        (12, 2, [{"numa": {"int": n}} for n in range(12)], 12 * 11 // 2 + 12),
    ],
)
def test_a_node_that_cannot_fit_is_refused_without_trying_every_ordering(
    monkeypatch: pytest.MonkeyPatch, free: int, count: int, attributes: list[Any] | None, most_tries: int
) -> None:
    tries = 0
    choose = allocator_module._Search._allocate_device

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal tries
        tries += 1
        return choose(self, *args, **kwargs)

    monkeypatch.setattr(allocator_module._Search, "_allocate_device", counted)
    devices = [dev(f"device-{n}", attributes=attributes[n] if attributes else None) for n in range(free)]
    constraints = [match(INT_ATTRIBUTE)] if attributes else []
    claims = [claim(CLAIM0, request(REQ0, CLASS_A, count), constraints=constraints)]
    slices = [slice_(SLICE1, NODE1, POOL1, DRIVER_A, *devices)]
    allocator = Allocator(claims, AllocatedState(), {CLASS_A: A}.get, slices, new_share_id=share_ids())
    assert allocator.allocate(N1) is None
    assert tries <= most_tries
