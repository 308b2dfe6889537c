"""The ResourceClaimController against a real in-process API server on a temporary SQLite store, through
the real client, as upstream's pkg/controller/resourceclaim controller_test.go has it:

- TestSyncHandler's table: the informers run, the worker does not; each case writes its objects, syncs
  one key once (as upstream calls syncHandler) and checks the claims and the pods' claim statuses left.
  The PodGroup, admin-access feature gate and metrics cases are left out (podsched's PodGroups have no
  claims, admin access is always on, the controller has no metrics). Where upstream leaves a claim of a
  pod that is gone to the garbage collector, or keeps an allocation without its finalizer, podsched, which
  has neither, deletes the claim and clears the allocation: those cases say so.
- TestEventHandlers' table: which keys an event puts in the queue.
- The whole loop: a pod waiting for its template gets its claim when the template appears, with a
  Warning Event about the wait.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from google.protobuf import json_format
from google.protobuf.message import Message

from cluster.api import errors, objects_pb2
from cluster.api.dra.podclaims import POD_CLAIM_NAME_ANNOTATION
from cluster.api.kinds import EVENT, POD, RESOURCE_CLAIM, metadata_of
from cluster.client import Client, Informer
from cluster.controllers import ResourceClaimController
from cluster.controllers.resourceclaim import (
    CLAIM_KEY_PREFIX,
    FAILED_RESOURCE_CLAIM_CREATION,
    POD_KEY_PREFIX,
    generate_name_for,
)
from tests.builders import IMAGE, pod
from tests.unit.test_apiserver_server import Harness

NS = "my-namespace"
OTHER_NS = "not-my-namespace"
POD_NAME = "test-pod"
ENTRY = "acme-resource"
TEMPLATE = "my-template"
NODE = "worker"
SETTLE_TIMEOUT_S = 10.0
T = TypeVar("T")
TEMPLATE_ERROR = (f'PodResourceClaim {ENTRY}: resource claim template "{TEMPLATE}": '
                  f'resourceclaimtemplates.resource.k8s.io "{TEMPLATE}" not found')


# ------------------------------------------------------------------------------------------- objects


def claim_pod(name: str = POD_NAME, namespace: str = NS, *, entries: Iterable[str] = (ENTRY,),
              statuses: dict[str, str] | None = None, node: str = "", phase: str = "") -> objects_pb2.Pod:
    """A pod whose entries ``entries`` each use the template TEMPLATE, with ``statuses`` (entry name ->
    claim name) recorded."""
    spec = {"resourceClaims": [{"name": entry, "resourceClaimTemplateName": TEMPLATE} for entry in entries]}
    recorded = [{"name": k, "resourceClaimName": v} for k, v in (statuses or {}).items()]
    status = {"resourceClaimStatuses": recorded}
    return pod(name, namespace, spec=spec, status=status, image=IMAGE, node_name=node, phase=phase)


def template(namespace: str = NS) -> objects_pb2.ResourceClaimTemplate:
    return json_format.ParseDict({
        "metadata": {"name": TEMPLATE, "namespace": namespace},
        "spec": {
            "metadata": {"labels": {"app": "inference"}, "annotations": {"team": "ml"}},
            "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "class"}}]}},
        },
    }, objects_pb2.ResourceClaimTemplate())


def claim(name: str, namespace: str = NS, *, owner: objects_pb2.Pod | None = None,
          entry: str = "") -> objects_pb2.ResourceClaim:
    """A claim (owned by ``owner`` as a generated one is, annotated for ``entry`` when given)."""
    made = objects_pb2.ResourceClaim()
    made.metadata.name, made.metadata.namespace = name, namespace
    if owner is not None:
        made.metadata.owner_references.add(api_version="v1", kind="Pod", name=owner.metadata.name,
                                           uid=owner.metadata.uid, controller=True)
    if entry:
        made.metadata.annotations[POD_CLAIM_NAME_ANNOTATION] = entry
    return made


def pod_consumer(p: objects_pb2.Pod) -> dict[str, str]:
    return {"resource": "pods", "name": p.metadata.name, "uid": p.metadata.uid}


def gone_pod(name: str = POD_NAME + "-II") -> objects_pb2.Pod:
    """A pod that never existed (upstream's otherTestPod)."""
    return pod(name, NS, uid="uid-of-a-pod-that-is-gone")


def pod_key(name: str = POD_NAME, namespace: str = NS) -> str:
    return f"{POD_KEY_PREFIX}{namespace}/{name}"


def claim_key(name: str, namespace: str = NS) -> str:
    return f"{CLAIM_KEY_PREFIX}{namespace}/{name}"


# --------------------------------------------------------------------------------------------- harness


class Cluster:
    """An API server, a client, and a ResourceClaimController whose informers run without its worker."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.controller = ResourceClaimController(client)
        self._running: list[asyncio.Task[None]] = []

    @property
    def _informers(self) -> dict[str, Informer[Any]]:
        return dict(self.controller._informers())

    async def start_informers(self, *kinds: str) -> None:
        """Run the informers of ``kinds`` (all by default) until they have synced; once only."""
        informers = [informer for kind, informer in self._informers.items() if not kinds or kind in kinds]
        self._running = [asyncio.create_task(informer.run()) for informer in informers]
        for informer in informers:
            await informer.wait_synced()

    async def stop_informers(self) -> None:
        for task in self._running:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def write(self, *objects: Message) -> list[Any]:
        """Create ``objects``, each with the status it carries written by UpdateStatus."""
        written = []
        for obj in objects:
            created = await self.client.create(obj)
            if "status" in obj.DESCRIPTOR.fields_by_name and obj.HasField("status"):  # type: ignore[attr-defined]
                created.status.CopyFrom(obj.status)  # type: ignore[attr-defined]
                created = await self.client.update_status(created)
            written.append(created)
        return written

    async def seen(self, *objects: Message, deleted: bool = False) -> None:
        """Wait until the controller's informers show ``objects`` as written (or gone)."""
        informers = {
            "Pod": "pod", "ResourceClaim": "resourceclaim", "ResourceClaimTemplate": "resourceclaimtemplate",
            "PodGroup": "podgroup"}
        async with asyncio.timeout(SETTLE_TIMEOUT_S):
            for obj in objects:
                meta = metadata_of(obj)
                informer = self._informers[informers[obj.DESCRIPTOR.name]]
                while True:
                    held = informer.get(f"{meta.namespace}/{meta.name}")
                    if (held is None) if deleted else (
                            held is not None and metadata_of(held).resource_version == meta.resource_version):
                        break
                    await asyncio.sleep(0.01)

    async def sync(self, key: str) -> None:
        await self.controller._sync(key)

    async def queued(self) -> list[str]:
        """Every key waiting in the controller's queue, taken out."""
        queue, keys = self.controller._queue, []
        while len(queue):
            keys.append(await queue.get())
        return keys

    async def claims(self, namespace: str = NS) -> list[objects_pb2.ResourceClaim]:
        listed = (await self.client.list(RESOURCE_CLAIM, namespace)).items
        return sorted(listed, key=lambda c: c.metadata.name)  # type: ignore[no-any-return,attr-defined]

    async def statuses(self, name: str = POD_NAME) -> list[tuple[str, str]]:
        got = await self.client.get(POD, name, NS)
        return [(s.name, s.resource_claim_name) for s in got.status.resource_claim_statuses]  # type: ignore[attr-defined]


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with Harness(tmp_path) as api:
        assert api.server is not None
        async with Client(api.server.address) as client:
            made = Cluster(client)
            try:
                yield made
            finally:
                await made.stop_informers()


async def started(cluster: Cluster, *objects: Message) -> list[Any]:
    """Write ``objects``, then start the informers (they list them) and empty the queue they filled."""
    written = await cluster.write(*objects)
    await cluster.start_informers()
    await cluster.queued()
    return written


async def eventually(fetch: Callable[[], Awaitable[list[T]]]) -> list[T]:
    """What ``fetch`` returns once it is not empty."""
    async with asyncio.timeout(SETTLE_TIMEOUT_S):
        while True:
            got = await fetch()
            if got:
                return got
            await asyncio.sleep(0.02)


async def events_of(client: Client) -> list[objects_pb2.Event]:
    return list((await client.list(EVENT, NS)).items)  # type: ignore[arg-type]


def assert_generated_for(made: objects_pb2.ResourceClaim, owner: objects_pb2.Pod, entry: str = ENTRY) -> None:
    """``made`` is the claim generated from TEMPLATE for ``owner``'s entry ``entry``, as upstream makes it."""
    meta = made.metadata
    prefix = f"{owner.metadata.name}-{entry}-"
    assert meta.generate_name == prefix
    assert meta.name.startswith(prefix) and len(meta.name) == len(prefix) + 5
    assert dict(meta.annotations) == {"team": "ml", POD_CLAIM_NAME_ANNOTATION: entry}
    assert dict(meta.labels) == {"app": "inference"}
    [ref] = meta.owner_references
    assert (ref.api_version, ref.kind, ref.name, ref.uid, ref.controller, ref.block_owner_deletion) == (
        "v1", "Pod", owner.metadata.name, owner.metadata.uid, True, True)
    assert [r.exactly.device_class_name for r in made.spec.devices.requests] == ["class"]


# ---------------------------------------------------------------------------------- the sync handler


async def test_create(cluster: Cluster) -> None:
    test_pod, _ = await started(cluster, claim_pod(), template())
    await cluster.sync(pod_key())
    [made] = await cluster.claims()
    assert_generated_for(made, test_pod)
    assert await cluster.statuses() == [(ENTRY, made.metadata.name)]


async def test_nop(cluster: Cluster) -> None:
    owner = await cluster.client.create(claim_pod())
    existing, _ = await cluster.write(
        claim(f"{POD_NAME}-{ENTRY}-abcde", owner=owner, entry=ENTRY), template())
    owner.status.resource_claim_statuses.add(name=ENTRY, resource_claim_name=existing.metadata.name)
    await cluster.client.update_status(owner)
    await cluster.start_informers()
    await cluster.sync(pod_key())
    assert [c.metadata.name for c in await cluster.claims()] == [existing.metadata.name]
    assert await cluster.statuses() == [(ENTRY, existing.metadata.name)]


async def test_recreate(cluster: Cluster) -> None:
    """The claim the pod's status names is gone: another is made and recorded instead."""
    test_pod, _ = await started(cluster, claim_pod(statuses={ENTRY: f"{POD_NAME}-{ENTRY}-abcde"}), template())
    await cluster.sync(pod_key())
    [made] = await cluster.claims()
    assert_generated_for(made, test_pod)
    assert await cluster.statuses() == [(ENTRY, made.metadata.name)]


async def test_missing_template(cluster: Cluster) -> None:
    await started(cluster, claim_pod())
    with pytest.raises(errors.NotFound) as raised:
        await cluster.sync(pod_key())
    assert raised.value.message == TEMPLATE_ERROR.removeprefix(f"PodResourceClaim {ENTRY}: ")
    assert await cluster.claims() == []
    assert await cluster.statuses() == []
    events = (await cluster.client.list(EVENT, NS)).items
    assert [(e.type, e.reason, e.message, e.involved_object.name) for e in events] == [  # type: ignore[attr-defined]
        ("Warning", FAILED_RESOURCE_CLAIM_CREATION, TEMPLATE_ERROR, POD_NAME)]
    with pytest.raises(errors.NotFound):
        await cluster.sync(pod_key())
    assert len((await cluster.client.list(EVENT, NS)).items) == 1, "a failure is reported once"


async def test_find_existing_claim_by_annotation(cluster: Cluster) -> None:
    """A claim made for the pod before its status could record it is recorded, none is made."""
    owner = await cluster.client.create(claim_pod())
    [existing] = await started(cluster, claim(f"{POD_NAME}-{ENTRY}-abcde", owner=owner, entry=ENTRY))
    await cluster.sync(pod_key())
    assert [c.metadata.name for c in await cluster.claims()] == [existing.metadata.name]
    assert await cluster.statuses() == [(ENTRY, existing.metadata.name)]


async def test_find_created_claim_in_cache(cluster: Cluster) -> None:
    """A claim made by a sync whose status update failed is found by the next sync, although the
    informers have not shown it yet: no second claim."""
    test_pod, _ = await started(cluster, claim_pod(), template())
    await cluster.stop_informers()
    test_pod.metadata.labels["changed"] = "meanwhile"
    await cluster.client.update(test_pod)
    for _ in range(2):
        with pytest.raises(errors.Conflict):
            await cluster.sync(pod_key())
    [made] = await cluster.claims()
    assert_generated_for(made, test_pod)


async def test_no_such_pod(cluster: Cluster) -> None:
    await started(cluster, template())
    await cluster.sync(pod_key())
    assert await cluster.claims() == []


async def test_pod_deleted(cluster: Cluster) -> None:
    terminating = claim_pod(node=NODE)
    terminating.spec.termination_grace_period_seconds = 3600
    await started(cluster, terminating, template())
    marked = await cluster.client.delete(POD, POD_NAME, NS)
    await cluster.seen(marked)
    await cluster.sync(pod_key())
    assert await cluster.claims() == []


async def test_pod_done(cluster: Cluster) -> None:
    await started(cluster, claim_pod(phase="Succeeded"), template())
    await cluster.sync(pod_key())
    assert await cluster.claims() == []


async def test_no_claims(cluster: Cluster) -> None:
    await started(cluster, pod(POD_NAME, NS, image=IMAGE), template())
    await cluster.sync(pod_key())
    assert await cluster.claims() == []


async def test_create_with_other_claim(cluster: Cluster) -> None:
    """A claim of the generated name's base in another namespace changes nothing."""
    test_pod, _, other = await started(
        cluster, claim_pod(), template(), claim(f"{POD_NAME}-{ENTRY}", OTHER_NS))
    await cluster.sync(pod_key())
    [made] = await cluster.claims()
    assert_generated_for(made, test_pod)
    assert [c.metadata.name for c in await cluster.claims(OTHER_NS)] == [other.metadata.name]


async def test_wrong_claim_owner(cluster: Cluster) -> None:
    """A claim the pod does not own is never taken for its generated one."""
    await started(cluster, claim_pod(), claim(f"{POD_NAME}-{ENTRY}", entry=ENTRY))
    with pytest.raises(errors.NotFound, match="resource claim template"):
        await cluster.sync(pod_key())
    assert [c.metadata.name for c in await cluster.claims()] == [f"{POD_NAME}-{ENTRY}"]
    assert await cluster.statuses() == []


async def allocated(cluster: Cluster, name: str, *, owner: objects_pb2.Pod | None = None,
                    reserved_for: Iterable[dict[str, str]] = ()) -> objects_pb2.ResourceClaim:
    made = claim(name, owner=owner, entry=ENTRY if owner is not None else "")
    made.status.allocation.SetInParent()
    for consumer in reserved_for:
        made.status.reserved_for.add(**consumer)
    [written] = await cluster.write(made)
    return written  # type: ignore[no-any-return]


async def reservations(cluster: Cluster, name: str) -> tuple[list[str], bool]:
    """The uids ``name`` is reserved for, and whether it is allocated."""
    got = await cluster.client.get(RESOURCE_CLAIM, name, NS)
    return [c.uid for c in got.status.reserved_for], got.status.HasField("allocation")  # type: ignore[attr-defined]


async def test_stay_reserved_seen(cluster: Cluster) -> None:
    test_pod = await cluster.client.create(claim_pod())
    made = await allocated(cluster, "c", owner=test_pod, reserved_for=[pod_consumer(test_pod)])
    await cluster.start_informers()
    await cluster.sync(claim_key("c"))
    assert await reservations(cluster, made.metadata.name) == ([test_pod.metadata.uid], True)


async def test_stay_reserved_not_seen(cluster: Cluster) -> None:
    """A pod the informer has not shown (here: its pod informer never runs) is looked up on the server
    before its reservation goes: kept while it exists, released once a pod of its name has another uid."""
    await cluster.start_informers("resourceclaim")
    unseen = await cluster.client.create(claim_pod())
    made = await allocated(cluster, "c", owner=unseen, reserved_for=[pod_consumer(unseen)])
    await cluster.seen(made)
    await cluster.sync(claim_key("c"))
    assert await reservations(cluster, "c") == ([unseen.metadata.uid], True)

    await cluster.client.delete(POD, POD_NAME, NS)
    recreated = await cluster.client.create(claim_pod())
    assert recreated.metadata.uid != unseen.metadata.uid
    await cluster.sync(claim_key("c"))
    assert await cluster.claims() == [], "a pod of the same name is not the one the claim was made for"


async def test_clear_reserved_of_a_pod_that_is_gone(cluster: Cluster) -> None:
    """Upstream keeps an owned claim whose pod is gone for the garbage collector; podsched, which has
    none, deletes it. A claim nobody owns stays, released and deallocated."""
    owner = gone_pod(POD_NAME)
    await allocated(cluster, "owned", owner=owner, reserved_for=[pod_consumer(owner)])
    await allocated(cluster, "shared", reserved_for=[pod_consumer(owner)])
    await cluster.start_informers()
    await cluster.sync(claim_key("owned"))
    await cluster.sync(claim_key("shared"))
    assert [c.metadata.name for c in await cluster.claims()] == ["shared"]
    assert await reservations(cluster, "shared") == ([], False)


async def test_dont_clear_reserved_of_a_pod_that_exists(cluster: Cluster) -> None:
    test_pod = await cluster.client.create(claim_pod())
    consumers = [pod_consumer(test_pod), pod_consumer(gone_pod())]
    await allocated(cluster, "c", owner=test_pod, reserved_for=consumers)
    await cluster.start_informers()
    await cluster.sync(claim_key("c"))
    assert await reservations(cluster, "c") == ([test_pod.metadata.uid], True)


async def test_clear_reserved_when_done(cluster: Cluster) -> None:
    """Upstream keeps the allocation of a claim without its finalizer; podsched, which models none,
    frees it."""
    [done] = await cluster.write(claim_pod(phase="Succeeded"))
    await allocated(cluster, "c", reserved_for=[pod_consumer(done)])
    await cluster.start_informers()
    await cluster.sync(claim_key("c"))
    assert await reservations(cluster, "c") == ([], False)


async def test_remove_reserved(cluster: Cluster) -> None:
    test_pod = await cluster.client.create(claim_pod())
    await allocated(cluster, "c", reserved_for=[pod_consumer(test_pod), pod_consumer(gone_pod())])
    await cluster.start_informers()
    await cluster.sync(claim_key("c"))
    assert await reservations(cluster, "c") == ([test_pod.metadata.uid], True)


async def test_delete_claim_when_done(cluster: Cluster) -> None:
    [done] = await cluster.write(claim_pod(phase="Succeeded"))
    await allocated(cluster, "c", owner=done, reserved_for=[pod_consumer(done)])
    await cluster.start_informers()
    await cluster.sync(claim_key("c"))
    assert await cluster.claims() == []


async def test_add_reserved(cluster: Cluster) -> None:
    """A pod bound without the scheduler gets its allocated claim reserved."""
    bound = await cluster.client.create(claim_pod(node=NODE))
    made = await allocated(cluster, f"{POD_NAME}-{ENTRY}-abcde", owner=bound)
    bound.status.resource_claim_statuses.add(name=ENTRY, resource_claim_name=made.metadata.name)
    await cluster.client.update_status(bound)
    await cluster.client.create(template())
    await cluster.start_informers()
    await cluster.sync(pod_key())
    assert await reservations(cluster, made.metadata.name) == ([bound.metadata.uid], True)
    assert await cluster.statuses() == [(ENTRY, made.metadata.name)]


async def test_clean_up_pod_reservation_with_non_pod_reservation_present(cluster: Cluster) -> None:
    [done] = await cluster.write(claim_pod(phase="Succeeded"))
    foo = {"api_group": "foo.com", "resource": "foo", "name": "foo", "uid": "123"}
    await allocated(cluster, "c", owner=done, reserved_for=[pod_consumer(done), foo])
    await cluster.start_informers()
    await cluster.sync(claim_key("c"))
    assert await reservations(cluster, "c") == (["123"], True)


async def test_flapping_resourceclaim_statuses(cluster: Cluster) -> None:
    """The claims made are recorded beside those recorded before."""
    test_pod = await cluster.client.create(claim_pod(entries=("claim-a", "claim-b")))
    existing = await cluster.client.create(claim("claim-a-object", owner=test_pod, entry="claim-a"))
    test_pod.status.resource_claim_statuses.add(name="claim-a", resource_claim_name=existing.metadata.name)
    await cluster.client.update_status(test_pod)
    await started(cluster, template())
    await cluster.sync(pod_key())
    claims = await cluster.claims()
    assert claims[0].metadata.name == "claim-a-object"
    assert_generated_for(claims[1], test_pod, "claim-b")
    assert await cluster.statuses() == [("claim-a", "claim-a-object"), ("claim-b", claims[1].metadata.name)]


def extended_pod(claim_name: str, phase: str = "") -> objects_pb2.Pod:
    """A pod whose container asks for example.com/gpu, served from claim ``claim_name`` the scheduler
    made."""
    gpu = {"example.com/gpu": "1"}
    spec = {"containers": [{"name": "c0", "image": IMAGE, "resources": {"requests": gpu, "limits": gpu}}]}
    status = {"extendedResourceClaimStatus": {"resourceClaimName": claim_name, "requestMappings": [
        {"containerName": "c0", "resourceName": "example.com/gpu", "requestName": "container-0-request-0"}]}}
    return pod(POD_NAME, NS, spec=spec, phase=phase, status=status)


async def test_extended_resource_claim_of_a_done_pod_is_deleted(cluster: Cluster) -> None:
    """The claim the scheduler made for a pod's extended resources goes once the pod is done."""
    extended = f"{POD_NAME}-extended-resources-x"
    done = extended_pod(extended, phase="Succeeded")
    [done] = await cluster.write(done)
    await allocated(cluster, extended, owner=done)
    await cluster.start_informers()
    assert claim_key(extended) in await cluster.queued()
    await cluster.sync(claim_key(extended))
    assert await cluster.claims() == []



async def test_extended_resource_claim_of_a_deleted_pod_is_deleted(cluster: Cluster) -> None:
    """The claim the scheduler made for a pod's extended resources goes with the pod, reserved for it or
    not."""
    extended = f"{POD_NAME}-extended-resources-x"
    running = extended_pod(extended)
    [running] = await cluster.write(running)
    await allocated(cluster, extended, owner=running, reserved_for=[pod_consumer(running)])
    await cluster.start_informers()
    await cluster.seen(await cluster.client.delete(POD, POD_NAME, NS), deleted=True)
    assert claim_key(extended) in await cluster.queued()
    await cluster.sync(claim_key(extended))
    assert await cluster.claims() == []

@pytest.mark.parametrize(("pod_name", "entry", "expected"), [
    pytest.param("test-pod", "acme-resource", "test-pod-acme-resource-", id="short"),
    pytest.param("p" * 39, "c" * 16, "p" * 39 + "-" + "c" * 16 + "-", id="exactly-57"),
    # 41 + 1 + 16 + 1 = 59 > 57: each cut to its share of 57.
    pytest.param("p" * 41, "c" * 16, "p" * (41 * 57 // 59) + "-" + "c" * (16 * 57 // 59),
                 id="cut-in-proportion"),
    pytest.param("p" * 63, "c" * 63, "p" * (63 * 57 // 128) + "-" + "c" * (63 * 57 // 128), id="both-long"),
])
def test_generate_name(pod_name: str, entry: str, expected: str) -> None:
    assert generate_name_for(pod_name, entry) == expected
    assert len(expected) <= 58


# -------------------------------------------------------------------------------- the event handlers


async def test_new_claim_is_queued(cluster: Cluster) -> None:
    await started(cluster)
    [made] = await cluster.write(claim("c"))
    await cluster.seen(made)
    assert await cluster.queued() == [claim_key("c")]


async def test_updated_claim_is_queued_and_a_deleted_one_is_not(cluster: Cluster) -> None:
    [made] = await started(cluster, claim("c"))
    made.metadata.labels["foo"] = "bar"
    updated = await cluster.client.update(made)
    await cluster.seen(updated)
    assert await cluster.queued() == [claim_key("c")]
    await cluster.client.delete(RESOURCE_CLAIM, "c", NS)
    await cluster.seen(updated, deleted=True)
    assert await cluster.queued() == []


async def test_new_pods_are_queued(cluster: Cluster) -> None:
    await started(cluster)
    written = await cluster.write(
        claim_pod(), claim_pod("fake-1", OTHER_NS), pod("no-claims", NS, image=IMAGE))
    await cluster.seen(*written)
    assert await cluster.queued() == [pod_key(), pod_key("fake-1", OTHER_NS)]


async def test_new_template_queues_the_pods_of_its_namespace_that_wait_for_it(cluster: Cluster) -> None:
    await started(cluster, claim_pod(), claim_pod("fake-1", OTHER_NS))
    [made] = await cluster.write(template())
    await cluster.seen(made)
    assert await cluster.queued() == [pod_key()]
    [made] = await cluster.write(template(OTHER_NS))
    await cluster.seen(made)
    assert await cluster.queued() == [pod_key("fake-1", OTHER_NS)]


async def test_a_deleted_claim_queues_the_pod_that_named_it(cluster: Cluster) -> None:
    owner = await cluster.client.create(claim_pod())
    existing = await cluster.client.create(claim("c-1", owner=owner, entry=ENTRY))
    owner.status.resource_claim_statuses.add(name=ENTRY, resource_claim_name="c-1")
    await cluster.client.update_status(owner)
    await started(cluster, template())
    await cluster.client.delete(RESOURCE_CLAIM, "c-1", NS)
    await cluster.seen(existing, deleted=True)
    assert await cluster.queued() == [pod_key()]


@pytest.mark.parametrize(("phase", "expected"), [("Running", []), ("Succeeded", ["x"]), ("Failed", ["x"])])
async def test_a_finished_pod_queues_its_extended_resource_claim(
    cluster: Cluster, phase: str, expected: list[str]
) -> None:
    await started(cluster)
    [written] = await cluster.write(extended_pod("x", phase=phase))
    await cluster.seen(written)
    assert await cluster.queued() == [claim_key(name) for name in expected]


async def test_a_deleted_pod_queues_the_claims_it_named_and_owned(cluster: Cluster) -> None:
    owner = await cluster.client.create(claim_pod())
    await cluster.write(claim("recorded", owner=owner, entry=ENTRY), claim("made-not-recorded", owner=owner))
    owner.status.resource_claim_statuses.add(name=ENTRY, resource_claim_name="recorded")
    recorded = await cluster.client.update_status(owner)
    await started(cluster, template())
    await cluster.client.delete(POD, POD_NAME, NS)
    await cluster.seen(recorded, deleted=True)
    assert sorted(await cluster.queued()) == [claim_key("made-not-recorded"), claim_key("recorded")]


# ---------------------------------------------------------------------------------------- the loop


async def test_a_pod_waiting_for_its_template_gets_its_claim_when_it_appears(cluster: Cluster) -> None:
    [test_pod] = await cluster.write(claim_pod())
    running = asyncio.create_task(cluster.controller.run())
    try:
        await asyncio.wait_for(cluster.controller.wait_synced(), SETTLE_TIMEOUT_S)
        [event] = await eventually(lambda: events_of(cluster.client))
        assert (event.reason, event.message) == (FAILED_RESOURCE_CLAIM_CREATION, TEMPLATE_ERROR)
        await cluster.client.create(template())
        statuses = await eventually(cluster.statuses)
        [made] = await cluster.claims()
        assert_generated_for(made, test_pod)
        assert statuses == [(ENTRY, made.metadata.name)]
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
