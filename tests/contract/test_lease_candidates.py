"""LeaseCandidate (coordination.k8s.io/v1beta1) through the API server's verbs, on every store: a scheduler
replica's candidate named by its identity ("host_uuid", a valid name for this kind) is created, renewed,
listed and deleted; an invalid one and a change of its leaseName are refused with nothing stored."""

from __future__ import annotations

import pytest

from cluster.api import errors, objects_pb2
from cluster.api.kinds import LEASE_CANDIDATE
from cluster.apiserver.listing import list_objects
from cluster.apiserver.selection import Selection
from cluster.apiserver.storage import Storage
from cluster.apiserver.verbs import Verbs
from store.base import Store

NS = "kube-system"
IDENTITY = "vm_5c0e0b1a-6a0e-4d2f-9a3e-2f0c5d1e7b4a"


def candidate(name: str = IDENTITY, binary_version: str = "0.1.0") -> objects_pb2.LeaseCandidate:
    made = objects_pb2.LeaseCandidate(
        api_version=LEASE_CANDIDATE.api_version, kind=LEASE_CANDIDATE.name,
        metadata=objects_pb2.ObjectMeta(name=name, namespace=NS),
        spec=objects_pb2.LeaseCandidateSpec(lease_name="kube-scheduler", binary_version=binary_version,
                                            emulation_version="0.1.0", strategy="OldestEmulationVersion"),
    )
    made.spec.renew_time.FromSeconds(1_700_000_000)
    return made


async def test_a_candidate_is_created_renewed_listed_and_deleted(store: Store) -> None:
    verbs = Verbs(Storage(store))
    created = await verbs.create(candidate())
    assert created.metadata.name == IDENTITY
    assert await verbs.get(LEASE_CANDIDATE, NS, IDENTITY) == created

    created.spec.renew_time.FromSeconds(1_700_000_015)
    renewed = await verbs.update(created)
    assert renewed.spec.renew_time.seconds == 1_700_000_015
    assert int(renewed.metadata.resource_version) > int(created.metadata.resource_version)

    await verbs.create(candidate("other_host_1"))
    page = await list_objects(verbs.registry, Selection.parse(LEASE_CANDIDATE), NS)
    assert [obj.metadata.name for obj in page.items] == ["other_host_1", IDENTITY]

    await verbs.delete(LEASE_CANDIDATE, NS, IDENTITY)
    with pytest.raises(errors.NotFound):
        await verbs.get(LEASE_CANDIDATE, NS, IDENTITY)


async def test_invalid_candidates_and_a_new_lease_name_are_refused(store: Store) -> None:
    verbs = Verbs(Storage(store))
    with pytest.raises(errors.Invalid) as refused:
        await verbs.create(candidate(binary_version="v0.1.0"))
    assert refused.value.message == (
        f'LeaseCandidate.coordination.k8s.io "{IDENTITY}" is invalid: spec.binaryVersion: Invalid value: '
        '"v0.1.0": must be a valid semantic version'
    )
    with pytest.raises(errors.NotFound):
        await verbs.get(LEASE_CANDIDATE, NS, IDENTITY)

    created = await verbs.create(candidate())
    created.spec.lease_name = "kube-controller-manager"
    with pytest.raises(errors.Invalid) as immutable:
        await verbs.update(created)
    assert immutable.value.message.endswith(
        'spec.leaseName: Invalid value: "kube-controller-manager": field is immutable'
    )
    assert (await verbs.get(LEASE_CANDIDATE, NS, IDENTITY)).spec.lease_name == "kube-scheduler"
