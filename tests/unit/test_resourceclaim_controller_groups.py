"""The ResourceClaimController's PodGroup claims (KEP-5729), as the PodGroup cases of upstream's
pkg/controller/resourceclaim controller_test.go have them, on the harness of test_resourceclaim_controller:
a PodGroup's template gets one claim owned by the group and recorded in its status; a pod's entry that
matches the group's is recorded with the group's claim and gets none of its own; a bound pod's group claim
is reserved for the PodGroup; a PodGroup that is gone is removed from reservedFor and its claims deleted."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.api import errors, objects_pb2
from cluster.api.dra.podclaims import POD_CLAIM_NAME_ANNOTATION
from cluster.api.kinds import POD_GROUP, RESOURCE_CLAIM
from cluster.controllers.resourceclaim import POD_GROUP_KEY_PREFIX
from tests import builders
from tests.builders import IMAGE
from tests.unit.test_resourceclaim_controller import (
    ENTRY,
    NODE,
    NS,
    OTHER_NS,
    POD_NAME,
    TEMPLATE,
    Cluster,
    claim,
    claim_key,
    claim_pod,
    cluster,
    pod_key,
    reservations,
    started,
    template,
)

__all__ = ["cluster"]

GROUP = "test-podgroup"
GROUP_ERROR = (f'resource claim template "{TEMPLATE}": '
               f'resourceclaimtemplates.resource.k8s.io "{TEMPLATE}" not found')


def group(*, claims: bool = True, status: str | None = None) -> objects_pb2.PodGroup:
    """PodGroup GROUP whose entry ENTRY uses TEMPLATE (``claims``), with ``status`` recorded for it."""
    spec: dict[str, Any] = {"schedulingPolicy": {"basic": {}}}
    if claims:
        spec["resourceClaims"] = [{"name": ENTRY, "resourceClaimTemplateName": TEMPLATE}]
    recorded = {"resourceClaimStatuses": [{"name": ENTRY, "resourceClaimName": status}]} if status else None
    return builders.pod_group(GROUP, NS, spec=spec, status=recorded)


def member(*, node: str = "", statuses: dict[str, str] | None = None) -> objects_pb2.Pod:
    made = claim_pod(node=node, statuses=statuses)
    made.spec.scheduling_group.pod_group_name = GROUP
    return made


def group_claim(name: str, owner: objects_pb2.PodGroup) -> objects_pb2.ResourceClaim:
    made = claim(name, entry=ENTRY)
    made.metadata.owner_references.add(api_version=POD_GROUP.api_version, kind="PodGroup",
                                       name=owner.metadata.name, uid=owner.metadata.uid, controller=True)
    return made


def group_key() -> str:
    return f"{POD_GROUP_KEY_PREFIX}{NS}/{GROUP}"


async def group_statuses(cluster: Cluster) -> list[tuple[str, str]]:
    got = await cluster.client.get(POD_GROUP, GROUP, NS)
    return [(s.name, s.resource_claim_name) for s in got.status.resource_claim_statuses]  # type: ignore[attr-defined]


def assert_generated_for_group(made: objects_pb2.ResourceClaim, owner: objects_pb2.PodGroup) -> None:
    meta = made.metadata
    prefix = f"{GROUP}-{ENTRY}-"
    assert meta.generate_name == prefix and meta.name.startswith(prefix)
    assert dict(meta.annotations) == {"team": "ml", POD_CLAIM_NAME_ANNOTATION: ENTRY}
    [ref] = meta.owner_references
    assert (ref.api_version, ref.kind, ref.name, ref.uid, ref.controller, ref.block_owner_deletion) == (
        "scheduling.k8s.io/v1alpha3", "PodGroup", GROUP, owner.metadata.uid, True, True)


def group_consumer(owner: objects_pb2.PodGroup) -> dict[str, str]:
    return {"api_group": "scheduling.k8s.io", "resource": "podgroups", "name": GROUP,
            "uid": owner.metadata.uid}


# ---------------------------------------------------------------------------------- the PodGroup


async def test_create_for_pod_group(cluster: Cluster) -> None:
    owner, _ = await started(cluster, group(), template())
    await cluster.sync(group_key())
    [made] = await cluster.claims()
    assert_generated_for_group(made, owner)
    assert await group_statuses(cluster) == [(ENTRY, made.metadata.name)]


async def test_nop_for_pod_group(cluster: Cluster) -> None:
    owner = await cluster.client.create(group())
    existing = await cluster.client.create(group_claim(f"{GROUP}-{ENTRY}-abcde", owner))
    owner.status.resource_claim_statuses.add(name=ENTRY, resource_claim_name=existing.metadata.name)
    await cluster.client.update_status(owner)
    await started(cluster, template())
    await cluster.sync(group_key())
    assert [c.metadata.name for c in await cluster.claims()] == [existing.metadata.name]
    assert await group_statuses(cluster) == [(ENTRY, existing.metadata.name)]


async def test_recreate_for_pod_group(cluster: Cluster) -> None:
    owner, _ = await started(cluster, group(status=f"{GROUP}-{ENTRY}-abcde"), template())
    await cluster.sync(group_key())
    [made] = await cluster.claims()
    assert_generated_for_group(made, owner)
    assert made.metadata.name != f"{GROUP}-{ENTRY}-abcde"
    assert await group_statuses(cluster) == [(ENTRY, made.metadata.name)]


async def test_missing_template_for_pod_group(cluster: Cluster) -> None:
    await started(cluster, group())
    with pytest.raises(errors.NotFound) as raised:
        await cluster.sync(group_key())
    assert raised.value.message == GROUP_ERROR
    assert await cluster.claims() == []


async def test_find_existing_claim_by_annotation_for_pod_group(cluster: Cluster) -> None:
    owner = await cluster.client.create(group())
    [existing] = await started(cluster, group_claim(f"{GROUP}-{ENTRY}-abcde", owner))
    await cluster.sync(group_key())
    assert [c.metadata.name for c in await cluster.claims()] == [existing.metadata.name]
    assert await group_statuses(cluster) == [(ENTRY, existing.metadata.name)]


async def test_no_such_pod_group(cluster: Cluster) -> None:
    await started(cluster, template())
    await cluster.sync(group_key())
    assert await cluster.claims() == []


async def test_create_with_other_claim_for_pod_group(cluster: Cluster) -> None:
    owner, _, other = await started(cluster, group(), template(), claim(f"{GROUP}-{ENTRY}", OTHER_NS))
    await cluster.sync(group_key())
    [made] = await cluster.claims()
    assert_generated_for_group(made, owner)
    assert [c.metadata.name for c in await cluster.claims(OTHER_NS)] == [other.metadata.name]


async def test_wrong_claim_owner_for_pod_group(cluster: Cluster) -> None:
    """A claim of the generated name the group does not own is never taken for its own."""
    await started(cluster, group(status=f"{GROUP}-{ENTRY}"), claim(f"{GROUP}-{ENTRY}", entry=ENTRY))
    with pytest.raises(errors.NotFound, match="resource claim template"):
        await cluster.sync(group_key())
    assert [c.metadata.name for c in await cluster.claims()] == [f"{GROUP}-{ENTRY}"]


# ---------------------------------------------------------------------------------- its pods


async def test_create_for_a_pod_whose_group_has_no_claims(cluster: Cluster) -> None:
    test_pod, *_ = await started(cluster, member(), group(claims=False), template())
    await cluster.sync(pod_key())
    [made] = await cluster.claims()
    assert made.metadata.owner_references[0].uid == test_pod.metadata.uid
    assert await cluster.statuses() == [(ENTRY, made.metadata.name)]


async def test_skip_create_for_a_pod_whose_group_does_not_exist(cluster: Cluster) -> None:
    await started(cluster, member(), template())
    with pytest.raises(errors.NotFound) as raised:
        await cluster.sync(pod_key())
    assert raised.value.message == f'podgroup.scheduling.k8s.io "{GROUP}" not found'
    assert await cluster.claims() == []


@pytest.mark.parametrize("with_template", [False, True], ids=["before-template", "after-template"])
async def test_skip_create_for_a_pod_of_a_group_with_the_claim(cluster: Cluster, with_template: bool) -> None:
    await started(cluster, member(), group(), *([template()] if with_template else []))
    await cluster.sync(pod_key())
    assert await cluster.claims() == []
    assert await cluster.statuses() == []


async def test_update_pod_status_with_the_groups_claim(cluster: Cluster) -> None:
    """The group's claim, made but not recorded in the group's status yet, is the pod's."""
    owner = await cluster.client.create(group())
    await started(cluster, member(), template(), group_claim(f"{GROUP}-{ENTRY}-abcde", owner))
    await cluster.sync(pod_key())
    assert [c.metadata.name for c in await cluster.claims()] == [f"{GROUP}-{ENTRY}-abcde"]
    assert await cluster.statuses() == [(ENTRY, f"{GROUP}-{ENTRY}-abcde")]


