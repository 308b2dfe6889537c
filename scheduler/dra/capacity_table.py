"""What every node's devices have left, as NumPy arrays: the table DynamicResources' batch Filter decides
a plain request on all nodes at once with (scheduler/plugins/dynamicresources/fast_filter.py), and any
per-device view of the cluster (a GPU's free share) can read.

``DeviceLayout`` lists the devices of each node that only plain pools serve, node after node, each
node's in the order the allocator tries them: pools that name their node (``nodeName``), complete and
valid, whose devices need no binding conditions, consume no counters, carry no taint, are selected by
no per-device node selection and have whole-numbered capacities. Any other node is NOT_PLAIN (its
verdicts come from the allocator); a slice that serves nodes otherwise (all nodes, a node selector,
shared counters) makes the layout empty, every node NOT_PLAIN.

``DeviceCapacityTable`` keeps, per device of the layout, whether a claim holds it to itself (``held``)
and how much of each capacity shares of it consume (``consumed``), as the claim tracker's
``allocated_devices`` adds them up (allocations in flight included): each device's usage read from the
tracker with the layout, then again for the devices its change feed reports (``UsageFeed``), each time
the table is asked. It stands for the devices held at the tracker's current ``generation``.

The GPU view (scheduler/gpus/table.py) lays out its devices from the same slice index
(``usable_devices``), meets nodes by the same names (node_rows.py) and follows usage with a
``UsageFeed`` too.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from scheduler.dra.errors import AllocationError
from scheduler.dra.indexes import ReusedSliceIndexes
from scheduler.dra.node_rows import NodeRows
from scheduler.dra.pools import Pool, SliceDevice, SliceIndex
from scheduler.dra.state import DeviceID
from scheduler.framework.dra_manager import DeviceUsage, DRAManager, ResourceClaimTracker
from scheduler.framework.nodedata import NodeSet

#: The slot of a node whose devices the layout does not hold: the allocator decides there.
NOT_PLAIN = -1
#: Capacities and consumption at or beyond this are left to the allocator (int64 sums stay exact).
_LIMIT = 2**62

Ints = npt.NDArray[np.int64]
Flags = npt.NDArray[np.bool_]


class DeviceLayout:
    """The devices of the nodes plain pools serve, and their capacities (see the module's doc)."""

    def __init__(self, index: SliceIndex) -> None:
        self.index = index
        #: Every device of the layout, node after node.
        self.devices: list[SliceDevice] = []
        #: Node name -> its slot (its devices are ``devices[starts[slot]:starts[slot + 1]]``), or
        #: NOT_PLAIN. A node no slice names has none of its own: the ``empty`` slot.
        self.slots: dict[str, int] = {}
        starts = [0]
        #: Whether the slots say where nodes stand; when not (a slice serves nodes by anything but their
        #: name, so gathering a node's pools needs its labels), every node is NOT_PLAIN.
        self.local = index.node_local
        if self.local:
            for name in index.node_names():
                devices = _plain_devices(index.local_pools(name))
                if devices is None:
                    self.slots[name] = NOT_PLAIN
                    continue
                self.slots[name] = len(starts) - 1
                self.devices.extend(devices)
                starts.append(len(self.devices))
        self.empty = len(starts) - 1
        starts.append(len(self.devices))
        self.starts: Ints = np.asarray(starts, dtype=np.int64)
        self.position: dict[DeviceID, int] = {device.id: i for i, device in enumerate(self.devices)}
        #: The capacity names of the layout's devices: the columns of the capacity arrays.
        self.capacity_names: list[str] = sorted({name for d in self.devices for name in d.capacity})
        #: Capacity name -> its column.
        self.column = column = {name: c for c, name in enumerate(self.capacity_names)}
        self.total: Ints = np.zeros((len(self.devices), len(self.capacity_names)), dtype=np.int64)
        specs: dict[tuple[tuple[str, bytes], ...], int] = {}
        spec_of = []
        #: One device of each capacity specification (its capacities with their request policies).
        self.spec_devices: list[SliceDevice] = []
        for position, device in enumerate(self.devices):
            for name, value in device.capacity.items():
                self.total[position, column[name]] = int(value)
            key = tuple(sorted((name, capacity.SerializeToString(deterministic=True))
                               for name, capacity in device.proto.capacity.items()))
            if key not in specs:
                specs[key] = len(self.spec_devices)
                self.spec_devices.append(device)
            spec_of.append(specs[key])
        #: Each device's capacity specification, by its position in ``spec_devices``.
        self.spec_of: Ints = np.asarray(spec_of, dtype=np.int64)
        self.shared: Flags = np.asarray([d.allow_multiple for d in self.devices], dtype=np.bool_)
        #: Each device's slot.
        self.slot_of: Ints = np.repeat(np.arange(len(starts) - 1, dtype=np.int64), np.diff(self.starts))

    def per_slot(self, values: Ints) -> Ints:
        """The sums of ``values`` (a row per device, or one value) over each slot's devices."""
        return group_sums(values, self.starts)

    def devices_of(self, slots: Ints) -> tuple[Ints, Ints]:
        """The positions of the devices of ``slots``, slot after slot, and where each slot's devices
        begin among them, then where the last one's end (``group_sums``'s ``bounds``)."""
        sizes = self.starts[slots + 1] - self.starts[slots]
        bounds = np.zeros(len(slots) + 1, dtype=np.int64)
        np.cumsum(sizes, out=bounds[1:])
        positions: Ints = (np.repeat(self.starts[slots] - bounds[:-1], sizes)
                           + np.arange(bounds[-1], dtype=np.int64))
        return positions, bounds

    def slots_of(self, names: Sequence[str]) -> Ints:
        """The slot of each node named (the empty slot for a node without devices of its own; NOT_PLAIN
        for an empty name)."""
        if not self.local:
            return np.full(len(names), NOT_PLAIN, dtype=np.int64)
        get, empty = self.slots.get, self.empty
        return np.fromiter((get(name, empty) if name else NOT_PLAIN for name in names), dtype=np.int64,
                           count=len(names))


def group_sums(values: Ints, bounds: Ints) -> Ints:
    """The sums of ``values`` (rows) over each group of consecutive rows, group ``i`` being the rows from
    ``bounds[i]`` to ``bounds[i + 1]``."""
    sums = np.zeros((len(values) + 1, *values.shape[1:]), dtype=np.int64)
    np.cumsum(values, axis=0, out=sums[1:])
    result: Ints = sums[bounds[1:]] - sums[bounds[:-1]]
    return result


def usable_devices(pools: Iterable[Pool]) -> list[SliceDevice]:
    """The devices of ``pools`` the allocator may take, in its order: those of complete, valid pools."""
    return [device for pool in pools if not (pool.incomplete or pool.invalid)
            for entry in pool.slices for device in entry.devices]


def _plain_devices(pools: list[Pool]) -> list[SliceDevice] | None:
    """The devices of ``pools`` in the allocator's order, None if a pool or a device is not plain."""
    for pool in pools:
        if pool.incomplete or pool.invalid or pool.has_binding_conditions or pool.counter_sets:
            return None
        if any(entry.per_device for entry in pool.slices):
            return None
    devices = usable_devices(pools)
    return devices if all(map(_plain, devices)) else None


def _plain(device: SliceDevice) -> bool:
    proto = device.proto
    if proto.taints or proto.consumes_counters or proto.binding_conditions:
        return False
    try:
        capacity = device.capacity
    except AllocationError:
        return False
    return all(value.denominator == 1 and 0 <= value < _LIMIT for value in capacity.values())


Place = TypeVar("Place")


class UsageFeed:
    """What the claim tracker holds of the devices of a layout: of every device when the layout is new,
    then of those its change feed reports changed since."""

    __slots__ = ("_changes", "_claims")

    def __init__(self, claims: ResourceClaimTracker) -> None:
        self._claims = claims
        self._changes = claims.subscribe()

    def usage(self, places: Mapping[DeviceID, Place], new: bool) -> list[tuple[Place, DeviceUsage]]:
        """The usage of each device of ``places`` (device -> where the layout keeps it) when the layout
        is ``new``, else of each that changed since the last call; with where it is kept."""
        changed = self._changes.drain()
        usage_of = self._claims.device_usage
        if new:
            return [(place, usage_of(device)) for device, place in places.items()]
        found = ((places.get(device), device) for device in map(DeviceID._make, changed))
        return [(place, usage_of(device)) for place, device in found if place is not None]


class DeviceCapacityTable:
    """The layout of the DRA manager's slices and what its claims hold of each device (see the module's
    doc). One per DRA manager (``capacity_table``), shared by every profile's plugins."""

    def __init__(self, dra: DRAManager) -> None:
        # Not the manager itself: the tables are kept by manager, weakly.
        self._claims = dra.resource_claims
        self._slices = dra.resource_slices
        self._feed = UsageFeed(self._claims)
        #: The slices' index, with each device's selector results, kept across pods until slices change:
        #: the layout's devices are the allocator's.
        self.slice_indexes = ReusedSliceIndexes()
        self._layout: DeviceLayout | None = None
        #: The slots of a node table's rows.
        self._rows = NodeRows()
        self.held: Flags = np.zeros(0, dtype=np.bool_)
        self.consumed: Ints = np.zeros((0, 0), dtype=np.int64)
        #: Devices whose consumption is not a whole number below the limit, or names a capacity the
        #: device lacks: their nodes are left to the allocator.
        self.inexact: Flags = np.zeros(0, dtype=np.bool_)
        #: The tracker's generation each device's usage was last read at: what a view of the table at an
        #: older generation misses are the devices read since.
        self.read_at: Ints = np.zeros(0, dtype=np.int64)

    @property
    def generation(self) -> int:
        """The claim tracker's generation the table stands for once ``layout`` returned (its current
        one)."""
        return self._claims.generation

    def layout(self) -> DeviceLayout:
        """The layout of the current slices (laid out anew when they changed), the usage of its devices
        brought up to date."""
        index = self.slice_indexes.index(self._slices.list())
        layout = self._layout
        new = layout is None or layout.index is not index
        if new or layout is None:
            layout = self._layout = DeviceLayout(index)
            size = len(layout.devices)
            self.held = np.zeros(size, dtype=np.bool_)
            self.consumed = np.zeros((size, len(layout.capacity_names)), dtype=np.int64)
            self.inexact = np.zeros(size, dtype=np.bool_)
            self.read_at = np.zeros(size, dtype=np.int64)
        self._read(layout, self._feed.usage(layout.position, new))
        return layout

    def read_since(self, generation: int) -> Ints:
        """The positions of the devices of the layout whose usage was read after ``generation``."""
        changed: Ints = np.flatnonzero(self.read_at > generation)
        return changed

    def slots(self, nodes: NodeSet) -> Ints | None:
        """The slot of each of ``nodes`` in the current layout; None for nodes without rows."""
        layout = self.layout()
        return self._rows.of(nodes, layout, layout.slots_of)

    def free(self) -> Ints:
        """Each device's capacity left, by capacity name (``layout().capacity_names``), [devices, names]."""
        layout = self.layout()
        free: Ints = layout.total - self.consumed
        return free

    def _read(self, layout: DeviceLayout, usages: Iterable[tuple[int, DeviceUsage]]) -> None:
        generation = self.generation
        for at, usage in usages:
            self.read_at[at] = generation
            self.held[at] = usage.held
            self.consumed[at] = 0
            self.inexact[at] = False
            for name, amount in usage.consumed.items():
                column = layout.column.get(name)
                if column is None or not _whole(amount):
                    self.inexact[at] = True
                else:
                    self.consumed[at, column] = int(amount)


def _whole(amount: Fraction) -> bool:
    return amount.denominator == 1 and 0 <= amount < _LIMIT


_TABLES: weakref.WeakKeyDictionary[DRAManager, DeviceCapacityTable] = weakref.WeakKeyDictionary()


def capacity_table(dra: DRAManager) -> DeviceCapacityTable:
    """The DRA manager's device capacity table (made on first use)."""
    table = _TABLES.get(dra)
    if table is None:
        table = _TABLES[dra] = DeviceCapacityTable(dra)
    return table
