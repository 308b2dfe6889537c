"""The GPU view of the cluster the GPU scoring plugins read: each node's GPUs with the free milli of each,
its GPU model and CPU left (``gpu_columns``), and what a pod asks of the GPUs (``gpu_request``).

GPUs are DRA devices: the devices of node-local ResourceSlices (``spec.nodeName``) that the DeviceClass
``GpuSpec.device_class`` selects. A node's GPUs are in the order the allocator tries them (pools by
driver and name, those needing binding conditions last, a pool's slices by name, devices in slice
order); pools being replaced by a newer generation, incomplete or invalid (duplicate device names,
undefined counters) have none, as the allocator takes nothing from them. A GPU's free milli is
``MILLI * (capacity - consumed) / capacity`` of its ``share_capacity``, rounded down, when the device
allows multiple allocations and has that capacity; otherwise ``MILLI`` while nothing holds it and 0 once
something does. What is consumed is what the DRA manager's claim tracker counts, allocations in flight
between Reserve and PreBind included, so the view agrees with what the DRA allocator sees in the same
cycle.

The view is kept per DRA manager and GpuSpec, in NumPy arrays one row per GPU node: rebuilt when the
slices or the DeviceClass change, and otherwise updated only at the devices the tracker reports changed
since the last call, so a call costs a few array gathers whatever the number of nodes. It sits on the
DRA manager's device capacity table (scheduler/dra/capacity_table.py): its slice index (the allocator's
parsed devices, pools and order), its way of following the tracker (``UsageFeed``) and of meeting the
scheduler's nodes by name (scheduler/dra/node_rows.py).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from cluster.api import objects_pb2
from cluster.api.dra.podclaims import claim_name_of, claim_not_needed
from scheduler.dra.capacity import consumed_by
from scheduler.dra.capacity_table import UsageFeed, capacity_table, usable_devices
from scheduler.dra.errors import AllocationError
from scheduler.dra.node_rows import NodeRows, node_name
from scheduler.dra.pools import SliceDevice, SliceIndex, quantity
from scheduler.dra.requests import EXACT_COUNT, Selectors, object_name
from scheduler.dra.state import DeviceID
from scheduler.framework.columns import exact_columns
from scheduler.framework.dra_manager import DeviceUsage, DRAManager
from scheduler.framework.nodedata import NodeSet
from scheduler.framework.types import NodeInfo, PodInfo

#: A whole GPU, in milli.
MILLI = 1000

Int64s = npt.NDArray[np.int64]


@dataclass(frozen=True)
class GpuSpec:
    """Which devices are GPUs, and how they are shared."""

    device_class: str = "gpu.podsched.io"
    #: The capacity whose free part, scaled to 0..MILLI, is a GPU's free milli.
    share_capacity: str = "milli"
    #: The string attribute naming a GPU's model (unqualified: the driver's domain, or qualified).
    model_attribute: str = "model"


@dataclass(frozen=True)
class GpuColumns:
    """The GPUs of a NodeSet's nodes, in its order (row i is nodes[i]); W is the most GPUs any node has
    (at least 1)."""

    #: [n, W] free milli of each GPU in device order; 0 where the node has no such GPU.
    free: Int64s
    #: [n] the node's number of GPUs.
    gpus: Int64s
    #: [n] code of the node's GPU model (its first GPU's), -1 when it has none.
    model: Int64s
    #: Code -> model name.
    models: Sequence[str]
    #: [n] allocatable milli CPU - requested milli CPU.
    cpu_left: Int64s
    #: [n] allocatable milli CPU.
    cpu_capacity: Int64s
    #: [n] each node's row in ``layout``, the view's rows of GPU nodes (one row past them for nodes
    #: without GPUs); None, and ``layout`` too, for columns not read from the view.
    rows: Int64s | None = None
    layout: object | None = None


@dataclass(frozen=True)
class GpuRequest:
    """What a pod asks of the GPUs: all its claims' requests of the class."""

    #: GPUs.
    count: int
    #: Per GPU, 1..MILLI (MILLI: whole GPUs).
    milli: int
    #: The models whose GPUs the requests' selectors accept; None: any.
    models: frozenset[str] | None


def pod_milli_cpu(pod: PodInfo) -> int:
    """The pod's milli CPU request with kube-scheduler's default for containers that ask none (the
    artifact's GetPodResource counts the same non-zero request)."""
    return pod.non_zero_cpu


