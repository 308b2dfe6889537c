"""Bind (pods/binding) through the real service, and at the registry for the node-deleted race."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cluster.api import apiserver_pb2, errors, objects_pb2, timeutil
from cluster.api.kinds import NODE, POD
from cluster.apiserver.binding import bind
from cluster.apiserver.storage import Storage
from store.base import KeyValue
from store.sqlite import SqliteStore
from tests.unit.test_apiserver_server import Harness, api, make_node, make_pod

__all__ = ["api"]


async def test_bind_sets_the_node_and_reports_the_pod_running(api: Harness) -> None:
    await api.create(make_node("n1"))
    created = await api.create(make_pod("web"))
    bound = await api.bind("web", "n1", annotations={"scheduler": "default"})
    assert bound.spec.node_name == "n1"
    assert bound.status.phase == "Running"
    assert bound.status.start_time.seconds > 0
    assert [(c.type, c.status) for c in bound.status.conditions] == [("PodScheduled", "True")]
    assert bound.metadata.annotations["scheduler"] == "default"
    assert int(bound.metadata.resource_version) > int(created.metadata.resource_version)
    assert await api.get("Pod", "web") == bound


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
async def test_binding_a_finished_pod_does_not_run_it_again(api: Harness, phase: str) -> None:
    # A kubelet does not start a pod that has finished: the bind places it, its phase stays.
    await api.create(make_node("n1"))
    created = await api.create(make_pod("done"))
    created.status.phase = phase
    await api.update_status(created)
    bound = await api.bind("done", "n1")
    assert (bound.spec.node_name, bound.status.phase) == ("n1", phase)
    assert [(c.type, c.status) for c in bound.status.conditions] == [("PodScheduled", "True")]


async def test_bind_of_a_bound_pod_conflicts(api: Harness) -> None:
    await api.create(make_node("n1"))
    await api.create(make_node("n2"))
    await api.create(make_pod("web"))
    await api.bind("web", "n1")
    with pytest.raises(
        errors.Conflict,
        match=r'^Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node '
        r'"n1"$',
    ):
        await api.bind("web", "n2")
    assert (await api.get("Pod", "web")).spec.node_name == "n1"


async def test_bind_to_an_unknown_node_is_not_found(api: Harness) -> None:
    await api.create(make_pod("web"))
    with pytest.raises(errors.NotFound, match=r'^nodes "n9" not found$'):
        await api.bind("web", "n9")
    assert (await api.get("Pod", "web")).spec.node_name == ""


async def test_bind_of_an_unknown_pod_is_not_found(api: Harness) -> None:
    await api.create(make_node("n1"))
    with pytest.raises(errors.NotFound, match=r'^pods "ghost" not found$'):
        await api.bind("ghost", "n1")


async def test_bind_of_a_terminating_pod_conflicts(api: Harness) -> None:
    await api.create(make_node("n1"))
    await api.create(make_node("n2"))
    # Only a bound pod gets a grace period; create it on n1, mark it, then try to bind it elsewhere.
    await api.create(make_pod("web", node_name="n1"))
    await api.delete("Pod", "web", grace=30)
    with pytest.raises(
        errors.Conflict,
        match=r'^Operation cannot be fulfilled on pods/binding "web": pod web is being deleted, cannot be '
        r"assigned to a host$",
    ):
        await api.bind("web", "n2")


async def test_bind_preconditions(api: Harness) -> None:
    await api.create(make_node("n1"))
    created = await api.create(make_pod("web"))
    with pytest.raises(
        errors.Conflict,
        match=rf'^Operation cannot be fulfilled on pods "web": Precondition failed: UID in precondition: '
        rf"other, UID in object meta: {created.metadata.uid}$",
    ):
        await api.bind("web", "n1", uid="other")
    with pytest.raises(errors.Conflict, match=r"Precondition failed: ResourceVersion in precondition: 1, "):
        await api.bind("web", "n1", resource_version="1")
    bound = await api.bind(
        "web", "n1", uid=created.metadata.uid, resource_version=created.metadata.resource_version
    )
    assert bound.spec.node_name == "n1"


@pytest.mark.parametrize(
    ("binding", "message"),
    [
        (objects_pb2.Binding(target=objects_pb2.ObjectReference(name="n1")),
         r'^Binding "" is invalid: metadata.name: Required value$'),
        (objects_pb2.Binding(metadata=objects_pb2.ObjectMeta(name="web")),
         r'^Binding "web" is invalid: target.name: Required value$'),
        (objects_pb2.Binding(
            metadata=objects_pb2.ObjectMeta(name="web"),
            target=objects_pb2.ObjectReference(kind="Pod", name="x"),
        ),
         r'^Binding "web" is invalid: target.kind: Unsupported value: "Pod": supported values: "Node", '
         r'"<empty>"$'),
    ],
    ids=["no-pod-name", "no-target", "target-not-a-node"],
)
async def test_bad_bindings_are_invalid(api: Harness, binding: objects_pb2.Binding, message: str) -> None:
    with pytest.raises(errors.Invalid, match=message):
        await api.call("Bind", apiserver_pb2.BindRequest(binding=binding))


async def test_a_pod_created_on_a_node_is_running(api: Harness) -> None:
    pod = make_pod("web", node_name="n1")
    pod.status.start_time.seconds = 1_600_000_000  # a simulation scenario's start time is kept
    pod.status.phase = "Pending"
    created = await api.create(pod)
    assert created.status.phase == "Running"
    assert created.status.start_time.seconds == 1_600_000_000
    assert [(c.type, c.status) for c in created.status.conditions] == [("PodScheduled", "True")]
    fresh = await api.create(make_pod("fresh", node_name="n1"))
    assert abs(fresh.status.start_time.seconds - timeutil.now().seconds) <= 2


class NodeDeletedAfterRead:
    """A real SqliteStore that, right after the first time it hands out a node, deletes that node (as a
    concurrent client would between Bind's read and its write)."""

    def __init__(self, store: SqliteStore) -> None:
        self._store = store
        self.deleted = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def get(self, key: str) -> KeyValue | None:
        kv = await self._store.get(key)
        if kv is not None and key.startswith(NODE.key_prefix()) and not self.deleted:
            self.deleted = True
            result = await self._store.delete(key, None)
            assert result.succeeded
        return kv


async def test_a_node_deleted_during_bind_fails_it_through_the_guard(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path)
    try:
        setup = Storage(store)
        await setup.create(NODE, make_node("n1"))
        pod = make_pod("web", namespace="default")
        await setup.create(POD, pod)
        racing = NodeDeletedAfterRead(store)
        registry = Storage(racing)  # type: ignore[arg-type]
        binding = objects_pb2.Binding(
            metadata=objects_pb2.ObjectMeta(name="web", namespace="default"),
            target=objects_pb2.ObjectReference(name="n1"),
        )
        with pytest.raises(errors.NotFound, match=r'^nodes "n1" not found$'):
            await bind(registry, binding, timeutil.now())
        assert racing.deleted
        stored = await setup.require(POD, "default", "web")
        assert stored.spec.node_name == ""  # the write never happened
    finally:
        await store.close()


async def test_bind_ends_an_earlier_unschedulable_state_and_the_nomination(api: Harness) -> None:
    """A pod that waited (PodScheduled=False, Unschedulable) with a nominated node from preemption is,
    once bound, scheduled with no stale reason, and no longer nominated."""
    await api.create(make_node("n1"))
    pod = await api.create(make_pod("web"))
    pod.status.nominated_node_name = "n1"
    pod.status.conditions.add(
        type="PodScheduled", status="False", reason="Unschedulable", message="0/1 nodes are available"
    )
    await api.update_status(pod)
    bound = await api.bind("web", "n1")
    assert bound.status.nominated_node_name == ""
    [condition] = bound.status.conditions
    assert (condition.type, condition.status, condition.reason, condition.message) == (
        "PodScheduled", "True", "", ""
    )
