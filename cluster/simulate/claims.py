"""What a pod's resource claims got: for each entry of its ``spec.resourceClaims``, the ResourceClaim
it stands for (named in the entry, or the one the resourceclaim controller generated from a template)
and the devices allocated to that claim, as ``ClaimOutcome``s of the pod's line of the result."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cluster.api import objects_pb2
from cluster.api.dra.podclaims import claim_name_of


@dataclass(frozen=True, slots=True)
class AllocatedDevice:
    request: str
    driver: str
    pool: str
    device: str
    #: Which share of a device that allows multiple allocations this is; None for a whole device.
    share_id: str | None
    #: The capacity the share consumes, by capacity name (empty for a whole device).
    consumed_capacity: Mapping[str, str]

    def to_json(self) -> dict[str, Any]:
        return {
            "request": self.request,
            "driver": self.driver,
            "pool": self.pool,
            "device": self.device,
            "shareID": self.share_id,
            "consumedCapacity": dict(sorted(self.consumed_capacity.items())),
        }

    @classmethod
    def of(cls, result: objects_pb2.DeviceRequestAllocationResult) -> AllocatedDevice:
        return cls(
            request=result.request,
            driver=result.driver,
            pool=result.pool,
            device=result.device,
            share_id=result.share_id if result.HasField("share_id") else None,
            consumed_capacity=dict(result.consumed_capacity),
        )


@dataclass(frozen=True, slots=True)
class ClaimOutcome:
    #: The entry's name in the pod's spec.resourceClaims.
    name: str
    #: The ResourceClaim's name; None while the controller has not generated it from the template.
    resource_claim: str | None
    #: The devices allocated to that claim (none while it is not allocated, or does not exist).
    devices: tuple[AllocatedDevice, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "resourceClaim": self.resource_claim,
            "devices": [device.to_json() for device in self.devices],
        }


def claim_outcomes(
    pod: objects_pb2.Pod, claims: Mapping[tuple[str, str], objects_pb2.ResourceClaim]
) -> tuple[ClaimOutcome, ...]:
    """Each of ``pod``'s claim entries, in spec order, with what ``claims`` (by namespace and name: the
    ResourceClaims at the end of the simulation) says was allocated to it."""
    outcomes = []
    for pod_claim in pod.spec.resource_claims:
        name = claim_name_of(pod, pod_claim)
        claim = claims.get((pod.metadata.namespace, name)) if name is not None else None
        devices: tuple[AllocatedDevice, ...] = ()
        if claim is not None and claim.status.HasField("allocation"):
            devices = tuple(AllocatedDevice.of(result)
                            for result in claim.status.allocation.devices.results)
        outcomes.append(ClaimOutcome(pod_claim.name, name, devices))
    return tuple(outcomes)