def gpu_columns(dra: DRAManager, nodes: NodeSet, spec: GpuSpec) -> GpuColumns:
    """The GPUs of ``nodes`` as ``dra`` has them now (see the module's doc)."""
    return _view(dra, spec).columns(nodes)


def node_gpu_columns(dra: DRAManager, node: NodeInfo, spec: GpuSpec) -> GpuColumns:
    """``gpu_columns`` of ``node`` alone, read without a node set (a device ranking asks for one node)."""
    return _view(dra, spec).node_columns(node)


def gpu_request(dra: DRAManager, pod: PodInfo, spec: GpuSpec) -> GpuRequest | None:
    """What ``pod`` asks of the GPUs: the requests of its claims for ``spec.device_class``.

    Understood are requests of exactly ``count`` devices (allocation mode ExactCount, no admin access):
    their counts add up; the milli per GPU is what a request consumes of a GPU's share capacity (its
    ``capacity.requests``, rounded as the capacity's request policy says; a whole GPU when it names
    none), scaled to MILLI and rounded up; the models are those whose GPUs the request's selectors
    accept, evaluated on one GPU of each model (selectors are taken to depend on the model alone).

    None, which the GPU plugins take as a pod asking no GPU (DynamicResources still allocates whatever
    its claims ask), when: the pod asks no device of the class; a claim of it is not created yet; or its
    requests of the class are beyond the view: allocation mode All, a firstAvailable list with a
    subrequest of the class, admin access, several requests asking different milli per GPU, or a
    malformed capacity request (DynamicResources reports it). When no
    GPU of the cluster satisfies the selectors the models are the empty set: the pod fits nowhere."""
    claims = _claims(dra, pod.pod)
    if claims is None:
        return None
    view = _view(dra, spec)
    view.current()
    count, milli, models = 0, 0, None
    for claim in claims:
        for request in claim.spec.devices.requests:
            if request.first_available:
                if any(sub.device_class_name == spec.device_class for sub in request.first_available):
                    return None
                continue
            exactly = request.exactly
            if exactly.device_class_name != spec.device_class:
                continue
            if exactly.allocation_mode != EXACT_COUNT or exactly.admin_access:
                return None
            try:
                asked_milli, accepted = view.asked(claim, exactly)
            except AllocationError:
                return None
            if count and asked_milli != milli:
                return None
            count += exactly.count
            milli = asked_milli
            if accepted is not None:
                models = accepted if models is None else models & accepted
    if not count:
        return None
    return GpuRequest(count, milli, models)


def _claims(dra: DRAManager, pod: objects_pb2.Pod) -> list[objects_pb2.ResourceClaim] | None:
    """The claims ``pod`` uses (those the controller found not needed left out); None while one does not
    exist."""
    claims = []
    tracker = dra.resource_claims
    for pod_claim in pod.spec.resource_claims:
        name = claim_name_of(pod, pod_claim)
        if name is None:
            if claim_not_needed(pod, pod_claim):
                continue
            return None
        claim = tracker.get(pod.metadata.namespace, name)
        if claim is None:
            return None
        claims.append(claim)
    return claims


# ------------------------------------------------------------------------------------------- the view


class _Gpu:
    """One GPU of the layout: where its free milli is kept, and its share capacity (None: not shared)."""

    __slots__ = ("capacity", "column", "row")

    def __init__(self, row: int, column: int, capacity: Fraction | None) -> None:
        self.row = row
        self.column = column
        self.capacity = capacity


class _Layout:
    """Which devices are GPUs and on which node, for one slice index and DeviceClass: of each node's
    devices the allocator may take, from the slices that name the node, those the class selects."""

    def __init__(
        self, index: SliceIndex | None, device_class: objects_pb2.DeviceClass | None, spec: GpuSpec
    ) -> None:
        self.index = index
        self.device_class = device_class
        #: Node name -> row.
        self.rows: dict[str, int] = {}
        self.gpus: dict[DeviceID, _Gpu] = {}
        #: Per row: the node's GPUs in device order.
        self.by_row: list[list[_Gpu]] = []
        #: Per row: the model name of the node's first GPU with one.
        self.row_models: list[str | None] = []
        #: The first GPU of each model, in layout order: what a request's selectors are evaluated on.
        self.representatives: dict[str, SliceDevice] = {}
        self.first: SliceDevice | None = None
        if index is not None and device_class is not None:
            node_devices = ((name, usable_devices(index.local_pools(name))) for name in index.node_names())
            self._place(device_class, spec, node_devices)
        #: Code -> model name.
        self.models = tuple(sorted(self.representatives))
        self.width = max((len(gpus) for gpus in self.by_row), default=0) or 1

    def _place(self, device_class: objects_pb2.DeviceClass, spec: GpuSpec,
               node_devices: Iterable[tuple[str, list[SliceDevice]]]) -> None:
        """Each node's devices the class selects, as its GPUs."""
        selectors = Selectors(f"class {device_class.metadata.name}", device_class.spec.selectors)
        for node, devices in node_devices:
            gpus = [device for device in devices if _selected(selectors, device)]
            if not gpus:
                continue
            row = self.rows[node] = len(self.by_row)
            node_gpus = []
            node_model: str | None = None
            for column, device in enumerate(gpus):
                gpu = self.gpus[device.id] = _Gpu(row, column, _share_capacity(device, spec))
                node_gpus.append(gpu)
                model = _model_of(device, spec)
                if model is not None:
                    self.representatives.setdefault(model, device)
                    node_model = node_model or model
            self.first = self.first or gpus[0]
            self.by_row.append(node_gpus)
            self.row_models.append(node_model)


