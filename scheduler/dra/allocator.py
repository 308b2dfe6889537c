"""The structured-parameters allocator (upstream's allocator, the variant with every feature): a
depth-first search over the claims of a pod, their requests and, per requested device, the node's
devices in pool and slice order. A device is taken when it is free (or shareable and with capacity
left), selected by the class and the request, its taints tolerated, its counters available and the
claim's constraints satisfied; when a later request cannot be satisfied the search backs out of the
last choice and tries the next device. The first complete solution wins, so the result is
deterministic. Given a ranker, the search tries each request's candidates in the ranker's order instead:
which devices the pod gets follows the ranking, whether its claims fit does not.

``Allocator`` is built once per pod: it looks up the classes, compiles the selectors and gets the
slices' index (anew, or kept from earlier pods: scheduler/dra/indexes.py). ``allocate(node)`` then costs
what that node's devices (and the cluster-wide ones) cost, and remembers per device whether selectors
match it, for the next node and pod that see it. Where the claims do not fit, ``unfit(node)`` says
which request and why (scheduler/dra/unfit.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

from cluster.api import objects_pb2
from scheduler.dra.capacity import Consumed, consumption, fits
from scheduler.dra.constraints import Constraint
from scheduler.dra.errors import AllocationError, NodeAllocationError
from scheduler.dra.indexes import FreshSliceIndexes, SliceIndexes
from scheduler.dra.pools import CounterSets, Pool, PoolID, SliceDevice
from scheduler.dra.requests import ClaimPlan, Request, RequestKey, Selectors
from scheduler.dra.results import build_allocation
from scheduler.dra.shareids import ShareIDSource
from scheduler.dra.state import AllocatedState, DeviceID, add_capacity, remove_capacity
from scheduler.dra.taints import taint_prevents
from scheduler.dra.unfit import Unfit, explain
from scheduler.framework.interface import DeviceCandidate

#: The most devices one claim's allocation may hold (resource.k8s.io/v1 AllocationResultsMaxSize).
ALLOCATION_RESULTS_MAX_SIZE = 32

#: The reference indexing, for allocators that are not given another.
FRESH_SLICE_INDEXES = FreshSliceIndexes()

#: Orders one request's candidate devices on a node: given the node, the request and its candidates (in
#: pool, slice and device order), their positions in the order to try them; None keeps that order.
DeviceRanker = Callable[[objects_pb2.Node, Request, Sequence[DeviceCandidate]], Sequence[int] | None]


class Allocator:
    """Allocates ``claims`` (all of a pod's claims that still need an allocation, in order) beside the
    ``allocated`` ones, from ``slices``, with the DeviceClasses ``classes`` looks up by name; a share of a
    device that allows multiple allocations gets its shareID from ``new_share_id``; the slices are
    indexed by ``slice_indexes``."""

    def __init__(
        self,
        claims: Sequence[objects_pb2.ResourceClaim],
        allocated: AllocatedState,
        classes: Callable[[str], objects_pb2.DeviceClass | None],
        slices: Sequence[objects_pb2.ResourceSlice],
        *,
        new_share_id: ShareIDSource,
        slice_indexes: SliceIndexes = FRESH_SLICE_INDEXES,
    ) -> None:
        self.allocated = allocated
        self.new_share_id = new_share_id
        looked_up: dict[str, tuple[objects_pb2.DeviceClass | None, Selectors | None]] = {}

        def device_class(name: str) -> tuple[objects_pb2.DeviceClass | None, Selectors | None]:
            entry = looked_up.get(name)
            if entry is None:
                found = classes(name)
                selectors = (
                    None if found is None else Selectors(f"class {found.metadata.name}", found.spec.selectors)
                )
                entry = looked_up[name] = (found, selectors)
            return entry

        self.plans = [ClaimPlan(index, claim, device_class) for index, claim in enumerate(claims)]
        self.slices = slice_indexes.index(slices)
        #: The counters each pool has left beside the allocated devices; the same from every node.
        self.available_counters: dict[PoolID, CounterSets] = {}
        #: The last search that found no allocation, for ``unfit``.
        self._failed: _Search | None = None

    def allocate(
        self, node: objects_pb2.Node, ranker: DeviceRanker | None = None
    ) -> list[objects_pb2.AllocationResult] | None:
        """One AllocationResult per claim, in order; None when the claims do not fit on ``node``. With
        ``ranker``, each request's devices are tried in its order. Raises AllocationError
        (NodeAllocationError when only this node is affected; also when the ranker names a position
        that is no candidate's, or one twice)."""
        try:
            pools = self.slices.pools_for(node)
        except AllocationError as err:
            raise AllocationError(f"gather pool information: {err}") from None
        return _Search(self, node, pools, ranker).run()

    def unfit(self, node: objects_pb2.Node) -> Unfit:
        """Why the claims do not fit on ``node``, where ``allocate(node)`` returned None: the request the
        search got furthest to without satisfying it, and the reason. Computed only when asked, so
        allocation itself builds no explanation."""
        search = self._failed
        if search is None or search.node is not node:
            if self.allocate(node) is not None:
                raise ValueError(f"the claims fit on node {node.metadata.name}")
            search = self._failed
        assert search is not None and search.unsatisfied is not None  # set by every failed search
        return explain(search, search.unsatisfied)

    def counters_left(self, pool: Pool) -> CounterSets:
        available = self.available_counters.get(pool.id)
        if available is None:
            available = {name: dict(counters) for name, counters in pool.counter_sets.items()}
            allocated = self.allocated.devices
            for entry in (*pool.slices, *pool.other_slices):
                for device in entry.devices:
                    if device.id not in allocated:
                        continue
                    for counter_set, counters in device.consumes:
                        left = available.get(counter_set, {})
                        for name, value in counters.items():
                            if name in left:
                                left[name] -= value
            self.available_counters[pool.id] = available
        return available


class _ResultsExceeded(Exception):
    """The devices chosen so far plus those the current request needs exceed what a claim may hold:
    backs out to where a firstAvailable list may pick a subrequest needing fewer."""


class Chosen:
    """A device chosen for a request, with its share of the device when it allows several."""

    __slots__ = ("consumed", "device", "request", "share_id")

    def __init__(
        self, request: Request, device: SliceDevice, share_id: str, consumed: dict[str, Consumed] | None
    ) -> None:
        self.request = request
        self.device = device
        self.share_id = share_id
        self.consumed = consumed


class _Search:
    """One ``allocate`` call: the node's pools and what the search has chosen so far."""

    def __init__(
        self, allocator: Allocator, node: objects_pb2.Node, pools: list[Pool], ranker: DeviceRanker | None
    ) -> None:
        self.allocator = allocator
        self.plans = allocator.plans
        self.allocated = allocator.allocated
        self.node = node
        self.pools = pools
        #: Per request key: how many devices it needs here, and for mode All which ones.
        self.device_counts: dict[tuple[int, int, int], int] = {}
        self.all_devices: dict[tuple[int, int, int], list[tuple[Pool, SliceDevice]]] = {}
        self.constraints: list[list[Constraint]] = []
        #: The claims (by index) each device is being allocated to.
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self.consumed_counters: dict[PoolID, dict[str, dict[str, Fraction]]] = {}
        self.chosen: list[list[Chosen]] = [[] for _ in self.plans]
        #: The subrequest chosen for each firstAvailable request, by (claim, request) index.
        self.selected: dict[tuple[int, int], int] = {}
        #: The key of the furthest request (in search order) no device could be found for.
        self.unsatisfied: RequestKey | None = None
        #: Per request key: the devices it may take here, and whether any of them is shared.
        self.candidates: dict[RequestKey, tuple[list[tuple[Pool, SliceDevice]], bool]] = {}
        self.ranker = ranker
        #: Per request key: its candidates in the ranker's order, as the search last reached the request.
        self.ranked: dict[RequestKey, list[tuple[Pool, SliceDevice]]] = {}

    def run(self) -> list[objects_pb2.AllocationResult] | None:
        for plan in self.plans:
            minimum = 0
            for slot in plan.slots:
                minimum += min(self._prepare(request) for request in slot.alternatives)
            if minimum > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {plan.name}: number of requested devices {minimum} exceeds the claim limit of "
                    f"{ALLOCATION_RESULTS_MAX_SIZE}"
                )
            if plan.constraint_error:
                raise AllocationError(plan.constraint_error)
            self.constraints.append(plan.new_constraints())

        try:
            done = self._allocate_one(0, 0, 0, 0, False)
        except _ResultsExceeded:
            raise AllocationError("allocation max size exceeded") from None
        if not done:
            self.allocator._failed = self
            if any(pool.invalid for pool in self.pools):
                # Other nodes may have valid pools: this node alone fails, with the reason.
                raise NodeAllocationError("invalid resource pools were encountered")
            return None
        return [
            build_allocation(plan, self.chosen[index], self.selected, self.node.metadata.name, index)
            for index, plan in enumerate(self.plans)
        ]

    def _prepare(self, request: Request) -> int:
        """How many devices ``request`` needs on this node (for mode All: which ones, too)."""
        if request.error:
            raise AllocationError(request.error)
        if not request.all_devices:
            count = request.count
        else:
            devices = []
            for pool in self.pools:
                where = (
                    f"claim {self.plans[request.key[0]].name}, request {request.name}: "
                    f"asks for all devices, but resource pool {pool.id}"
                )
                if pool.incomplete:
                    raise AllocationError(f"{where} is currently being updated")
                if pool.invalid:
                    raise AllocationError(f"{where} is currently invalid")
                for entry in pool.slices:
                    for device in entry.devices:
                        if self._selectable(request, device) and self.capacity_fits(request, device):
                            devices.append((pool, device))
            self.all_devices[request.key] = devices
            count = len(devices)
        self.device_counts[request.key] = count
        return count

    def _selectable(self, request: Request, device: SliceDevice) -> bool:
        return request.selects(device) and device.on_node(self.node)

    def capacity_fits(self, request: Request, device: SliceDevice) -> bool:
        allocated = self.allocated.consumed_capacity.get(device.id)
        allocating = self.allocating_capacity.get(device.id)
        if allocated or allocating:
            return fits(device, request.capacity, allocated, allocating)
        # With no other consumer the answer depends on the device and the request alone: remembered.
        alone = device.fits_alone.get(request.capacity_key)
        if alone is None:
            alone = device.fits_alone[request.capacity_key] = fits(device, request.capacity, None, None)
        return alone

    def _in_use(self, device: DeviceID) -> bool:
        return device in self.allocated.devices or bool(self.allocating.get(device))

    def _allocate_one(
        self, claim: int, slot_index: int, sub: int, device_index: int, in_sub: bool, start: int = 0
    ) -> bool:
        """Chooses the ``device_index``-th device of the claim's request (subrequest ``sub``), from the
        request's ``start``-th candidate on, and, in turn, everything after it; True once every claim is
        allocated.

        A request's devices are tried in ascending candidate order only. Whether a set of devices
        satisfies the claims does not depend on the order they were chosen in (constraints, counters
        and capacity are properties of the set), so the first solution in upstream's search order is
        ascending too and this finds the same one: what it skips are the orderings of sets already
        refused, which made a node with too few free devices cost every permutation of them. The same
        holds for any order of the candidates that stays fixed while the request's devices are chosen:
        a ranker orders them once each time the search reaches the request (``_ranked``)."""
        if claim >= len(self.plans):
            return True
        slots = self.plans[claim].slots
        if slot_index >= len(slots):
            try:
                return self._allocate_one(claim + 1, 0, 0, 0, False)
            except _ResultsExceeded:
                # Choices in this claim's firstAvailable lists cannot change the next claim's needs.
                return False
        slot = slots[slot_index]
        if slot.first_available and not in_sub:
            all_exceeded = True
            for alternative in range(len(slot.alternatives)):
                try:
                    done = self._allocate_one(claim, slot_index, alternative, device_index, True)
                except _ResultsExceeded:
                    continue
                all_exceeded = False
                if done:
                    self.selected[(claim, slot_index)] = alternative
                    return True
            if all_exceeded:
                raise _ResultsExceeded
            return False

        request = slot.alternatives[sub]
        needed = self.device_counts[request.key]
        if request.all_devices and needed == 0:
            return self._unsatisfied(request)
        if device_index >= needed:
            return self._allocate_one(claim, slot_index + 1, 0, 0, False)
        if len(self.chosen[claim]) + needed - device_index > ALLOCATION_RESULTS_MAX_SIZE:
            raise _ResultsExceeded

        if request.all_devices:
            # All devices are known already and each is needed: no alternatives to try.
            pool, device = self.all_devices[request.key][device_index]
            rollback = self._allocate_device(claim, request, pool, device, must=True)
            if rollback is None:
                return self._unsatisfied(request)
            return self._continue(claim, slot_index, sub, device_index, in_sub, rollback)

        candidates, shared = self._candidates(request)
        if self.ranker is not None:
            candidates = self._ranked(request, candidates, device_index)
        # Without shared devices each one serves once: too few candidates left cannot complete.
        last = len(candidates) if shared else len(candidates) - (needed - device_index) + 1
        for position in range(start, last):
            pool, device = candidates[position]
            if request.admin_access:
                if claim in self.allocating.get(device.id, ()):
                    continue
            elif self._in_use(device.id):
                continue
            if not self.capacity_fits(request, device):
                continue
            rollback = self._allocate_device(claim, request, pool, device, must=False)
            if rollback is None:
                continue
            # A shared device may serve the request again; any other is not tried twice.
            after = position if device.allow_multiple else position + 1
            if self._continue(claim, slot_index, sub, device_index, in_sub, rollback, after):
                return True
        return self._unsatisfied(request)

    def _candidates(self, request: Request) -> tuple[list[tuple[Pool, SliceDevice]], bool]:
        """The devices ``request`` may take on this node, in pool, slice and device order (incomplete
        and invalid pools serve nothing, but other pools may), and whether any allows several
        allocations; worked out once per request and node."""
        found = self.candidates.get(request.key)
        if found is None:
            devices = [
                (pool, device)
                for pool in self.pools if not (pool.incomplete or pool.invalid)
                for entry in pool.slices
                for device in entry.devices
                if self._selectable(request, device)
            ]
            found = self.candidates[request.key] = (devices, any(d.allow_multiple for _, d in devices))
        return found

    def _ranked(
        self, request: Request, candidates: list[tuple[Pool, SliceDevice]], device_index: int
    ) -> list[tuple[Pool, SliceDevice]]:
        """``candidates`` in the ranker's order. The ranker is asked as the search reaches the request
        (for its first device), with the capacity left beside what the search chose before; the
        request's further devices are chosen in that same order."""
        if device_index:
            return self.ranked[request.key]
        assert self.ranker is not None
        order = self.ranker(self.node, request, [self._candidate(device) for _, device in candidates])
        ranked = candidates
        if order is not None:
            where = f"claim {self.plans[request.key[0]].name}, request {request.name}"
            ranked = [candidates[position] for position in _every_position(order, len(candidates), where)]
        self.ranked[request.key] = ranked
        return ranked

    def _candidate(self, device: SliceDevice) -> DeviceCandidate:
        capacity = device.capacity
        if self._in_use(device.id):
            free = dict.fromkeys(capacity, Fraction(0))
        else:
            free = dict(capacity)
            for taken in (
                self.allocated.consumed_capacity.get(device.id),
                self.allocating_capacity.get(device.id),
            ):
                for name, value in (taken or {}).items():
                    if name in free:
                        free[name] -= value
        return DeviceCandidate(device.id, device.index, capacity, free)

    def _unsatisfied(self, request: Request) -> bool:
        """Notes that no device could be found for ``request`` (if the search got no further before);
        False, the search's answer."""
        if self.unsatisfied is None or request.key[:2] > self.unsatisfied[:2]:
            self.unsatisfied = request.key
        return False

    def _continue(
        self,
        claim: int,
        slot_index: int,
        sub: int,
        device_index: int,
        in_sub: bool,
        rollback: Callable[[], None],
        start: int = 0,
    ) -> bool:
        """Goes on with the next device (from the ``start``-th candidate) after one was chosen; backs the
        choice out when that fails."""
        try:
            done = self._allocate_one(claim, slot_index, sub, device_index + 1, in_sub, start)
        except _ResultsExceeded:
            rollback()
            raise
        if not done:
            rollback()
        return done

    def _allocate_device(
        self, claim: int, request: Request, pool: Pool, device: SliceDevice, *, must: bool
    ) -> Callable[[], None] | None:
        """Chooses ``device`` for ``request`` if it is available, its counters suffice, its taints are
        tolerated and the claim's constraints allow it; returns how to undo that, or None. With ``must``
        (mode All, where the device cannot be replaced) a violated constraint is an error."""
        device_id = device.id
        shared = device.allow_multiple
        if not shared and request.admin_access and claim in self.allocating.get(device_id, ()):
            return None
        if not request.admin_access and self._in_use(device_id):
            return None
        # A shared device's counters are consumed by its first allocation only.
        takes_counters = bool(device.consumes) and not (
            shared
            and (device_id in self.allocated.consumed_capacity or device_id in self.allocating_capacity)
        )
        if takes_counters and not self.take_counters(pool, device):
            return None
        if taint_prevents(device, request):
            if takes_counters:
                self.release_counters(pool, device)
            return None

        base, sub_name = (request.parent, request.name) if request.parent else (request.name, "")
        constraints = self.constraints[claim]
        for index, constraint in enumerate(constraints):
            if constraint.add(base, sub_name, device):
                continue
            if must:
                raise AllocationError(
                    f"claim {self.plans[claim].name}, request {request.name}: cannot add device {device_id} "
                    "because a claim constraint would not be satisfied"
                )
            for added in constraints[:index]:
                added.remove(base, sub_name, device)
            if takes_counters:
                self.release_counters(pool, device)
            return None

        if not self.capacity_fits(request, device):
            for added in constraints:
                added.remove(base, sub_name, device)
            if takes_counters:
                self.release_counters(pool, device)
            return None

        claims = self.allocating.setdefault(device_id, set())
        if not shared:
            claims.add(claim)
        consumed = None
        share_id = ""
        if shared:
            consumed = consumption(device, request.capacity)
            share_id = self.allocator.new_share_id()
            add_capacity(
                self.allocating_capacity, device_id, {name: value for name, (value, _) in consumed.items()}
            )
        chosen = self.chosen[claim]
        position = len(chosen)
        chosen.append(Chosen(request, device, share_id, consumed or None))

        def rollback() -> None:
            for added in constraints:
                added.remove(base, sub_name, device)
            claims.discard(claim)
            if consumed:
                remove_capacity(
                    self.allocating_capacity,
                    device_id,
                    {name: value for name, (value, _) in consumed.items()},
                )
            if takes_counters:
                self.release_counters(pool, device)
            del chosen[position:]

        return rollback

    def take_counters(self, pool: Pool, device: SliceDevice) -> bool:
        """Counts ``device``'s counter consumption in, if the pool's counters (less what allocated
        devices consume) still cover everything counted in; a pool already over its counters serves no
        further counter-consuming device."""
        available = self.allocator.counters_left(pool)
        consumed = self.consumed_counters.setdefault(pool.id, {})
        for counter_set, counters in device.consumes:
            in_set = consumed.setdefault(counter_set, {})
            for name, value in counters.items():
                in_set[name] = in_set.get(name, Fraction(0)) + value
        for counter_set, counters in available.items():
            in_set = consumed.get(counter_set, {})
            for name, value in counters.items():
                if value < in_set.get(name, 0):
                    self.release_counters(pool, device)
                    return False
        return True

    def release_counters(self, pool: Pool, device: SliceDevice) -> None:
        consumed = self.consumed_counters[pool.id]
        for counter_set, counters in device.consumes:
            in_set = consumed[counter_set]
            for name, value in counters.items():
                in_set[name] -= value


def _every_position(order: Sequence[int], count: int, where: str) -> list[int]:
    """A ranker's ``order`` of ``count`` candidates, followed by the positions it left out in their own
    order: ranking never takes a candidate out of the search."""
    named: set[int] = set()
    for position in order:
        if not 0 <= position < count:
            raise AllocationError(f"{where}: the device ranking names candidate {position} of {count}")
        if position in named:
            raise AllocationError(f"{where}: the device ranking names candidate {position} twice")
        named.add(position)
    return [*order, *(position for position in range(count) if position not in named)]
