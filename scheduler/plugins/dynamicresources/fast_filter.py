"""DynamicResources' batch Filter for a plain request: every node decided at once with NumPy over the
device capacity table (scheduler/dra/capacity_table.py), where the allocator would search each node.

A pod's request is plain (``plain_request``) when the pod has exactly one claim to allocate, with one
request of exactly ``count`` devices (1..32, no firstAvailable list, no admin access), no constraints,
no allocated claim restricted to some nodes and no extended resources DRA serves. On a node the table
holds (its pools plain), the allocator's search then succeeds exactly when the node's devices selected
by the class and the request, held by no claim exclusively and with the request's consumption fitting
their capacity left, can serve ``count`` shares: one each, or, for a device that allows multiple
allocations, as many as its capacity left holds (the search may take such a device again). A failed
node's reason is the one the allocator's explanation gives (scheduler/dra/unfit.py), whose branch the
same counts decide. Nodes the table does not hold, and nodes with a device whose selectors fail or
whose consumption is not a whole number, are left to the allocator (``filter``): the verdicts are the
per-node Filter's, which a property test holds them to.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np

from scheduler.dra.allocator import ALLOCATION_RESULTS_MAX_SIZE
from scheduler.dra.capacity import consumption, fits
from scheduler.dra.capacity_table import DeviceCapacityTable, DeviceLayout, Flags, Ints, group_sums
from scheduler.dra.errors import AllocationError
from scheduler.dra.requests import EXACT_COUNT, Request
from scheduler.dra.unfit import ALLOCATED, CAPACITY, Unfit, describe
from scheduler.framework import NodeSet, Status
from scheduler.plugins.dynamicresources.state import ClaimsState

#: The plugin's verdict on a node the claims do not fit, given the explanation's detail.
Rejection = Callable[[str], Status]

# A node's verdict: it fits, the allocator's explanation would take one of these branches, or the
# allocator decides (UNSURE; also the verdict of NOT_PLAIN, the last slot).
FITS, NO_CLASS, NO_MATCH, HELD, SHORT, UNSURE = range(6)


def plain_request(claims_state: ClaimsState) -> Request | None:
    """The allocator's request of the pod's one claim to allocate, if the pod's claims are plain (see the
    module's doc)."""
    if claims_state.extended is not None or len(claims_state.to_allocate) != 1:
        return None
    if any(selector is not None for selector in claims_state.available_on):
        return None
    devices = claims_state.claims[claims_state.to_allocate[0]].spec.devices
    if devices.constraints or len(devices.requests) != 1 or devices.requests[0].first_available:
        return None
    exactly = devices.requests[0].exactly
    if (exactly.allocation_mode != EXACT_COUNT or exactly.admin_access
            or not 1 <= exactly.count <= ALLOCATION_RESULTS_MAX_SIZE):
        return None
    allocator = claims_state.allocator
    assert allocator is not None  # a claim to allocate
    request = allocator.plans[0].slots[0].alternatives[0]
    return None if request.error else request


class _Selection:
    """Per device of a layout: whether the class selects it, whether the class and the request do, and
    whether asking failed (a CEL runtime error: the allocator reports it)."""

    __slots__ = ("broken", "of_class", "selected")

    def __init__(self, layout: DeviceLayout, request: Request) -> None:
        size = len(layout.devices)
        self.of_class: Flags = np.zeros(size, dtype=np.bool_)
        self.selected: Flags = np.zeros(size, dtype=np.bool_)
        self.broken: Flags = np.zeros(size, dtype=np.bool_)
        for position, device in enumerate(layout.devices):
            try:
                self.of_class[position] = request.class_selects(device)
                self.selected[position] = request.selects(device)
            except AllocationError:
                self.broken[position] = True