def _selected(selectors: Selectors, device: SliceDevice) -> bool:
    """Whether the class's selectors select ``device``; one they fail on (a CEL runtime error) is no GPU."""
    matched = device.matches.get(selectors.key)
    if matched is None:
        try:
            matched = device.matches[selectors.key] = selectors.match(device)
        except AllocationError:
            return False
    return matched


def _share_capacity(device: SliceDevice, spec: GpuSpec) -> Fraction | None:
    if not device.allow_multiple:
        return None
    try:
        capacity = device.capacity.get(spec.share_capacity)
    except AllocationError:
        return None
    return capacity if capacity is not None and capacity > 0 else None


def _model_of(device: SliceDevice, spec: GpuSpec) -> str | None:
    attributes = device.proto.attributes
    attribute = attributes.get(spec.model_attribute) or attributes.get(
        f"{device.id.driver}/{spec.model_attribute}"
    )
    if attribute is None or not attribute.HasField("string_value"):
        return None
    return attribute.string_value


def _free_milli(gpu: _Gpu, usage: DeviceUsage, spec: GpuSpec) -> int:
    if usage.held:
        return 0
    if gpu.capacity is None:
        return 0 if usage.shared else MILLI
    consumed = usage.consumed.get(spec.share_capacity)
    if not consumed:
        return MILLI
    # MILLI - ceil(MILLI * consumed / capacity), in integers: Fraction arithmetic costs several times more.
    capacity = gpu.capacity
    taken = -(-MILLI * consumed.numerator * capacity.denominator
              // (consumed.denominator * capacity.numerator))
    return max(0, min(MILLI, MILLI - taken))


class _GpuView:
    """The view of one DRA manager's GPUs for one GpuSpec, kept current call by call."""

    def __init__(self, dra: DRAManager, spec: GpuSpec) -> None:
        self._dra = dra
        self._spec = spec
        self._table = capacity_table(dra)
        self._feed = UsageFeed(dra.resource_claims)
        #: The layout rows of a node table's rows.
        self._rows = NodeRows()
        #: By the request's selectors and capacity requests: (milli per GPU, accepted models).
        self._asked: dict[tuple[object, ...], tuple[int, frozenset[str] | None]] = {}
        self._rebuild(_Layout(None, None, spec))

    def _rebuild(self, layout: _Layout) -> None:
        self._layout = layout
        self._asked = {}
        rows = len(layout.by_row)
        # One more row, all zeros (and model -1): where nodes without GPUs are mapped.
        self._free: Int64s = np.zeros((rows + 1, layout.width), dtype=np.int64)
        self._gpus: Int64s = np.zeros(rows + 1, dtype=np.int64)
        self._model: Int64s = np.full(rows + 1, -1, dtype=np.int64)
        codes = {name: code for code, name in enumerate(layout.models)}
        for row, gpus in enumerate(layout.by_row):
            self._gpus[row] = len(gpus)
            model = layout.row_models[row]
            if model is not None:
                self._model[row] = codes[model]

    def current(self) -> _Layout:
        """The layout, rebuilt if the slices or the class changed, with the changed devices' free milli
        brought up to date."""
        dra = self._dra
        index = self._table.slice_indexes.index(dra.resource_slices.list())
        device_class = dra.device_classes.get(self._spec.device_class)
        layout = self._layout
        new = layout.index is not index or layout.device_class is not device_class
        if new:
            layout = _Layout(index, device_class, self._spec)
            self._rebuild(layout)
        free, spec = self._free, self._spec
        for gpu, usage in self._feed.usage(layout.gpus, new):
            free[gpu.row, gpu.column] = _free_milli(gpu, usage, spec)
        return layout

    def columns(self, nodes: NodeSet) -> GpuColumns:
        layout = self.current()
        index = self._layout_rows(nodes, layout)
        resources = exact_columns(nodes)
        if resources is not None:
            columns, rows = resources
            capacity = columns.alloc_cpu[rows]
            left = capacity - columns.requested_cpu[rows]
        else:
            capacity = np.fromiter((info.allocatable.milli_cpu for info in nodes), np.int64, len(nodes))
            left = capacity - np.fromiter((info.requested.milli_cpu for info in nodes), np.int64, len(nodes))
        # take() gathers rows several times faster than fancy indexing does.
        return GpuColumns(np.take(self._free, index, axis=0), np.take(self._gpus, index),
                          np.take(self._model, index), layout.models, left, capacity, index, layout)

    def node_columns(self, node: NodeInfo) -> GpuColumns:
        layout = self.current()
        row = layout.rows.get(node_name(node), len(layout.by_row))
        at = slice(row, row + 1)
        capacity = np.array([node.allocatable.milli_cpu], dtype=np.int64)
        return GpuColumns(self._free[at].copy(), self._gpus[at].copy(), self._model[at].copy(), layout.models,
                          capacity - node.requested.milli_cpu, capacity, np.array([row], dtype=np.int64),
                          layout)

    def _layout_rows(self, nodes: NodeSet, layout: _Layout) -> Int64s:
        """The layout rows of ``nodes`` (the all-zero row for a node without GPUs)."""
        absent, get = len(layout.by_row), layout.rows.get

        def rows_of(names: Sequence[str]) -> Int64s:
            return np.fromiter((get(name, absent) for name in names), np.int64, len(names))

        found = self._rows.of(nodes, layout, rows_of)
        return rows_of([node_name(info) for info in nodes]) if found is None else found

    def asked(
        self, claim: objects_pb2.ResourceClaim, request: objects_pb2.ExactDeviceRequest
    ) -> tuple[int, frozenset[str] | None]:
        """The milli per GPU ``request`` takes and the models it accepts (None: all), remembered by its
        selectors' expressions and capacity requests (pods of one kind ask alike)."""
        requests = request.capacity.requests
        expressions = tuple(selector.cel.expression for selector in request.selectors)
        key = (expressions, tuple(sorted(requests.items())))
        found = self._asked.get(key)
        if found is None:
            name = object_name(claim)
            found = self._asked[key] = self._evaluate(Selectors(f"claim {name}", request.selectors), requests,
                                                      name)
        return found

    def _evaluate(
        self, selectors: Selectors, requests: Mapping[str, str], claim: str
    ) -> tuple[int, frozenset[str] | None]:
        layout = self._layout
        accepted = [model for model, device in layout.representatives.items() if _accepts(selectors, device)]
        models = None if len(accepted) == len(layout.representatives) else frozenset(accepted)
        # The share is what the request takes of a GPU it accepts (of any GPU when it accepts none).
        device = layout.representatives[accepted[0]] if accepted else layout.first
        if device is None:
            return MILLI, models
        return _milli(device, self._spec, requests, claim), models


def _accepts(selectors: Selectors, device: SliceDevice) -> bool:
    try:
        return selectors.match(device)
    except AllocationError:
        return False


def _milli(device: SliceDevice, spec: GpuSpec, requests: Mapping[str, str], claim: str) -> int:
    """What a request for ``requests`` consumes of ``device``'s share capacity, in milli of the device
    (as the allocator has it consume: the capacity's request policy applied)."""
    total = _share_capacity(device, spec)
    if total is None:
        return MILLI
    text = requests.get(spec.share_capacity)
    where = f"claim {claim}: capacity {spec.share_capacity}"
    asked = None if text is None else (quantity(text, where), text)
    consumed = consumed_by(asked, device.proto.capacity[spec.share_capacity], where)[0]
    return max(1, min(MILLI, math.ceil(MILLI * consumed / total)))


_VIEWS: weakref.WeakKeyDictionary[DRAManager, dict[GpuSpec, _GpuView]] = weakref.WeakKeyDictionary()


def _view(dra: DRAManager, spec: GpuSpec) -> _GpuView:
    views = _VIEWS.get(dra)
    if views is None:
        views = _VIEWS[dra] = {}
    view = views.get(spec)
    if view is None:
        view = views[spec] = _GpuView(dra, spec)
    return view
