"""The ResourceClaims a pod uses, looked up as kube-scheduler's DynamicResources does
(foreachPodResourceClaim): each must exist, must not be being deleted, and a claim generated from a
template must be the pod's own, or, for an entry that matches its PodGroup's claim, the group's own
(KEP-5729). The first problem is the reason the pod waits."""

from __future__ import annotations

from cluster.api import objects_pb2
from cluster.api.dra.podclaims import (
    claim_name_of,
    claim_not_needed,
    group_claim_of,
    not_for_group,
    not_for_pod,
)
from scheduler.framework.dra_manager import ResourceClaimTracker


class ClaimProblem(Exception):
    """Why the pod cannot be scheduled now, with upstream's message."""


def resolve_pod_claims(
    pod: objects_pb2.Pod, tracker: ResourceClaimTracker, group: objects_pb2.PodGroup | None = None
) -> list[tuple[objects_pb2.ResourceClaim, bool]]:
    """The claims ``pod`` uses, in spec order (entries the controller recorded as not needed are left
    out), each with whether it is the claim of ``group``, the pod's PodGroup; raises ClaimProblem."""
    claims = []
    ref = f"{pod.metadata.namespace}/{pod.metadata.name}"
    for pod_claim in pod.spec.resource_claims:
        of_group = group_claim_of(group, pod_claim) is not None
        name = claim_name_of(pod, pod_claim, group)
        if name is None:
            if claim_not_needed(pod, pod_claim):
                continue
            if of_group and group is not None:
                raise ClaimProblem(f'pod "{ref}": ResourceClaim of PodGroup "{group.metadata.name}" '
                                   "not created yet")
            if pod_claim.HasField("resource_claim_template_name"):
                raise ClaimProblem(f'pod "{ref}": ResourceClaim not created yet')
            raise ClaimProblem(
                f'pod "{ref}", spec.resourceClaim "{pod_claim.name}": none of the supported fields are set')
        claim = tracker.get(pod.metadata.namespace, name)
        if claim is None:
            raise ClaimProblem(f'resourceclaim.resource.k8s.io "{name}" not found')
        if claim.metadata.HasField("deletion_timestamp"):
            raise ClaimProblem(f'resourceclaim "{name}" is being deleted')
        if not pod_claim.HasField("resource_claim_name"):
            problem = (not_for_group(group, claim) if of_group and group is not None
                       else not_for_pod(pod, claim))
            if problem:
                raise ClaimProblem(problem)
        claims.append((claim, of_group))
    return claims


def pod_claims(pod: objects_pb2.Pod, tracker: ResourceClaimTracker,
               group: objects_pb2.PodGroup | None = None) -> list[objects_pb2.ResourceClaim]:
    """The claims ``pod`` uses (`resolve_pod_claims` without telling the group's apart)."""
    return [claim for claim, _ in resolve_pod_claims(pod, tracker, group)]


def uses_claim(pod: objects_pb2.Pod, claim: objects_pb2.ResourceClaim,
               group: objects_pb2.PodGroup | None = None) -> bool:
    """Whether ``claim`` is one of the claims ``pod`` names (by namespace and name)."""
    if claim.metadata.namespace != pod.metadata.namespace:
        return False
    return any(claim_name_of(pod, pod_claim, group) == claim.metadata.name
               for pod_claim in pod.spec.resource_claims)
