"""A claim's constraints across its requests: matchAttribute (every device has the attribute, and some
value is common to all of them) and distinctAttribute (every device has the attribute, and no value is
shared by two of them). An attribute is a value or a list of values of one type; a single value counts
as a list of one. Both constraints are monotonic: a device refused now stays refused as more are added,
so the search can stop early."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection

from cluster.api import objects_pb2
from scheduler.dra.pools import SliceDevice

#: An attribute's values with their type: ("string", {"a", "b"}), ("int", {1}), ...; None for an attribute
#: without a value the constraints can compare.
AttributeValues = tuple[str, frozenset[object]] | None


def attribute_values(device: SliceDevice, name: str) -> tuple[bool, AttributeValues]:
    """Whether ``device`` has the fully qualified attribute ``name`` (an attribute of the device's own
    driver may be given without its domain), and its values."""
    attributes = device.proto.attributes
    attribute = attributes.get(name)
    if attribute is None:
        domain, slash, short = name.partition("/")
        if not slash or domain != device.id.driver:
            return False, None
        attribute = attributes.get(short)
        if attribute is None:
            return False, None
    return True, _typed(attribute)


def _typed(attribute: objects_pb2.DeviceAttribute) -> AttributeValues:
    # Semantic versions are minimal (no leading zeros), so equal versions are equal strings.
    if attribute.HasField("string_value"):
        return ("string", frozenset({attribute.string_value}))
    if attribute.HasField("int_value"):
        return ("int", frozenset({attribute.int_value}))
    if attribute.HasField("bool_value"):
        return ("bool", frozenset({attribute.bool_value}))
    if attribute.HasField("version_value"):
        return ("version", frozenset({attribute.version_value}))
    for kind, values in (
        ("string", attribute.string_values),
        ("int", attribute.int_values),
        ("bool", attribute.bool_values),
        ("version", attribute.version_values),
    ):
        if values:
            return (kind, frozenset(values))
    return None


class Constraint(ABC):
    """The constraint's requests (none: every request of the claim), the attribute it compares and the
    values of the devices counted in so far, one entry per device."""

    __slots__ = ("attribute", "requests", "values")

    def __init__(self, requests: Collection[str], attribute: str) -> None:
        self.requests = frozenset(requests)
        self.attribute = attribute
        self.values: list[AttributeValues] = []

    def applies(self, request: str, sub_request: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (bool(sub_request) and f"{request}/{sub_request}" in self.requests)

    def add(self, request: str, sub_request: str, device: SliceDevice) -> bool:
        """Whether ``device`` may join; if so it is counted in (``remove`` takes it out again)."""
        if not self.applies(request, sub_request):
            return True
        found, values = attribute_values(device, self.attribute)
        if not found or (self.values and not self.admits(values)):
            return False
        self.values.append(values)
        return True

    def remove(self, request: str, sub_request: str, device: SliceDevice) -> None:
        """Takes out a device ``add`` let in, with the same arguments."""
        if self.applies(request, sub_request):
            self.values.remove(attribute_values(device, self.attribute)[1])

    @abstractmethod
    def admits(self, values: AttributeValues) -> bool:
        """Whether a device with ``values`` may join the devices counted in (at least one)."""


class MatchAttribute(Constraint):
    __slots__ = ()

    def admits(self, values: AttributeValues) -> bool:
        if values is None:
            return False
        kind, common = values
        for other in self.values:
            if other is None or other[0] != kind:
                return False
            common = common & other[1]
            if not common:
                return False
        return True


class DistinctAttribute(Constraint):
    __slots__ = ()

    def admits(self, values: AttributeValues) -> bool:
        if values is None:
            return False
        kind, mine = values
        return all(other is not None and (other[0] != kind or not (mine & other[1])) for other in self.values)
