"""Create, Get, Update, UpdateStatus and Delete through the real gRPC service on a real SqliteStore:
server-owned fields, conflicts, unconditional updates, generateName, dry runs and every bad input."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from cluster.api import apiserver_pb2, errors, objects_pb2
from cluster.apiserver import strategy
from tests.builders import priority_class
from tests.unit.test_apiserver_server import Harness, api, make_node, make_pod

__all__ = ["api"]

CONFLICT = (
    'Operation cannot be fulfilled on pods "web": the object has been modified; please apply your changes '
    "to the latest version and try again"
)


async def test_create_sets_server_owned_fields_and_defaults(api: Harness) -> None:
    pod = make_pod("web")
    pod.metadata.uid = "client-chosen"
    pod.metadata.generation = 7
    pod.metadata.deletion_timestamp.seconds = 5
    pod.spec.containers[0].resources.limits["cpu"] = "500m"
    pod.status.phase = "Running"
    created = await api.create(pod)
    meta = created.metadata
    assert (meta.namespace, meta.generation) == ("default", 1)
    assert meta.uid not in ("", "client-chosen") and len(meta.uid) == 36
    assert meta.creation_timestamp.seconds > 0
    assert not meta.HasField("deletion_timestamp")
    assert int(meta.resource_version) > 0
    assert (created.api_version, created.kind) == ("v1", "Pod")
    assert created.spec.scheduler_name == "default-scheduler"
    assert created.spec.termination_grace_period_seconds == 30
    assert created.spec.restart_policy == "Always"
    assert created.spec.containers[0].image_pull_policy == "IfNotPresent"
    assert created.spec.containers[0].resources.requests["cpu"] == "500m"
    assert created.status.phase == "Pending"
    assert await api.get("Pod", "web", "default") == created
    assert await api.get("pods", "web") == created  # any name of the kind, namespace "default"


async def test_cluster_scoped_kinds_have_no_namespace(api: Harness) -> None:
    node = make_node("n1")
    node.metadata.namespace = "default"
    created = await api.create(node)
    assert created.metadata.namespace == ""
    assert created.status.allocatable["cpu"] == "4"  # defaults to capacity
    assert await api.get("Node", "n1", namespace="ignored") == created


async def test_create_twice_already_exists(api: Harness) -> None:
    await api.create(make_pod("web"))
    with pytest.raises(errors.AlreadyExists, match=r'^pods "web" already exists$'):
        await api.create(make_pod("web"))
    await api.create(make_pod("web", namespace="other"))  # another namespace is another object


async def test_generate_name(api: Harness) -> None:
    pod = make_pod("")
    pod.metadata.generate_name = "web-"
    first, second = await api.create(pod), await api.create(pod)
    for created in (first, second):
        assert created.metadata.name.startswith("web-")
        assert len(created.metadata.name) == len("web-") + 5
    assert first.metadata.name != second.metadata.name


@pytest.mark.parametrize(("base", "length"), [("web-", 9), ("x" * 70, 63)], ids=["short", "truncated"])
def test_generated_names_stay_dns_labels(base: str, length: int) -> None:
    name = strategy.generate_name(base, random.Random(7))
    assert len(name) == length
    assert name[:-5] == base[:58] and all(ch in "bcdfghjklmnpqrstvwxz2456789" for ch in name[-5:])


async def test_generate_name_collision_is_retried_through_the_server(tmp_path: Path) -> None:
    async with Harness(tmp_path) as harness:
        assert harness.server is not None
        verbs = harness.server._verbs
        verbs._rng = random.Random(1)
        pod = make_pod("")
        pod.metadata.generate_name = "web-"
        first = await harness.create(pod)
        verbs._rng = random.Random(1)  # the next name tried collides with the first one
        second = await harness.create(pod)
        assert second.metadata.name != first.metadata.name


async def test_update_replaces_spec_and_metadata_but_keeps_status_and_server_fields(api: Harness) -> None:
    created = await api.create(make_pod("web"))
    created = await api.update_status(_with_status(created, phase="Running", nominated="n2"))
    change = objects_pb2.Pod()
    change.CopyFrom(created)
    change.metadata.labels["tier"] = "front"
    change.metadata.ClearField("uid")
    change.metadata.ClearField("creation_timestamp")
    change.spec.containers[0].image = "nginx:1.26"
    change.status.phase = "Failed"  # ignored: Update keeps the stored status
    updated = await api.update(change)
    assert updated.metadata.labels == {"tier": "front"}
    assert updated.spec.containers[0].image == "nginx:1.26"
    assert updated.status.phase == "Running" and updated.status.nominated_node_name == "n2"
    assert updated.metadata.uid == created.metadata.uid
    assert updated.metadata.creation_timestamp == created.metadata.creation_timestamp
    assert updated.metadata.generation == 2
    assert int(updated.metadata.resource_version) > int(created.metadata.resource_version)
    # Only labels change: generation stays.
    change = objects_pb2.Pod()
    change.CopyFrom(updated)
    change.metadata.labels["tier"] = "back"
    relabelled = await api.update(change)
    assert relabelled.metadata.generation == 2


def _with_status(pod: objects_pb2.Pod, *, phase: str, nominated: str = "") -> objects_pb2.Pod:
    changed = objects_pb2.Pod()
    changed.CopyFrom(pod)
    changed.status.phase = phase
    changed.status.nominated_node_name = nominated
    changed.metadata.labels["ignored"] = "by-update-status"
    changed.spec.containers[0].image = "ignored:by-update-status"
    return changed


async def test_update_status_replaces_only_status(api: Harness) -> None:
    created = await api.create(make_pod("web"))
    updated = await api.update_status(_with_status(created, phase="Running", nominated="n1"))
    assert updated.status.phase == "Running" and updated.status.nominated_node_name == "n1"
    assert "ignored" not in updated.metadata.labels
    assert updated.spec.containers[0].image == "nginx:1.25"
    assert updated.metadata.generation == 1


async def test_update_with_stale_resource_version_conflicts(api: Harness) -> None:
    created = await api.create(make_pod("web"))
    fresh = objects_pb2.Pod()
    fresh.CopyFrom(created)
    fresh.metadata.labels["a"] = "1"
    await api.update(fresh)
    stale = objects_pb2.Pod()
    stale.CopyFrom(created)
    stale.metadata.labels["a"] = "2"
    with pytest.raises(errors.Conflict, match=rf"^{CONFLICT}$"):
        await api.update(stale)
    with pytest.raises(errors.Conflict, match=rf"^{CONFLICT}$"):
        await api.update_status(_with_status(created, phase="Running"))


async def test_update_without_resource_version_is_unconditional(api: Harness) -> None:
    created = await api.create(make_pod("web"))
    await api.update_status(_with_status(created, phase="Running"))
    blind = objects_pb2.Pod()
    blind.CopyFrom(created)
    blind.metadata.resource_version = ""
    blind.metadata.labels["blind"] = "yes"
    updated = await api.update(blind)
    assert updated.metadata.labels["blind"] == "yes"
    assert updated.status.phase == "Running"


async def test_racing_unconditional_update_and_status_update_both_land(api: Harness) -> None:
    # Update keeps the stored status and UpdateStatus the stored metadata, so whatever the interleaving
    # both changes must survive: the server retries its compare-and-swap instead of losing one.
    created = await api.create(make_pod("web"))
    for round_ in range(10):
        relabel = objects_pb2.Pod()
        relabel.CopyFrom(created)
        relabel.metadata.resource_version = ""
        relabel.metadata.labels["round"] = str(round_)
        restatus = _with_status(created, phase="Running", nominated=f"n{round_}")
        restatus.metadata.resource_version = ""
        await asyncio.gather(api.update(relabel), api.update_status(restatus))
        final = await api.get("Pod", "web")
        assert final.metadata.labels["round"] == str(round_)
        assert final.status.nominated_node_name == f"n{round_}"


async def test_an_update_that_changes_nothing_writes_nothing(api: Harness) -> None:
    created = await api.create(make_pod("web"))
    again = await api.update(created)
    assert again.metadata.resource_version == created.metadata.resource_version


async def test_update_of_a_missing_object_is_not_found(api: Harness) -> None:
    with pytest.raises(errors.NotFound, match=r'^pods "ghost" not found$'):
        await api.update(make_pod("ghost"))
    with pytest.raises(errors.NotFound, match=r'^nodes "ghost" not found$'):
        await api.update_status(make_node("ghost"))


async def test_pod_spec_is_immutable_except_images(api: Harness) -> None:
    created = await api.create(make_pod("web"))
    change = objects_pb2.Pod()
    change.CopyFrom(created)
    change.spec.node_name = "n1"
    with pytest.raises(errors.Invalid, match=r'^Pod "web" is invalid: spec: Forbidden: pod updates may not'):
        await api.update(change)


async def test_update_with_another_uid_is_invalid(api: Harness) -> None:
    created = await api.create(make_pod("web"))
    change = objects_pb2.Pod()
    change.CopyFrom(created)
    change.metadata.uid = "not-the-same-object"
    with pytest.raises(errors.Invalid, match=r'metadata.uid: Invalid value: "not-the-same-object"'):
        await api.update(change)


async def test_update_status_of_a_kind_without_status_is_invalid(api: Harness) -> None:
    pc = await api.create(priority_class("gold", 1000))
    with pytest.raises(errors.Invalid, match=r"^PriorityClass has no status: use Update to change it$"):
        await api.update_status(pc)


async def test_update_status_is_judged_by_the_status_alone(api: Harness) -> None:
    """A node stored with a label that today's rules refuse (written behind the API's back, as by an
    older server) still takes status updates; an invalid status is still refused."""
    created = await api.create(make_node("n1"))
    assert api.store is not None
    key = "/registry/nodes/n1"
    stored = await api.store.get(key)
    assert stored is not None
    legacy = objects_pb2.Node.FromString(stored.value)
    legacy.metadata.labels["bad key!"] = "x"
    assert (await api.store.update(key, legacy.SerializeToString(), stored.mod_revision)).succeeded

    change = objects_pb2.Node()
    change.CopyFrom(created)
    change.metadata.resource_version = ""
    change.status.allocatable["cpu"] = "8"
    updated = await api.update_status(change)
    assert updated.status.allocatable["cpu"] == "8"
    assert updated.metadata.labels["bad key!"] == "x"

    change.status.allocatable["cpu"] = "lots"
    with pytest.raises(errors.Invalid, match=r"status.allocatable\[cpu\]: Invalid value: \"lots\""):
        await api.update_status(change)


async def test_dry_run_writes_nothing(api: Harness) -> None:
    created = await api.create(make_pod("web"), dry_run=True)
    assert created.metadata.uid and created.metadata.resource_version == ""
    with pytest.raises(errors.NotFound):
        await api.get("Pod", "web")
    real = await api.create(make_pod("web"))
    with pytest.raises(errors.AlreadyExists):
        await api.create(make_pod("web"), dry_run=True)
    change = objects_pb2.Pod()
    change.CopyFrom(real)
    change.metadata.labels["dry"] = "run"
    dry = await api.update(change, dry_run=True)
    assert dry.metadata.labels["dry"] == "run"
    assert dry.metadata.resource_version == real.metadata.resource_version
    assert await api.get("Pod", "web") == real
    dry_status = await api.update_status(_with_status(real, phase="Running"), dry_run=True)
    assert dry_status.status.phase == "Running"
    deleted = await api.delete("Pod", "web", dry_run=True)
    assert deleted == real
    assert await api.get("Pod", "web") == real


async def test_dry_run_still_validates_and_admits(api: Harness) -> None:
    with pytest.raises(errors.Invalid, match=r'^Pod "Web" is invalid'):
        await api.create(make_pod("Web"), dry_run=True)
    with pytest.raises(errors.Forbidden, match=r"no PriorityClass with name gold was found"):
        await api.create(make_pod("web", priority_class_name="gold"), dry_run=True)


async def test_delete_of_other_kinds_is_immediate(api: Harness) -> None:
    node = await api.create(make_node("n1"))
    deleted = await api.delete("Node", "n1", grace=30)
    assert deleted == node
    with pytest.raises(errors.NotFound, match=r'^nodes "n1" not found$'):
        await api.get("Node", "n1")
    with pytest.raises(errors.NotFound, match=r'^nodes "n1" not found$'):
        await api.delete("Node", "n1")


async def test_delete_with_a_stale_precondition_conflicts(api: Harness) -> None:
    created = await api.create(make_node("n1"))
    fresh = objects_pb2.Node()
    fresh.CopyFrom(created)
    fresh.metadata.labels["a"] = "b"
    updated = await api.update(fresh)
    old, new = created.metadata.resource_version, updated.metadata.resource_version
    with pytest.raises(
        errors.Conflict,
        match=f'^Operation cannot be fulfilled on nodes "n1": Precondition failed: ResourceVersion in '
        f"precondition: {old}, ResourceVersion in object meta: {new}$",
    ):
        await api.delete("Node", "n1", resource_version=old)
    await api.delete("Node", "n1", resource_version=new)


async def test_grouped_kinds_are_named_with_their_group(api: Harness) -> None:
    with pytest.raises(errors.NotFound, match=r'^priorityclasses.scheduling.k8s.io "gold" not found$'):
        await api.get("PriorityClass", "gold")
    with pytest.raises(errors.NotFound, match=r'^leases.coordination.k8s.io "l" not found$'):
        await api.get("Lease", "l")
    with pytest.raises(errors.NotFound, match=r'^poddisruptionbudgets.policy "p" not found$'):
        await api.get("pdb", "p")


async def test_every_kind_round_trips(api: Harness) -> None:
    lease = objects_pb2.Lease(metadata=objects_pb2.ObjectMeta(name="sched", namespace="kube-system"))
    lease.spec.holder_identity = "a"
    lease.spec.lease_duration_seconds = 15
    event = objects_pb2.Event(
        metadata=objects_pb2.ObjectMeta(name="web.1"),
        involved_object=objects_pb2.ObjectReference(kind="Pod", name="web", namespace="default"),
        reason="Scheduled", message="bound", type="Normal", count=1,
    )
    pdb = objects_pb2.PodDisruptionBudget(metadata=objects_pb2.ObjectMeta(name="web"))
    pdb.spec.min_available.number_value = 1
    pdb.spec.selector.match_labels["app"] = "web"
    for obj, kind in ((lease, "Lease"), (event, "Event"), (pdb, "PodDisruptionBudget")):
        created = await api.create(obj)
        assert await api.get(kind, created.metadata.name, created.metadata.namespace) == created
        assert created.metadata.namespace == (obj.metadata.namespace or "default")


# ---------------------------------------------------------------------------------------- bad input


def _envelope_call(api: Harness, method: str, request: Any) -> Any:
    return api.call(method, request)


async def test_an_empty_envelope_is_invalid(api: Harness) -> None:
    for method, request in (
        ("Create", apiserver_pb2.CreateRequest()),
        ("Update", apiserver_pb2.UpdateRequest()),
        ("UpdateStatus", apiserver_pb2.UpdateRequest()),
    ):
        with pytest.raises(errors.Invalid, match=r"^the request carries no object$"):
            await _envelope_call(api, method, request)


@pytest.mark.parametrize(
    ("method", "fields", "message"),
    [
        ("Get", {"kind": "Widget", "name": "x"}, '^unknown kind "Widget": podsched serves Pod, Node'),
        ("Get", {"kind": "", "name": "x"}, "^kind is required$"),
        ("Get", {"kind": "Pod", "name": ""}, "^resource name may not be empty$"),
        ("Get", {"kind": "Pod", "name": "a/b"}, '^resource name "a/b" may not contain "/"$'),
        ("Get", {"kind": "Pod", "name": ".."}, '^resource name ".." may not be ".."$'),
        ("Get", {"kind": "Pod", "name": "x", "namespace": "a/b"}, '^namespace "a/b" may not contain "/"$'),
        ("Delete", {"kind": "Widget", "name": "x"}, '^unknown kind "Widget"'),
        ("Delete", {"kind": "Pod", "name": ""}, "^resource name may not be empty$"),
        ("List", {"kind": "Widget"}, '^unknown kind "Widget"'),
        ("Watch", {"kind": "Widget"}, '^unknown kind "Widget"'),
    ],
    ids=["get-unknown-kind", "get-no-kind", "get-empty-name", "get-slash-name", "get-dotdot-name",
         "get-bad-namespace", "delete-unknown-kind", "delete-empty-name", "list-unknown-kind",
         "watch-unknown-kind"],
)
async def test_bad_requests_are_invalid(
    api: Harness, method: str, fields: dict[str, str], message: str
) -> None:
    request_type = {
        "Get": apiserver_pb2.GetRequest, "Delete": apiserver_pb2.DeleteRequest,
        "List": apiserver_pb2.ListRequest, "Watch": apiserver_pb2.WatchRequest,
    }[method]
    with pytest.raises(errors.Invalid, match=message):
        if method == "Watch":
            await api.next_events(api.stub.Watch(request_type(**fields)), 1)
        else:
            await api.call(method, request_type(**fields))


def _bad_pod(**changes: Any) -> objects_pb2.Pod:
    pod = make_pod("web")
    for path, value in changes.items():
        target: Any = pod
        *parents, leaf = path.split("__")
        for parent in parents:
            target = getattr(target, parent)
        setattr(target, leaf, value)
    return pod


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (make_pod("Web"),
         r'^Pod "Web" is invalid: metadata.name: Invalid value: "Web": a lowercase RFC 1123'),
        (make_pod(""),
         r'^Pod "" is invalid: metadata.name: Required value: name or generateName is required'),
        (_bad_pod(metadata__namespace="Bad_NS"), r'^Pod "web" is invalid: metadata.namespace: Invalid value'),
        (_bad_pod(kind="Node"),
         r'^Pod "web" is invalid: kind: Unsupported value: "Node": supported values: "Pod"'),
        (_bad_pod(api_version="v2"), r'^Pod "web" is invalid: apiVersion: Unsupported value: "v2"'),
        (_bad_pod(metadata__resource_version="12"),
         "^resourceVersion should not be set on objects to be created$"),
    ],
    ids=["uppercase-name", "no-name", "bad-namespace", "wrong-kind", "wrong-api-version", "resource-version"],
)
async def test_bad_objects_are_invalid(api: Harness, obj: Any, message: str) -> None:
    with pytest.raises(errors.Invalid, match=message):
        await api.create(obj)


async def test_bad_labels_and_quantities_name_the_field(api: Harness) -> None:
    pod = make_pod("web")
    pod.metadata.labels["bad key!"] = "v"
    pod.spec.containers[0].resources.requests["cpu"] = "-1"
    pod.spec.containers[0].resources.requests["memory"] = "lots"
    with pytest.raises(errors.Invalid) as caught:
        await api.create(pod)
    message = caught.value.message
    assert message.startswith('Pod "web" is invalid: [')
    assert 'metadata.labels: Invalid value: "bad key!"' in message
    assert 'spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than' in message
    assert "spec.containers[0].resources.requests[memory]" in message
    with pytest.raises(errors.NotFound):
        await api.get("Pod", "web")  # nothing half-applied


async def test_objects_above_the_size_limit_are_invalid(tmp_path: Path) -> None:
    async with Harness(tmp_path) as harness:
        pod = make_pod("big")
        pod.metadata.annotations["blob"] = "x" * 200_000
        for i in range(8):
            pod.spec.containers.add(name=f"c{i}", image="busybox", args=["y" * 200_000])
        size = len(pod.SerializeToString())
        assert size > 1536 * 1024
        with pytest.raises(
            errors.Invalid,
            match=r'^Pod "big" is invalid: the object is \d+ bytes serialized, more than the limit of '
            r"1572864 bytes \(1.5 MiB: etcd's default request size limit\)$",
        ):
            await harness.create(pod)
        with pytest.raises(errors.NotFound):
            await harness.get("Pod", "big")
        # Growing a stored object past the limit is refused the same way.
        event = objects_pb2.Event(metadata=objects_pb2.ObjectMeta(name="grows"), reason="Test", type="Normal")
        event.involved_object.kind = "Pod"
        event.involved_object.name = "web"
        small = await harness.create(event)
        small.message = "z" * 1_600_000
        with pytest.raises(errors.Invalid, match=r'^Event "grows" is invalid: the object is'):
            await harness.update(small)
        assert (await harness.get("Event", "grows")).message == ""
        # Past gRPC's default 4 MiB message limit the answer is still ours.
        event.metadata.name = "huge"
        event.message = "z" * 5_000_000
        with pytest.raises(errors.Invalid, match=r'^Event "huge" is invalid: the object is 5\d{6} bytes'):
            await harness.create(event)
