"""The steady-state DRA workload's parts, in process against the fake API server: claims allocated without
pods by the scheduler's allocator, one at a time, each seeing the earlier ones; the steady loop deleting
each batch once all of it is seen scheduled and creating the next; and what the bench watches of claims
on the way, with the checks that judge it."""

from __future__ import annotations

import asyncio
import dataclasses
import random

import pytest

from cluster.api import objects_pb2
from cluster.bench import workloads as w
from cluster.bench.allocclaims import AllocationFailed, allocate_claims
from cluster.bench.checks import Placements, check
from cluster.bench.steadystate import ClaimHistory, run_steadily
from cluster.client import Client
from tests.unit.test_bench_dra import placed_pod
from tests.unit.test_client_fake_apiserver import FakeApiServer

STEADY = w.WORKLOADS["SteadyStateClusterResourceClaimTemplate/half"]
DRIVER = w.DeviceDriver(w.TEST_DRIVER, 2)


def _resource_claim(name: str, namespace: str) -> objects_pb2.ResourceClaim:
    """The workload's claim as the API server stores it (the fake does not default its request)."""
    claim = w.resource_claim(name, namespace)
    claim.spec.devices.requests[0].exactly.allocation_mode = "ExactCount"
    claim.spec.devices.requests[0].exactly.count = 1
    return claim


async def _cluster(client: Client, nodes: int, claims: int) -> list[objects_pb2.Node]:
    """``nodes`` nodes with DRIVER's two devices each, the test class, and ``claims`` unallocated claims
    of one device in the init namespace."""
    made = [STEADY.node(i) for i in range(nodes)]
    for obj in (w.device_class(w.TEST_CLASS, w.TEST_DRIVER), *made,
                *(DRIVER.slice(node.metadata.name) for node in made),
                *(_resource_claim(w.indexed_claim_name(i), w.INIT_NAMESPACE) for i in range(claims))):
        await client.create(obj)
    return made


def _claims(fake: FakeApiServer) -> dict[str, objects_pb2.ResourceClaim]:
    return {obj.resource_claim.metadata.name: obj.resource_claim for obj in fake.objects.values()
            if obj.WhichOneof("object") == "resource_claim"}


def _devices(claim: objects_pb2.ResourceClaim) -> list[tuple[str, str]]:
    return [(r.pool, r.device) for r in claim.status.allocation.devices.results]


async def test_claims_are_allocated_one_at_a_time_on_distinct_devices_beside_those_taken(
    fake: FakeApiServer, client: Client
) -> None:
    nodes = await _cluster(client, 3, 5)
    # A claim of another namespace holds a device already: no claim may get it.
    taken = _resource_claim("elsewhere", w.MEASURED_NAMESPACE)
    taken.status.allocation.devices.results.add(
        request="req-0", driver=w.TEST_DRIVER, pool=nodes[1].metadata.name, device="instance-1")
    await fake.put(taken)

    allocated = await allocate_claims(client, w.INIT_NAMESPACE, random.Random(1))

    claims = _claims(fake)
    assert allocated == 5
    assert len(fake.calls_of("UpdateStatus")) == 5
    held = [device for claim in claims.values() for device in _devices(claim)]
    # Six devices, six claims: each holds one of its own, and the cluster is full.
    assert sorted(held) == sorted((node.metadata.name, f"instance-{i}") for node in nodes for i in range(2))
    for name in (w.indexed_claim_name(i) for i in range(5)):
        claim = claims[name]
        [(pool, _)] = _devices(claim)
        [term] = claim.status.allocation.node_selector.node_selector_terms
        # The allocator's result, written as it made it: the claim is usable on its pool's node only.
        assert [(f.key, list(f.values)) for f in term.match_fields] == [("metadata.name", [pool])]
        assert not claim.status.reserved_for