class _Consumption:
    """Per device of a layout: what one share of the request consumes of each capacity, whether the
    request can fit the device at all (its request policy, the capacities it names), and whether working
    that out failed (a malformed quantity) or gave a fraction; worked out once per capacity
    specification (``spec_devices``)."""

    __slots__ = ("broken", "fits", "need")

    def __init__(self, layout: DeviceLayout, request: Request) -> None:
        specs = len(layout.spec_devices)
        self.need: Ints = np.zeros((specs, len(layout.capacity_names)), dtype=np.int64)
        self.fits: Flags = np.zeros(specs, dtype=np.bool_)
        self.broken: Flags = np.zeros(specs, dtype=np.bool_)
        for spec, device in enumerate(layout.spec_devices):
            try:
                self.fits[spec] = fits(device, request.capacity, None, None)
                consumed = consumption(device, request.capacity)
            except AllocationError:
                self.broken[spec] = True
                continue
            for name, (value, _) in consumed.items():
                if value.denominator != 1:
                    self.broken[spec] = True
                self.need[spec, layout.column[name]] = int(value)
        self.need, self.fits, self.broken = (self.need[layout.spec_of], self.fits[layout.spec_of],
                                             self.broken[layout.spec_of])


#: The requests whose verdicts per slot are kept (the most recently asked for).
_KEPT_VERDICTS = 256
#: Above one changed device in this many, a request's verdicts are worked out anew for every slot.
_ANEW_ABOVE = 8

#: What decides a request's verdicts on the table's usage: the class and the selectors, the consumption
#: per share, the count.
VerdictKey = tuple[object, object, int]


