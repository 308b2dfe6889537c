"""The structured-parameters allocator (scheduler/dra), case by case as upstream's allocator tests."""

from __future__ import annotations

import pytest

from scheduler.dra import AllocatedState, AllocationError, Allocator, DeviceID, allocated_state_of
from tests.builders import device_class, device_request, node, resource_claim, resource_slice

DRIVER_A = "driver-a"
CLASS_A = "class-a"
CLASSES = {CLASS_A: device_class(CLASS_A, f'device.driver == "{DRIVER_A}"')}


def results(allocation):
    return [(r.request, r.driver, r.pool, r.device) for r in allocation.devices.results]


def test_simple():
    claim = resource_claim("claim-0", device_request("req-0", CLASS_A, 2))
    slices = [resource_slice("slice-1", DRIVER_A, "pool-1", "device-1", "device-2", node_name="node-1")]
    allocator = Allocator([claim], AllocatedState(), CLASSES.get, slices)
    (allocation,) = allocator.allocate(node("node-1"))
    assert results(allocation) == [
        ("req-0", DRIVER_A, "pool-1", "device-1"),
        ("req-0", DRIVER_A, "pool-1", "device-2"),
    ]
    assert allocator.allocate(node("node-2")) is None


def test_allocated_devices_are_not_allocated_again():
    claim = resource_claim("claim-0", device_request("req-0", CLASS_A))
    slices = [resource_slice("slice-1", DRIVER_A, "pool-1", "device-1", "device-2", all_nodes=True)]
    allocated = AllocatedState(devices={DeviceID(DRIVER_A, "pool-1", "device-1")})
    (allocation,) = Allocator([claim], allocated, CLASSES.get, slices).allocate(node("node-1"))
    assert results(allocation) == [("req-0", DRIVER_A, "pool-1", "device-2")]
    assert allocated_state_of([_with_allocation(claim, allocation)]).devices == {
        DeviceID(DRIVER_A, "pool-1", "device-2")
    }


def test_missing_class():
    claim = resource_claim("claim-0", device_request("req-0", "class-b"))
    allocator = Allocator([claim], AllocatedState(), CLASSES.get, [])
    with pytest.raises(AllocationError) as raised:
        allocator.allocate(node("node-1"))
    assert str(raised.value) == (
        "claim claim-0, request req-0: could not retrieve device class class-b: "
        'deviceclass.resource.k8s.io "class-b" not found'
    )


def _with_allocation(claim, allocation):
    allocated = type(claim)()
    allocated.CopyFrom(claim)
    allocated.status.allocation.CopyFrom(allocation)
    return allocated
