"""The API side of the claim for a pod's extended resources backed by DRA, as kube-scheduler's plugin:
Reserve marks its allocation in flight; PreBind creates it under the leader's fence, writes its
allocation and reservedFor, keeps it as written once the informer has it, and records
``status.extendedResourceClaimStatus`` on the pod, in that order; Unreserve forgets the allocation in
flight and deletes a claim PreBind created, and PostFilter one left from an earlier attempt."""

from __future__ import annotations

import asyncio
import logging

from cluster.api import errors, kinds, objects_pb2
from cluster.api.dra.podclaims import consumer_reference
from scheduler.framework import Handle
from scheduler.plugins.dynamicresources.extended import ExtendedClaim, claim_to_create, with_claim_status
from scheduler.plugins.dynamicresources.writes import WRITE_ATTEMPTS, BindError, write_claim_status

log = logging.getLogger(__name__)

#: How long PreBind waits for the informer to deliver the claim it created (upstream's 120 s).
INFORMED_TIMEOUT = 120.0
INFORMED_POLL = 0.05


class ExtendedBinding:
    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._claims = handle.dra_manager.resource_claims

    def reserve(self, extended: ExtendedClaim) -> None:
        """Count the chosen allocation's devices as taken until PreBind wrote it or gave up."""
        assert extended.chosen is not None
        variant, allocation = extended.chosen
        allocated = objects_pb2.ResourceClaim()
        allocated.CopyFrom(variant.claim)
        allocated.status.allocation.CopyFrom(allocation)
        self._claims.signal_claim_pending_allocation(extended.pending_uid, allocated)

    def unreserve(self, extended: ExtendedClaim) -> objects_pb2.ResourceClaim | None:
        """Forget the allocation in flight; the claim PreBind created, for the caller to delete."""
        claim = extended.claim
        if self._claims.remove_claim_pending_allocation(extended.pending_uid):
            self._claims.assumed_claim_restore(claim.metadata.namespace, claim.metadata.name)
        created, extended.created = extended.created, None
        if created is not None:
            self._claims.assumed_claim_restore(created.metadata.namespace, created.metadata.name)
        return created

    async def bind(self, extended: ExtendedClaim, pod: objects_pb2.Pod) -> None:
        """PreBind's writes; raises BindError or the API's error."""
        assert extended.chosen is not None
        variant, allocation = extended.chosen
        client = self._handle.client
        try:
            try:
                created = await client.create(claim_to_create(variant), fence=client.fence)
            except errors.ApiError as err:
                raise BindError(f"create claim for extended resources {pod.metadata.namespace}/"
                                f"{variant.claim.metadata.generate_name}: {err.message}") from err
            extended.created = created
            written = await write_claim_status(client, created, allocation, consumer_reference(pod))
            extended.created = written
            await self._await_informed(written)
        finally:
            self._claims.remove_claim_pending_allocation(extended.pending_uid)
        await self._record_on_pod(pod, written.metadata.name, extended)

    async def _await_informed(self, written: objects_pb2.ResourceClaim) -> None:
        """Keep ``written`` as the claim once the informer has delivered the created one: until then its
        devices stay counted as in flight (the caller forgets them after this)."""
        deadline = asyncio.get_running_loop().time() + INFORMED_TIMEOUT
        while self._claims.get(written.metadata.namespace, written.metadata.name) is None:
            if asyncio.get_running_loop().time() >= deadline:
                log.info("claim %s/%s not informed after %.0fs", written.metadata.namespace,
                         written.metadata.name, INFORMED_TIMEOUT)
                return
            await asyncio.sleep(INFORMED_POLL)
        self._claims.assume_claim_after_api_call(written)

    async def _record_on_pod(self, pod: objects_pb2.Pod, claim_name: str, extended: ExtendedClaim) -> None:
        assert extended.chosen is not None
        mappings = extended.chosen[0].mappings
        ref = f"{pod.metadata.namespace}/{pod.metadata.name}"
        if not mappings:
            raise BindError(f"nil or empty request mappings, no update of pod {ref} "
                                  "ExtendedResourceClaimStatus")
        client = self._handle.client
        current = pod
        for _ in range(WRITE_ATTEMPTS):
            try:
                await client.update_status(with_claim_status(current, claim_name, mappings))
                return
            except errors.Conflict:
                current = await client.get(kinds.POD.name, pod.metadata.name, pod.metadata.namespace)
            except errors.ApiError as err:
                raise BindError(f"update pod {ref} ExtendedResourceClaimStatus: {err.message}") from err
        raise BindError(f"update pod {ref} ExtendedResourceClaimStatus: the pod kept changing")

    async def delete(self, claim: objects_pb2.ResourceClaim) -> None:
        """Delete the claim (gone already is fine)."""
        try:
            await self._handle.client.delete(kinds.RESOURCE_CLAIM.name, claim.metadata.name,
                                             claim.metadata.namespace)
        except errors.NotFound:
            pass

    async def delete_quietly(self, claim: objects_pb2.ResourceClaim) -> None:
        """``delete`` for Unreserve, which cannot wait: a failure is logged, and the claim found in the
        pod's next attempt is deleted then (PostFilter)."""
        try:
            await self.delete(claim)
        except errors.ApiError as err:
            log.warning("could not delete claim %s/%s: %s", claim.metadata.namespace, claim.metadata.name,
                        err.message)
