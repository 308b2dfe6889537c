"""VolumeBinding's queueing hints (kube-scheduler's isSchedulableAfter...Change): which storage events
may make a pod it rejected schedulable."""

from __future__ import annotations

from typing import Any

from cluster.api import objects_pb2
from scheduler.framework import QueueingHint
from scheduler.plugins.volumebinding.binder import volume_limit
from scheduler.plugins.volumebinding.claims import pod_claims

#: The CSINode annotation listing the in-tree plugins migrated to CSI on the node.
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"


def after_claim_change(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    """A claim the pod uses was added or updated: almost any such change may help."""
    claim: objects_pb2.PersistentVolumeClaim = new
    if claim.metadata.namespace != pod.metadata.namespace:
        return QueueingHint.SKIP
    if any(pod_claim.name == claim.metadata.name for pod_claim in pod_claims(pod)):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def after_storage_class_change(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    """A new class, or a class's allowedTopologies changed (its binding mode cannot change)."""
    if old is None:
        return QueueingHint.QUEUE
    before: objects_pb2.StorageClass = old
    after: objects_pb2.StorageClass = new
    return QueueingHint.SKIP if before.allowed_topologies == after.allowed_topologies else QueueingHint.QUEUE


def after_csi_node_change(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    """A new CSINode, or its migrated plugins changed."""
    if old is None:
        return QueueingHint.QUEUE
    before: objects_pb2.CSINode = old
    after: objects_pb2.CSINode = new
    if (before.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION)
            != after.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION)):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def after_csi_driver_change(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    """A driver of the pod's inline CSI volumes stopped tracking capacity."""
    before: objects_pb2.CSIDriver = old
    after: objects_pb2.CSIDriver = new
    for volume in pod.spec.volumes:
        if not volume.HasField("csi") or volume.csi.driver != after.metadata.name:
            continue
        if before.spec.storage_capacity and not after.spec.storage_capacity:
            return QueueingHint.QUEUE
    return QueueingHint.SKIP


def after_capacity_change(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    """A new CSIStorageCapacity, or one whose volume limit grew (its class and topology cannot change)."""
    if old is None:
        return QueueingHint.QUEUE
    old_limit = volume_limit(old)
    new_limit = volume_limit(new)
    if new_limit is not None and (old_limit is None or new_limit > old_limit):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP
