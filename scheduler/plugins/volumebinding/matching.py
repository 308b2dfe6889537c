"""Which PersistentVolume a claim may bind to on a node (component-helpers' storage/volume
FindMatchingVolume, CheckNodeAffinity and GetBindVolumeToClaim)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from cluster.api import objects_pb2
from cluster.api.selectors import LabelSelector
from scheduler.plugins.helpers import NodeSelector
from scheduler.plugins.volumebinding.claims import (
    ANN_BOUND_BY_CONTROLLER,
    FILESYSTEM,
    VOLUME_AVAILABLE,
    claim_class,
    requested_storage,
    resource_version,
    volume_capacity,
    volume_class,
)

NO_MATCHING_TERMS = "no matching NodeSelectorTerms"


class NodeAffinities:
    """The PVs' required node affinity, parsed once per version of each PV."""

    def __init__(self) -> None:
        self._parsed: dict[str, tuple[int, NodeSelector]] = {}

    def mismatch(self, volume: objects_pb2.PersistentVolume, labels: Mapping[str, str]) -> str | None:
        """Why the node of ``labels`` is not in the volume's node affinity; None when it is."""
        if not volume.spec.HasField("node_affinity") or not volume.spec.node_affinity.HasField("required"):
            return None
        name, version = volume.metadata.name, resource_version(volume)
        cached = self._parsed.get(name)
        if cached is None or cached[0] != version:
            selector = NodeSelector.from_proto(volume.spec.node_affinity.required)
            cached = self._parsed[name] = (version, selector)
        # Upstream matches a node made of the labels alone: a matchFields term never matches a volume.
        return None if cached[1].matches_labels(labels, "") else NO_MATCHING_TERMS


def is_volume_bound_to_claim(volume: objects_pb2.PersistentVolume,
                             claim: objects_pb2.PersistentVolumeClaim) -> bool:
    if not volume.spec.HasField("claim_ref"):
        return False
    ref = volume.spec.claim_ref
    if ref.name != claim.metadata.name or ref.namespace != claim.metadata.namespace:
        return False
    return not ref.uid or ref.uid == claim.metadata.uid


def _volume_mode_mismatch(claim: objects_pb2.PersistentVolumeClaim,
                          volume: objects_pb2.PersistentVolume) -> bool:
    requested = claim.spec.volume_mode if claim.spec.HasField("volume_mode") else FILESYSTEM
    offered = volume.spec.volume_mode if volume.spec.HasField("volume_mode") else FILESYSTEM
    return requested != offered


def _has_access_modes(claim: objects_pb2.PersistentVolumeClaim, volume: objects_pb2.PersistentVolume) -> bool:
    offered = set(volume.spec.access_modes)
    return all(mode in offered for mode in claim.spec.access_modes)


def find_matching_volume(
    claim: objects_pb2.PersistentVolumeClaim,
    volumes: Iterable[objects_pb2.PersistentVolume],
    node: objects_pb2.Node,
    excluded: Mapping[str, objects_pb2.PersistentVolume],
    affinities: NodeAffinities,
) -> objects_pb2.PersistentVolume | None:
    """The volume pre-bound to the claim (None if its node affinity rules the node out), else the smallest
    available one of the claim's class that satisfies its request, volume mode, access modes, selector
    and the node (the scheduler's path of FindMatchingVolume, with delayed binding)."""
    requested = requested_storage(claim)
    requested_class = claim_class(claim)
    selector = LabelSelector.from_proto(claim.spec.selector) if claim.spec.HasField("selector") else None
    labels = node.metadata.labels
    smallest: objects_pb2.PersistentVolume | None = None
    smallest_size = 0
    for volume in volumes:
        if volume.metadata.name in excluded:
            continue
        bound_to_claim = is_volume_bound_to_claim(volume, claim)
        if volume.spec.HasField("claim_ref") and not bound_to_claim:
            continue
        size = volume_capacity(volume)
        if size < requested or _volume_mode_mismatch(claim, volume):
            continue
        if volume.spec.volume_attributes_class_name != claim.spec.volume_attributes_class_name:
            continue
        if volume.metadata.HasField("deletion_timestamp"):
            continue
        affinity_ok = affinities.mismatch(volume, labels) is None
        if bound_to_claim:
            # The pre-bound volume is the claim's only choice: this node cannot have it.
            return volume if affinity_ok else None
        if volume.status.phase != VOLUME_AVAILABLE:
            # Volumes that will be made available soon would likely fail with conflicts now.
            continue
        if selector is not None and not selector.matches(volume.metadata.labels):
            continue
        if volume_class(volume) != requested_class or not affinity_ok:
            continue
        if not _has_access_modes(claim, volume):
            continue
        if smallest is None or smallest_size > size:
            smallest, smallest_size = volume, size
    return smallest


def bind_volume_to_claim(
    volume: objects_pb2.PersistentVolume, claim: objects_pb2.PersistentVolumeClaim
) -> tuple[objects_pb2.PersistentVolume, bool]:
    """A copy of the volume bound to the claim (spec.claimRef, and the bound-by-controller annotation
    when the binding is the scheduler's, not the user's), and whether anything changed."""
    set_by_controller = not is_volume_bound_to_claim(volume, claim)
    updated = objects_pb2.PersistentVolume()
    updated.CopyFrom(volume)
    dirty = False
    ref = volume.spec.claim_ref
    if (not volume.spec.HasField("claim_ref") or ref.name != claim.metadata.name
            or ref.namespace != claim.metadata.namespace or ref.uid != claim.metadata.uid):
        updated.spec.claim_ref.CopyFrom(objects_pb2.ObjectReference(
            kind="PersistentVolumeClaim", api_version="v1", namespace=claim.metadata.namespace,
            name=claim.metadata.name, uid=claim.metadata.uid,
            resource_version=claim.metadata.resource_version))
        dirty = True
    if set_by_controller and ANN_BOUND_BY_CONTROLLER not in updated.metadata.annotations:
        updated.metadata.annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
        dirty = True
    return updated, dirty
