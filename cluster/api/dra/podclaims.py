"""How a pod names its ResourceClaims, and how a claim names its pod (the resourceclaim package of
upstream's dynamic-resource-allocation library).

A pod's ``spec.resourceClaims[]`` entry names either a ResourceClaim (``resourceClaimName``) or a
ResourceClaimTemplate (``resourceClaimTemplateName``). For a template the resourceclaim controller
creates the claim, owned by the pod, and records its generated name in the pod's
``status.resourceClaimStatuses`` under the entry's name; an entry recorded without a name says the
controller decided no claim is needed, and users of the pod skip it instead of waiting for it.

A pod's entry that matches an entry of its PodGroup's ``spec.resourceClaims`` exactly (same name, same
resourceClaimName or resourceClaimTemplateName) is the group's claim (KEP-5729): a template's claim is
generated once for the group, owned by the PodGroup and recorded in the PodGroup's
``status.resourceClaimStatuses``, and the claim is reserved for the PodGroup (one reservedFor entry,
``scheduling.k8s.io`` ``podgroups``) instead of for each pod.
"""

from __future__ import annotations

from collections.abc import Iterator

from cluster.api import objects_pb2

#: The annotation a generated claim carries: the name of the pod's spec.resourceClaims[] entry it was
#: made for, so that the controller finds a claim it created before it could record it in the pod.
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"

#: A reservedFor entry of a pod: core group (""), resource "pods".
POD_RESOURCE = "pods"
#: A reservedFor entry of a PodGroup: group "scheduling.k8s.io", resource "podgroups".
POD_GROUP_API_GROUP = "scheduling.k8s.io"
POD_GROUP_RESOURCE = "podgroups"
#: The most consumers a claim may be reserved for at once (ResourceClaimReservedForMaxSize).
RESERVED_FOR_MAX_SIZE = 256


def _generated_status(
    pod: objects_pb2.Pod, pod_claim: objects_pb2.PodResourceClaim
) -> objects_pb2.PodResourceClaimStatus | None:
    return next((s for s in pod.status.resource_claim_statuses if s.name == pod_claim.name), None)


def _group_status(
    group: objects_pb2.PodGroup, group_claim: objects_pb2.PodGroupResourceClaim
) -> objects_pb2.PodGroupResourceClaimStatus | None:
    return next((s for s in group.status.resource_claim_statuses if s.name == group_claim.name), None)


def group_claim_of(
    group: objects_pb2.PodGroup | None, pod_claim: objects_pb2.PodResourceClaim
) -> objects_pb2.PodGroupResourceClaim | None:
    """The entry of ``group``'s spec.resourceClaims that pod entry ``pod_claim`` matches exactly (name,
    resourceClaimName and resourceClaimTemplateName alike, set or not); None when none does: the claim
    is the pod's own."""
    if group is None:
        return None
    for group_claim in group.spec.resource_claims:
        if group_claim.name == pod_claim.name and all(
                _optional(group_claim, field) == _optional(pod_claim, field)
                for field in ("resource_claim_name", "resource_claim_template_name")):
            return group_claim
    return None


def _optional(message: objects_pb2.PodResourceClaim | objects_pb2.PodGroupResourceClaim,
              field: str) -> str | None:
    return getattr(message, field) if message.HasField(field) else None


def group_claim_name(
    group: objects_pb2.PodGroup, group_claim: objects_pb2.PodGroupResourceClaim
) -> str | None:
    """The name of the ResourceClaim ``group``'s entry ``group_claim`` stands for: its
    resourceClaimName, or for a template the name recorded in the group's
    status.resourceClaimStatuses; None while it is not generated (or not needed)."""
    if group_claim.HasField("resource_claim_name"):
        return group_claim.resource_claim_name
    if not group_claim.HasField("resource_claim_template_name"):
        return None
    status = _group_status(group, group_claim)
    return status.resource_claim_name if status is not None and status.resource_claim_name else None


def claim_name_of(pod: objects_pb2.Pod, pod_claim: objects_pb2.PodResourceClaim,
                  group: objects_pb2.PodGroup | None = None) -> str | None:
    """The name of the ResourceClaim ``pod_claim`` (an entry of ``pod``'s spec.resourceClaims) stands
    for: its resourceClaimName, or for a template the name recorded in pod.status.resourceClaimStatuses
    (for an entry of ``group``, the pod's PodGroup, the name the group's status records). None when
    there is none: the claim is not generated yet, or not needed (`claim_not_needed` tells which), or
    the entry names neither (validation refuses such a pod)."""
    if pod_claim.HasField("resource_claim_name"):
        return pod_claim.resource_claim_name
    if not pod_claim.HasField("resource_claim_template_name"):
        return None
    group_claim = group_claim_of(group, pod_claim)
    if group is not None and group_claim is not None:
        name = group_claim_name(group, group_claim)
        if name is not None:
            return name
    status = _generated_status(pod, pod_claim)
    return status.resource_claim_name if status is not None and status.resource_claim_name else None


