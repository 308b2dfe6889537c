"""What is allocated already: the devices claims hold exclusively, the shares of devices that allow
several allocations, and the capacity those shares consume."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

from cluster.api import objects_pb2
from cluster.api.quantity import parse_quantity


class DeviceID(NamedTuple):
    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


class SharedDeviceID(NamedTuple):
    device: DeviceID
    share_id: str


@dataclass
class AllocatedState:
    """The allocations an Allocator must respect. ``devices`` are held exclusively (admin access
    results are not: they take nothing from others); ``shared_devices`` are the shares of devices that
    allow multiple allocations, and ``consumed_capacity`` sums what those shares consume, per device
    and capacity name. The allocator only reads them."""

    devices: Set[DeviceID] = field(default_factory=set)
    shared_devices: Set[SharedDeviceID] = field(default_factory=set)
    consumed_capacity: Mapping[DeviceID, Mapping[str, Fraction]] = field(default_factory=dict)


def allocated_state_of(claims: Iterable[objects_pb2.ResourceClaim]) -> AllocatedState:
    """The AllocatedState of the claims' ``status.allocation`` results."""
    devices: set[DeviceID] = set()
    shared_devices: set[SharedDeviceID] = set()
    consumed_capacity: dict[DeviceID, dict[str, Fraction]] = {}
    for claim in claims:
        if not claim.status.HasField("allocation"):
            continue
        for result in claim.status.allocation.devices.results:
            if result.admin_access:
                continue
            device = DeviceID(result.driver, result.pool, result.device)
            if result.HasField("share_id"):
                shared_devices.add(SharedDeviceID(device, result.share_id))
                if result.consumed_capacity:
                    add_capacity(consumed_capacity, device, parsed_capacity(result.consumed_capacity))
                continue
            devices.add(device)
    return AllocatedState(devices, shared_devices, consumed_capacity)


def parsed_capacity(capacity: Mapping[str, str]) -> dict[str, Fraction]:
    return {name: parse_quantity(value) for name, value in capacity.items()}


def add_capacity(
    collection: dict[DeviceID, dict[str, Fraction]], device: DeviceID, consumed: dict[str, Fraction]
) -> None:
    """Adds ``consumed`` to ``device``'s entry of ``collection``."""
    entry = collection.setdefault(device, {})
    for name, value in consumed.items():
        entry[name] = entry.get(name, Fraction(0)) + value


def remove_capacity(
    collection: dict[DeviceID, dict[str, Fraction]], device: DeviceID, consumed: dict[str, Fraction]
) -> None:
    """Takes ``consumed`` off ``device``'s entry again; the entry goes once nothing is left in it."""
    entry = collection.get(device)
    if entry is None:
        return
    for name, value in consumed.items():
        if name in entry:
            entry[name] -= value
    if not any(entry.values()):
        del collection[device]
