"""How clients print ResourceSlice objects: the columns of `podsched get` (kubectl's NAME, NODE, DRIVER,
POOL, AGE) and the sections of `podsched describe`: where the devices are, each device's attributes,
capacity, counters and taints, and which claims hold it."""

from __future__ import annotations

from collections import defaultdict

from cluster.api import kinds, objects_pb2
from cluster.printers.describe import DescribeText, Reader, name_fields
from cluster.printers.printer import Printer
from cluster.printers.resourceclaims import node_selector_text
from cluster.printers.table import AGE, NAME, Cell, Column, Columns
from cluster.printers.values import NONE, age


def _slice_row(resource_slice: objects_pb2.ResourceSlice, now: float) -> list[Cell]:
    spec = resource_slice.spec
    return [resource_slice.metadata.name, spec.node_name or NONE, spec.driver, spec.pool.name,
            age(resource_slice.metadata, now)]


def attribute_text(attribute: objects_pb2.DeviceAttribute) -> str:
    """A device attribute's value as kubectl shows one: the value of whichever field is set."""
    for field, value in attribute.ListFields():
        if field.is_repeated:
            return "[" + ", ".join(_scalar(item) for item in value) + "]"
        return _scalar(value)
    return ""


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _where(spec: objects_pb2.ResourceSliceSpec | objects_pb2.Device) -> str:
    if spec.HasField("node_name"):
        return spec.node_name
    if spec.HasField("node_selector"):
        return node_selector_text(spec.node_selector)
    if spec.HasField("all_nodes") and spec.all_nodes:
        return "all nodes"
    return NONE


async def _holders(reader: Reader, spec: objects_pb2.ResourceSliceSpec) -> dict[str, list[str]]:
    """The claims (namespace/name) whose allocation holds each device of the slice, by device name."""
    holders: dict[str, list[str]] = defaultdict(list)
    claims = (await reader.list_all(kinds.RESOURCE_CLAIM)).items
    for claim in claims:
        for result in claim.status.allocation.devices.results:
            if result.driver == spec.driver and result.pool == spec.pool.name:
                holders[result.device].append(f"{claim.metadata.namespace}/{claim.metadata.name}")
    return holders


def _device_section(
    text: DescribeText, device: objects_pb2.Device, holders: list[str], per_device: bool
) -> None:
    text.section(device.name, 1)
    if per_device:
        text.field("Node", _where(device), 2)
    text.mapping("Attributes", {name: attribute_text(a) for name, a in device.attributes.items()}, 2)
    text.mapping("Capacity", {name: c.value for name, c in device.capacity.items()}, 2)
    if device.HasField("allow_multiple_allocations") and device.allow_multiple_allocations:
        text.field("Allow Multiple Allocations", "true", 2)
    if device.consumes_counters:
        text.field("Consumes Counters", "\n".join(
            f"{c.counter_set}: " + ", ".join(f"{n}={c.counters[n].value}" for n in sorted(c.counters))
            for c in device.consumes_counters), 2)
    if device.taints:
        text.field("Taints", "\n".join(
            f"{t.key}" + (f"={t.value}" if t.value else "") + f":{t.effect}" for t in device.taints), 2)
    text.field("Allocated To", "\n".join(sorted(holders)) if holders else NONE, 2)


async def _describe_slice(
    reader: Reader, resource_slice: objects_pb2.ResourceSlice, text: DescribeText
) -> None:
    spec = resource_slice.spec
    name_fields(text, resource_slice, namespaced=False)
    text.mapping("Labels", resource_slice.metadata.labels)
    text.mapping("Annotations", resource_slice.metadata.annotations, sep=": ")
    text.field("Driver", spec.driver)
    text.field("Pool", f"{spec.pool.name} (generation {spec.pool.generation}, "
                       f"{spec.pool.resource_slice_count} slice(s))")
    per_device = spec.HasField("per_device_node_selection") and spec.per_device_node_selection
    text.field("Node", "per device" if per_device else _where(spec))
    if spec.shared_counters:
        text.section("Shared Counters")
        for counter_set in spec.shared_counters:
            text.mapping(counter_set.name, {name: c.value for name, c in counter_set.counters.items()}, 1)
    if not spec.devices:
        text.field("Devices", NONE)
        return
    holders = await _holders(reader, spec)
    text.section("Devices")
    for device in spec.devices:
        _device_section(text, device, holders.get(device.name, []), per_device)


PRINTER = Printer(
    kinds.RESOURCE_SLICE,
    Columns((
        NAME,
        Column("Node", "NodeName identifies the node which provides the resources in this pool."),
        Column("Driver", "Driver identifies the DRA driver providing the capacity information."),
        Column("Pool", "Name is used to identify the pool."),
        AGE,
    ), _slice_row),
    _describe_slice,
)
