"""VolumeBinding: a pod's PersistentVolumeClaims must be bound, or bindable on the node, as
kube-scheduler's plugin.

PreFilter skips pods without claims at once; it rejects a pod whose claims are missing, lost, being
deleted, not its own (a generic ephemeral volume's), or unbound though the PV controller binds them
(Immediate). Filter checks the bound claims' PVs' node affinity, and finds for the unbound claims of
WaitForFirstConsumer classes the smallest fitting available PV on the node, else a provisioning the
class allows there (allowedTopologies, CSIStorageCapacity). Score prefers, per StorageCapacityScoring's
shape, the nodes where the pod's volumes use least of the capacity they come from. Reserve assumes the
node's bindings (the binder's assume caches) so the next pods' cycles see the volumes taken; Unreserve
reverts them. PreBind writes them under the leader's fence and waits for the PV controller to complete
them (``binder``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cluster.api import errors
from cluster.api.persistentvolumes import requested_storage, volume_capacity
from cluster.api.quantity import parse_quantity
from cluster.api.volumes import claim_class, uses_claims
from scheduler.config.argtypes import VolumeBindingArgs
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    NodeSet,
    NotFound,
    PodInfo,
    PreFilterResult,
    Signature,
    Status,
)
from scheduler.plugins.volumebinding import hints
from scheduler.plugins.volumebinding.binder import (
    BinderError,
    ClaimsProblem,
    PodVolumeClaims,
    PodVolumes,
    VolumeBinder,
    check_pod_claims,
)
from scheduler.plugins.volumebinding.scorer import StorageResource, build_scorer

NAME = "VolumeBinding"
ARGS = VolumeBindingArgs
STATE_KEY = NAME

UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


@dataclass(slots=True)
class _State:
    """What PreFilter found of the pod's claims, and what each node Filter accepted offers them. Shared
    by preemption's clones of the cycle state, as upstream's."""

    claims: PodVolumeClaims
    volumes_by_node: dict[str, PodVolumes] = field(default_factory=dict)
    has_static_bindings: bool = False
    has_dynamic_provisioning: bool = False
    all_bound: bool = False


def _state(state: CycleState) -> _State | None:
    try:
        data: _State = state.read(STATE_KEY)
    except NotFound:
        return None
    return data


class VolumeBinding:
    def __init__(self, args: VolumeBindingArgs, handle: Handle) -> None:
        self.args = args
        self._handle = handle
        self._binder = VolumeBinder(handle, args.bind_timeout_seconds)
        self._scorer = build_scorer(args.shape)

    @property
    def name(self) -> str:
        return NAME

    def sign(self, pod: PodInfo) -> Signature | None:
        """A pod with claims depends on the volumes other pods take, beyond its NodeInfo: never batched."""
        return None if uses_claims(pod.pod) else ()

    # ---------------------------------------------------------------------------------- PreFilter

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not uses_claims(pod.pod):
            return None, Status.skip()
        try:
            check_pod_claims(pod.pod, self._handle)
        except ClaimsProblem as problem:
            return None, Status.unresolvable(str(problem))
        try:
            claims = self._binder.pod_volume_claims(pod.pod)
        except BinderError as err:
            return None, Status.as_error(err)
        if claims.unbound_immediate:
            # The PV controller binds these: the pod waits for its claim events.
            return None, Status.unresolvable(UNBOUND_IMMEDIATE)
        state.write(STATE_KEY, _State(claims))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    # ------------------------------------------------------------------------------------- Filter

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        data = _state(state)
        if data is None:
            return Status.as_error(f"reading {STATE_KEY!r} from cycle state: not found")
        node = node_info.node
        if node is None:
            return Status.as_error("node not found")
        try:
            volumes, reasons = self._binder.find_pod_volumes(pod.pod, data.claims, node)
        except BinderError as err:
            return Status.as_error(err)
        if reasons:
            return Status.unresolvable(*reasons)
        data.volumes_by_node[node.metadata.name] = volumes
        data.has_static_bindings = data.has_static_bindings or bool(volumes.static_bindings)
        data.has_dynamic_provisioning = data.has_dynamic_provisioning or bool(volumes.dynamic_provisions)
        return None

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> list[Status | None]:
        """``filter`` of each node: only pods with claims get here, and each node has its own volumes."""
        return [self.filter(state, pod, node_info) for node_info in nodes]

    # -------------------------------------------------------------------------------------- Score

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        data = _state(state)
        if data is None or not (data.has_static_bindings or data.has_dynamic_provisioning):
            return Status.skip()
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        data = _state(state)
        volumes = None if data is None else data.volumes_by_node.get(node_info.name)
        if volumes is None:
            return 0
        classes: dict[str, StorageResource] = {}
        for binding in volumes.static_bindings:
            resource = classes.setdefault(binding.volume.spec.storage_class_name, StorageResource())
            resource.requested += requested_storage(binding.claim)
            resource.capacity += volume_capacity(binding.volume)
        for provision in volumes.dynamic_provisions:
            capacity = provision.node_capacity
            if capacity is None or not capacity.HasField("capacity"):
                continue
            resource = classes.setdefault(claim_class(provision.claim), StorageResource())
            # Not a sum: two claims of one class are provisioned from the same capacity.
            resource.capacity = parse_quantity(capacity.capacity)
            resource.requested += requested_storage(provision.claim)
        return self._scorer(classes)

    def score_extensions(self) -> None:
        return None

    # ---------------------------------------------------------------------------- Reserve, Unreserve

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        data = _state(state)
        if data is None:
            return None
        volumes = data.volumes_by_node.get(node_name)
        if volumes is None:
            data.all_bound = True
            return None
        try:
            data.all_bound = self._binder.assume_pod_volumes(pod.pod, node_name, volumes)
        except BinderError as err:
            return Status.as_error(err)
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        data = _state(state)
        volumes = None if data is None else data.volumes_by_node.get(node_name)
        if volumes is not None:
            self._binder.revert_assumed_pod_volumes(volumes)

    # ------------------------------------------------------------------------------------- PreBind

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        data = _state(state)
        if data is None or data.all_bound:
            return None
        volumes = data.volumes_by_node.get(node_name)
        if volumes is None:
            return Status.as_error(f'no pod volumes found for node "{node_name}"')
        try:
            await self._binder.bind_pod_volumes(pod.pod, node_name, volumes)
        except (BinderError, errors.ApiError) as err:
            return Status.as_error(err)
        return None

    # ------------------------------------------------------------------------------------- events

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        add_or_update = ActionType.ADD | ActionType.UPDATE
        return [
            # A class created or its allowedTopologies changed (the binding mode cannot change).
            ClusterEventWithHint(ClusterEvent(EventResource.STORAGE_CLASS, add_or_update),
                                 hints.after_storage_class_change),
            # The pod's claims bound, created, their selected node reset.
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, add_or_update),
                                 hints.after_claim_change),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, add_or_update)),
            # A node may match a PV's node affinity or a class's allowedTopologies.
            ClusterEventWithHint(ClusterEvent(EventResource.NODE,
                                              ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, add_or_update),
                                 hints.after_csi_node_change),
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_DRIVER, ActionType.UPDATE),
                                 hints.after_csi_driver_change),
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_STORAGE_CAPACITY, add_or_update),
                                 hints.after_capacity_change),
        ]


def new(args: VolumeBindingArgs | None, handle: Handle) -> VolumeBinding:
    """None (a framework built without a configuration): the defaults."""
    return VolumeBinding(VolumeBindingArgs() if args is None else args, handle)
