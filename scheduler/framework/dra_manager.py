"""What the framework offers DRA plugins (kube-scheduler's SharedDRAManager): the ResourceClaims, the
ResourceSlices and the DeviceClasses the scheduler's informers deliver.

``ResourceClaimTracker`` is kube-scheduler's claim tracker: the informer's claims, each possibly
overlaid by the scheduler's own newer write (assume-after-API-call: a PreBind's status update is seen
before the informer echoes it, and an older echo does not undo it), the allocations in flight between
Reserve and the end of PreBind, and the devices every claim holds. Those are counted as claims come
and go (one claim's devices per event), so a scheduling cycle asks for them without a pass over all
claims.

Who keeps its own view of the devices (the GPU columns, scheduler/gpus) subscribes to ``DeviceChanges``:
the devices whose holding changed since it last looked, so it updates those alone.

Devices are named by plain tuples, ``(driver, pool, device)`` and ``((driver, pool, device), shareID)``:
equal, as keys, to the allocator's ``DeviceID`` and ``SharedDeviceID`` (named tuples of those fields),
so the framework does not depend on the allocator and its sets are the allocator's as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from fractions import Fraction
from typing import Any, NamedTuple

from cluster.api import objects_pb2
from cluster.api.quantity import parse_quantity
from scheduler.framework.extended_resources import DeviceClassResolver

#: (driver, pool, device): the allocator's DeviceID.
DeviceID = tuple[str, str, str]
#: (device, shareID): the allocator's SharedDeviceID.
SharedDeviceID = tuple[DeviceID, str]

#: What one claim's allocation holds: its dedicated devices, its shares of shareable devices, and the
#: capacity those shares consume (device -> capacity name -> amount).
Holding = tuple[tuple[DeviceID, ...], tuple[SharedDeviceID, ...], tuple[tuple[DeviceID, str, Fraction], ...]]

_NOTHING: Holding = ((), (), ())
_NO_CAPACITY: dict[str, Fraction] = {}


def _devices_of(holding: Holding) -> set[DeviceID]:
    devices, shared, consumed = holding
    return {*devices, *(device for device, _ in shared), *(device for device, _, _ in consumed)}


class DeviceUsage(NamedTuple):
    """What claims hold of one device: it to themselves, shares of it, and what those shares consume of
    its capacities (by name)."""

    held: bool
    shared: bool
    consumed: dict[str, Fraction]


class DeviceChanges:
    """The devices whose holding changed (a claim's allocation came, went or changed; an allocation in
    flight began or ended) since the subscriber last drained them."""

    __slots__ = ("_changed",)

    def __init__(self) -> None:
        self._changed: set[DeviceID] = set()

    def add(self, devices: set[DeviceID]) -> None:
        self._changed |= devices

    def drain(self) -> set[DeviceID]:
        """The devices changed since the last drain; from now on, none."""
        changed, self._changed = self._changed, set()
        return changed


class AllocatedDevices:
    """The devices claims hold at one moment: the fields of the allocator's ``AllocatedState``. Read-only:
    the tracker hands one to every caller until what it adds up changes; a dry run's changes make new
    ones (``without``, ``plus``). The device sets are the keys of dicts (their values mean nothing): a
    dict's copy reuses the hashes it stores, where a set made from a set view hashes every key again."""

    __slots__ = ("_devices", "_shared", "consumed_capacity", "generation")

    def __init__(self, devices: dict[DeviceID, int], shared: dict[SharedDeviceID, int],
                 consumed_capacity: Mapping[DeviceID, Mapping[str, Fraction]], generation: int = -1) -> None:
        self._devices = devices
        self._shared = shared
        self.consumed_capacity = consumed_capacity
        #: The tracker's ``generation`` these are of; -1 for devices held at no generation of it (a copy
        #: changed since).
        self.generation = generation

    @property
    def devices(self) -> Set[DeviceID]:
        return self._devices.keys()

    @property
    def shared_devices(self) -> Set[SharedDeviceID]:
        return self._shared.keys()

    def without(self, devices: Iterable[DeviceID], shared: Iterable[SharedDeviceID],
                consumed_capacity: Mapping[DeviceID, Mapping[str, Fraction]]) -> AllocatedDevices:
        """A copy with ``devices`` and ``shared`` free, and ``consumed_capacity`` consumed."""
        held, shares = self._devices.copy(), self._shared.copy()
        for device in devices:
            held.pop(device, None)
        for share in shared:
            shares.pop(share, None)
        return AllocatedDevices(held, shares, consumed_capacity)

    def plus(self, devices: Iterable[DeviceID], shared: Iterable[SharedDeviceID],
             consumed_capacity: Mapping[DeviceID, Mapping[str, Fraction]]) -> AllocatedDevices:
        """A copy with ``devices`` and ``shared`` held too, and ``consumed_capacity`` consumed."""
        held, shares = self._devices.copy(), self._shared.copy()
        held.update(dict.fromkeys(devices, 1))
        shares.update(dict.fromkeys(shared, 1))
        return AllocatedDevices(held, shares, consumed_capacity)


