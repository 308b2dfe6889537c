"""VolumeZone: a pod's bound volumes must be in the node's zone and region (kube-scheduler's volumezone).

PreFilter reads the zone and region labels (topology.kubernetes.io/zone and /region, and their
deprecated failure-domain.beta.kubernetes.io forms) of the PersistentVolumes the pod's claims are bound
to; a label's value may list several zones joined by "__". Filter rejects a node whose own label of the
same key (or, for a deprecated key, of its GA form) is not among them: "node(s) had no available volume
zone". A node with none of those labels fits (a single-zone cluster need not label its nodes). A claim
not bound yet whose class binds WaitForFirstConsumer is left to VolumeBinding; any other unbound claim
makes the pod unresolvable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cluster.api import objects_pb2
from cluster.api.volumes import claim_class, claim_names
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    PodInfo,
    PreFilterResult,
    QueueingHint,
    Signature,
    Status,
)
from scheduler.framework.cycle_state import NotFound
from scheduler.plugins.volumeclaims import (
    claim_not_found,
    class_not_found,
    queue_if_pods_claim,
    volume_not_found,
)

NAME = "VolumeZone"

ERR_REASON_CONFLICT = "node(s) had no available volume zone"

LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"

#: The labels compared, in kube-scheduler's order.
TOPOLOGY_LABELS = (LABEL_BETA_ZONE, LABEL_BETA_REGION, LABEL_ZONE, LABEL_REGION)
_GA_LABEL = {LABEL_BETA_ZONE: LABEL_ZONE, LABEL_BETA_REGION: LABEL_REGION}

#: How a label lists the several zones of a volume.
MULTI_ZONE_DELIMITER = "__"

WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

_STATE_KEY = "PreFilter" + NAME


@dataclass(frozen=True, slots=True)
class VolumeTopology:
    """One topology label of a PersistentVolume: its key and the values it allows."""

    volume: str
    key: str
    values: frozenset[str]


def label_zones(value: str) -> frozenset[str] | None:
    """The zones a label value lists ("a__b"), None when one of them is empty (the label is ignored)."""
    zones = [zone.strip() for zone in value.split(MULTI_ZONE_DELIMITER)]
    if any(not zone for zone in zones):
        return None
    return frozenset(zones)


def volume_topologies(volume: objects_pb2.PersistentVolume) -> list[VolumeTopology]:
    labels = volume.metadata.labels
    found = []
    for key in TOPOLOGY_LABELS:
        if key in labels:
            values = label_zones(labels[key])
            if values is not None:
                found.append(VolumeTopology(volume.metadata.name, key, values))
    return found


def _fits(topologies: list[VolumeTopology], labels: dict[str, str]) -> bool:
    if not any(key in labels for key in TOPOLOGY_LABELS):
        return True  # a node without zone labels (a single-zone cluster) takes any volume
    for topology in topologies:
        value = labels.get(topology.key)
        if value is None:
            # A deprecated label of the volume matches the node's GA label.
            value = labels.get(_GA_LABEL.get(topology.key, topology.key))
        if value is None or value not in topology.values:
            return False
    return True


class VolumeZone:
    def __init__(self, handle: Handle) -> None:
        self._storage = handle.storage

    @property
    def name(self) -> str:
        return NAME

    def sign(self, pod: PodInfo) -> Signature | None:
        """The verdict of a pod with claims follows their volumes, not the node alone: never batched."""
        return None if pod.pvc_keys else ()

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.pvc_keys:
            return None, Status.skip()
        topologies, status = self._topologies(pod.pod)
        if status is not None:
            return None, status
        if not topologies:
            return None, Status.skip()
        state.write(_STATE_KEY, topologies)
        return None, None

    def _topologies(self, pod: objects_pb2.Pod) -> tuple[list[VolumeTopology], Status | None]:
        storage = self._storage
        namespace = pod.metadata.namespace
        topologies: list[VolumeTopology] = []
        for name in claim_names(pod):
            if not name:
                return [], Status.unresolvable("PersistentVolumeClaim had no name")
            claim = storage.persistent_volume_claim(namespace, name)
            if claim is None:
                return [], Status.unresolvable(claim_not_found(name))
            volume_name = claim.spec.volume_name
            if not volume_name:
                class_name = claim_class(claim)
                if not class_name:
                    return [], Status.unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name")
                storage_class = storage.storage_class(class_name)
                if storage_class is None:
                    return [], Status.unresolvable(class_not_found(class_name))
                if not storage_class.HasField("volume_binding_mode"):
                    return [], Status.unresolvable(
                        f'VolumeBindingMode not set for StorageClass "{class_name}"')
                if storage_class.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER:
                    continue  # VolumeBinding chooses its volume
                return [], Status.unresolvable("PersistentVolume had no name")
            volume = storage.persistent_volume(volume_name)
            if volume is None:
                return [], Status.unresolvable(volume_not_found(volume_name))
            topologies.extend(volume_topologies(volume))
        return topologies, None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        return self.filter_nodes(state, pod, [node_info])[0]

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        """``filter`` of each node, one Status object per verdict."""
        if not pod.pod.spec.volumes:
            return [None] * len(nodes)
        try:
            topologies: list[VolumeTopology] = state.read(_STATE_KEY)
        except NotFound:
            # PreFilter did not run (or was skipped): compute what it would have.
            topologies, status = self._topologies(pod.pod)
            if status is not None:
                return [status] * len(nodes)
        conflict = Status.unresolvable(ERR_REASON_CONFLICT)
        return [None if _fits(topologies, node_info.labels) else conflict for node_info in nodes]

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            # A new WaitForFirstConsumer class lets an unbound claim wait for VolumeBinding. (A class's
            # binding mode is immutable: updates never do.)
            ClusterEventWithHint(ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD),
                                 _after_storage_class_added),
            # A new node, or a node's zone labels changing.
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            # The claim created, or bound to its volume.
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE),
                queue_if_pods_claim),
            # A new volume, or a volume's zone labels changing.
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE),
                _after_volume_changed),
        ]



def _after_storage_class_added(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    added: objects_pb2.StorageClass = new
    if added.HasField("volume_binding_mode") and added.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER:
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def _after_volume_changed(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    if old is None:
        return QueueingHint.QUEUE
    if volume_topologies(old) != volume_topologies(new):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def new(args: None, handle: Handle) -> VolumeZone:
    return VolumeZone(handle)