async def test_add_reserved_for_the_pod_group(cluster: Cluster) -> None:
    """A pod bound without the scheduler gets its group's allocated claim reserved for the group."""
    owner = await cluster.client.create(group(status=f"{GROUP}-{ENTRY}-abcde"))
    made = group_claim(f"{GROUP}-{ENTRY}-abcde", owner)
    made.status.allocation.SetInParent()
    await started(cluster, member(node=NODE, statuses={ENTRY: f"{GROUP}-{ENTRY}-abcde"}), template(), made)
    await cluster.sync(pod_key())
    assert await reservations(cluster, made.metadata.name) == ([owner.metadata.uid], True)


# -------------------------------------------------------------------------------- reservations


async def test_clear_reserved_for_a_pod_group_that_is_gone(cluster: Cluster) -> None:
    gone = builders.pod_group("gone", NS)
    gone.metadata.uid = "uid-of-a-group-that-is-gone"
    shared = claim("shared")
    shared.status.allocation.SetInParent()
    shared.status.reserved_for.add(**group_consumer(gone) | {"name": "gone"})
    await started(cluster, shared)
    await cluster.sync(claim_key("shared"))
    assert await reservations(cluster, "shared") == ([], False)


async def test_stay_reserved_for_a_pod_group_that_exists(cluster: Cluster) -> None:
    owner = await cluster.client.create(group())
    shared = claim("shared")
    shared.status.allocation.SetInParent()
    shared.status.reserved_for.add(**group_consumer(owner))
    await started(cluster, shared)
    await cluster.sync(claim_key("shared"))
    assert await reservations(cluster, "shared") == ([owner.metadata.uid], True)