def claim_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def _key_of(claim: objects_pb2.ResourceClaim) -> str:
    return claim_key(claim.metadata.namespace, claim.metadata.name)


def _revision(claim: objects_pb2.ResourceClaim) -> int:
    try:
        return int(claim.metadata.resource_version or 0)
    except ValueError:
        return 0


def holding_of(claim: objects_pb2.ResourceClaim) -> Holding:
    """The devices ``claim``'s allocation holds. Devices allocated with admin access are not held: they
    stay available to ordinary claims, as in Kubernetes."""
    if not claim.status.HasField("allocation"):
        return _NOTHING
    devices: list[DeviceID] = []
    shared: list[SharedDeviceID] = []
    consumed: list[tuple[DeviceID, str, Fraction]] = []
    for result in claim.status.allocation.devices.results:
        if result.admin_access:
            continue
        device = (result.driver, result.pool, result.device)
        if not result.HasField("share_id"):
            devices.append(device)
            continue
        shared.append((device, result.share_id))
        consumed.extend((device, name, parse_quantity(amount))
                        for name, amount in result.consumed_capacity.items())
    return tuple(devices), tuple(shared), tuple(consumed)


class _AllocatedDevices:
    """Counts of what the claims' holdings add up to: a device is allocated while any holding has it.

    The counts are plain dicts, not Counters: copying a dict reuses the hashes it stores, while a set
    built from a Counter (a dict subclass) hashes every nested-tuple key again, which at thousands of
    held devices made ``state`` most of PreFilter."""

    def __init__(self) -> None:
        self._devices: dict[DeviceID, int] = {}
        self._shared: dict[SharedDeviceID, int] = {}
        #: Shares per device, so that whether a device has any is one lookup.
        self._sharing: dict[DeviceID, int] = {}
        self._consumed: dict[DeviceID, dict[str, Fraction]] = {}

    def add(self, holding: Holding, sign: int = 1) -> None:
        devices, shared, consumed = holding
        for device in devices:
            self._count(self._devices, device, sign)
        for share in shared:
            self._count(self._shared, share, sign)
            self._count(self._sharing, share[0], sign)
        for device, name, amount in consumed:
            # A device's amounts are replaced, never changed in place: ``state`` shares them.
            per_device = dict(self._consumed.get(device, _NO_CAPACITY))
            total = per_device.get(name, Fraction(0)) + sign * amount
            if total:
                per_device[name] = total
            else:
                per_device.pop(name, None)
            if per_device:
                self._consumed[device] = per_device
            else:
                self._consumed.pop(device, None)

    def held(self, device: DeviceID) -> bool:
        """Whether some holding has ``device`` to itself."""
        return device in self._devices

    def shared(self, device: DeviceID) -> bool:
        """Whether some holding has a share of ``device``."""
        return device in self._sharing

    def consumed(self, device: DeviceID) -> dict[str, Fraction]:
        """What the holdings' shares consume of ``device`` (the caller does not change it)."""
        return self._consumed.get(device, _NO_CAPACITY)

    @staticmethod
    def _count(counts: dict[Any, int], key: object, sign: int) -> None:
        total = counts.get(key, 0) + sign
        if total > 0:
            counts[key] = total
        else:
            counts.pop(key, None)

    def state(self, extra: Sequence[Holding] = (), generation: int = -1) -> AllocatedDevices:
        """A copy, with ``extra`` holdings added: later events do not change it. The device sets are
        copies of the counts (no key hashed again); each device's amounts are shared with the counts
        (which replace them rather than change them), so a copy costs a shallow one of the dict, not one
        per device: the callers only read them."""
        devices = self._devices.copy()
        shared = self._shared.copy()
        consumed = dict(self._consumed)
        for more_devices, more_shared, more_consumed in extra:
            devices.update(dict.fromkeys(more_devices, 1))
            shared.update(dict.fromkeys(more_shared, 1))
            for device, name, amount in more_consumed:
                per_device = consumed[device] = dict(consumed.get(device, _NO_CAPACITY))
                per_device[name] = per_device.get(name, Fraction(0)) + amount
        return AllocatedDevices(devices, shared, consumed, generation)