async def test_the_nodes_are_tried_in_a_random_order_drawn_from_the_seed(
    fake: FakeApiServer, client: Client
) -> None:
    await _cluster(client, 8, 4)

    await allocate_claims(client, w.INIT_NAMESPACE, random.Random(7))

    pools = [_devices(claim)[0][0] for claim in _claims(fake).values()]
    # In node order every claim would go to the first node with a free device (two on each of two).
    assert len(set(pools)) > 2


async def test_a_claim_that_fits_nowhere_fails_the_step_naming_it(
    fake: FakeApiServer, client: Client
) -> None:
    await _cluster(client, 2, 5)

    with pytest.raises(AllocationFailed, match=r"ResourceClaim sched-0/test-claim-4 \(5 of 5\) fits on none "
                                                r"of the 2 nodes"):
        await allocate_claims(client, w.INIT_NAMESPACE, random.Random(1))
    assert len(fake.calls_of("UpdateStatus")) == 4


# -- the steady loop ---------------------------------------------------------------------------------


def _pod_names(fake: FakeApiServer) -> list[str]:
    return sorted(obj.pod.metadata.name for obj in fake.objects.values() if obj.WhichOneof("object") == "pod")


async def _schedule(fake: FakeApiServer, scheduled: asyncio.Queue[str], names: list[str], limit: int) -> None:
    """Plays the scheduler: each measured pod that appears is reported scheduled, with a stranger's pod
    first; after ``limit`` pods, none is any more."""
    scheduled.put_nowait("not-created-here")
    while len(names) < limit:
        for name in [name for name in _pod_names(fake) if name not in names][:limit - len(names)]:
            names.append(name)
            scheduled.put_nowait(name)
        await asyncio.sleep(0.005)


async def test_each_batch_is_deleted_once_all_of_it_is_scheduled_and_the_next_created(
    fake: FakeApiServer, client: Client
) -> None:
    workload = dataclasses.replace(STEADY, steady_state=w.SteadyState("half", batch=3, duration_s=2.0))
    scheduled: asyncio.Queue[str] = asyncio.Queue()
    reported: list[str] = []
    scheduler = asyncio.create_task(_schedule(fake, scheduled, reported, limit=7))

    run = await run_steadily(client, workload, scheduled)
    await scheduler

    names = [f"measured-{i:05d}" for i in range(9)]
    # Seven seen: two whole batches deleted, the third created and left with one of its pods scheduled.
    assert run.scheduled == names[:7]
    assert list(run.created_at) == names
    assert run.deleted == set(names[:6])
    assert _pod_names(fake) == names[6:]
    deletes = fake.calls_of("Delete")
    assert len(deletes) == 6 and all(d.grace_period_seconds == 0 for d in deletes)
    assert {d.namespace for d in deletes} == {w.MEASURED_NAMESPACE}
    # Batches are created whole, in one call each, from the workload's template.
    assert len(fake.calls_of("Batch")) == 3
    pod = next(obj.pod for obj in fake.objects.values() if obj.WhichOneof("object") == "pod")
    assert pod.spec.resource_claims[0].resource_claim_template_name == w.TEST_CLAIM_TEMPLATE
    # The loop ran its duration, though nothing was scheduled for most of it.
    assert run.ended - run.started >= 2.0


# -- what is seen of claims, and its checks ---------------------------------------------------------

NODES = [STEADY.node(i) for i in range(2)]
POOL0, POOL1 = (node.metadata.name for node in NODES)


def _claim(pod_name: str, pool: str, device: str, *, reserved: bool = True) -> objects_pb2.ResourceClaim:
    claim = objects_pb2.ResourceClaim()
    claim.metadata.name, claim.metadata.namespace = f"{pod_name}-resource", w.MEASURED_NAMESPACE
    allocation = claim.status.allocation
    allocation.devices.results.add(request="req-0", driver=w.TEST_DRIVER, pool=pool, device=device)
    allocation.node_selector.node_selector_terms.add().match_fields.add(
        key="metadata.name", operator="In", values=[pool])
    if reserved:
        claim.status.reserved_for.add(resource="pods", name=pod_name, uid=f"uid-{pod_name}")
    return claim


