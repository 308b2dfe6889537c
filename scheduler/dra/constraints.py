"""A claim's constraints across its requests: matchAttribute (every device has the attribute, with one
value) and distinctAttribute (every device has the attribute, each with a value of its own). Both are
monotonic: a device refused now stays refused as more are added, so the search can stop early."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection

from cluster.api import objects_pb2
from scheduler.dra.pools import SliceDevice

#: An attribute's value, typed: ("string", "a"), ("int", 1), ...; None for a kind the constraints
#: cannot compare (lists).
AttributeValue = tuple[str, object] | None


def attribute_value(device: SliceDevice, name: str) -> tuple[bool, AttributeValue]:
    """Whether ``device`` has the fully qualified attribute ``name`` (an attribute of the device's own
    driver may be given without its domain), and its value."""
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


def _typed(attribute: objects_pb2.DeviceAttribute) -> AttributeValue:
    if attribute.HasField("string_value"):
        return ("string", attribute.string_value)
    if attribute.HasField("int_value"):
        return ("int", attribute.int_value)
    if attribute.HasField("bool_value"):
        return ("bool", attribute.bool_value)
    if attribute.HasField("version_value"):
        # Semantic versions are minimal (no leading zeros), so equal versions are equal strings.
        return ("version", attribute.version_value)
    return None


class Constraint(ABC):
    """The constraint's requests (none: every request of the claim) and the attribute it compares."""

    __slots__ = ("attribute", "requests")

    def __init__(self, requests: Collection[str], attribute: str) -> None:
        self.requests = frozenset(requests)
        self.attribute = attribute

    def applies(self, request: str, sub_request: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (bool(sub_request) and f"{request}/{sub_request}" in self.requests)

    @abstractmethod
    def add(self, request: str, sub_request: str, device: SliceDevice) -> bool:
        """Whether ``device`` may join; if so it is counted in (``remove`` takes it out again)."""

    @abstractmethod
    def remove(self, request: str, sub_request: str, device: SliceDevice) -> None:
        """Takes out a device ``add`` let in, with the same arguments."""


class MatchAttribute(Constraint):
    __slots__ = ("count", "value")

    def __init__(self, requests: Collection[str], attribute: str) -> None:
        super().__init__(requests, attribute)
        self.value: AttributeValue = None
        self.count = 0

    def add(self, request: str, sub_request: str, device: SliceDevice) -> bool:
        if not self.applies(request, sub_request):
            return True
        found, value = attribute_value(device, self.attribute)
        if not found:
            return False
        if self.count == 0:
            self.value = value
        elif value is None or value != self.value:
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub_request: str, device: SliceDevice) -> None:
        if self.applies(request, sub_request):
            self.count -= 1


class DistinctAttribute(Constraint):
    __slots__ = ("values",)

    def __init__(self, requests: Collection[str], attribute: str) -> None:
        super().__init__(requests, attribute)
        #: The values of the devices counted in, one entry per device.
        self.values: list[AttributeValue] = []

    def add(self, request: str, sub_request: str, device: SliceDevice) -> bool:
        if not self.applies(request, sub_request):
            return True
        found, value = attribute_value(device, self.attribute)
        if not found:
            return False
        if self.values and (value is None or value in self.values):
            return False
        self.values.append(value)
        return True

    def remove(self, request: str, sub_request: str, device: SliceDevice) -> None:
        if self.applies(request, sub_request):
            self.values.remove(attribute_value(device, self.attribute)[1])
