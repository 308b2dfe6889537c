"""What the volume plugins share about a pod's claims beyond cluster.api.volumes: whether an ephemeral
volume's claim is the pod's, the hint for a claim event, and the messages kube-scheduler's listers give
for objects that do not exist (component-helpers ``storage/ephemeral``)."""

from __future__ import annotations

from typing import Any

from cluster.api import objects_pb2
from cluster.api.volumes import claim_names
from scheduler.framework import QueueingHint


def not_for_pod(pod: objects_pb2.Pod, claim: objects_pb2.PersistentVolumeClaim) -> str:
    """Why an ephemeral volume's claim is not the pod's ("" when it is): the pod must be its controller."""
    meta = claim.metadata
    controlled = any(ref.controller and ref.uid == pod.metadata.uid for ref in meta.owner_references)
    if meta.namespace != pod.metadata.namespace or not controlled:
        return (f"PVC {meta.namespace}/{meta.name} was not created for pod "
                f"{pod.metadata.namespace}/{pod.metadata.name} (pod is not owner)")
    return ""


def claim_not_found(name: str) -> str:
    return f'persistentvolumeclaim "{name}" not found'


def volume_not_found(name: str) -> str:
    return f'persistentvolume "{name}" not found'


def class_not_found(name: str) -> str:
    return f'storageclass.storage.k8s.io "{name}" not found'


def queue_if_pods_claim(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    """A queueing hint: a claim added or updated helps the pod when one of its persistentVolumeClaim
    volumes names it."""
    claim: objects_pb2.PersistentVolumeClaim = new
    if claim.metadata.namespace == pod.metadata.namespace and claim.metadata.name in claim_names(pod):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP
