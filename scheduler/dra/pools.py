"""Which ResourceSlices serve a node, grouped into resource pools (upstream's GatherPools).

A slice serves a node by ``nodeName``, ``nodeSelector``, ``allNodes`` or, with
``perDeviceNodeSelection``, when one of its devices does; slices that only carry ``sharedCounters``
serve every node, since their counters limit the pool's devices wherever those are. Only the newest
generation of a pool counts. A pool with fewer slices of that generation than its
``resourceSliceCount`` is incomplete (nothing is allocated from it, and a request for all devices
fails); one with duplicate device or counter set names, or devices consuming undefined counters, is
invalid.

``SliceIndex`` sorts the slices once (by node name, cluster-wide, by pool) so that gathering one
node's pools costs that node's slices plus the cluster-wide ones, not every slice of the cluster.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from fractions import Fraction
from typing import NamedTuple

from google.protobuf import json_format

from cluster.api import objects_pb2
from cluster.api.quantity import parse_quantity
from scheduler.dra.errors import AllocationError
from scheduler.dra.state import DeviceID
from scheduler.plugins.helpers import NodeSelector

CounterSets = dict[str, dict[str, Fraction]]


class PoolID(NamedTuple):
    driver: str
    pool: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}"


def quantity(text: str, where: str) -> Fraction:
    """A quantity of a slice or claim; a malformed one (which validation keeps out) names its field."""
    try:
        return parse_quantity(text)
    except ValueError as err:
        raise AllocationError(f"{where}: {err}") from None


class _NodeSelection:
    """Where a slice's (or, with perDeviceNodeSelection, a device's) devices are: a node name, all
    nodes, or a node selector parsed once (its parse error kept, raised when a node is checked)."""

    __slots__ = ("all_nodes", "node_name", "selector", "selector_error", "selector_text")

    def __init__(self, node_name: str, all_nodes: bool, selector: objects_pb2.NodeSelector | None) -> None:
        self.node_name = node_name
        self.all_nodes = all_nodes
        self.selector: NodeSelector | None = None
        self.selector_error = ""
        self.selector_text = ""
        if selector is not None:
            try:
                self.selector = NodeSelector.from_proto(selector, strict=True)
            except ValueError as err:
                self.selector_error = str(err)
                self.selector_text = json.dumps(json_format.MessageToDict(selector), separators=(",", ":"))

    @property
    def given(self) -> bool:
        return (
            bool(self.node_name) or self.all_nodes or self.selector is not None or bool(self.selector_error)
        )

    def matches(self, node: objects_pb2.Node) -> bool:
        """Raises ValueError when the node selector does not parse."""
        if self.node_name:
            return node.metadata.name == self.node_name
        if self.all_nodes:
            return True
        if self.selector_error:
            raise ValueError(f"failed to parse node selector {self.selector_text}: {self.selector_error}")
        if self.selector is not None:
            return self.selector.matches(node)
        return False


def _device_selection(device: objects_pb2.Device) -> _NodeSelection:
    return _NodeSelection(
        device.node_name,
        device.all_nodes,
        device.node_selector if device.HasField("node_selector") else None,
    )


class SliceDevice:
    """One device of a slice, with what the allocator reads of it parsed once (its selector results are
    remembered here too, by the selectors' expressions), for as long as its slice is indexed."""

    __slots__ = (
        "_capacity",
        "_consumes",
        "_unsupported_attribute",
        "allow_multiple",
        "fits_alone",
        "id",
        "index",
        "matches",
        "proto",
        "selection",
        "slice",
    )

    def __init__(self, slice_: SliceEntry, index: int, device: objects_pb2.Device) -> None:
        self.proto = device
        self.slice = slice_
        #: The device's position in its slice.
        self.index = index
        self.id = DeviceID(slice_.driver, slice_.pool, device.name)
        self.allow_multiple = device.allow_multiple_allocations
        self.selection = _device_selection(device) if slice_.per_device else None
        #: Whether the device satisfies selectors: a class's by its expressions, a request's by its class's
        #: and its own.
        self.matches: dict[tuple[object, ...], bool] = {}
        #: Whether a request for these capacities fits while nothing else consumes the device, by the
        #: request's capacity key (consumable capacity's check, with no other consumer to count).
        self.fits_alone: dict[tuple[tuple[str, Fraction], ...], bool] = {}
        self._capacity: dict[str, Fraction] | None = None
        self._consumes: list[tuple[str, dict[str, Fraction]]] | None = None
        self._unsupported_attribute: str | None = None

    @property
    def unsupported_attribute(self) -> str:
        """The first attribute (by name) that has no value, which CEL cannot convert; empty if none."""
        if self._unsupported_attribute is None:
            # An attribute with a value (an empty list is none) serializes to at least a field's tag.
            attributes = self.proto.attributes
            self._unsupported_attribute = ""
            if not all(attribute.ByteSize() for attribute in attributes.values()):
                self._unsupported_attribute = min(
                    name for name, value in attributes.items() if not value.ByteSize()
                )
        return self._unsupported_attribute

    @property
    def capacity(self) -> dict[str, Fraction]:
        """The device's capacities by name."""
        if self._capacity is None:
            where = f"ResourceSlice {self.slice.name}, device {self.proto.name}"
            self._capacity = {
                name: quantity(capacity.value, f"{where}: capacity {name}")
                for name, capacity in self.proto.capacity.items()
            }
        return self._capacity

    @property
    def consumes(self) -> list[tuple[str, dict[str, Fraction]]]:
        """The counters the device consumes, by counter set."""
        if self._consumes is None:
            where = f"ResourceSlice {self.slice.name}, device {self.proto.name}"
            self._consumes = [
                (
                    consumption.counter_set,
                    {
                        name: quantity(counter.value, f"{where}: consumesCounters {consumption.counter_set}")
                        for name, counter in consumption.counters.items()
                    },
                )
                for consumption in self.proto.consumes_counters
            ]
        return self._consumes

    def on_node(self, node: objects_pb2.Node) -> bool:
        """Whether the device is reachable from ``node`` (always, unless its slice selects per device)."""
        if self.selection is None:
            return True
        try:
            return self.selection.matches(node)
        except ValueError as err:
            raise AllocationError(
                f"failed to perform node selection for device {self.proto.name} "
                f"in slice {self.slice.name}: {err}"
            ) from None


# How a slice says where its devices are.
_COUNTERS, _NODE_NAME, _ALL_NODES, _NODE_SELECTOR, _PER_DEVICE, _UNKNOWN = range(6)


class SliceEntry:
    """A ResourceSlice as the index keeps it: its pool, where it serves, its counter sets."""

    __slots__ = (
        "_devices",
        "count",
        "counter_sets",
        "driver",
        "generation",
        "index",
        "kind",
        "name",
        "per_device",
        "pool",
        "proto",
        "selection",
    )

    def __init__(self, index: int, slice_: objects_pb2.ResourceSlice) -> None:
        spec = slice_.spec
        self.proto = slice_
        self.index = index
        self.name = slice_.metadata.name
        self.driver = spec.driver
        self.pool = spec.pool.name
        self.generation = spec.pool.generation
        self.count = spec.pool.resource_slice_count
        self.per_device = spec.per_device_node_selection
        self.selection = _NodeSelection(
            spec.node_name, spec.all_nodes, spec.node_selector if spec.HasField("node_selector") else None
        )
        self.counter_sets = [
            (
                counter_set.name,
                {
                    name: quantity(
                        counter.value, f"ResourceSlice {self.name}: sharedCounters {counter_set.name}"
                    )
                    for name, counter in sorted(counter_set.counters.items())
                },
            )
            for counter_set in spec.shared_counters
        ]
        if self.counter_sets:
            self.kind = _COUNTERS
        elif self.selection.node_name:
            self.kind = _NODE_NAME
        elif self.selection.given:
            self.kind = _ALL_NODES if self.selection.all_nodes else _NODE_SELECTOR
        elif self.per_device:
            self.kind = _PER_DEVICE
        else:
            # Something newer than this allocator knows of: skipped, other pools may still serve.
            self.kind = _UNKNOWN
        self._devices: list[SliceDevice] | None = None

    @property
    def pool_id(self) -> PoolID:
        return PoolID(self.driver, self.pool)

    @property
    def devices(self) -> list[SliceDevice]:
        if self._devices is None:
            self._devices = [
                SliceDevice(self, index, device) for index, device in enumerate(self.proto.spec.devices)
            ]
        return self._devices

    def serves(self, node: objects_pb2.Node) -> bool:
        if self.kind in (_COUNTERS, _ALL_NODES):
            return True
        if self.kind in (_NODE_NAME, _NODE_SELECTOR):
            try:
                return self.selection.matches(node)
            except ValueError as err:
                raise AllocationError(
                    f"failed to perform node selection for slice {self.name}: {err}"
                ) from None
        if self.kind == _PER_DEVICE:
            return any(device.on_node(node) for device in self.devices)
        return False


class Pool:
    """A resource pool as one node sees it: the slices with devices for the node (sorted by name, the
    order devices are tried in), the pool's other slices (whose allocated devices still consume the
    pool's counters) and its counter sets."""

    __slots__ = (
        "counter_sets",
        "has_binding_conditions",
        "id",
        "incomplete",
        "invalid_reason",
        "other_slices",
        "slices",
    )

    def __init__(
        self,
        pool_id: PoolID,
        *,
        incomplete: bool = False,
        invalid_reason: str = "",
        slices: Sequence[SliceEntry] = (),
        other_slices: Sequence[SliceEntry] = (),
        counter_sets: CounterSets | None = None,
    ) -> None:
        self.id = pool_id
        self.incomplete = incomplete
        self.invalid_reason = invalid_reason
        self.slices = list(slices)
        self.other_slices = list(other_slices)
        self.counter_sets: CounterSets = counter_sets or {}
        #: Devices of the pool need binding conditions: the allocator tries such pools last.
        self.has_binding_conditions = any(
            device.binding_conditions for entry in self.slices for device in entry.proto.spec.devices
        )

    @property
    def invalid(self) -> bool:
        return bool(self.invalid_reason)


def _duplicate_device(slices: Sequence[SliceEntry]) -> str:
    seen: set[str] = set()
    for entry in slices:
        for device in entry.proto.spec.devices:
            if device.name in seen:
                return f"duplicate device name {device.name}"
            seen.add(device.name)
    return ""


def _counter_sets(slices: Sequence[SliceEntry]) -> tuple[CounterSets, str]:
    counter_sets: CounterSets = {}
    for entry in slices:
        for name, counters in entry.counter_sets:
            if name in counter_sets:
                return {}, f"duplicate counter set name {name}"
            counter_sets[name] = counters
    return counter_sets, ""


def _undefined_counter(counter_sets: CounterSets, slices: Sequence[SliceEntry]) -> str:
    for entry in slices:
        for device in entry.proto.spec.devices:
            for consumption in device.consumes_counters:
                counters = counter_sets.get(consumption.counter_set)
                if counters is None:
                    return f"counter set {consumption.counter_set} not found"
                for name in sorted(consumption.counters):
                    if name not in counters:
                        return f"counter {name} not found in counter set {consumption.counter_set}"
    return ""


class SliceIndex:
    """All slices, indexed once; ``pools_for(node)`` gathers one node's pools. Given the ``previous``
    index, a slice that is the same object at the same position keeps its entry (its parsed devices and
    their selector results): a changed slice is a new object, parsed anew."""

    def __init__(
        self, slices: Sequence[objects_pb2.ResourceSlice], previous: SliceIndex | None = None
    ) -> None:
        self.slices = slices
        self._entries: list[SliceEntry] = []
        self._by_node: dict[str, list[SliceEntry]] = {}
        self._elsewhere: list[SliceEntry] = []
        self._by_pool: dict[PoolID, list[SliceEntry]] = {}
        before = previous._entries if previous is not None else []
        for index, slice_ in enumerate(slices):
            entry = before[index] if index < len(before) and before[index].proto is slice_ else None
            if entry is None:
                entry = SliceEntry(index, slice_)
            self._entries.append(entry)
            self._by_pool.setdefault(entry.pool_id, []).append(entry)
            if entry.kind == _NODE_NAME:
                self._by_node.setdefault(entry.selection.node_name, []).append(entry)
            elif entry.kind != _UNKNOWN:
                self._elsewhere.append(entry)
        # Pools look the same from every node that sees the same slices of them (cluster-wide pools):
        # built once, their devices (and what is remembered on them) are shared by all those nodes.
        self._built: dict[tuple[PoolID, tuple[int, ...], bool], Pool] = {}
        self._pool_counters_valid: dict[tuple[PoolID, int], str] = {}
        #: Per node name: the node object last asked for and its pools (a changed node is a new object).
        self._node_pools: dict[str, tuple[objects_pb2.Node, list[Pool]]] = {}

    def pools_for(self, node: objects_pb2.Node) -> list[Pool]:
        """The node's pools, in the order the allocator tries them (the caller does not change the list)."""
        name = node.metadata.name
        known = self._node_pools.get(name)
        if known is not None and known[0] is node:
            return known[1]
        pools = self._gather_for(node)
        self._node_pools[name] = (node, pools)
        return pools

    @property
    def node_local(self) -> bool:
        """Whether every slice that serves nodes names its node: a node's pools then follow from its name
        (``local_pools``)."""
        return not self._elsewhere

    def node_names(self) -> list[str]:
        """The nodes some slice names, in the order their first slice is listed."""
        return list(self._by_node)

    def local_pools(self, name: str) -> list[Pool]:
        """The pools of the slices that name the node ``name``, in the allocator's order (slices serving
        it otherwise left out): all of its pools, as ``pools_for`` gives them, for a ``node_local`` index."""
        return self._gather(name, [])

    def _gather_for(self, node: objects_pb2.Node) -> list[Pool]:
        return self._gather(node.metadata.name, [entry for entry in self._elsewhere if entry.serves(node)])

    def _gather(self, name: str, relevant: list[SliceEntry]) -> list[Pool]:
        local = self._by_node.get(name)
        if local:
            relevant = sorted(relevant + local, key=lambda entry: entry.index)
        newest: dict[PoolID, list[SliceEntry]] = {}
        for entry in relevant:
            current = newest.get(entry.pool_id)
            if current is None or entry.generation > current[0].generation:
                newest[entry.pool_id] = [entry]
            elif entry.generation == current[0].generation:
                current.append(entry)

        pools: list[Pool] = []
        bound: list[Pool] = []
        for pool_id, entries in newest.items():
            pool = self._pool(pool_id, entries)
            if pool is None:
                continue
            (bound if not pool.incomplete and pool.has_binding_conditions else pools).append(pool)
        # Devices are tried in pool order: by driver and pool name, so that names can set priorities;
        # devices that need binding conditions come last.
        pools.sort(key=lambda pool: pool.id)
        bound.sort(key=lambda pool: pool.id)
        return pools + bound

    def _pool(self, pool_id: PoolID, entries: list[SliceEntry]) -> Pool | None:
        count = entries[0].count
        if len(entries) == count:
            return self._build(pool_id, entries, None)
        # Some slices of the pool were left out as not serving this node: all of the pool's slices tell
        # whether it is complete, or being replaced by a newer generation (then it is ignored).
        generation = entries[0].generation
        everything = []
        for entry in self._by_pool[pool_id]:
            if entry.generation > generation:
                return None
            if entry.generation == generation:
                everything.append(entry)
        if len(everything) != count:
            return Pool(pool_id, incomplete=True)
        return self._build(pool_id, entries, everything)

    def _build(self, pool_id: PoolID, entries: list[SliceEntry], everything: list[SliceEntry] | None) -> Pool:
        key = (pool_id, tuple(entry.index for entry in entries), everything is not None)
        pool = self._built.get(key)
        if pool is None:
            pool = self._built[key] = self._validated(pool_id, entries, everything)
        return pool

    def _validated(
        self, pool_id: PoolID, entries: list[SliceEntry], everything: list[SliceEntry] | None
    ) -> Pool:
        entries = sorted(entries, key=lambda entry: entry.name)
        device_slices = [entry for entry in entries if not entry.counter_sets]
        reason = _duplicate_device(device_slices)
        if reason:
            return Pool(pool_id, invalid_reason=reason)
        counter_sets, reason = _counter_sets([entry for entry in entries if entry.counter_sets])
        if reason:
            return Pool(pool_id, invalid_reason=reason)
        reason = _undefined_counter(counter_sets, entries)
        if reason:
            return Pool(pool_id, invalid_reason=reason)
        if everything is None or len(everything) == len(entries):
            return Pool(pool_id, slices=device_slices, counter_sets=counter_sets)
        names = {entry.name for entry in entries}
        others = [entry for entry in everything if entry.name not in names]
        # Checking the whole pool once stands for every node's share of it (the counter sets are the
        # same from every node); only a pool that fails is checked node by node, for the error's text.
        whole_key = (pool_id, entries[0].generation)
        whole = self._pool_counters_valid.get(whole_key)
        if whole is None:
            whole = self._pool_counters_valid[whole_key] = _undefined_counter(counter_sets, everything)
        reason = whole and _undefined_counter(counter_sets, others)
        if reason:
            return Pool(pool_id, invalid_reason=reason)
        return Pool(pool_id, slices=device_slices, other_slices=others, counter_sets=counter_sets)


def gather_pools(slices: Sequence[objects_pb2.ResourceSlice], node: objects_pb2.Node) -> list[Pool]:
    """The pools of ``slices`` with devices for ``node``, in the order the allocator tries them.
    Raises AllocationError when a node selector does not parse."""
    return SliceIndex(slices).pools_for(node)
