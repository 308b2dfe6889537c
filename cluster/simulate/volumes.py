"""What a pod's volumes got: for each volume that uses a PersistentVolumeClaim (one it names, or the one the
ephemeral volume controller made for it), the claim's phase and the PersistentVolume bound to it, as
``VolumeOutcome``s of the pod's line of the result."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cluster.api import objects_pb2
from cluster.api.volumes import ephemeral_claim_name


@dataclass(frozen=True, slots=True)
class VolumeOutcome:
    #: The volume's name in the pod's spec.volumes.
    name: str
    claim: str
    #: The claim's phase at the end (Pending, Bound, Lost); None when the claim does not exist.
    phase: str | None
    #: The PersistentVolume the claim is bound to; None while it is not.
    volume: str | None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "claim": self.claim, "phase": self.phase,
                "persistentVolume": self.volume}


def volume_outcomes(
    pod: objects_pb2.Pod, claims: Mapping[tuple[str, str], objects_pb2.PersistentVolumeClaim]
) -> tuple[VolumeOutcome, ...]:
    """Each of ``pod``'s volumes that uses a claim, in spec order, with what ``claims`` (by namespace and
    name: the PersistentVolumeClaims at the end of the simulation) says of it."""
    outcomes = []
    for volume in pod.spec.volumes:
        if volume.HasField("persistent_volume_claim"):
            name = volume.persistent_volume_claim.claim_name
        elif volume.HasField("ephemeral"):
            name = ephemeral_claim_name(pod, volume)
        else:
            continue
        claim = claims.get((pod.metadata.namespace, name))
        outcomes.append(VolumeOutcome(
            volume.name, name,
            phase=None if claim is None else claim.status.phase or None,
            volume=None if claim is None else claim.spec.volume_name or None,
        ))
    return tuple(outcomes)
