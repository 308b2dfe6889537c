"""A pod's claims as the allocator works through them, prepared once per pod: each request (or each
subrequest of a firstAvailable list) with its DeviceClass, compiled selectors, count and capacity
requests. Problems that upstream reports while allocating (a missing class, an unknown allocation
mode) are kept on the request and raised in upstream's order when allocation reaches it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cluster.api import objects_pb2
from cluster.api.dra.cel import (
    SelectorCompileError,
    SelectorProgram,
    SelectorRuntimeError,
    compile_device_selector,
)
from scheduler.dra.capacity import Consumed
from scheduler.dra.constraints import Constraint, DistinctAttribute, MatchAttribute
from scheduler.dra.errors import AllocationError
from scheduler.dra.pools import SliceDevice, quantity

EXACT_COUNT = "ExactCount"
ALL = "All"

#: Identifies a request or subrequest: claim index, request index, subrequest index.
RequestKey = tuple[int, int, int]


def object_name(claim: objects_pb2.ResourceClaim) -> str:
    """A claim as klog.KObj writes it: namespace/name."""
    meta = claim.metadata
    return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name


class Selectors:
    """A class's or request's CEL selectors, compiled once; a compile error is raised (as upstream
    does) only when a device is checked against them."""

    __slots__ = ("key", "owner", "programs")

    def __init__(self, owner: str, selectors: Sequence[objects_pb2.DeviceSelector]) -> None:
        #: "class NAME" or "claim NAMESPACE/NAME", as errors name them.
        self.owner = owner
        #: The expressions: a device's result is remembered under them, for every class, claim and pod
        #: with the same selectors (a result depends on nothing but the device and the expressions).
        self.key = tuple(selector.cel.expression for selector in selectors)
        self.programs: list[SelectorProgram | SelectorCompileError] = []
        for expression in self.key:
            try:
                self.programs.append(compile_device_selector(expression))
            except SelectorCompileError as err:
                self.programs.append(err)

    def match(self, device: SliceDevice) -> bool:
        if self.programs and device.unsupported_attribute:
            # Kubernetes hands CEL every attribute of the device, so one without a value fails any
            # selector; podsched's CEL converts only the attributes a selector names.
            raise AllocationError(
                f"{self.owner}: selector #0: CEL runtime error: "
                f"attribute {device.unsupported_attribute}: unsupported attribute value"
            )
        for index, program in enumerate(self.programs):
            if isinstance(program, SelectorCompileError):
                raise AllocationError(f"{self.owner}: selector #{index}: CEL compile error: {program}")
            try:
                if not program.matches(device.id.driver, device.proto):
                    return False
            except SelectorRuntimeError as err:
                raise AllocationError(f"{self.owner}: selector #{index}: CEL runtime error: {err}") from None
        return True


class Request:
    """One request, or one subrequest of a firstAvailable list."""

    __slots__ = (
        "admin_access",
        "all_devices",
        "capacity",
        "capacity_key",
        "class_",
        "class_selectors",
        "count",
        "error",
        "full_name",
        "key",
        "match_key",
        "name",
        "parent",
        "selectors",
        "tolerations",
    )

    def __init__(
        self,
        key: RequestKey,
        claim: objects_pb2.ResourceClaim,
        parent: str,
        request: objects_pb2.ExactDeviceRequest | objects_pb2.DeviceSubRequest,
        name: str,
        classes: Callable[[str], tuple[objects_pb2.DeviceClass | None, Selectors | None]],
    ) -> None:
        self.key = key
        self.name = name
        #: The name of the request a subrequest belongs to; empty for a request.
        self.parent = parent
        self.full_name = f"{parent}/{name}" if parent else name
        self.admin_access = isinstance(request, objects_pb2.ExactDeviceRequest) and request.admin_access
        self.tolerations = list(request.tolerations)
        self.all_devices = request.allocation_mode == ALL
        self.count = request.count
        self.class_: objects_pb2.DeviceClass | None = None
        self.class_selectors: Selectors | None = None
        self.selectors = Selectors(f"claim {object_name(claim)}", ())
        self.capacity: dict[str, Consumed] = {}
        #: The problem allocation reports when it reaches this request; empty when there is none.
        self.error = self._prepare(claim, request, classes)
        #: Under what a device's answer to whether this capacity request fits on it alone is remembered.
        self.capacity_key = tuple(sorted((name, value) for name, (value, _) in self.capacity.items()))
        #: Under what a device's result for the class's and the request's selectors is remembered.
        self.match_key = (self.class_selectors.key if self.class_selectors else (), self.selectors.key)

    def _prepare(
        self,
        claim: objects_pb2.ResourceClaim,
        request: objects_pb2.ExactDeviceRequest | objects_pb2.DeviceSubRequest,
        classes: Callable[[str], tuple[objects_pb2.DeviceClass | None, Selectors | None]],
    ) -> str:
        where = f"claim {object_name(claim)}, request {self.name}"
        for index, selector in enumerate(request.selectors):
            if not selector.HasField("cel"):
                return f"{where}, selector #{index}: CEL expression empty (unsupported selector type?)"
        if not request.device_class_name:
            return f"{where}: missing device class name (unsupported request type?)"
        self.class_, self.class_selectors = classes(request.device_class_name)
        if self.class_ is None:
            return (
                f"{where}: could not retrieve device class {request.device_class_name}: "
                f'deviceclass.resource.k8s.io "{request.device_class_name}" not found'
            )
        if request.allocation_mode not in (EXACT_COUNT, ALL):
            return f"{where}: unsupported count mode {request.allocation_mode}"
        self.selectors = Selectors(f"claim {object_name(claim)}", request.selectors)
        if request.HasField("capacity"):
            self.capacity = {
                name: (quantity(value, f"{where}: capacity {name}"), value)
                for name, value in request.capacity.requests.items()
            }
        return ""

    def selects(self, device: SliceDevice) -> bool:
        """Whether ``device`` satisfies the class's and the request's selectors (remembered per device: a
        class's for every request of that class)."""
        matches = device.matches
        matched = matches.get(self.match_key)
        if matched is None:
            matched = matches[self.match_key] = self.class_selects(device) and self.selectors.match(device)
        return matched

    def class_selects(self, device: SliceDevice) -> bool:
        """Whether ``device`` satisfies the class's selectors (remembered per device and class)."""
        class_selectors = self.class_selectors
        if class_selectors is None:
            return True
        matched = device.matches.get(class_selectors.key)
        if matched is None:
            matched = device.matches[class_selectors.key] = class_selectors.match(device)
        return matched


class RequestSlot:
    """A claim's request: one Request, or the subrequests of a firstAvailable list in their order."""

    __slots__ = ("alternatives", "first_available", "name")

    def __init__(self, name: str, alternatives: list[Request], first_available: bool) -> None:
        self.name = name
        self.alternatives = alternatives
        self.first_available = first_available


class ClaimPlan:
    """A claim's requests and the constraints' specifications."""

    __slots__ = ("claim", "constraint_error", "constraints", "name", "slots")

    def __init__(
        self,
        index: int,
        claim: objects_pb2.ResourceClaim,
        classes: Callable[[str], tuple[objects_pb2.DeviceClass | None, Selectors | None]],
    ) -> None:
        self.claim = claim
        self.name = object_name(claim)
        self.slots: list[RequestSlot] = []
        for request_index, request in enumerate(claim.spec.devices.requests):
            if request.first_available:
                alternatives = [
                    Request((index, request_index, sub_index), claim, request.name, sub, sub.name, classes)
                    for sub_index, sub in enumerate(request.first_available)
                ]
                self.slots.append(RequestSlot(request.name, alternatives, True))
            else:
                # A request with neither (something newer) has no device class name: refused as such.
                exact = Request((index, request_index, 0), claim, "", request.exactly, request.name, classes)
                self.slots.append(RequestSlot(request.name, [exact], False))
        self.constraints: list[tuple[type[Constraint], list[str], str]] = []
        self.constraint_error = ""
        for constraint_index, constraint in enumerate(claim.spec.devices.constraints):
            if constraint.HasField("match_attribute"):
                self.constraints.append(
                    (MatchAttribute, list(constraint.requests), constraint.match_attribute)
                )
            elif constraint.HasField("distinct_attribute"):
                self.constraints.append(
                    (DistinctAttribute, list(constraint.requests), constraint.distinct_attribute)
                )
            else:
                self.constraint_error = (
                    f"claim {self.name}, constraint #{constraint_index}: "
                    "empty constraint (unsupported constraint type?)"
                )
                break

    def new_constraints(self) -> list[Constraint]:
        return [kind(requests, attribute) for kind, requests, attribute in self.constraints]
