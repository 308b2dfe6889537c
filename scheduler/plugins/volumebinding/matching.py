"""Which PersistentVolume a claim may bind to on a node: ``cluster.api.persistentvolumes``' matching (the
PV controller's too) with the node's part (CheckNodeAffinity, access modes), and the volume bound to the
claim (GetBindVolumeToClaim)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from cluster.api import objects_pb2
from cluster.api.persistentvolumes import (
    ANN_BOUND_BY_CONTROLLER,
    access_modes_satisfied,
    find_matching_volume,
    is_volume_bound_to_claim,
)
from scheduler.plugins.helpers import NodeSelector
from scheduler.plugins.volumebinding.claims import resource_version

NO_MATCHING_TERMS = "no matching NodeSelectorTerms"


#: Parsed node affinities kept before the cache starts anew (volumes come and go by name).
MAX_PARSED_AFFINITIES = 4096


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
            if len(self._parsed) >= MAX_PARSED_AFFINITIES:
                self._parsed.clear()
            selector = NodeSelector.from_proto(volume.spec.node_affinity.required)
            cached = self._parsed[name] = (version, selector)
        # Upstream matches a node made of the labels alone: a matchFields term never matches a volume.
        return None if cached[1].matches_labels(labels, "") else NO_MATCHING_TERMS


def matching_volume(
    claim: objects_pb2.PersistentVolumeClaim,
    volumes: Iterable[objects_pb2.PersistentVolume],
    node: objects_pb2.Node,
    excluded: Iterable[str],
    affinities: NodeAffinities,
) -> objects_pb2.PersistentVolume | None:
    """The volume pre-bound to the claim (None if the node cannot have it), else the smallest available
    one that satisfies the claim, its access modes and the node (FindMatchingVolume's scheduler path)."""
    labels = node.metadata.labels

    def fits(volume: objects_pb2.PersistentVolume) -> bool:
        return affinities.mismatch(volume, labels) is None and access_modes_satisfied(claim, volume)

    return find_matching_volume(claim, volumes, delay_binding=True, fits=fits, excluded=frozenset(excluded))


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
