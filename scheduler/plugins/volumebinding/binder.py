"""The volume binder (kube-scheduler's volumeBinder): sorts a pod's claims (PreFilter), finds the PVs or
the provisioning each node offers its unbound claims (Filter), assumes the chosen bindings (Reserve),
writes them and waits for the PV controller to complete them (PreBind).

Claims of a WaitForFirstConsumer class are bound here; those of an Immediate class (and claims naming
their volume already) the PV controller binds before the pod can be scheduled."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from cluster.api import errors, objects_pb2
from cluster.api.persistentvolumes import (
    CLAIM_LOST,
    NOT_SUPPORTED_PROVISIONER,
    STORAGE,
    WAIT_FOR_FIRST_CONSUMER,
    requested_storage,
)
from cluster.api.quantity import parse_quantity
from cluster.api.selectors import LabelSelector
from cluster.api.volumes import SELECTED_NODE_ANNOTATION, claim_class
from scheduler.framework import Handle
from scheduler.plugins.volumebinding.assume_cache import AssumeError, PVAssumeCache, PVCAssumeCache
from scheduler.plugins.volumebinding.claims import (
    claim_key,
    is_fully_bound,
    pod_claims,
    resource_version,
)
from scheduler.plugins.volumebinding.matching import NodeAffinities, bind_volume_to_claim, matching_volume
from scheduler.plugins.volumeclaims import not_for_pod

# Why a node cannot have the pod's volumes (upstream's ConflictReasons).
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
NODE_CONFLICT = "node(s) had volume node affinity conflict"
NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"


class BinderError(Exception):
    """Something is wrong with the pod's claims or their classes, or the binding failed (upstream's
    messages): an error status, not a node's conflict."""


class ClaimsProblem(Exception):
    """A claim of the pod cannot be used (yet): missing, lost, being deleted, not the pod's."""


@dataclass(slots=True)
class BindingInfo:
    """A claim and the PV chosen for it (after Reserve: the PV bound to it; after PreBind: as written)."""

    claim: objects_pb2.PersistentVolumeClaim
    volume: objects_pb2.PersistentVolume


@dataclass(slots=True)
class DynamicProvision:
    """A claim to provision, with the CSIStorageCapacity that showed room for it (None when the driver
    does not track capacity)."""

    claim: objects_pb2.PersistentVolumeClaim
    node_capacity: objects_pb2.CSIStorageCapacity | None = None


@dataclass(slots=True)
class PodVolumes:
    """What one node offers the pod's unbound claims."""

    static_bindings: list[BindingInfo] = field(default_factory=list)
    dynamic_provisions: list[DynamicProvision] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class PodVolumeClaims:
    """The pod's claims, sorted as PreFilter finds them."""

    bound: tuple[objects_pb2.PersistentVolumeClaim, ...]
    #: Unbound claims of WaitForFirstConsumer classes: the scheduler binds them.
    unbound_delay_binding: tuple[objects_pb2.PersistentVolumeClaim, ...]
    #: Unbound claims the PV controller should have bound (Immediate, or naming their volume).
    unbound_immediate: tuple[objects_pb2.PersistentVolumeClaim, ...]
    #: The PVs of the classes of ``unbound_delay_binding``, by class.
    volumes_by_class: dict[str, list[objects_pb2.PersistentVolume]]


def check_pod_claims(pod: objects_pb2.Pod, handle: Handle) -> None:
    """Raise ClaimsProblem when a claim of the pod cannot be used (the VolumeBinding plugin's
    podHasPVCs)."""
    for pod_claim in pod_claims(pod):
        claim = handle.storage.persistent_volume_claim(pod.metadata.namespace, pod_claim.name)
        if claim is None:
            if pod_claim.ephemeral:
                raise ClaimsProblem("waiting for ephemeral volume controller to create the "
                                    f'persistentvolumeclaim "{pod_claim.name}"')
            raise ClaimsProblem(f'persistentvolumeclaim "{pod_claim.name}" not found')
        if claim.status.phase == CLAIM_LOST:
            raise ClaimsProblem(f'persistentvolumeclaim "{claim.metadata.name}" bound to non-existent '
                                f'persistentvolume "{claim.spec.volume_name}"')
        if claim.metadata.HasField("deletion_timestamp"):
            raise ClaimsProblem(f'persistentvolumeclaim "{claim.metadata.name}" is being deleted')
        if pod_claim.ephemeral and (problem := not_for_pod(pod, claim)):
            raise ClaimsProblem(problem)


