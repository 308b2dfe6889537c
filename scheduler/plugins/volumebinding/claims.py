"""A pod's PersistentVolumeClaims (component-helpers' storage/ephemeral): the claim names a pod's volumes
use; and what the binder reads of a claim
beyond ``cluster.api.persistentvolumes`` (the binding protocol shared with the PV controller)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from cluster.api import objects_pb2
from cluster.api.persistentvolumes import ANN_BIND_COMPLETED
from cluster.api.volumes import ephemeral_claim_name


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
            yield PodClaim(ephemeral_claim_name(pod, volume), True)


def claim_key(claim: objects_pb2.PersistentVolumeClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"


def is_fully_bound(claim: objects_pb2.PersistentVolumeClaim) -> bool:
    """The PV controller has completed the claim's binding."""
    return bool(claim.spec.volume_name) and ANN_BIND_COMPLETED in claim.metadata.annotations


def resource_version(obj: objects_pb2.PersistentVolume | objects_pb2.PersistentVolumeClaim) -> int:
    """The object's resourceVersion as a number, to tell which of two versions is newer (0 when unset)."""
    text = obj.metadata.resource_version
    return int(text) if text.isdigit() else 0
