"""The framework's DRA manager (kube-scheduler's SharedDRAManager, dra_manager_test.go and
allocateddevices.go): the claims the informer delivers, overlaid by the scheduler's own writes until the
informer catches up, the allocations in flight, and the devices every claim holds kept per event."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from google.protobuf import json_format

from cluster.api import objects_pb2
from scheduler.framework.dra_manager import DRAManager, ResourceClaimTracker

GPU0 = ("gpu.example.com", "node-1", "gpu-0")
GPU1 = ("gpu.example.com", "node-1", "gpu-1")
NIC = ("nic.example.com", "node-1", "nic-0")


def claim(name: str, *results: dict[str, Any], rv: str = "1", uid: str = "") -> objects_pb2.ResourceClaim:
    data: dict[str, Any] = {"metadata": {"name": name, "namespace": "default", "uid": uid or f"uid-{name}",
                                         "resourceVersion": rv}}
    if results:
        data["status"] = {"allocation": {"devices": {"results": list(results)}}}
    return json_format.ParseDict(data, objects_pb2.ResourceClaim())


def result(device: tuple[str, str, str], **extra: Any) -> dict[str, Any]:
    driver, pool, name = device
    return {"request": "req-0", "driver": driver, "pool": pool, "device": name, **extra}


def allocated(tracker: ResourceClaimTracker) -> tuple[set[Any], set[Any], dict[Any, Any]]:
    state = tracker.allocated_devices()
    return state.devices, state.shared_devices, state.consumed_capacity


def test_devices_are_counted_per_event() -> None:
    tracker = ResourceClaimTracker()
    a = claim("a", result(GPU0))
    tracker.on_add(a)
    tracker.on_add(claim("pending"))
    assert allocated(tracker) == ({GPU0}, set(), {})
    b = claim("b", result(GPU1), result(NIC, shareID="s1", consumedCapacity={"bandwidth": "10Gi"}))
    tracker.on_add(b)
    assert allocated(tracker) == ({GPU0, GPU1}, {(NIC, "s1")}, {NIC: {"bandwidth": Fraction(10 * 2**30)}})
    # Deallocation and deletion give the devices back.
    tracker.on_update(a, claim("a", rv="2"))
    tracker.on_delete(b)
    assert allocated(tracker) == (set(), set(), {})


def test_shares_of_one_device_add_up_their_consumed_capacity() -> None:
    tracker = ResourceClaimTracker()
    one = claim("one", result(NIC, shareID="s1", consumedCapacity={"bandwidth": "1Gi"}))
    two = claim("two", result(NIC, shareID="s2", consumedCapacity={"bandwidth": "3Gi"}))
    tracker.on_add(one)
    tracker.on_add(two)
    assert allocated(tracker)[2] == {NIC: {"bandwidth": Fraction(4 * 2**30)}}
    tracker.on_delete(one)
    assert allocated(tracker) == (set(), {(NIC, "s2")}, {NIC: {"bandwidth": Fraction(3 * 2**30)}})


def test_admin_access_holds_no_device() -> None:
    tracker = ResourceClaimTracker()
    tracker.on_add(claim("admin", result(GPU0, adminAccess=True)))
    assert allocated(tracker) == (set(), set(), {})


def test_allocations_in_flight_count_until_removed() -> None:
    tracker = ResourceClaimTracker()
    pending = claim("pending")
    tracker.on_add(pending)
    tracker.signal_claim_pending_allocation("uid-pending", claim("pending", result(GPU0)))
    assert tracker.claim_has_pending_allocation("uid-pending")
    assert allocated(tracker)[0] == {GPU0}
    # What a cycle was handed does not change afterwards.
    handed = tracker.allocated_devices()
    assert tracker.remove_claim_pending_allocation("uid-pending")
    assert not tracker.remove_claim_pending_allocation("uid-pending")
    assert allocated(tracker)[0] == set() and handed.devices == {GPU0}


def test_the_held_devices_are_one_snapshot_until_they_change() -> None:
    tracker = ResourceClaimTracker()
    share = result(NIC, shareID="s1", consumedCapacity={"bandwidth": "1Gi"})
    tracker.on_add(claim("a", result(GPU0), share))
    handed = tracker.allocated_devices()
    # An event that changes no holding (a new revision of the same allocation) keeps the snapshot.
    tracker.on_update(claim("a"), claim("a", result(GPU0), share, rv="2"))
    assert tracker.allocated_devices() is handed
    tracker.on_add(claim("b", result(GPU1)))
    tracker.signal_claim_pending_allocation("uid-c", claim("c", result(NIC, shareID="s2",
                                                                      consumedCapacity={"bandwidth": "2Gi"})))
    now = tracker.allocated_devices()
    assert now is not handed and now is tracker.allocated_devices()
    assert (now.devices, now.shared_devices, now.consumed_capacity) == (
        {GPU0, GPU1}, {(NIC, "s1"), (NIC, "s2")}, {NIC: {"bandwidth": Fraction(3 * 2**30)}})
    assert (handed.devices, handed.shared_devices, handed.consumed_capacity) == (
        {GPU0}, {(NIC, "s1")}, {NIC: {"bandwidth": Fraction(2**30)}})


def test_a_dry_runs_changes_to_a_snapshot_are_copies() -> None:
    tracker = ResourceClaimTracker()
    tracker.on_add(claim("a", result(GPU0), result(NIC, shareID="s1")))
    tracker.on_add(claim("b", result(GPU0)))  # held twice: freed all the same, as a set difference
    handed = tracker.allocated_devices()
    freed = handed.without([GPU0], [(NIC, "s1")], {})
    taken = freed.plus([GPU1], [(NIC, "s2")], {NIC: {"bandwidth": Fraction(1)}})
    assert (freed.devices, freed.shared_devices, freed.generation) == (set(), set(), -1)
    assert (taken.devices, taken.shared_devices, taken.consumed_capacity) == (
        {GPU1}, {(NIC, "s2")}, {NIC: {"bandwidth": Fraction(1)}})
    assert (handed.devices, handed.shared_devices) == ({GPU0}, {(NIC, "s1")})
    assert tracker.allocated_devices() is handed


def test_the_schedulers_write_is_seen_before_the_informer_echoes_it() -> None:
    tracker = ResourceClaimTracker()
    tracker.on_add(claim("c", rv="5"))
    written = claim("c", result(GPU0), rv="6")
    tracker.assume_claim_after_api_call(written)
    assert tracker.get("default", "c") is written
    assert tracker.list() == [written]
    assert allocated(tracker)[0] == {GPU0}
    # An older event (sent before the write) does not undo it; the echo replaces it.
    tracker.on_update(claim("c", rv="4"), claim("c", rv="5"))
    assert tracker.get("default", "c") is written
    echo = claim("c", result(GPU0), rv="6")
    tracker.on_update(claim("c", rv="5"), echo)
    assert tracker.get("default", "c") is echo
    assert allocated(tracker)[0] == {GPU0}


def test_restore_drops_the_assumed_claim() -> None:
    tracker = ResourceClaimTracker()
    tracker.on_add(claim("c", rv="5"))
    tracker.assume_claim_after_api_call(claim("c", result(GPU0), rv="6"))
    tracker.assumed_claim_restore("default", "c")
    assert tracker.get("default", "c") == claim("c", rv="5")
    assert allocated(tracker)[0] == set()
    assert tracker.get("default", "missing") is None


def test_slices_and_classes() -> None:
    manager = DRAManager()
    gpu_slice = objects_pb2.ResourceSlice()
    gpu_slice.metadata.name = "node-1-gpu"
    manager.resource_slices.set(gpu_slice)
    listed = manager.resource_slices.list()
    assert list(listed) == [gpu_slice] and manager.resource_slices.list() is listed
    manager.resource_slices.remove(gpu_slice)
    assert list(manager.resource_slices.list()) == []
    gpu = objects_pb2.DeviceClass()
    gpu.metadata.name = "gpu"
    manager.device_classes.set(gpu)
    assert manager.device_classes.get("gpu") is gpu and manager.device_classes.list() == [gpu]
    manager.device_classes.remove(gpu)
    assert manager.device_classes.get("gpu") is None


def test_device_usage_and_changes_follow_the_claims_and_allocations_in_flight() -> None:
    tracker = ResourceClaimTracker()
    changes = tracker.subscribe()
    share = claim("share", result(NIC, shareID="s1", consumedCapacity={"bandwidth": "1Gi"}))
    tracker.on_add(share)
    tracker.on_add(claim("whole", result(GPU0)))
    assert changes.drain() == {NIC, GPU0}
    assert changes.drain() == set()
    tracker.signal_claim_pending_allocation(
        "uid-more", claim("more", result(NIC, shareID="s2", consumedCapacity={"bandwidth": "2Gi"})))
    assert tracker.device_usage(NIC) == (False, True, {"bandwidth": Fraction(3 * 2**30)})
    assert tracker.device_usage(GPU0) == (True, False, {})
    assert tracker.device_usage(GPU1) == (False, False, {})
    tracker.remove_claim_pending_allocation("uid-more")
    tracker.on_delete(share)
    assert changes.drain() == {NIC}
    assert tracker.device_usage(NIC) == (False, False, {})


def test_an_allocation_in_flight_counts_once_when_the_informer_shows_it_first() -> None:
    """The informer may deliver the written allocation before PreBind's write returns: from then on the
    claim's holding stands for the allocation in flight, so a share's capacity is not counted twice."""
    tracker = ResourceClaimTracker()
    changes = tracker.subscribe()
    pending = claim("pending", rv="1")
    tracker.on_add(pending)
    share = result(NIC, shareID="s1", consumedCapacity={"bandwidth": "30Gi"})
    tracker.signal_claim_pending_allocation("uid-pending", claim("pending", share, rv="1"))
    thirty = {NIC: {"bandwidth": Fraction(30 * 2**30)}}
    assert allocated(tracker) == (set(), {(NIC, "s1")}, thirty)
    changes.drain()
    written = claim("pending", share, rv="2")
    tracker.on_update(pending, written)
    assert allocated(tracker) == (set(), {(NIC, "s1")}, thirty)
    assert tracker.device_usage(NIC) == (False, True, {"bandwidth": Fraction(30 * 2**30)})
    tracker.assume_claim_after_api_call(written)
    assert tracker.remove_claim_pending_allocation("uid-pending")
    assert allocated(tracker) == (set(), {(NIC, "s1")}, thirty)
    assert changes.drain() == {NIC}
    # A deallocation while the allocation is still in flight makes it count again.
    tracker.signal_claim_pending_allocation("uid-pending", claim("pending", share, rv="2"))
    tracker.on_update(written, claim("pending", rv="3"))
    assert tracker.device_usage(NIC) == (False, True, {"bandwidth": Fraction(30 * 2**30)})
    tracker.remove_claim_pending_allocation("uid-pending")
    assert allocated(tracker) == (set(), set(), {})


def test_the_writes_answer_before_the_informer_also_counts_once() -> None:
    tracker = ResourceClaimTracker()
    tracker.on_add(claim("pending", rv="1"))
    whole = result(GPU0)
    tracker.signal_claim_pending_allocation("uid-pending", claim("pending", whole, rv="1"))
    tracker.assume_claim_after_api_call(claim("pending", whole, rv="2"))
    assert tracker.allocated_devices().devices == {GPU0}
    assert tracker.device_usage(GPU0).held
    tracker.remove_claim_pending_allocation("uid-pending")
    tracker.on_update(claim("pending", rv="1"), claim("pending", whole, rv="2"))
    assert allocated(tracker) == ({GPU0}, set(), {})