def _topology_allows(terms: Sequence[objects_pb2.TopologySelectorTerm], labels: Mapping[str, str]) -> bool:
    """The class's allowedTopologies admit a node of ``labels`` (none: every node)."""
    if not terms:
        return True
    return any(all(labels.get(requirement.key) in requirement.values
                   for requirement in term.match_label_expressions) for term in terms)


def volume_limit(capacity: objects_pb2.CSIStorageCapacity) -> Fraction | None:
    """The largest volume the capacity admits: maximumVolumeSize, more precise, else capacity."""
    if capacity.HasField("maximum_volume_size"):
        return parse_quantity(capacity.maximum_volume_size)
    return parse_quantity(capacity.capacity) if capacity.HasField("capacity") else None


class VolumeBinder:
    def __init__(self, handle: Handle, bind_timeout_seconds: int) -> None:
        self._handle = handle
        self._storage = handle.storage
        self.pv_cache = PVAssumeCache(handle.storage)
        self.pvc_cache = PVCAssumeCache(handle.storage)
        self._affinities = NodeAffinities()
        self._bind_timeout = bind_timeout_seconds

    # ---------------------------------------------------------------------------------- PreFilter

    def pod_volume_claims(self, pod: objects_pb2.Pod) -> PodVolumeClaims:
        """The pod's claims sorted into bound, unbound delayed and unbound immediate ones (raises
        BinderError)."""
        bound, delayed, immediate = [], [], []
        for pod_claim in pod_claims(pod):
            key = f"{pod.metadata.namespace}/{pod_claim.name}"
            claim = self.pvc_cache.get(key)
            if claim is None:
                raise BinderError(f'error getting PVC "{key}": persistentvolumeclaim "{pod_claim.name}" '
                                  "not found")
            if pod_claim.ephemeral and (problem := not_for_pod(pod, claim)):
                raise BinderError(problem)
            if is_fully_bound(claim):
                bound.append(claim)
            elif self._delay_binding(claim) and not claim.spec.volume_name:
                delayed.append(claim)
            else:
                immediate.append(claim)
        by_class = {claim_class(claim): self.pv_cache.list_by_class(claim_class(claim)) for claim in delayed}
        return PodVolumeClaims(tuple(bound), tuple(delayed), tuple(immediate), by_class)

    def _delay_binding(self, claim: objects_pb2.PersistentVolumeClaim) -> bool:
        class_name = claim_class(claim)
        if not class_name:
            return False
        storage_class = self._storage.storage_class(class_name)
        if storage_class is None:
            return False
        if not storage_class.HasField("volume_binding_mode"):
            raise BinderError(f'VolumeBindingMode not set for StorageClass "{class_name}"')
        return storage_class.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER

    # ------------------------------------------------------------------------------------- Filter

    def find_pod_volumes(
        self, pod: objects_pb2.Pod, claims: PodVolumeClaims, node: objects_pb2.Node
    ) -> tuple[PodVolumes, list[str]]:
        """What the node offers the pod's unbound claims, and why it cannot have the pod's volumes (no
        reasons: it can). Raises BinderError."""
        volumes = PodVolumes()
        bound_satisfied = unbound_satisfied = sufficient_storage = bound_pvs_found = True
        if claims.bound:
            bound_satisfied, bound_pvs_found = self._check_bound_claims(claims.bound, node)
        if claims.unbound_delay_binding:
            to_match, to_provision = [], []
            for claim in claims.unbound_delay_binding:
                selected = claim.metadata.annotations.get(SELECTED_NODE_ANNOTATION)
                if selected is None:
                    to_match.append(claim)
                elif selected != node.metadata.name:
                    # Provisioning was started for another node: only that node will do.
                    unbound_satisfied = False
                    break
                else:
                    to_provision.append(claim)
            else:
                if to_match:
                    unbound_satisfied, volumes.static_bindings, unmatched = self._find_matching_volumes(
                        to_match, claims.volumes_by_class, node)
                    to_provision += unmatched
                if to_provision:
                    unbound_satisfied, sufficient_storage, volumes.dynamic_provisions = (
                        self._check_volume_provisions(to_provision, node))
        reasons = []
        if not bound_satisfied:
            reasons.append(NODE_CONFLICT)
        if not unbound_satisfied:
            reasons.append(BIND_CONFLICT)
        if not sufficient_storage:
            reasons.append(NOT_ENOUGH_SPACE)
        if not bound_pvs_found:
            reasons.append(PV_NOT_EXIST)
        return volumes, reasons

    def _check_bound_claims(
        self, claims: Sequence[objects_pb2.PersistentVolumeClaim], node: objects_pb2.Node
    ) -> tuple[bool, bool]:
        """(every bound PV's node affinity admits the node, every bound PV exists)."""
        for claim in claims:
            volume = self.pv_cache.get(claim.spec.volume_name)
            if volume is None:
                return True, False
            if self._affinities.mismatch(volume, node.metadata.labels) is not None:
                return False, True
        return True, True

    def _find_matching_volumes(
        self, claims: Sequence[objects_pb2.PersistentVolumeClaim],
        volumes_by_class: dict[str, list[objects_pb2.PersistentVolume]], node: objects_pb2.Node,
    ) -> tuple[bool, list[BindingInfo], list[objects_pb2.PersistentVolumeClaim]]:
        """A PV for each claim, the smallest requests first so each gets the smallest fit: (all found,
        the bindings, the claims without one)."""
        chosen: dict[str, objects_pb2.PersistentVolume] = {}
        bindings: list[BindingInfo] = []
        unmatched: list[objects_pb2.PersistentVolumeClaim] = []
        for claim in sorted(claims, key=requested_storage):
            volume = matching_volume(claim, volumes_by_class.get(claim_class(claim), ()), node, chosen,
                                     self._affinities)
            if volume is None:
                unmatched.append(claim)
                continue
            chosen[volume.metadata.name] = volume
            bindings.append(BindingInfo(claim, volume))
        return not unmatched, bindings, unmatched

    def _check_volume_provisions(
        self, claims: Sequence[objects_pb2.PersistentVolumeClaim], node: objects_pb2.Node
    ) -> tuple[bool, bool, list[DynamicProvision]]:
        """(every claim can be provisioned for the node, there is room for them, the provisions)."""
        provisions = []
        for claim in claims:
            class_name = claim_class(claim)
            if not class_name:
                raise BinderError(f'no class for claim "{claim_key(claim)}"')
            storage_class = self._storage.storage_class(class_name)
            if storage_class is None:
                raise BinderError(f'failed to find storage class "{class_name}"')
            provisioner = storage_class.provisioner
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not _topology_allows(storage_class.allowed_topologies, node.metadata.labels):
                return False, True, []
            sufficient, capacity = self._has_enough_capacity(provisioner, claim, storage_class, node)
            if not sufficient:
                return True, False, []
            provisions.append(DynamicProvision(claim, capacity))
        return True, True, provisions

    def _has_enough_capacity(
        self, provisioner: str, claim: objects_pb2.PersistentVolumeClaim,
        storage_class: objects_pb2.StorageClass, node: objects_pb2.Node,
    ) -> tuple[bool, objects_pb2.CSIStorageCapacity | None]:
        """Whether a CSIStorageCapacity of the class that the node can reach has room for the claim (only
        for CSI drivers that opt into capacity tracking), and that capacity."""
        if STORAGE not in claim.spec.resources.requests:
            return True, None
        driver = self._storage.csi_driver(provisioner)
        if driver is None or not driver.spec.storage_capacity:
            return True, None
        size = requested_storage(claim)
        for capacity in self._storage.csi_storage_capacities():
            if capacity.storage_class_name != storage_class.metadata.name:
                continue
            limit = volume_limit(capacity)
            if limit is not None and limit >= size and _node_has_access(node, capacity):
                return True, capacity
        return False, None

    # ---------------------------------------------------------------------------- Reserve, Unreserve

    def assume_pod_volumes(self, pod: objects_pb2.Pod, node_name: str, volumes: PodVolumes) -> bool:
        """Assume the node's bindings (PVs bound to their claims, claims to provision given the node) and
        make them ``volumes``'; True when every claim of the pod is fully bound already. Raises
        BinderError, having assumed nothing."""
        if self._all_bound(pod):
            return True
        bindings: list[BindingInfo] = []
        for binding in volumes.static_bindings:
            updated, dirty = bind_volume_to_claim(binding.volume, binding.claim)
            if dirty:
                try:
                    self.pv_cache.assume(updated.metadata.name, updated)
                except AssumeError as err:
                    self._revert_volumes(bindings)
                    raise BinderError(str(err)) from None
            bindings.append(BindingInfo(binding.claim, updated))
        provisions: list[DynamicProvision] = []
        for provision in volumes.dynamic_provisions:
            claim = objects_pb2.PersistentVolumeClaim()
            claim.CopyFrom(provision.claim)
            claim.metadata.annotations[SELECTED_NODE_ANNOTATION] = node_name
            try:
                self.pvc_cache.assume(claim_key(claim), claim)
            except AssumeError as err:
                self._revert_volumes(bindings)
                self._revert_claims(provisions)
                raise BinderError(str(err)) from None
            provisions.append(DynamicProvision(claim, provision.node_capacity))
        volumes.static_bindings = bindings
        volumes.dynamic_provisions = provisions
        return False

    def _all_bound(self, pod: objects_pb2.Pod) -> bool:
        for pod_claim in pod_claims(pod):
            claim = self.pvc_cache.get(f"{pod.metadata.namespace}/{pod_claim.name}")
            if claim is None or not is_fully_bound(claim):
                return False
            if pod_claim.ephemeral and not_for_pod(pod, claim):
                return False
        return True

    def revert_assumed_pod_volumes(self, volumes: PodVolumes) -> None:
        self._revert_volumes(volumes.static_bindings)
        self._revert_claims(volumes.dynamic_provisions)

    def _revert_volumes(self, bindings: Sequence[BindingInfo]) -> None:
        for binding in bindings:
            self.pv_cache.restore(binding.volume.metadata.name)

    def _revert_claims(self, provisions: Sequence[DynamicProvision]) -> None:
        for provision in provisions:
            self.pvc_cache.restore(claim_key(provision.claim))

    # ------------------------------------------------------------------------------------- PreBind

    async def bind_pod_volumes(self, pod: objects_pb2.Pod, node_name: str, volumes: PodVolumes) -> None:
        """Write the assumed bindings and wait until the PV controller has completed them, at most the
        bind timeout on the scheduler's clock (raises BinderError or the API's error). Upstream polls the
        informers' objects each second; they change only when an informer delivers, so this looks at
        each delivery instead (and ``podsched simulate`` need not move its clock for a binding)."""
        await self._write_bindings(volumes)
        clock = self._handle.clock
        deadline = clock.now() + self._bind_timeout
        while not self._bindings_done(pod, node_name, volumes):
            remaining = deadline - clock.now()
            if remaining <= 0:
                raise BinderError("binding volumes: context deadline exceeded")
            change = asyncio.ensure_future(self._storage.changed())
            timer = asyncio.ensure_future(clock.sleep(remaining))
            try:
                await asyncio.wait((change, timer), return_when=asyncio.FIRST_COMPLETED)
            finally:
                change.cancel()
                timer.cancel()

    def _bindings_done(self, pod: objects_pb2.Pod, node_name: str, volumes: PodVolumes) -> bool:
        try:
            return self.check_bindings(pod, node_name, volumes)
        except BinderError as err:
            raise BinderError(f"binding volumes: {err}") from None

    async def _write_bindings(self, volumes: PodVolumes) -> None:
        """The PVs' claimRefs, then the claims' selected nodes, each under the leader's fence; what was
        not written is no longer assumed when a write fails."""
        client = self._handle.client
        bindings, provisions = volumes.static_bindings, volumes.dynamic_provisions
        written_bindings = written_provisions = 0
        try:
            for binding in bindings:
                binding.volume = await client.update(binding.volume, fence=client.fence)
                written_bindings += 1
            for provision in provisions:
                provision.claim = await client.update(provision.claim, fence=client.fence)
                written_provisions += 1
        except errors.ApiError:
            self._revert_volumes(bindings[written_bindings:])
            self._revert_claims(provisions[written_provisions:])
            raise

    def check_bindings(self, pod: objects_pb2.Pod, node_name: str, volumes: PodVolumes) -> bool:
        """Whether the PV controller has completed every binding PreBind wrote, on the informers' objects
        (not the assumed ones, which the next cycles may assume again). Raises BinderError when a binding
        failed and the pod must be scheduled again."""
        try:
            node = self._handle.snapshot().node_infos().get(node_name).node
        except KeyError:
            node = None
        if node is None:
            raise BinderError(f'failed to get node "{node_name}": node "{node_name}" not found')
        for binding in volumes.static_bindings:
            name = binding.volume.metadata.name
            volume = self.pv_cache.get_api(name)
            if volume is None:
                raise BinderError(f'failed to check binding: PersistentVolume "{name}" not found')
            claim = self.pvc_cache.get_api(claim_key(binding.claim))
            if claim is None:
                raise BinderError("failed to check binding: PersistentVolumeClaim "
                                  f'"{claim_key(binding.claim)}" not found')
            if resource_version(binding.volume) > resource_version(volume):
                return False  # the informer has not delivered the write yet
            self._check_affinity(volume, node)
            if not volume.spec.HasField("claim_ref") or not volume.spec.claim_ref.uid:
                raise BinderError(f'ClaimRef got reset for pv "{name}"')
            if not is_fully_bound(claim):
                return False
        for provision in volumes.dynamic_provisions:
            key = claim_key(provision.claim)
            claim = self.pvc_cache.get_api(key)
            if claim is None:
                raise BinderError(
                    f'failed to check provisioning pvc: PersistentVolumeClaim "{key}" not found')
            if resource_version(provision.claim) > resource_version(claim):
                return False
            if not claim.metadata.annotations:
                raise BinderError(f'selectedNode annotation reset for PVC "{claim.metadata.name}"')
            if claim.metadata.annotations.get(SELECTED_NODE_ANNOTATION) != node_name:
                # The provisioner removes the annotation when it could not provision the volume.
                raise BinderError(f'provisioning failed for PVC "{claim.metadata.name}"')
            if claim.spec.volume_name:
                volume = self.pv_cache.get_api(claim.spec.volume_name)
                if volume is None:
                    return False  # the new PV may not have reached the informer yet
                self._check_affinity(volume, node)
            if not is_fully_bound(claim):
                return False
        return True

    def _check_affinity(self, volume: objects_pb2.PersistentVolume, node: objects_pb2.Node) -> None:
        mismatch = self._affinities.mismatch(volume, node.metadata.labels)
        if mismatch is not None:
            raise BinderError(f'pv "{volume.metadata.name}" node affinity doesn\'t match node '
                              f'"{node.metadata.name}": {mismatch}')


def _node_has_access(node: objects_pb2.Node, capacity: objects_pb2.CSIStorageCapacity) -> bool:
    if not capacity.HasField("node_topology"):
        return False
    try:
        selector = LabelSelector.from_proto(capacity.node_topology)
    except errors.Invalid:
        return False
    return selector.matches(node.metadata.labels)
