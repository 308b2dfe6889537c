"""How a pod names its ResourceClaims (cluster.api.dra.podclaims), as the tables of upstream's
dynamic-resource-allocation resourceclaim_test.go (TestName, TestResourceClaimIsFor, TestIsReservedForPod)
have it, and a PodGroup's claims (KEP-5729): which of a pod's entries are its group's (the KEP's matching
example), the claim each stands for, and reservedFor entries naming a PodGroup."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.api import objects_pb2
from cluster.api.dra import podclaims
from tests.builders import pod


def _claim(name: str, namespace: str = "kube-system", *, uid: str = "", owners: Any = (),
           reserved_for: Any = ()) -> objects_pb2.ResourceClaim:
    claim = objects_pb2.ResourceClaim()
    claim.metadata.name = name
    claim.metadata.namespace = namespace
    claim.metadata.uid = uid
    for owner in owners:
        claim.metadata.owner_references.add(**owner)
    for consumer_uid in reserved_for:
        claim.status.reserved_for.add(uid=consumer_uid)
    return claim


def _pod_claim(name: str, **source: str) -> objects_pb2.PodResourceClaim:
    return objects_pb2.PodResourceClaim(name=name, **source)


TEST_POD = pod("test-pod", "default", status={"resourceClaimStatuses": [
    {"name": "template-claim", "resourceClaimName": "created-claim"},
    {"name": "skipped-claim"},
]})


@pytest.mark.parametrize(("pod_claim", "expected", "not_needed"), [
    pytest.param(_pod_claim("c", resource_claim_name="existing-claim"), "existing-claim", False,
                 id="resource-claim-name-set"),
    pytest.param(_pod_claim("template-claim", resource_claim_template_name="template-claim-template"),
                 "created-claim", False, id="resource-claim-template-name-set-and-status-found"),
    pytest.param(_pod_claim("other-claim", resource_claim_template_name="template-claim-template"),
                 None, False, id="resource-claim-template-name-set-but-status-not-found"),
    pytest.param(_pod_claim("skipped-claim", resource_claim_template_name="template-claim-template"),
                 None, True, id="status-without-name-means-not-needed"),
    pytest.param(_pod_claim("invalid-claim"), None, False,
                 id="neither-resource-claim-name-nor-template-name-set"),
])
def test_claim_name_of(
    pod_claim: objects_pb2.PodResourceClaim, expected: str | None, not_needed: bool
) -> None:
    assert podclaims.claim_name_of(TEST_POD, pod_claim) == expected
    assert podclaims.claim_not_needed(TEST_POD, pod_claim) is not_needed


def test_claim_names_of_lists_only_the_known_claims_in_spec_order() -> None:
    p = pod("p", spec={"resourceClaims": [
        {"name": "a", "resourceClaimTemplateName": "t"},
        {"name": "b", "resourceClaimName": "shared"},
        {"name": "c", "resourceClaimTemplateName": "t"},
        {"name": "skipped-claim", "resourceClaimTemplateName": "t"},
    ]}, status={"resourceClaimStatuses": [{"name": "a", "resourceClaimName": "p-a-x1y2z"},
                                          {"name": "skipped-claim"}]})
    assert podclaims.claim_names_of(p) == ["p-a-x1y2z", "shared"]
    assert [(c.name, name) for c, name in podclaims.claims_of(p)] == [
        ("a", "p-a-x1y2z"), ("b", "shared"), ("c", None), ("skipped-claim", None)]


POD_OWNER = pod("podOwner", "kube-system", uid="2")
POD_NOT_OWNER = pod("podNotOwner", "kube-system", uid="1")
CONTROLLER_OF_POD_OWNER = {"uid": "2", "controller": True}


@pytest.mark.parametrize(("p", "claim", "error"), [
    pytest.param(POD_OWNER, _claim("claimWithOwner", owners=[CONTROLLER_OF_POD_OWNER]), None, id="owned"),
    pytest.param(POD_NOT_OWNER, _claim("claimWithOwner", owners=[CONTROLLER_OF_POD_OWNER]),
                 "ResourceClaim kube-system/claimWithOwner was not created for Pod kube-system/podNotOwner "
                 "(Pod is not owner)", id="other-pod"),
    pytest.param(POD_OWNER, _claim("claimNoOwner"),
                 "ResourceClaim kube-system/claimNoOwner was not created for Pod kube-system/podOwner "
                 "(Pod is not owner)", id="no-owner"),
    pytest.param(POD_OWNER, _claim("claimWithOwner", owners=[{"uid": "2", "controller": False}]),
                 "ResourceClaim kube-system/claimWithOwner was not created for Pod kube-system/podOwner "
                 "(Pod is not owner)", id="owner-but-not-controller"),
    pytest.param(POD_OWNER, _claim("userClaimWithOwner", "user-namespace", owners=[CONTROLLER_OF_POD_OWNER]),
                 "ResourceClaim user-namespace/userClaimWithOwner is not in the same namespace as Pod "
                 "kube-system/podOwner", id="different-namespace"),
])
def test_not_for_pod(p: objects_pb2.Pod, claim: objects_pb2.ResourceClaim, error: str | None) -> None:
    assert podclaims.not_for_pod(p, claim) == error


POD_RESERVED = pod("podReserved", "kube-system", uid="3")
POD_NOT_RESERVED = pod("podNotReserved", "kube-system", uid="1")


@pytest.mark.parametrize(("p", "claim", "expected"), [
    pytest.param(POD_NOT_RESERVED, _claim("claimNoReservation"), False, id="not-reserved"),
    pytest.param(POD_RESERVED, _claim("claimWithReservation", reserved_for=["3"]), True,
                 id="reserved-for-pod"),
    pytest.param(POD_NOT_RESERVED, _claim("claimWithReservation", reserved_for=["3"]), False,
                 id="reserved-for-other-pod"),
    pytest.param(POD_RESERVED, _claim("claimWithMultipleReservations", reserved_for=["3", "4"]), True,
                 id="multiple-reservations-including-pod"),
    pytest.param(POD_NOT_RESERVED, _claim("claimWithMultipleReservations", reserved_for=["3", "4"]), False,
                 id="multiple-reservations-excluding-pod"),
])
def test_is_reserved_for(p: objects_pb2.Pod, claim: objects_pb2.ResourceClaim, expected: bool) -> None:
    assert podclaims.is_reserved_for(claim, p) is expected


def test_a_claim_can_be_reserved_until_its_reserved_for_is_full() -> None:
    almost_full = _claim("c", reserved_for=[str(i) for i in range(podclaims.RESERVED_FOR_MAX_SIZE - 1)])
    assert podclaims.can_be_reserved(almost_full)
    almost_full.status.reserved_for.add(uid="last")
    assert not podclaims.can_be_reserved(almost_full)


def test_consumer_reference_names_the_pod_in_the_core_group() -> None:
    ref = podclaims.consumer_reference(POD_RESERVED)
    assert (ref.api_group, ref.resource, ref.name, ref.uid) == ("", "pods", "podReserved", "3")
    assert podclaims.is_reserved_for(_claim("c", reserved_for=[ref.uid]), POD_RESERVED)


def test_controlling_pod_is_the_v1_pod_owner_with_controller_set() -> None:
    pod_owner = {"api_version": "v1", "kind": "Pod", "name": "p", "uid": "9", "controller": True}
    replica_set = {"api_version": "apps/v1", "kind": "ReplicaSet", "uid": "8", "controller": True}
    claim = _claim("c", owners=[replica_set, {**pod_owner, "controller": False}, pod_owner])
    owner = podclaims.controlling_pod(claim)
    assert owner is not None and (owner.name, owner.uid, owner.controller) == ("p", "9", True)
    assert podclaims.controlling_pod(_claim("c", owners=[{**pod_owner, "controller": False}])) is None


# ------------------------------------------------------------------------------- PodGroup claims

#: The KEP's example: the group's claims "pg-claim" (by name) and "pg-claim-template" (from a template).
KEP_GROUP = objects_pb2.PodGroup()
KEP_GROUP.metadata.name, KEP_GROUP.metadata.namespace = "podgroup", "default"
KEP_GROUP.metadata.uid = "pg-uid"
KEP_GROUP.spec.resource_claims.add(name="pg-claim", resource_claim_name="my-claim")
KEP_GROUP.spec.resource_claims.add(name="pg-claim-template", resource_claim_template_name="my-claim-template")
KEP_GROUP.status.resource_claim_statuses.add(name="pg-claim-template",
                                             resource_claim_name="podgroup-pg-claim-template-x7k2p")


@pytest.mark.parametrize(("pod_claim", "group_entry"), [
    pytest.param(_pod_claim("pg-claim", resource_claim_name="my-claim"), "pg-claim", id="same-claim"),
    pytest.param(_pod_claim("pg-claim-template", resource_claim_template_name="my-claim-template"),
                 "pg-claim-template", id="same-template"),
    pytest.param(_pod_claim("pod-claim", resource_claim_name="my-claim"), None, id="other-name"),
    pytest.param(_pod_claim("pg-claim-template", resource_claim_template_name="my-other-claim-template"),
                 None, id="other-template"),
    pytest.param(_pod_claim("pg-claim", resource_claim_template_name="my-claim"), None,
                 id="template-where-the-group-names-a-claim"),
])
def test_group_claim_of_matches_name_and_source_exactly(
    pod_claim: objects_pb2.PodResourceClaim, group_entry: str | None
) -> None:
    found = podclaims.group_claim_of(KEP_GROUP, pod_claim)
    assert (found.name if found is not None else None) == group_entry
    assert podclaims.group_claim_of(None, pod_claim) is None


def test_claim_name_of_a_group_entry_is_the_claim_the_group_records() -> None:
    member = pod("worker", "default")
    entry = _pod_claim("pg-claim-template", resource_claim_template_name="my-claim-template")
    assert podclaims.claim_name_of(member, entry, KEP_GROUP) == "podgroup-pg-claim-template-x7k2p"
    # Without the group (or before it records the claim) the pod's own status decides.
    assert podclaims.claim_name_of(member, entry) is None
    not_generated = objects_pb2.PodGroup()
    not_generated.CopyFrom(KEP_GROUP)
    del not_generated.status.resource_claim_statuses[:]
    assert podclaims.claim_name_of(member, entry, not_generated) is None
    other = _pod_claim("pg-claim-template", resource_claim_template_name="my-other-claim-template")
    assert podclaims.claim_name_of(member, other, KEP_GROUP) is None


def test_reserved_for_a_pod_group_by_name() -> None:
    claim = _claim("c", "default")
    claim.status.reserved_for.append(podclaims.group_consumer_reference(KEP_GROUP))
    (consumer,) = claim.status.reserved_for
    assert (consumer.api_group, consumer.resource, consumer.name, consumer.uid) == (
        "scheduling.k8s.io", "podgroups", "podgroup", "pg-uid")
    assert podclaims.is_pod_group_consumer(consumer)
    assert podclaims.is_reserved_for_group(claim, "podgroup")
    assert not podclaims.is_reserved_for_group(claim, "other")
    # A pod of the same name is not the PodGroup.
    as_pod = _claim("c", "default")
    as_pod.status.reserved_for.add(resource="pods", name="podgroup", uid="pg-uid")
    assert not podclaims.is_reserved_for_group(as_pod, "podgroup")


@pytest.mark.parametrize(("claim", "error"), [
    pytest.param(_claim("c", "default", owners=[{"api_version": "scheduling.k8s.io/v1alpha3",
                                                 "kind": "PodGroup", "uid": "pg-uid", "controller": True}]),
                 None, id="owned"),
    pytest.param(_claim("c", "default", owners=[{"api_version": "scheduling.k8s.io/v1alpha3",
                                                 "kind": "PodGroup", "uid": "pg-uid"}]),
                 "ResourceClaim default/c was not created for PodGroup default/podgroup "
                 "(PodGroup is not owner)",
                 id="owner-not-controller"),
    pytest.param(_claim("c", "kube-system", owners=[{"uid": "pg-uid", "controller": True}]),
                 "ResourceClaim kube-system/c is not in the same namespace as PodGroup default/podgroup",
                 id="other-namespace"),
])
def test_not_for_group(claim: objects_pb2.ResourceClaim, error: str | None) -> None:
    assert podclaims.not_for_group(KEP_GROUP, claim) == error


def test_controlling_pod_group_is_the_scheduling_podgroup_owner_with_controller_set() -> None:
    owned = _claim("c", "default", owners=[
        {"api_version": "v1", "kind": "Pod", "uid": "pod-uid", "controller": False},
        {"api_version": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup", "name": "podgroup",
         "uid": "pg-uid", "controller": True}])
    owner = podclaims.controlling_pod_group(owned)
    assert owner is not None and owner.uid == "pg-uid"
    assert podclaims.controlling_pod(owned) is None
    coscheduling = _claim("c", owners=[
        {"api_version": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "uid": "x", "controller": True}])
    assert podclaims.controlling_pod_group(coscheduling) is None
