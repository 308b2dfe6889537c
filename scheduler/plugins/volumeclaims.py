"""What the volume plugins share about a pod's claims: which claims its volumes name, a claim's class, the
claim of an ephemeral volume, and the messages kube-scheduler's listers give for objects that do not
exist (component-helpers ``storage/volume`` and ``storage/ephemeral``)."""

from __future__ import annotations

from cluster.api import objects_pb2

#: The class a claim names in the annotation that came before ``spec.storageClassName``, and wins over it.
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"


def claim_class(claim: objects_pb2.PersistentVolumeClaim) -> str:
    """The claim's StorageClass name ("" for none), as GetPersistentVolumeClaimClass reads it."""
    annotated = claim.metadata.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    if annotated is not None:
        return annotated
    return claim.spec.storage_class_name if claim.spec.HasField("storage_class_name") else ""


def claim_names(pod: objects_pb2.Pod) -> list[str]:
    """The claims the pod's persistentVolumeClaim volumes name, in volume order."""
    return [volume.persistent_volume_claim.claim_name for volume in pod.spec.volumes
            if volume.HasField("persistent_volume_claim")]


def ephemeral_claim_name(pod: objects_pb2.Pod, volume: objects_pb2.Volume) -> str:
    """The claim the ephemeral volume controller makes for the pod's ephemeral ``volume``."""
    return f"{pod.metadata.name}-{volume.name}"


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
