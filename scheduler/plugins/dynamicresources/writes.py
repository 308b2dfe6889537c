"""PreBind's write of a claim's status: the allocation Reserve chose (when the scheduler allocated it) and
the consumer's reservedFor entry (the pod's, or its PodGroup's for the group's claim), a conflict reading
the claim again (client-go's RetryOnConflict)."""

from __future__ import annotations

from cluster.api import errors, kinds, objects_pb2, timeutil
from scheduler.framework import APIClient
from scheduler.plugins.dynamicresources.state import claim_ref

#: Status updates of one claim in PreBind before a conflict is an error (client-go's DefaultRetry).
WRITE_ATTEMPTS = 5


class BindError(Exception):
    """PreBind could not write a claim (upstream's messages)."""


async def write_claim_status(
    client: APIClient, current: objects_pb2.ResourceClaim, allocation: objects_pb2.AllocationResult | None,
    consumer: objects_pb2.ResourceClaimConsumerReference,
) -> objects_pb2.ResourceClaim:
    """The claim as written; raises BindError or the API's error. A claim read again that lists the
    consumer already is left as it is (another member of a PodGroup reserved it meanwhile)."""
    claim = objects_pb2.ResourceClaim()
    claim.CopyFrom(current)
    ref = claim_ref(claim)
    for attempt in range(WRITE_ATTEMPTS):
        if attempt:
            claim = await client.get(kinds.RESOURCE_CLAIM.name, claim.metadata.name, claim.metadata.namespace)
            if any(reserved.uid == consumer.uid for reserved in claim.status.reserved_for):
                return claim
        if claim.metadata.HasField("deletion_timestamp"):
            raise BindError(f"claim {ref} got deleted in the meantime")
        if allocation is not None:
            if claim.status.HasField("allocation"):
                raise BindError(f"claim {ref} got allocated elsewhere in the meantime")
            claim.status.allocation.CopyFrom(allocation)
            claim.status.allocation.allocation_timestamp.CopyFrom(timeutil.now())
        elif not claim.status.HasField("allocation"):
            raise BindError(f"claim {ref} is not allocated yet")
        claim.status.reserved_for.append(consumer)
        try:
            return await client.update_status(claim)
        except errors.Conflict:
            continue
    what = "allocation and reservation" if allocation is not None else "reservation"
    raise BindError(f"add {what} to claim {ref}: the claim kept changing")
