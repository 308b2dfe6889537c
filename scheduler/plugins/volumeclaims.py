"""What the volume plugins share about a pod's claims beyond cluster.api.volumes: whether an ephemeral
volume's claim is the pod's, and the messages kube-scheduler's listers give for objects that do not exist
(component-helpers ``storage/ephemeral``)."""

from __future__ import annotations

from cluster.api import objects_pb2


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