async def test_a_deleted_pod_group_releases_and_deletes_its_claim(cluster: Cluster) -> None:
    owner = await cluster.client.create(group())
    made = group_claim(f"{GROUP}-{ENTRY}-abcde", owner)
    made.status.allocation.SetInParent()
    made.status.reserved_for.add(**group_consumer(owner))
    await started(cluster, made)
    await cluster.client.delete(POD_GROUP, GROUP, NS)
    await cluster.seen(owner, deleted=True)
    assert await cluster.queued() == [claim_key(made.metadata.name)]
    await cluster.sync(claim_key(made.metadata.name))
    assert await cluster.claims() == []


# ------------------------------------------------------------------------------ event handlers


async def test_a_new_pod_group_is_queued(cluster: Cluster) -> None:
    await started(cluster)
    [made] = await cluster.write(group(status=f"{GROUP}-{ENTRY}-abcde"))
    await cluster.seen(made)
    assert await cluster.queued() == [group_key()]


async def test_a_pod_group_whose_claim_exists_is_not_queued(cluster: Cluster) -> None:
    """Upstream's new-podgroup-templated-claim-already-exists: an event of a group whose claims are made
    and recorded gives no work."""
    owner = await cluster.client.create(group())
    made = await cluster.client.create(group_claim(f"{GROUP}-{ENTRY}-abcde", owner))
    owner.status.resource_claim_statuses.add(name=ENTRY, resource_claim_name=made.metadata.name)
    recorded = await cluster.client.update_status(owner)
    await started(cluster)
    recorded.metadata.labels["changed"] = "yes"
    relabelled = await cluster.client.update(recorded)
    await cluster.seen(relabelled)
    assert await cluster.queued() == []


async def test_a_pod_group_status_update_queues_it_and_its_pods_that_use_its_claim(cluster: Cluster) -> None:
    """Upstream's podgroup-claim-status-update: the members with the group's claim, not a pod of another
    group nor a member without claims."""
    other_group = member()
    other_group.metadata.name = "pod-of-another-group"
    other_group.spec.scheduling_group.pod_group_name = "another"
    no_claims = pod_of_group_without_claims()
    first, second = member(), member()
    second.metadata.name = POD_NAME + "-2"
    made, *_ = await started(cluster, group(), first, second, other_group, no_claims, template())
    made.status.resource_claim_statuses.add(name=ENTRY, resource_claim_name=f"{GROUP}-{ENTRY}-abcde")
    recorded = await cluster.client.update_status(made)
    await cluster.seen(recorded)
    assert sorted(await cluster.queued()) == sorted([group_key(), pod_key(), pod_key(POD_NAME + "-2")])


def pod_of_group_without_claims() -> objects_pb2.Pod:
    made = builders.pod("no-claims", NS, image=IMAGE)
    made.spec.scheduling_group.pod_group_name = GROUP
    return made


async def test_a_pod_group_without_claims_is_not_queued(cluster: Cluster) -> None:
    await started(cluster)
    [made] = await cluster.write(group(claims=False))
    await cluster.seen(made)
    assert await cluster.queued() == []


async def test_a_deleted_generated_claim_queues_its_pod_group(cluster: Cluster) -> None:
    owner = await cluster.client.create(group())
    [made] = await started(cluster, group_claim(f"{GROUP}-{ENTRY}-abcde", owner))
    await cluster.client.delete(RESOURCE_CLAIM, made.metadata.name, NS)
    await cluster.seen(made, deleted=True)
    assert group_key() in await cluster.queued()
