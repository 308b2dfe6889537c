"""Why a pod's claims do not fit on a node: the request the allocator's search got furthest to without
finding devices for it, and why, from a second look at that request's candidates on the node (only
when a failure is explained, never while allocating):

* no device of the request's class is on the node;
* the request's selectors match none of them;
* too few are left: taken by other claims, or their taints are not tolerated, their pool's shared
  counters or their consumable capacity are used up (the most common of these is named);
* enough are usable, but a constraint of the claim that covers the request cannot be satisfied, or the
  pod's other requests take them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from scheduler.dra.constraints import DistinctAttribute, MatchAttribute
from scheduler.dra.errors import AllocationError
from scheduler.dra.pools import Pool, SliceDevice
from scheduler.dra.requests import Request, RequestKey
from scheduler.dra.taints import taint_prevents

if TYPE_CHECKING:
    from scheduler.dra.allocator import _Search

#: Why a candidate device cannot serve the request, in the order they are checked.
ALLOCATED = "not enough devices left"
TAINTED = "tainted"
COUNTERS = "shared counters exhausted"
CAPACITY = "capacity exhausted"

_CONSTRAINT_NAMES = {MatchAttribute: "matchAttribute", DistinctAttribute: "distinctAttribute"}


class Unfit(NamedTuple):
    """A request that could not be satisfied on a node, and why."""

    #: namespace/name
    claim: str
    #: The request's name, "request/subrequest" for a subrequest of a firstAvailable list.
    request: str
    reason: str

    def __str__(self) -> str:
        return f"claim {self.claim}, request {self.request}: {self.reason}"


def explain(search: _Search, key: RequestKey) -> Unfit:
    """Why request ``key`` could not be satisfied in ``search`` (whose choices are all undone)."""
    claim, slot, sub = key
    plan = search.plans[claim]
    request = plan.slots[slot].alternatives[sub]
    return Unfit(plan.name, request.full_name, _reason(search, claim, request))


def _reason(search: _Search, claim: int, request: Request) -> str:
    class_name = request.class_.metadata.name if request.class_ is not None else ""
    of_class = selected = usable = 0
    blocked: Counter[str] = Counter()
    for pool in search.pools:
        if pool.incomplete or pool.invalid:
            continue
        for entry in pool.slices:
            for device in entry.devices:
                if not device.on_node(search.node) or not _selected(request.class_selects, device):
                    continue
                of_class += 1
                if not _selected(request.selects, device):
                    continue
                selected += 1
                why = _blocked(search, request, pool, device)
                if why:
                    blocked[why] += 1
                else:
                    usable += 1
    base, sub_name = (request.parent, request.name) if request.parent else (request.name, "")
    constraint = next((f"{_CONSTRAINT_NAMES[type(constraint)]} {constraint.attribute}"
                       for constraint in search.constraints[claim] if constraint.applies(base, sub_name)), "")
    return describe(class_name, request.count, request.all_devices, of_class=of_class, selected=selected,
                    usable=usable, blocked=blocked, constraint=constraint)


def describe(class_name: str, count: int, all_devices: bool, *, of_class: int, selected: int, usable: int,
             blocked: Counter[str], constraint: str = "") -> str:
    """Why a request for ``count`` devices (all with ``all_devices``) of class ``class_name`` is not
    satisfied on a node with ``of_class`` devices of the class, ``selected`` of them selected by the
    request, ``usable`` of those free to take and the others ``blocked`` by each obstacle, the first
    constraint of the claim covering it being ``constraint`` (kind and attribute; empty for none)."""
    if not of_class:
        return f"no device of class {class_name} on the node"
    if not selected:
        return f"selectors matched none of the devices of class {class_name}"
    needed = selected if all_devices else count
    if usable < needed:
        # The most common obstacle; ties go to the one checked first.
        order = (ALLOCATED, TAINTED, COUNTERS, CAPACITY)
        why = max(order, key=lambda name: (blocked[name], -order.index(name)))
        return f"{why}: {'all ' if all_devices else ''}{needed} needed"
    if constraint:
        return f"constraint {constraint} not satisfiable"
    return f"{ALLOCATED} beside the pod's other requests: {needed} needed"


def _selected(selects: Callable[[SliceDevice], bool], device: SliceDevice) -> bool:
    """Whether the selectors select ``device``; a selector that fails on it (the search did not get to
    ask, the device being taken) does not."""
    try:
        return selects(device)
    except AllocationError:
        return False


def _blocked(search: _Search, request: Request, pool: Pool, device: SliceDevice) -> str:
    """What keeps ``device`` (selected by ``request``) from serving it; empty when nothing does."""
    if not request.admin_access and device.id in search.allocated.devices:
        return ALLOCATED
    if taint_prevents(device, request):
        return TAINTED
    # A shared device's counters are consumed by its first allocation only.
    if device.consumes and not (device.allow_multiple and device.id in search.allocated.consumed_capacity):
        if not search.take_counters(pool, device):
            return COUNTERS
        search.release_counters(pool, device)
    if not search.capacity_fits(request, device):
        return CAPACITY
    return ""
