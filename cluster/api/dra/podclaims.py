"""How a pod names its ResourceClaims, and how a claim names its pod (the resourceclaim package of
upstream's dynamic-resource-allocation library).

A pod's ``spec.resourceClaims[]`` entry names either a ResourceClaim (``resourceClaimName``) or a
ResourceClaimTemplate (``resourceClaimTemplateName``). For a template the resourceclaim controller
creates the claim, owned by the pod, and records its generated name in the pod's
``status.resourceClaimStatuses`` under the entry's name; an entry recorded without a name says the
controller decided no claim is needed, and users of the pod skip it instead of waiting for it.
"""

from __future__ import annotations

from collections.abc import Iterator

from cluster.api import objects_pb2

#: The annotation a generated claim carries: the name of the pod's spec.resourceClaims[] entry it was
#: made for, so that the controller finds a claim it created before it could record it in the pod.
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"

#: A reservedFor entry of a pod: core group (""), resource "pods".
POD_RESOURCE = "pods"
#: The most consumers a claim may be reserved for at once (ResourceClaimReservedForMaxSize).
RESERVED_FOR_MAX_SIZE = 256


def _generated_status(
    pod: objects_pb2.Pod, pod_claim: objects_pb2.PodResourceClaim
) -> objects_pb2.PodResourceClaimStatus | None:
    return next((s for s in pod.status.resource_claim_statuses if s.name == pod_claim.name), None)


def claim_name_of(pod: objects_pb2.Pod, pod_claim: objects_pb2.PodResourceClaim) -> str | None:
    """The name of the ResourceClaim ``pod_claim`` (an entry of ``pod``'s spec.resourceClaims) stands
    for: its resourceClaimName, or for a template the name recorded in pod.status.resourceClaimStatuses.
    None when there is none: the claim is not generated yet, or not needed (`claim_not_needed` tells
    which), or the entry names neither (validation refuses such a pod)."""
    if pod_claim.HasField("resource_claim_name"):
        return pod_claim.resource_claim_name
    if not pod_claim.HasField("resource_claim_template_name"):
        return None
    status = _generated_status(pod, pod_claim)
    return status.resource_claim_name if status is not None and status.resource_claim_name else None


def claim_not_needed(pod: objects_pb2.Pod, pod_claim: objects_pb2.PodResourceClaim) -> bool:
    """Whether the controller recorded that template entry ``pod_claim`` needs no claim (a status entry
    without resourceClaimName): the pod does without it, where a claim not generated yet is waited for."""
    if pod_claim.HasField("resource_claim_name") or not pod_claim.HasField("resource_claim_template_name"):
        return False
    status = _generated_status(pod, pod_claim)
    return status is not None and not status.HasField("resource_claim_name")


def claims_of(pod: objects_pb2.Pod) -> Iterator[tuple[objects_pb2.PodResourceClaim, str | None]]:
    """Each entry of ``pod``'s spec.resourceClaims with its claim's name (`claim_name_of`)."""
    for pod_claim in pod.spec.resource_claims:
        yield pod_claim, claim_name_of(pod, pod_claim)


def claim_names_of(pod: objects_pb2.Pod) -> list[str]:
    """The names of the claims ``pod`` uses that are known now, in spec order (an index of pods by
    claim: entries not generated yet or not needed have none)."""
    return [name for _, name in claims_of(pod) if name is not None]


def is_reserved_for(claim: objects_pb2.ResourceClaim, pod: objects_pb2.Pod) -> bool:
    """Whether ``claim``'s status.reservedFor lists ``pod`` (by uid)."""
    return any(consumer.uid == pod.metadata.uid for consumer in claim.status.reserved_for)


def can_be_reserved(claim: objects_pb2.ResourceClaim) -> bool:
    """Whether ``claim`` may be reserved for one more consumer (its reservedFor is not full)."""
    return len(claim.status.reserved_for) < RESERVED_FOR_MAX_SIZE


def consumer_reference(pod: objects_pb2.Pod) -> objects_pb2.ResourceClaimConsumerReference:
    """The reservedFor entry that reserves a claim for ``pod``."""
    return objects_pb2.ResourceClaimConsumerReference(
        resource=POD_RESOURCE, name=pod.metadata.name, uid=pod.metadata.uid)


def controlling_pod(claim: objects_pb2.ResourceClaim) -> objects_pb2.OwnerReference | None:
    """The owner reference of the pod that controls ``claim`` (a claim generated for it), if any."""
    return next((owner for owner in claim.metadata.owner_references
                 if owner.controller and owner.api_version == "v1" and owner.kind == "Pod"), None)


def not_for_pod(pod: objects_pb2.Pod, claim: objects_pb2.ResourceClaim) -> str | None:
    """Why generated claim ``claim`` cannot serve ``pod`` (it is in another namespace, or the pod does not
    control it), or None when it can."""
    claim_ref = f"{claim.metadata.namespace}/{claim.metadata.name}"
    pod_ref = f"{pod.metadata.namespace}/{pod.metadata.name}"
    if claim.metadata.namespace != pod.metadata.namespace:
        return f"ResourceClaim {claim_ref} is not in the same namespace as Pod {pod_ref}"
    owners = claim.metadata.owner_references
    if not any(owner.controller and owner.uid == pod.metadata.uid for owner in owners):
        return f"ResourceClaim {claim_ref} was not created for Pod {pod_ref} (Pod is not owner)"
    return None
