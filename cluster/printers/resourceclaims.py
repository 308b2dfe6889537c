"""How clients print ResourceClaim objects: the columns of `podsched get` (kubectl's NAME, STATE, AGE)
and the sections of `podsched describe`: the claim's requests, its allocation and its consumers."""

from __future__ import annotations

from collections.abc import Mapping

from cluster.api import kinds, objects_pb2, timeutil
from cluster.printers.describe import DescribeText, Reader, name_fields, time_text
from cluster.printers.printer import Printer
from cluster.printers.table import AGE, NAME, Cell, Column, Columns
from cluster.printers.values import NONE, age


def claim_state(claim: objects_pb2.ResourceClaim) -> str:
    """kubectl's summary of a claim: "deleted", "pending", "allocated", "reserved", joined by commas."""
    states = []
    deleted = timeutil.is_set(claim.metadata.deletion_timestamp)
    if deleted:
        states.append("deleted")
    if not claim.status.HasField("allocation"):
        if not deleted:
            states.append("pending")
    else:
        states.append("allocated")
        if claim.status.reserved_for:
            states.append("reserved")
    return ",".join(states)


def _claim_row(claim: objects_pb2.ResourceClaim, now: float) -> list[Cell]:
    return [claim.metadata.name, claim_state(claim), age(claim.metadata, now)]


def _amounts(amounts: Mapping[str, str]) -> str:
    return ", ".join(f"{name}={amounts[name]}" for name in sorted(amounts))


def _device_kind(text: DescribeText, request: objects_pb2.ExactDeviceRequest | objects_pb2.DeviceSubRequest,
                 level: int) -> None:
    text.field("Device Class", request.device_class_name, level)
    if request.selectors:
        text.field("Selectors", "\n".join(s.cel.expression for s in request.selectors), level)
    mode = request.allocation_mode or "ExactCount"
    text.field("Count", "All" if mode == "All" else request.count, level)
    if request.capacity.requests:
        text.field("Capacity", _amounts(request.capacity.requests), level)
    if request.tolerations:
        text.field("Tolerations", "\n".join(
            f"{t.key}" + (f"={t.value}" if t.value else "") + (f":{t.effect}" if t.effect else "")
            + f" op={t.operator}" for t in request.tolerations), level)


def requests_section(text: DescribeText, spec: objects_pb2.ResourceClaimSpec) -> None:
    """A claim spec's requests (and the constraints between them), as a claim's and a template's describe
    show them."""
    devices = spec.devices
    if not devices.requests:
        text.field("Requests", NONE)
        return
    text.section("Requests")
    for request in devices.requests:
        text.section(request.name, 1)
        if request.first_available:
            text.section("First Available", 2)
            for sub in request.first_available:
                text.section(sub.name, 3)
                _device_kind(text, sub, 4)
        else:
            if request.exactly.HasField("admin_access") and request.exactly.admin_access:
                text.field("Admin Access", "true", 2)
            _device_kind(text, request.exactly, 2)
    if devices.constraints:
        text.section("Constraints")
        for constraint in devices.constraints:
            requests = ", ".join(constraint.requests) or "all requests"
            if constraint.HasField("match_attribute"):
                text.line(f"matchAttribute {constraint.match_attribute}: {requests}", 1)
            elif constraint.HasField("distinct_attribute"):
                text.line(f"distinctAttribute {constraint.distinct_attribute}: {requests}", 1)


def node_selector_text(selector: objects_pb2.NodeSelector) -> str:
    """A node selector as one line per term, the term's requirements joined by commas."""
    terms = []
    for term in selector.node_selector_terms:
        requirements = [*term.match_expressions, *term.match_fields]
        terms.append(", ".join(
            f"{r.key} {r.operator}" + (f" [{', '.join(r.values)}]" if r.values else "")
            for r in requirements))
    return "\n".join(terms) or NONE


def _allocation_section(text: DescribeText, status: objects_pb2.ResourceClaimStatus) -> None:
    if not status.HasField("allocation"):
        text.field("Allocation", NONE)
        return
    allocation = status.allocation
    text.section("Allocation")
    if timeutil.is_set(allocation.allocation_timestamp):
        text.field("Allocated At", time_text(allocation.allocation_timestamp), 1)
    text.field("Node Selector", node_selector_text(allocation.node_selector)
               if allocation.HasField("node_selector") else NONE, 1)
    rows = [
        [result.request, result.driver, result.pool, result.device,
         result.share_id if result.HasField("share_id") else NONE,
         _amounts(result.consumed_capacity) or NONE]
        for result in allocation.devices.results
    ]
    if rows:
        text.section("Devices", 1)
        text.table(["Request", "Driver", "Pool", "Device", "Share ID", "Consumed Capacity"], rows, level=2)


async def _describe_claim(reader: Reader, claim: objects_pb2.ResourceClaim, text: DescribeText) -> None:
    name_fields(text, claim, namespaced=True)
    text.mapping("Labels", claim.metadata.labels)
    text.mapping("Annotations", claim.metadata.annotations, sep=": ")
    text.field("State", claim_state(claim))
    requests_section(text, claim.spec)
    _allocation_section(text, claim.status)
    consumers = claim.status.reserved_for
    if consumers:
        text.section("Reserved For")
        text.table(["Resource", "Name", "UID"], [
            [f"{c.resource}.{c.api_group}" if c.api_group else c.resource, c.name, c.uid] for c in consumers
        ])
    else:
        text.field("Reserved For", NONE)


PRINTER = Printer(
    kinds.RESOURCE_CLAIM,
    Columns((
        NAME,
        Column("State", "A summary of the current state (allocated, pending, reserved, etc.)."),
        AGE,
    ), _claim_row),
    _describe_claim,
)