def claim_not_needed(pod: objects_pb2.Pod, pod_claim: objects_pb2.PodResourceClaim) -> bool:
    """Whether the controller recorded that template entry ``pod_claim`` needs no claim (a status entry
    without resourceClaimName): the pod does without it, where a claim not generated yet is waited for."""
    if pod_claim.HasField("resource_claim_name") or not pod_claim.HasField("resource_claim_template_name"):
        return False
    status = _generated_status(pod, pod_claim)
    return status is not None and not status.HasField("resource_claim_name")


def claims_of(pod: objects_pb2.Pod, group: objects_pb2.PodGroup | None = None
              ) -> Iterator[tuple[objects_pb2.PodResourceClaim, str | None]]:
    """Each entry of ``pod``'s spec.resourceClaims with its claim's name (`claim_name_of`)."""
    for pod_claim in pod.spec.resource_claims:
        yield pod_claim, claim_name_of(pod, pod_claim, group)


def claim_names_of(pod: objects_pb2.Pod) -> list[str]:
    """The names of the claims ``pod`` uses that are known now, in spec order (an index of pods by
    claim: entries not generated yet or not needed have none)."""
    return [name for _, name in claims_of(pod) if name is not None]


def is_reserved_for(claim: objects_pb2.ResourceClaim, pod: objects_pb2.Pod) -> bool:
    """Whether ``claim``'s status.reservedFor lists ``pod`` (by uid)."""
    return any(consumer.uid == pod.metadata.uid for consumer in claim.status.reserved_for)


def is_pod_group_consumer(consumer: objects_pb2.ResourceClaimConsumerReference) -> bool:
    """Whether reservedFor entry ``consumer`` names a PodGroup."""
    return consumer.api_group == POD_GROUP_API_GROUP and consumer.resource == POD_GROUP_RESOURCE


def is_reserved_for_group(claim: objects_pb2.ResourceClaim, group_name: str) -> bool:
    """Whether ``claim``'s status.reservedFor lists the PodGroup ``group_name`` (of the claim's
    namespace). The name alone decides: a PodGroup is not deleted before its pods, so the name a pod
    gives stands for one PodGroup."""
    return any(is_pod_group_consumer(consumer) and consumer.name == group_name
               for consumer in claim.status.reserved_for)


def can_be_reserved(claim: objects_pb2.ResourceClaim) -> bool:
    """Whether ``claim`` may be reserved for one more consumer (its reservedFor is not full)."""
    return len(claim.status.reserved_for) < RESERVED_FOR_MAX_SIZE


def consumer_reference(pod: objects_pb2.Pod) -> objects_pb2.ResourceClaimConsumerReference:
    """The reservedFor entry that reserves a claim for ``pod``."""
    return objects_pb2.ResourceClaimConsumerReference(
        resource=POD_RESOURCE, name=pod.metadata.name, uid=pod.metadata.uid)


def group_consumer_reference(group: objects_pb2.PodGroup) -> objects_pb2.ResourceClaimConsumerReference:
    """The reservedFor entry that reserves a claim for ``group``."""
    return objects_pb2.ResourceClaimConsumerReference(
        api_group=POD_GROUP_API_GROUP, resource=POD_GROUP_RESOURCE, name=group.metadata.name,
        uid=group.metadata.uid)


def controlling_pod_group(claim: objects_pb2.ResourceClaim) -> objects_pb2.OwnerReference | None:
    """The owner reference of the PodGroup that controls ``claim`` (a claim generated for it), if any."""
    return next((owner for owner in claim.metadata.owner_references
                 if owner.controller and owner.kind == "PodGroup"
                 and owner.api_version.startswith(f"{POD_GROUP_API_GROUP}/")), None)


def not_for_group(group: objects_pb2.PodGroup, claim: objects_pb2.ResourceClaim) -> str | None:
    """Why generated claim ``claim`` cannot serve PodGroup ``group`` (another namespace, or the group
    does not control it), or None when it can."""
    claim_ref = f"{claim.metadata.namespace}/{claim.metadata.name}"
    group_ref = f"{group.metadata.namespace}/{group.metadata.name}"
    if claim.metadata.namespace != group.metadata.namespace:
        return f"ResourceClaim {claim_ref} is not in the same namespace as PodGroup {group_ref}"
    if not any(owner.controller and owner.uid == group.metadata.uid
               for owner in claim.metadata.owner_references):
        return f"ResourceClaim {claim_ref} was not created for PodGroup {group_ref} (PodGroup is not owner)"
    return None


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
