"""scheduler_perf's allocResourceClaims step: the ResourceClaims of a namespace allocated without any pod,
one at a time, each on the first node of a random order of the nodes where the scheduler's own allocator
(scheduler.dra's Allocator) finds it devices, and written at once with an UpdateStatus.

As dra.go's allocResourceClaimsOp.run, the step keeps its own view of what is allocated (every claim of
the cluster as listed at the start, plus each allocation it writes), so that each allocation sees the
earlier ones without waiting for a watch to show them. The slices, classes and nodes are those the API
server has, listed once: nothing else changes them while the step runs.
"""

from __future__ import annotations

import logging
import random

from cluster.api import kinds, objects_pb2
from cluster.client import Client
from scheduler.dra.allocator import Allocator
from scheduler.dra.indexes import ReusedSliceIndexes
from scheduler.dra.shareids import share_ids_from
from scheduler.dra.state import AllocatedState, DeviceID, SharedDeviceID, add_capacity, allocated_state_of

log = logging.getLogger(__name__)


class AllocationFailed(RuntimeError):
    """A claim fits on no node."""


class _Held:
    """What the claims hold, kept up to date as the step allocates; ``state`` is the allocators' view of
    it (the allocator only reads, so one view serves every allocator)."""

    def __init__(self, claims: list[objects_pb2.ResourceClaim]) -> None:
        listed = allocated_state_of(claims)
        self._devices: set[DeviceID] = set(listed.devices)
        self._shared: set[SharedDeviceID] = set(listed.shared_devices)
        self._consumed = {device: dict(amounts) for device, amounts in listed.consumed_capacity.items()}
        self.state = AllocatedState(self._devices, self._shared, self._consumed)

    def add(self, claim: objects_pb2.ResourceClaim) -> None:
        """Adds the claim's allocation."""
        taken = allocated_state_of([claim])
        self._devices |= taken.devices
        self._shared |= taken.shared_devices
        for device, consumed in taken.consumed_capacity.items():
            add_capacity(self._consumed, device, dict(consumed))


async def allocate_claims(client: Client, namespace: str, rng: random.Random) -> int:
    """Allocates every unallocated claim of ``namespace`` (nodes picked with ``rng``); returns how many.
    Raises AllocationFailed naming the first claim that fits nowhere."""
    claims: list[objects_pb2.ResourceClaim] = (await client.list_all(kinds.RESOURCE_CLAIM)).items  # type: ignore[assignment]
    nodes: list[objects_pb2.Node] = (await client.list_all(kinds.NODE)).items  # type: ignore[assignment]
    slices: list[objects_pb2.ResourceSlice] = (
        await client.list_all(kinds.RESOURCE_SLICE)).items  # type: ignore[assignment]
    classes: dict[str, objects_pb2.DeviceClass] = {
        c.metadata.name: c for c in (await client.list_all(kinds.DEVICE_CLASS)).items}  # type: ignore[attr-defined,misc]
    held = _Held(claims)
    # The slices do not change meanwhile: one index serves every allocator.
    indexes, share_ids = ReusedSliceIndexes(), share_ids_from(rng)
    pending = [c for c in claims if c.metadata.namespace == namespace and not c.status.HasField("allocation")]
    log.info("allocating %d ResourceClaims of %s", len(pending), namespace)
    for number, claim in enumerate(pending):
        allocator = Allocator([claim], held.state, classes.get, slices, new_share_id=share_ids,
                              slice_indexes=indexes)
        rng.shuffle(nodes)
        for node in nodes:
            results = allocator.allocate(node)
            if results is not None:
                claim.status.allocation.CopyFrom(results[0])
                held.add(await client.update_status(claim))
                break
        else:
            raise AllocationFailed(f"ResourceClaim {namespace}/{claim.metadata.name} ({number + 1} of "
                                   f"{len(pending)}) fits on none of the {len(nodes)} nodes")
    return len(pending)
