"""A pod's PersistentVolumeClaims and what the binder reads of claims and volumes (component-helpers'
storage/ephemeral and storage/volume helpers): the claim names a pod's volumes use, whether a generic
ephemeral volume's claim is the pod's own, the storage class of a claim or a volume, the annotations the
scheduler and the PV controller exchange."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from cluster.api import objects_pb2
from cluster.api.quantity import int_value

#: The node the scheduler chose for a claim to provision (the provisioner's topology); the provisioner
#: removes it when provisioning failed.
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
#: The PV controller's mark that it completed the binding of a claim.
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
#: On a PersistentVolume whose claimRef was set by a controller (the scheduler's binder), not by a user.
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
#: The beta annotation that names a class before spec.storageClassName does.
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"

CLAIM_LOST = "Lost"
VOLUME_AVAILABLE = "Available"
FILESYSTEM = "Filesystem"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
STORAGE = "storage"


@dataclass(frozen=True, slots=True)
class PodClaim:
    """A volume of the pod that uses a claim: the claim's name, and whether it is a generic ephemeral
    volume's (``<pod>-<volume>``, which the ephemeral volume controller creates for the pod)."""

    name: str
    ephemeral: bool


def pod_claims(pod: objects_pb2.Pod) -> Iterator[PodClaim]:
    """The claims the pod's volumes use, in the order of its volumes."""
    for volume in pod.spec.volumes:
        if volume.HasField("persistent_volume_claim"):
            yield PodClaim(volume.persistent_volume_claim.claim_name, False)
        elif volume.HasField("ephemeral"):
            yield PodClaim(f"{pod.metadata.name}-{volume.name}", True)


def has_claims(pod: objects_pb2.Pod) -> bool:
    """Whether any volume of the pod uses a claim (cheap: most pods have no volumes at all)."""
    return any(volume.HasField("persistent_volume_claim") or volume.HasField("ephemeral")
               for volume in pod.spec.volumes)


def ephemeral_claim_problem(pod: objects_pb2.Pod, claim: objects_pb2.PersistentVolumeClaim) -> str | None:
    """Why a generic ephemeral volume's claim is not the pod's (ephemeral.VolumeIsForPod): the pod must
    be its controller."""
    owned = any(ref.controller and ref.uid == pod.metadata.uid for ref in claim.metadata.owner_references)
    if claim.metadata.namespace != pod.metadata.namespace or not owned:
        return (f"PVC {claim.metadata.namespace}/{claim.metadata.name} was not created for pod "
                f"{pod.metadata.namespace}/{pod.metadata.name} (pod is not owner)")
    return None


def claim_key(claim: objects_pb2.PersistentVolumeClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"


def claim_class(claim: objects_pb2.PersistentVolumeClaim) -> str:
    """The claim's storage class: the beta annotation first, then spec.storageClassName ("" for none)."""
    annotations = claim.metadata.annotations
    if BETA_STORAGE_CLASS_ANNOTATION in annotations:
        return annotations[BETA_STORAGE_CLASS_ANNOTATION]
    return claim.spec.storage_class_name if claim.spec.HasField("storage_class_name") else ""


def volume_class(volume: objects_pb2.PersistentVolume) -> str:
    annotations = volume.metadata.annotations
    if BETA_STORAGE_CLASS_ANNOTATION in annotations:
        return annotations[BETA_STORAGE_CLASS_ANNOTATION]
    return volume.spec.storage_class_name


def is_fully_bound(claim: objects_pb2.PersistentVolumeClaim) -> bool:
    """The PV controller has completed the claim's binding."""
    return bool(claim.spec.volume_name) and ANN_BIND_COMPLETED in claim.metadata.annotations


def requested_storage(claim: objects_pb2.PersistentVolumeClaim) -> int:
    """The claim's storage request in bytes (0 when it requests none)."""
    text = claim.spec.resources.requests.get(STORAGE)
    return int_value(text) if text else 0


def volume_capacity(volume: objects_pb2.PersistentVolume) -> int:
    text = volume.spec.capacity.get(STORAGE)
    return int_value(text) if text else 0


def resource_version(obj: objects_pb2.PersistentVolume | objects_pb2.PersistentVolumeClaim) -> int:
    """The object's resourceVersion as a number, to tell which of two versions is newer (0 when unset)."""
    text = obj.metadata.resource_version
    return int(text) if text.isdigit() else 0
