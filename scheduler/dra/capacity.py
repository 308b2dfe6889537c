"""Consumable capacity: how much of a device's capacity a request consumes (its request policy's
default, valid values or valid range with step rounding) and whether that still fits beside what other
claims consume of the device (upstream's consumable_capacity.go)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction

from cluster.api import objects_pb2
from scheduler.dra.pools import SliceDevice, quantity

#: A consumed amount: its value, and the text the allocation result carries.
Consumed = tuple[Fraction, str]


def _int_value(value: Fraction) -> int:
    """A quantity as a whole number, rounded away from zero (Quantity.Value)."""
    return math.ceil(value) if value >= 0 else -math.ceil(-value)


def binary_si(value: int) -> str:
    """``value`` as Kubernetes writes a binary-SI quantity: in the largest power of 1024 that divides it,
    plainly when that is none or it is below 1024."""
    if -1024 < value < 1024:
        return str(value)
    for suffix, unit in (
        ("Ei", 1 << 60),
        ("Pi", 1 << 50),
        ("Ti", 1 << 40),
        ("Gi", 1 << 30),
        ("Mi", 1 << 20),
        ("Ki", 1 << 10),
    ):
        if value % unit == 0:
            return f"{value // unit}{suffix}"
    return str(value)


def _policy_quantity(text: str, where: str) -> Consumed:
    return quantity(text, where), text


def consumed_by(requested: Consumed | None, capacity: objects_pb2.DeviceCapacity, where: str) -> Consumed:
    """What a request for ``requested`` (None: it names no amount) consumes of ``capacity``."""
    has_policy = capacity.HasField("request_policy")
    policy = capacity.request_policy
    if requested is None:
        if has_policy and policy.HasField("default"):
            return _policy_quantity(policy.default, f"{where}: requestPolicy.default")
        return _policy_quantity(capacity.value, f"{where}: value")
    if not has_policy:
        return requested
    if policy.HasField("valid_range") and policy.valid_range.HasField("min"):
        valid_range = policy.valid_range
        minimum = quantity(valid_range.min, f"{where}: requestPolicy.validRange.min")
        if requested[0] < minimum:
            return minimum, valid_range.min
        if not valid_range.HasField("step"):
            return requested
        step = _int_value(quantity(valid_range.step, f"{where}: requestPolicy.validRange.step"))
        low = _int_value(minimum)
        steps = -(-(_int_value(requested[0]) - low) // step)
        value = low + step * steps
        return Fraction(value), binary_si(value)
    if policy.valid_values:
        for text in policy.valid_values:
            if requested[0] <= quantity(text, f"{where}: requestPolicy.validValues"):
                return _policy_quantity(text, f"{where}: requestPolicy.validValues")
    return requested


def _violates_policy(consumed: Fraction, capacity: objects_pb2.DeviceCapacity, where: str) -> bool:
    if not capacity.HasField("request_policy"):
        return False
    policy = capacity.request_policy
    if policy.HasField("default") and consumed == quantity(policy.default, f"{where}: requestPolicy.default"):
        return False
    if policy.HasField("valid_range"):
        valid_range = policy.valid_range
        if valid_range.HasField("max") and consumed > quantity(
            valid_range.max, f"{where}: requestPolicy.validRange.max"
        ):
            return True
        if valid_range.HasField("step"):
            step = _int_value(quantity(valid_range.step, f"{where}: requestPolicy.validRange.step"))
            low = (
                _int_value(quantity(valid_range.min, f"{where}: requestPolicy.validRange.min"))
                if valid_range.HasField("min")
                else 0
            )
            return step != 0 and (_int_value(consumed) - low) % step != 0
        return False
    if policy.valid_values:
        return all(
            consumed != quantity(text, f"{where}: requestPolicy.validValues") for text in policy.valid_values
        )
    return False


def fits(
    device: SliceDevice,
    requested: Mapping[str, Consumed],
    allocated: Mapping[str, Fraction] | None,
    allocating: Mapping[str, Fraction] | None,
) -> bool:
    """Whether ``device`` can serve a request for ``requested`` beside what allocated claims and the
    claims being allocated consume of it: each capacity's consumption must keep to its request policy
    and the sum stay within its value. False also when the request names a capacity the device lacks."""
    capacities = device.proto.capacity
    if any(name not in capacities for name in requested):
        return False
    for name, total in device.capacity.items():
        where = f"ResourceSlice {device.slice.name}, device {device.proto.name}: capacity {name}"
        capacity = capacities[name]
        consumed = consumed_by(requested.get(name), capacity, where)[0]
        if _violates_policy(consumed, capacity, where):
            return False
        if allocated:
            consumed += allocated.get(name, 0)
        if allocating:
            consumed += allocating.get(name, 0)
        if consumed > total:
            return False
    return True


def consumption(device: SliceDevice, requested: Mapping[str, Consumed]) -> dict[str, Consumed]:
    """What a request for ``requested`` consumes of each of ``device``'s capacities."""
    return {
        name: consumed_by(
            requested.get(name),
            device.proto.capacity[name],
            f"ResourceSlice {device.slice.name}, device {device.proto.name}: capacity {name}",
        )
        for name in device.capacity
    }
