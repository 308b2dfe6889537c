"""A claim's AllocationResult from the devices chosen for it: one result per device, the
configuration of the classes (FromClass) and of the claim (FromClaim) that applies, and the node
selector saying where the devices can be used."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from cluster.api import objects_pb2
from scheduler.dra.errors import AllocationError

if TYPE_CHECKING:
    from scheduler.dra.allocator import Chosen
    from scheduler.dra.requests import ClaimPlan

NODE_NAME_FIELD = "metadata.name"


def build_allocation(
    plan: ClaimPlan,
    chosen: Sequence[Chosen],
    selected: Mapping[tuple[int, int], int],
    node_name: str,
    claim_index: int,
) -> objects_pb2.AllocationResult:
    allocation = objects_pb2.AllocationResult()
    devices = allocation.devices
    for choice in chosen:
        device = choice.device
        result = devices.results.add(
            request=choice.request.full_name,
            driver=device.id.driver,
            pool=device.id.pool,
            device=device.id.device,
        )
        if choice.request.admin_access:
            result.admin_access = True
        result.tolerations.extend(choice.request.tolerations)
        if choice.share_id:
            result.share_id = choice.share_id
        if choice.consumed:
            result.consumed_capacity.update({name: text for name, (_, text) in choice.consumed.items()})
        result.binding_conditions.extend(device.proto.binding_conditions)
        result.binding_failure_conditions.extend(device.proto.binding_failure_conditions)
    _add_config(allocation, plan, selected, claim_index)
    selector = _node_selector(chosen, node_name, plan.claim.metadata.name)
    if selector is not None:
        allocation.node_selector.CopyFrom(selector)
    return allocation


def _add_config(
    allocation: objects_pb2.AllocationResult,
    plan: ClaimPlan,
    selected: Mapping[tuple[int, int], int],
    claim_index: int,
) -> None:
    configs = allocation.devices.config
    # A class's configuration is added once, for every request served from that class.
    class_configs: dict[str, range] = {}
    for slot_index, slot in enumerate(plan.slots):
        request = slot.alternatives[selected.get((claim_index, slot_index), 0)]
        device_class = request.class_
        if device_class is None:
            continue
        positions = class_configs.get(device_class.metadata.name)
        if positions is not None:
            for position in positions:
                configs[position].requests.append(request.full_name)
            continue
        start = len(configs)
        for class_config in device_class.spec.config:
            configs.add(source="FromClass", requests=[request.full_name], opaque=class_config.opaque)
        class_configs[device_class.metadata.name] = range(start, len(configs))

    for config in plan.claim.spec.devices.config:
        if not config.requests:
            configs.add(source="FromClaim", opaque=config.opaque)
            continue
        # Once per request it names (upstream's behaviour), a subrequest named by "request/subrequest"
        # only when it was the one chosen.
        for slot_index, slot in enumerate(plan.slots):
            if slot.name in config.requests:
                configs.add(source="FromClaim", requests=config.requests, opaque=config.opaque)
                continue
            if not slot.first_available:
                continue
            request = slot.alternatives[selected.get((claim_index, slot_index), 0)]
            if request.full_name in config.requests:
                configs.add(source="FromClaim", requests=config.requests, opaque=config.opaque)


def _node_selector(
    chosen: Sequence[Chosen], node_name: str, claim_name: str
) -> objects_pb2.NodeSelector | None:
    """Where the claim's devices can be used: only on ``node_name`` when one of them is local to it (or
    binds to it); the requirements of the slices' (or devices') node selectors, merged; None when they
    are usable everywhere."""
    term = objects_pb2.NodeSelectorTerm()
    for choice in chosen:
        device = choice.device
        source: objects_pb2.ResourceSliceSpec | objects_pb2.Device = (
            device.proto if device.slice.per_device else device.slice.proto.spec
        )
        if source.node_name or device.proto.binds_to_node:
            local = objects_pb2.NodeSelector()
            local.node_selector_terms.add().match_fields.add(
                key=NODE_NAME_FIELD, operator="In", values=[node_name]
            )
            return local
        if not source.HasField("node_selector"):
            continue
        terms = source.node_selector.node_selector_terms
        if len(terms) > 1:
            raise AllocationError(
                f"create NodeSelector for claim {claim_name}: unsupported ResourceSlice.NodeSelector with "
                f"{len(terms)} terms"
            )
        if terms:
            _merge(terms[0].match_fields, term.match_fields)
            _merge(terms[0].match_expressions, term.match_expressions)
    if not term.match_fields and not term.match_expressions:
        return None
    selector = objects_pb2.NodeSelector()
    selector.node_selector_terms.append(term)
    return selector


def _merge(
    requirements: Sequence[objects_pb2.NodeSelectorRequirement],
    into: Sequence[objects_pb2.NodeSelectorRequirement],
) -> None:
    for requirement in requirements:
        values = set(requirement.values)
        if not any(
            have.key == requirement.key
            and have.operator == requirement.operator
            and set(have.values) == values
            for have in into
        ):
            into.append(requirement)  # type: ignore[attr-defined]