class ResourceClaimTracker:
    """The claims as the scheduler knows them (see the module's docstring)."""

    def __init__(self) -> None:
        self._informed: dict[str, objects_pb2.ResourceClaim] = {}
        self._assumed: dict[str, objects_pb2.ResourceClaim] = {}
        #: What each claim currently counts for in ``_allocated`` (its effective object's holding).
        self._holdings: dict[str, Holding] = {}
        self._allocated = _AllocatedDevices()
        #: Claim uid -> the claim with the allocation Reserve chose, until PreBind wrote it or gave up.
        self._in_flight: dict[str, objects_pb2.ResourceClaim] = {}
        #: Claim key -> the uid of its allocation in flight.
        self._in_flight_uids: dict[str, str] = {}
        #: The allocations in flight that count: those whose claim, as known, holds no devices yet.
        self._in_flight_holdings: dict[str, Holding] = {}
        #: What the allocations in flight add up to, for ``device_usage``.
        self._in_flight_allocated = _AllocatedDevices()
        self._subscribers: list[DeviceChanges] = []
        #: Bumped whenever what ``allocated_devices`` adds up changes: a view that took in every change
        #: reported so far stands for the devices held at the current generation.
        self.generation = 0
        #: ``allocated_devices`` of the current generation once asked for: the pods of a cycle after which
        #: nothing changed (those that failed) share it.
        self._allocated_now: AllocatedDevices | None = None

    # ------------------------------------------------------------------------------------ reading

    def get(self, namespace: str, name: str) -> objects_pb2.ResourceClaim | None:
        """The claim (the scheduler's own newer write if there is one); None when there is none."""
        key = claim_key(namespace, name)
        assumed = self._assumed.get(key)
        return assumed if assumed is not None else self._informed.get(key)

    def list(self) -> list[objects_pb2.ResourceClaim]:
        return [self._assumed.get(key) or claim for key, claim in self._informed.items()]

    def allocated_devices(self) -> AllocatedDevices:
        """The devices every claim holds, allocations in flight included, as of now."""
        now = self._allocated_now
        if now is None or now.generation != self.generation:
            now = self._allocated_now = self._allocated.state(tuple(self._in_flight_holdings.values()),
                                                               self.generation)
        return now

    def device_usage(self, device: DeviceID) -> DeviceUsage:
        """What claims hold of ``device``, allocations in flight included: ``allocated_devices()`` for one
        device (the caller does not change the consumed capacity it is handed)."""
        base, flight = self._allocated, self._in_flight_allocated
        consumed, more = base.consumed(device), flight.consumed(device)
        if more:
            consumed = dict(consumed)
            for name, amount in more.items():
                consumed[name] = consumed.get(name, Fraction(0)) + amount
        return DeviceUsage(base.held(device) or flight.held(device),
                           base.shared(device) or flight.shared(device), consumed)

    def subscribe(self) -> DeviceChanges:
        """A feed of the devices whose holding changes from now on (see ``DeviceChanges``)."""
        changes = DeviceChanges()
        self._subscribers.append(changes)
        return changes

    def _changed(self, *holdings: Holding) -> None:
        self.generation += 1
        if self._subscribers:
            devices = set().union(*map(_devices_of, holdings))
            for subscriber in self._subscribers:
                subscriber.add(devices)

    # --------------------------------------------------------------------- allocations in flight

    def signal_claim_pending_allocation(self, uid: str, allocated: objects_pb2.ResourceClaim) -> None:
        """Reserve chose ``allocated``'s allocation for claim ``uid``: its devices count as taken, and
        other pods that need the claim wait, until ``remove_claim_pending_allocation``."""
        self._forget_in_flight(uid)
        self._in_flight[uid] = allocated
        self._in_flight_uids[_key_of(allocated)] = uid
        self._count_in_flight(uid)

    def claim_has_pending_allocation(self, uid: str) -> bool:
        return uid in self._in_flight

    def pending_allocation(self, uid: str) -> objects_pb2.ResourceClaim | None:
        """Claim ``uid`` with the allocation Reserve chose for it, while that is in flight (a PodGroup's
        claim allocated for one member is the one its other members use); None when none is."""
        return self._in_flight.get(uid)

    def remove_claim_pending_allocation(self, uid: str) -> bool:
        """Forget the allocation in flight for claim ``uid``; whether there was one."""
        return self._forget_in_flight(uid)

    def _forget_in_flight(self, uid: str) -> bool:
        allocated = self._in_flight.pop(uid, None)
        if allocated is None:
            return False
        key = _key_of(allocated)
        if self._in_flight_uids.get(key) == uid:
            del self._in_flight_uids[key]
        self._count_in_flight(uid)
        return True

    def _count_in_flight(self, uid: str) -> None:
        """Count claim ``uid``'s allocation in flight while there is one and its claim, as known, holds no
        devices. Once the informer (or the write's answer) shows the allocation, the claim's holding stands
        for it: counted both ways, a share's consumed capacity would count twice in between."""
        allocated = self._in_flight.get(uid)
        counts = allocated is not None and _key_of(allocated) not in self._holdings
        holding = self._in_flight_holdings.get(uid)
        if counts and holding is None and allocated is not None:
            holding = self._in_flight_holdings[uid] = holding_of(allocated)
            self._in_flight_allocated.add(holding)
            self._changed(holding)
        elif not counts and holding is not None:
            del self._in_flight_holdings[uid]
            self._in_flight_allocated.add(holding, -1)
            self._changed(holding)

    # ------------------------------------------------------------------------ the scheduler's writes

    def assume_claim_after_api_call(self, claim: objects_pb2.ResourceClaim) -> None:
        """``claim`` is what the API server returned for the scheduler's write: use it until the informer
        delivers it (or something newer). An echo of an older version changes nothing."""
        key = _key_of(claim)
        informed = self._informed.get(key)
        if informed is None or _revision(informed) >= _revision(claim):
            return
        self._assumed[key] = claim
        self._recount(key)

    def assumed_claim_restore(self, namespace: str, name: str) -> None:
        """Drop the scheduler's own version of the claim: the informer's is the truth again."""
        key = claim_key(namespace, name)
        if self._assumed.pop(key, None) is not None:
            self._recount(key)

    # ------------------------------------------------------------------------ the informer's events

    def on_add(self, claim: objects_pb2.ResourceClaim) -> None:
        self._set(claim)

    def on_update(self, old: objects_pb2.ResourceClaim, new: objects_pb2.ResourceClaim) -> None:
        self._set(new)

    def on_delete(self, claim: objects_pb2.ResourceClaim) -> None:
        key = _key_of(claim)
        self._informed.pop(key, None)
        self._assumed.pop(key, None)
        self._recount(key)

    def _set(self, claim: objects_pb2.ResourceClaim) -> None:
        key = _key_of(claim)
        self._informed[key] = claim
        assumed = self._assumed.get(key)
        if assumed is not None and _revision(claim) >= _revision(assumed):
            del self._assumed[key]
        self._recount(key)

    def _recount(self, key: str) -> None:
        current = self._assumed.get(key) or self._informed.get(key)
        holding = holding_of(current) if current is not None else _NOTHING
        before = self._holdings.get(key, _NOTHING)
        if holding == before:
            return
        self._allocated.add(before, -1)
        self._allocated.add(holding)
        self._changed(before, holding)
        if holding == _NOTHING:
            del self._holdings[key]
        else:
            self._holdings[key] = holding
        uid = self._in_flight_uids.get(key)
        if uid is not None:
            self._count_in_flight(uid)


