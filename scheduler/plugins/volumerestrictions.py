"""VolumeRestrictions: volumes a pod may not share with the pods of a node, and claims it may not share
with any pod (kube-scheduler's volumerestrictions).

* In-tree disks: the same GCE persistent disk conflicts unless every mount is read-only, the same AWS
  EBS volume always, the same ISCSI IQN or Ceph RBD image (a shared monitor, the same pool and image)
  unless every mount is read-only: "node(s) had no available disk".
* ReadWriteOncePod: a claim with that access mode is for one pod in the whole cluster. PreFilter counts
  the pod's such claims that a pod in the snapshot already uses; while any is, every node is
  Unschedulable (not unresolvable: preemption evicting the holder frees the claim, which its dry run
  sees through RemovePod).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cluster.api import objects_pb2
from cluster.api.volumes import claim_names
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
from scheduler.plugins.volumeclaims import claim_not_found, queue_if_pods_claim

NAME = "VolumeRestrictions"

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)

READ_WRITE_ONCE_POD = "ReadWriteOncePod"

_STATE_KEY = "PreFilter" + NAME


@dataclass(slots=True)
class _PreFilterState:
    #: The names of the pod's claims with the ReadWriteOncePod access mode.
    read_write_once_pod_claims: frozenset[str]
    #: How many uses of those claims pods in the snapshot make (AddPod/RemovePod move it).
    conflicting_uses: int

    def clone(self) -> _PreFilterState:
        return _PreFilterState(self.read_write_once_pod_claims, self.conflicting_uses)

    def uses_by(self, pod: objects_pb2.Pod, namespace: str) -> int:
        """How many of the claims ``pod`` uses are ours (kube-scheduler compares names only; a claim of
        the same name in another namespace is another claim)."""
        if pod.metadata.namespace != namespace:
            return 0
        return sum(1 for name in claim_names(pod) if name in self.read_write_once_pod_claims)


def _restricted(volume: objects_pb2.Volume) -> bool:
    """Whether the volume is an in-tree disk whose sharing is restricted."""
    return (volume.HasField("gce_persistent_disk") or volume.HasField("aws_elastic_block_store")
            or volume.HasField("rbd") or volume.HasField("iscsi"))


def _conflicts(volume: objects_pb2.Volume, pod: objects_pb2.Pod) -> bool:
    """Whether ``volume`` (of the pod being scheduled) conflicts with a volume of ``pod``."""
    for existing in pod.spec.volumes:
        if volume.HasField("gce_persistent_disk") and existing.HasField("gce_persistent_disk"):
            disk, other = volume.gce_persistent_disk, existing.gce_persistent_disk
            if disk.pd_name == other.pd_name and not (disk.read_only and other.read_only):
                return True
        if volume.HasField("aws_elastic_block_store") and existing.HasField("aws_elastic_block_store"):
            if volume.aws_elastic_block_store.volume_id == existing.aws_elastic_block_store.volume_id:
                return True
        if volume.HasField("iscsi") and existing.HasField("iscsi"):
            iscsi, other_iscsi = volume.iscsi, existing.iscsi
            # ISCSI volumes are ReadWriteOnce or ReadOnlyMany: one read-write mount of an IQN at most.
            if iscsi.iqn == other_iscsi.iqn and not (iscsi.read_only and other_iscsi.read_only):
                return True
        if volume.HasField("rbd") and existing.HasField("rbd"):
            rbd, other_rbd = volume.rbd, existing.rbd
            if (not set(rbd.monitors).isdisjoint(other_rbd.monitors) and rbd.pool == other_rbd.pool
                    and rbd.image == other_rbd.image and not (rbd.read_only and other_rbd.read_only)):
                return True
    return False


def _disk_conflict(pod: objects_pb2.Pod, node_info: NodeInfo) -> bool:
    for volume in pod.spec.volumes:
        if _restricted(volume) and any(_conflicts(volume, other.pod) for other in node_info.pods.values()):
            return True
    return False


class VolumeRestrictions:
    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def sign(self, pod: PodInfo) -> Signature | None:
        """Claims depend on which pods anywhere use them: a pod with one is never batched. In-tree disks
        depend on the node's pods alone, so their volumes sign the pod."""
        volumes = pod.pod.spec.volumes
        if not volumes:
            return ()
        if pod.pvc_keys:
            return None
        return tuple(volume.SerializeToString(deterministic=True)
                     for volume in volumes if _restricted(volume))

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        spec_pod = pod.pod
        if not spec_pod.spec.volumes:
            return None, Status.skip()
        needs_check = any(_restricted(volume) for volume in spec_pod.spec.volumes)
        storage = self._handle.storage
        namespace = spec_pod.metadata.namespace
        read_write_once_pod: set[str] = set()
        for name in claim_names(spec_pod):
            claim = storage.persistent_volume_claim(namespace, name)
            if claim is None:
                return None, Status.unresolvable(claim_not_found(name))
            if READ_WRITE_ONCE_POD in claim.spec.access_modes:
                read_write_once_pod.add(name)
        used = self._handle.snapshot().storage_infos()
        # At most one pod uses a ReadWriteOncePod claim: each claim in use is one use.
        conflicting = sum(1 for name in read_write_once_pod
                          if used.is_pvc_used_by_pods(f"{namespace}/{name}"))
        if not needs_check and not conflicting:
            return None, Status.skip()
        state.write(_STATE_KEY, _PreFilterState(frozenset(read_write_once_pod), conflicting))
        return None, None

    def pre_filter_extensions(self) -> VolumeRestrictions:
        return self

    def add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._update(state, pod, pod_to_add, +1)

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._update(state, pod, pod_to_remove, -1)

    def _update(self, state: CycleState, pod: PodInfo, other: PodInfo, sign: int) -> Status | None:
        try:
            prefiltered: _PreFilterState = state.read(_STATE_KEY)
        except NotFound:
            return Status.as_error(f"cannot read {_STATE_KEY!r} from cycleState")
        if other.pvc_keys:
            prefiltered.conflicting_uses += sign * prefiltered.uses_by(other.pod, pod.pod.metadata.namespace)
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if _disk_conflict(pod.pod, node_info):
            return Status.unschedulable(ERR_REASON_DISK_CONFLICT)
        return self._claims_verdict(state)

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        """``filter`` of each node, one Status object per verdict."""
        disk = Status.unschedulable(ERR_REASON_DISK_CONFLICT)
        claims = self._claims_verdict(state)
        return [disk if _disk_conflict(pod.pod, node_info) else claims for node_info in nodes]

    @staticmethod
    def _claims_verdict(state: CycleState) -> Status | None:
        """The ReadWriteOncePod verdict, the same on every node."""
        try:
            prefiltered: _PreFilterState = state.read(_STATE_KEY)
        except NotFound:
            return Status.as_error(f"cannot read {_STATE_KEY!r} from cycleState")
        if prefiltered.conflicting_uses > 0:
            return Status.unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            # A deleted pod releases its disks and its claims (volumes are immutable: updates never do).
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE), _after_pod_deleted),
            # A new node has no pod using anything.
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
            # The claim PreFilter did not find, whose access modes it must read.
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                                 queue_if_pods_claim),
        ]



def _after_pod_deleted(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    deleted: objects_pb2.Pod = old
    if deleted.metadata.namespace != pod.metadata.namespace:
        return QueueingHint.SKIP
    if _disk_conflict(pod, NodeInfo(pods=[PodInfo(deleted)])):
        return QueueingHint.QUEUE
    # A deleted pod that used one of the pod's claims may have held it ReadWriteOncePod (the claim's
    # access modes are not looked up here, as kube-scheduler does not).
    if not set(claim_names(pod)).isdisjoint(claim_names(deleted)):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def new(args: None, handle: Handle) -> VolumeRestrictions:
    return VolumeRestrictions(handle)