class PlainFilter:
    """The batch Filter of plain requests over one capacity table; what it works out per layout (the
    selectors' results per device, a request's consumption per capacity specification) is kept until
    the layout changes, and each request's verdicts per slot are brought up to date from the devices
    whose usage changed since they were worked out (most pods change a handful): only those devices'
    slots are decided again."""

    def __init__(self, table: DeviceCapacityTable) -> None:
        self.table = table
        self._layout: DeviceLayout | None = None
        self._selections: dict[tuple[object, ...], _Selection] = {}
        self._consumptions: dict[tuple[object, ...], _Consumption] = {}
        #: Per request, the generation its verdicts per slot (``_slot_verdicts``) stand for, and those.
        self._verdicts: dict[VerdictKey, tuple[int, Ints]] = {}
        #: The last pod's claims state, the generation and the layout its verdicts were worked out at,
        #: each slot's verdict code and each code's Status: a cycle filters its nodes in several calls.
        self._last: tuple[ClaimsState, int, DeviceLayout, Ints, list[Status | None]] | None = None

    def filter(self, claims_state: ClaimsState, request: Request, nodes: NodeSet,
               reject: Rejection) -> tuple[list[Status | None], list[int]] | None:
        """The verdict on each node (``reject(detail)`` where the claims do not fit), and the positions of
        the nodes left to the allocator (their verdicts in the list are placeholders); None when no node
        can be decided here (nodes without rows, the claims' state not of the table's generation)."""
        table = self.table
        generation = table.generation
        if claims_state.allocated.generation != generation:
            return None
        slots = table.slots(nodes)
        if slots is None:
            return None
        layout = table.layout()
        last = self._last
        if last is not None and last[0] is claims_state and last[1] == generation and last[2] is layout:
            by_slot, verdicts = last[3], last[4]
        else:
            if layout is not self._layout:
                self._layout = layout
                self._selections.clear()
                self._consumptions.clear()
                self._verdicts.clear()
            by_slot = self._slot_verdicts(layout, request, generation)
            # A handful of distinct verdicts: one Status object each, its detail that of the branch.
            verdicts = [None] * (UNSURE + 1)
            present = np.zeros(UNSURE + 1, dtype=np.bool_)
            present[by_slot] = True
            for code in np.flatnonzero(present[NO_CLASS:UNSURE]).tolist():
                verdicts[NO_CLASS + code] = reject(_detail(claims_state, request, NO_CLASS + code))
            self._last = (claims_state, generation, layout, by_slot, verdicts)
        codes = by_slot[slots]
        statuses = list(map(verdicts.__getitem__, codes.tolist()))
        unsure: list[int] = np.flatnonzero(codes == UNSURE).tolist()
        return statuses, unsure

    def _slot_verdicts(self, layout: DeviceLayout, request: Request, generation: int) -> Ints:
        """Each slot's verdict code at ``generation``, and UNSURE after the last (NOT_PLAIN's, -1): those
        kept for the request, with the slots of the devices read since decided again, or all anew."""
        key: VerdictKey = (request.match_key, request.capacity_key, request.count)
        kept = self._verdicts.pop(key, None)
        if kept is None:
            by_slot = self._decide(layout, request, None)
        elif kept[0] == generation:
            by_slot = kept[1]
        else:
            changed = self.table.read_since(kept[0])
            if len(changed) * _ANEW_ABOVE > len(layout.devices):
                by_slot = self._decide(layout, request, None)
            else:
                by_slot = kept[1].copy()  # the kept array may be the verdicts a cycle still reads
                again = np.unique(layout.slot_of[changed])
                by_slot[again] = self._decide(layout, request, again)
        if len(self._verdicts) >= _KEPT_VERDICTS:
            del self._verdicts[next(iter(self._verdicts))]
        self._verdicts[key] = (generation, by_slot)
        return by_slot

    def _decide(self, layout: DeviceLayout, request: Request, slots: Ints | None) -> Ints:
        """The verdict code of each of ``slots`` (each with a device), or of every slot and UNSURE after
        the last when ``slots`` is None."""
        table = self.table
        selection = self._selections.get(request.match_key)
        if selection is None:
            selection = self._selections[request.match_key] = _Selection(layout, request)
        use = self._consumptions.get(request.capacity_key)
        if use is None:
            use = self._consumptions[request.capacity_key] = _Consumption(layout, request)
        at: Ints | slice
        if slots is None:
            at, bounds = slice(None), layout.starts
        else:
            at, bounds = layout.devices_of(slots)
        count = request.count
        need, shared = use.need[at], layout.shared[at]
        free = layout.total[at] - table.consumed[at]
        fits_once = use.fits[at] & (need <= free).all(axis=1)
        unheld = ~table.held[at]
        selected = selection.selected[at]
        usable = selected & unheld & fits_once
        if count == 1 or not need.shape[1]:
            # A usable device serves at least one share; only a request for several asks how many.
            times: Ints | int = 1 if count == 1 else np.where(shared, count, 1)
        else:
            shares = np.where(need > 0, free // np.maximum(need, 1), count).min(axis=1)
            times = np.where(shared, np.minimum(shares, count), 1)
        # Per slot, in one pass: the shares its devices can serve, devices left to the allocator, of the
        # class, selected, selected but held, selected and free but short of capacity.
        served, unsure, of_class, matched, held, short = group_sums(np.stack([
            np.where(usable, times, 0), selection.broken[at] | use.broken[at] | table.inexact[at],
            selection.of_class[at], selected, selected & ~unheld, selected & unheld & ~fits_once,
        ], axis=1, dtype=np.int64), bounds).T
        verdicts: Ints = np.select([unsure > 0, served >= count, of_class == 0, matched == 0, held >= short],
                                   [UNSURE, FITS, NO_CLASS, NO_MATCH, HELD], SHORT)
        return verdicts if slots is not None else np.append(verdicts, UNSURE)


def _detail(claims_state: ClaimsState, request: Request, code: int) -> str:
    """The allocator's explanation for a node whose counts take the explanation's ``code`` branch."""
    class_name = request.class_.metadata.name if request.class_ is not None else ""
    # Counts that take the branch: the text depends on nothing else.
    blocked = Counter({ALLOCATED: 1} if code == HELD else {CAPACITY: 1})
    reason = describe(class_name, request.count, False, of_class=int(code != NO_CLASS),
                      selected=int(code not in (NO_CLASS, NO_MATCH)), usable=0, blocked=blocked)
    allocator = claims_state.allocator
    assert allocator is not None  # a claim to allocate
    return str(Unfit(allocator.plans[0].name, request.full_name, reason))
