"""The ResourceClaims a pod uses, looked up as kube-scheduler's DynamicResources does
(foreachPodResourceClaim): each must exist, must not be being deleted, and a claim generated from a
template must be the pod's own. The first problem is the reason the pod waits."""

from __future__ import annotations

from cluster.api import objects_pb2
from cluster.api.dra.podclaims import claim_name_of, claim_not_needed, not_for_pod
from scheduler.framework.dra_manager import ResourceClaimTracker


class ClaimProblem(Exception):
    """Why the pod cannot be scheduled now, with upstream's message."""


def pod_claims(pod: objects_pb2.Pod, tracker: ResourceClaimTracker) -> list[objects_pb2.ResourceClaim]:
    """The claims ``pod`` uses, in spec order (entries the controller recorded as not needed are left
    out); raises ClaimProblem."""
    claims = []
    ref = f"{pod.metadata.namespace}/{pod.metadata.name}"
    for pod_claim in pod.spec.resource_claims:
        name = claim_name_of(pod, pod_claim)
        if name is None:
            if claim_not_needed(pod, pod_claim):
                continue
            if pod_claim.HasField("resource_claim_template_name"):
                raise ClaimProblem(f'pod "{ref}": ResourceClaim not created yet')
            raise ClaimProblem(
                f'pod "{ref}", spec.resourceClaim "{pod_claim.name}": none of the supported fields are set')
        claim = tracker.get(pod.metadata.namespace, name)
        if claim is None:
            raise ClaimProblem(f'resourceclaim.resource.k8s.io "{name}" not found')
        if claim.metadata.HasField("deletion_timestamp"):
            raise ClaimProblem(f'resourceclaim "{name}" is being deleted')
        if not pod_claim.HasField("resource_claim_name") and (problem := not_for_pod(pod, claim)):
            raise ClaimProblem(problem)
        claims.append(claim)
    return claims


def uses_claim(pod: objects_pb2.Pod, claim: objects_pb2.ResourceClaim) -> bool:
    """Whether ``claim`` is one of the claims ``pod`` names (by namespace and name)."""
    if claim.metadata.namespace != pod.metadata.namespace:
        return False
    return any(claim_name_of(pod, pod_claim) == claim.metadata.name for pod_claim in pod.spec.resource_claims)
