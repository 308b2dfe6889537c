"""What DynamicResources' PreFilter works out for one pod and the later extension points read: the pod's
claims, where its allocated claims can be used, the allocator for the claims still to allocate, each
node's allocation found by Filter and the one Reserve chose.

Preemption's dry run clones the state per candidate node and removes victims from it: a victim's claim
that is reserved for that victim alone would be freed with it, so its devices count as free
(``free_claims_of``), and the allocator is built again over what is left.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, cast

from cluster.api import objects_pb2
from scheduler.dra import AllocatedState, Allocator, DeviceID, SharedDeviceID
from scheduler.dra.state import add_capacity, remove_capacity
from scheduler.framework.dra_manager import AllocatedDevices, holding_of
from scheduler.plugins.dynamicresources.extended import ExtendedClaim
from scheduler.plugins.helpers import NodeSelector

STATE_KEY = "DynamicResources"

NOTHING_ALLOCATED = AllocatedDevices({}, {}, {})


@dataclass(slots=True)
class ClaimsState:
    #: The pod's claims, in spec order (read-only: they may be the tracker's own objects).
    claims: list[objects_pb2.ResourceClaim]
    #: For each allocated claim, the nodes its allocation can be used on (None: any node).
    available_on: list[NodeSelector | None]
    #: The indexes in ``claims`` of the claims the scheduler allocates.
    to_allocate: list[int]
    #: The devices other claims hold (allocations in flight included) when PreFilter ran.
    allocated: AllocatedDevices
    #: How to build the allocator, given the claims to allocate and what is allocated.
    make_allocator: Callable[[Sequence[objects_pb2.ResourceClaim], AllocatedState], Allocator]
    #: Filter's allocation of ``to_allocate``'s claims on each node that fits.
    node_allocations: dict[str, list[objects_pb2.AllocationResult]] = field(default_factory=dict)
    #: Whether Filter's batch form decided nodes without allocating: Reserve allocates on the chosen one.
    allocate_in_reserve: bool = False
    #: Allocated claims that some node could not use (PostFilter may deallocate one).
    unavailable: set[int] = field(default_factory=set)
    #: Claims whose devices a dry run counts as free (uids), with preemption's victims.
    freed: frozenset[str] = frozenset()
    #: Reserve's choice: claim index -> its allocation on the chosen node.
    chosen: dict[int, objects_pb2.AllocationResult] = field(default_factory=dict)
    #: The claim for the pod's extended resources backed by DRA, if it has any.
    extended: ExtendedClaim | None = None
    #: The pod's PodGroup, when some of its claims are the group's.
    group: objects_pb2.PodGroup | None = None
    #: The indexes in ``claims`` of the group's claims: reserved for the PodGroup, not the pod.
    group_claims: frozenset[int] = frozenset()
    #: Group claims whose allocation and reservation this pod's PreBind wrote: its Unreserve undoes them
    #: when no member of the group is bound.
    written_for_group: set[int] = field(default_factory=set)
    _allocator: Allocator | None = None

    @property
    def allocator(self) -> Allocator | None:
        """The allocator of the claims to allocate, None when there are none."""
        if not self.to_allocate:
            return None
        if self._allocator is None:
            self._allocator = self.make_allocator(
                [self.claims[index] for index in self.to_allocate], allocated_state(self.allocated))
        return self._allocator

    def clone(self) -> ClaimsState:
        """A copy for a dry run: what it frees and finds is its own."""
        copy = ClaimsState(
            claims=self.claims, available_on=self.available_on, to_allocate=self.to_allocate,
            allocated=self.allocated, make_allocator=self.make_allocator, freed=self.freed,
            extended=None if self.extended is None else self.extended.clone(), group=self.group,
            group_claims=self.group_claims)
        copy._allocator = self._allocator
        return copy

    def free(self, claim: objects_pb2.ResourceClaim) -> None:
        """Count ``claim``'s devices as free (its only user is being removed)."""
        if claim.metadata.uid in self.freed:
            return
        self.freed |= {claim.metadata.uid}
        self.allocated = _without(self.allocated, claim)
        self._forget_allocators()

    def unfree(self, claim: objects_pb2.ResourceClaim) -> None:
        """Undo ``free``: the claim's user is back."""
        if claim.metadata.uid not in self.freed:
            return
        self.freed -= {claim.metadata.uid}
        self.allocated = _with(self.allocated, claim)
        self._forget_allocators()

    def _forget_allocators(self) -> None:
        self._allocator = None
        self.node_allocations = {}
        if self.extended is not None:
            self.extended = self.extended.clone()


def claim_ref(claim: objects_pb2.ResourceClaim) -> str:
    """namespace/name, as messages name a claim."""
    return f"{claim.metadata.namespace}/{claim.metadata.name}"


def allocated_state(allocated: AllocatedDevices) -> AllocatedState:
    """The allocator's view of ``allocated``. The framework names devices by plain tuples of the fields
    of the allocator's named tuples (it cannot import the allocator, which imports the plugins'
    helpers): equal as set and dict keys, which is all the allocator does with them."""
    return AllocatedState(
        devices=cast(Set[DeviceID], allocated.devices),
        shared_devices=cast(Set[SharedDeviceID], allocated.shared_devices),
        consumed_capacity=cast(Mapping[DeviceID, Mapping[str, Fraction]], allocated.consumed_capacity))


def _without(allocated: AllocatedDevices, claim: objects_pb2.ResourceClaim) -> AllocatedDevices:
    devices, shared, consumed = holding_of(claim)
    left = _copy_capacity(allocated)
    for device, name, amount in consumed:
        remove_capacity(left, cast(DeviceID, device), {name: amount})
    return allocated.without(devices, shared, left)


def _with(allocated: AllocatedDevices, claim: objects_pb2.ResourceClaim) -> AllocatedDevices:
    devices, shared, consumed = holding_of(claim)
    taken = _copy_capacity(allocated)
    for device, name, amount in consumed:
        add_capacity(taken, cast(DeviceID, device), {name: amount})
    return allocated.plus(devices, shared, taken)


def _copy_capacity(allocated: AllocatedDevices) -> dict[Any, dict[str, Fraction]]:
    return {device: dict(amounts) for device, amounts in allocated.consumed_capacity.items()}
