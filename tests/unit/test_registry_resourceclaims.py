"""ResourceClaim and ResourceClaimTemplate through the verbs over a real SqliteStore: resource/v1's
defaults, a claim created without status, Update keeping the status and UpdateStatus keeping the spec,
and the scheduler's status writes fenced like its other writes (a stale fence is refused, the current
one lands)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from cluster.api import apiserver_pb2, errors, objects_pb2
from cluster.api.kinds import LEASE, RESOURCE_CLAIM
from cluster.apiserver.fencing import tenure_token
from cluster.apiserver.storage import Storage, revision_of
from cluster.apiserver.verbs import Verbs
from store.sqlite import SqliteStore
from tests import builders


@pytest.fixture
async def verbs(tmp_path: Path) -> AsyncIterator[Verbs]:
    store = await SqliteStore.open(tmp_path)
    try:
        yield Verbs(Storage(store), rng=random.Random(0))
    finally:
        await store.close()


def _claim(**status: Any) -> objects_pb2.ResourceClaim:
    return json_format.ParseDict({
        "metadata": {"name": "gpu", "namespace": "default"},
        "spec": {"devices": {"requests": [
            {"name": "one", "exactly": {"deviceClassName": "gpu.example.com",
                                        "tolerations": [{"key": "example.com/broken"}]}},
            {"name": "pick", "firstAvailable": [{"name": "all", "deviceClassName": "gpu.example.com",
                                                 "allocationMode": "All"}]},
        ]}},
        "status": status,
    }, objects_pb2.ResourceClaim())


def _allocation(device: str = "gpu-0") -> dict[str, Any]:
    return {"allocation": {"devices": {"results": [
        {"request": "one", "driver": "gpu.example.com", "pool": "node-1", "device": device}]}},
        "reservedFor": [{"resource": "pods", "name": "web", "uid": "u1"}]}


def _with_status(claim: objects_pb2.ResourceClaim, status: dict[str, Any]) -> objects_pb2.ResourceClaim:
    updated = objects_pb2.ResourceClaim()
    updated.CopyFrom(claim)
    updated.ClearField("status")
    json_format.ParseDict(status, updated.status)
    return updated


async def test_a_claim_is_defaulted_and_created_without_status(verbs: Verbs) -> None:
    created = await verbs.create(_claim(**_allocation()))
    assert not created.HasField("status")
    exact = created.spec.devices.requests[0].exactly
    assert (exact.allocation_mode, exact.count) == ("ExactCount", 1)
    assert exact.tolerations[0].operator == "Equal"
    every = created.spec.devices.requests[1].first_available[0]
    assert (every.allocation_mode, every.count) == ("All", 0)


async def test_a_template_is_defaulted_as_a_claim(verbs: Verbs) -> None:
    template = objects_pb2.ResourceClaimTemplate()
    template.metadata.name, template.metadata.namespace = "gpu", "default"
    template.spec.spec.CopyFrom(_claim().spec)
    created = await verbs.create(template)
    assert created.spec.spec.devices.requests[0].exactly.count == 1


async def test_update_keeps_the_status_and_update_status_keeps_the_spec(verbs: Verbs) -> None:
    created = await verbs.create(_claim())
    allocated = await verbs.update_status(_with_status(created, _allocation()))
    assert allocated.status.allocation.devices.results[0].device == "gpu-0"
    relabelled = objects_pb2.ResourceClaim()
    relabelled.CopyFrom(allocated)
    relabelled.metadata.labels["team"] = "ml"
    relabelled.ClearField("status")
    updated = await verbs.update(relabelled)
    assert updated.status == allocated.status
    respecced = _with_status(updated, {})
    respecced.spec.devices.requests[0].exactly.count = 5
    cleared = await verbs.update_status(respecced)
    assert not cleared.status.HasField("allocation")
    assert cleared.spec.devices.requests[0].exactly.count == 1


async def test_a_changed_spec_or_reallocation_is_refused(verbs: Verbs) -> None:
    created = await verbs.create(_claim())
    changed = objects_pb2.ResourceClaim()
    changed.CopyFrom(created)
    changed.spec.devices.requests[0].exactly.count = 2
    with pytest.raises(errors.Invalid, match=r"^ResourceClaim.resource.k8s.io \"gpu\" is invalid: spec: "):
        await verbs.update(changed)
    allocated = await verbs.update_status(_with_status(created, _allocation()))
    with pytest.raises(errors.Invalid, match=r"status.allocation: Invalid value: .*: field is immutable"):
        await verbs.update_status(_with_status(allocated, _allocation("gpu-1")))


def _fence(holder: str, token: int) -> apiserver_pb2.Fence:
    return apiserver_pb2.Fence(lease_namespace="kube-system", lease_name="kube-scheduler",
                               holder_identity=holder, token=token)


async def _take_lease(verbs: Verbs, holder: str) -> int:
    current = await verbs.registry.get(LEASE, "kube-system", "kube-scheduler")
    if current is None:
        return revision_of(await verbs.create(builders.lease(holder=holder, duration=15)))
    taken = objects_pb2.Lease()
    taken.CopyFrom(current)
    taken.spec.holder_identity = holder
    return tenure_token(await verbs.update(taken))


async def test_the_schedulers_status_write_is_fenced(verbs: Verbs) -> None:
    created = await verbs.create(_claim())
    old = await _take_lease(verbs, "a")
    new = await _take_lease(verbs, "b")
    stale = verbs.fencing.of(_fence("a", old))
    with pytest.raises(errors.Fenced, match=r"lease kube-system/kube-scheduler is held by \"b\""):
        await verbs.update_status(_with_status(created, _allocation()), fence=stale)
    assert await verbs.registry.require(RESOURCE_CLAIM, "default", "gpu") == created
    current = verbs.fencing.of(_fence("b", new))
    allocated = await verbs.update_status(_with_status(created, _allocation()), fence=current)
    assert allocated.status.reserved_for[0].uid == "u1"