def test_the_history_keeps_each_claim_as_last_reserved_and_finds_a_device_held_twice() -> None:
    history = ClaimHistory()
    first, second = _claim("m0", POOL0, "instance-0"), _claim("m1", POOL0, "instance-0")
    released = objects_pb2.ResourceClaim()
    released.CopyFrom(first)
    released.status.ClearField("allocation")
    del released.status.reserved_for[:]

    history.added(first)
    history.added(second)  # instance-0 is first's still
    history.updated(first, released)  # its pod gone: the allocation cleared, the device free again
    history.deleted(released)
    history.added(_claim("m2", POOL0, "instance-0"))
    history.updated(second, _claim("m1", POOL0, "instance-1"))

    device = f"{w.TEST_DRIVER}/{POOL0}/instance-0"
    assert history.held_twice == [(device, "sched-1/m0-resource", "sched-1/m1-resource")]
    # m0's claim as it was last allocated and reserved, not as released.
    assert history.reserved[(w.MEASURED_NAMESPACE, "m0-resource")] is first
    assert _devices(history.reserved[(w.MEASURED_NAMESPACE, "m1-resource")]) == [(POOL0, "instance-1")]


def test_an_admin_access_allocation_is_not_holding_its_device() -> None:
    history = ClaimHistory()
    admin = _claim("m0", POOL0, "instance-0")
    admin.status.allocation.devices.results[0].admin_access = True

    history.added(admin)
    history.added(_claim("m1", POOL0, "instance-0"))

    assert history.held_twice == []


def _check(listed: list[objects_pb2.Pod], seen: list[objects_pb2.Pod],
           claims_seen: list[objects_pb2.ResourceClaim],
           held_twice: list[tuple[str, str, str]] | None = None) -> list[str]:
    names = {pod.metadata.name for pod in seen}
    return check(Placements(
        NODES, listed, {w.MEASURED: names}, names,
        resource_claims=[_claim(p.metadata.name, p.spec.node_name, "instance-1") for p in listed],
        resource_slices=[STEADY.drivers[0].slice(node.metadata.name) for node in NODES],
        pods_seen_bound=seen, claims_seen=claims_seen, devices_held_twice=held_twice or []))


def test_the_deleted_pods_claims_are_judged_as_seen() -> None:
    deleted, other, last = placed_pod("m0", NODES[0]), placed_pod("m1", NODES[1]), placed_pod("m2", NODES[1])
    seen = [deleted, other, last]
    right = [_claim("m0", POOL0, "instance-0"), _claim("m1", POOL1, "instance-0")]

    assert _check([last], seen, right) == []
    problems = _check([last], seen, [_claim("m0", POOL1, "instance-0"), _claim("m1", POOL1, "instance-0",
                                                                                reserved=False)])
    assert problems == [
        f"claims of deleted pods: pod sched-1/m0 on {POOL0}: claim m0-resource is allocated for other nodes",
        f"claims of deleted pods: pod sched-1/m0 on {POOL0}: claim m0-resource holds device "
        f"{w.TEST_DRIVER}/{POOL1}/instance-0, not published for its node",
        f"claims of deleted pods: pod sched-1/m1 on {POOL1}: claim m1-resource is not reserved for it",
    ]
    assert _check([last], seen, right[1:]) == [
        f"claims of deleted pods: pod sched-1/m0 on {POOL0}: claim resource: ResourceClaim m0-resource does "
        "not exist"]


def test_a_device_seen_held_twice_is_reported() -> None:
    device = f"{w.TEST_DRIVER}/{POOL0}/instance-0"

    problems = _check([], [], [], [(device, "sched-1/m0-resource", "sched-1/m1-resource")])

    assert problems == [
        f"devices held at once: device {device} of sched-1/m0-resource allocated to sched-1/m1-resource too"]