class ResourceSliceLister:
    """The ResourceSlices, from the scheduler's informer."""

    def __init__(self) -> None:
        self._slices: dict[str, objects_pb2.ResourceSlice] = {}
        self._listed: tuple[objects_pb2.ResourceSlice, ...] | None = ()

    def list(self) -> Sequence[objects_pb2.ResourceSlice]:
        """Every slice; the same sequence until a slice changes, so a cycle's list costs nothing."""
        if self._listed is None:
            self._listed = tuple(self._slices.values())
        return self._listed

    def set(self, resource_slice: objects_pb2.ResourceSlice) -> None:
        self._slices[resource_slice.metadata.name] = resource_slice
        self._listed = None

    def remove(self, resource_slice: objects_pb2.ResourceSlice) -> None:
        self._slices.pop(resource_slice.metadata.name, None)
        self._listed = None


class DeviceClassLister:
    """The DeviceClasses, from the scheduler's informer, and the extended resources they serve."""

    def __init__(self) -> None:
        self._classes: dict[str, objects_pb2.DeviceClass] = {}
        self.extended_resources = DeviceClassResolver()

    def get(self, name: str) -> objects_pb2.DeviceClass | None:
        return self._classes.get(name)

    def list(self) -> list[objects_pb2.DeviceClass]:
        return list(self._classes.values())

    def set(self, device_class: objects_pb2.DeviceClass) -> None:
        self._classes[device_class.metadata.name] = device_class
        self.extended_resources.set(device_class)

    def remove(self, device_class: objects_pb2.DeviceClass) -> None:
        self._classes.pop(device_class.metadata.name, None)
        self.extended_resources.remove(device_class)


class DRAManager:
    """kube-scheduler's SharedDRAManager: the claims, slices and classes, one for all profiles."""

    def __init__(self) -> None:
        self.resource_claims = ResourceClaimTracker()
        self.resource_slices = ResourceSliceLister()
        self.device_classes = DeviceClassLister()
        #: Which class serves each extended resource name (kept by ``device_classes``).
        self.extended_resources = self.device_classes.extended_resources
