"""Event handlers: every pod and node transition reaches the cache and the queue as kube-scheduler's
eventhandlers.go routes it. The queue is a recording fake; the cache is the real one."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from cluster.api import objects_pb2
from cluster.api.selectors import LabelSelector
from scheduler.cache import Cache, Snapshot
from scheduler.clock import FakeClock
from scheduler.eventhandlers import (
    ASSIGNED_POD_DELETE,
    ASSIGNED_POD_OTHER_UPDATE,
    ASSIGNED_POD_SCALE_DOWN,
    ASSIGNED_POD_TOLERATIONS_CHANGE,
    NODE_ADD,
    NODE_ALLOCATABLE_CHANGE,
    NODE_CONDITION_CHANGE,
    NODE_DELETE,
    NODE_LABEL_CHANGE,
    NODE_SPEC_UNSCHEDULABLE_CHANGE,
    NODE_TAINT_CHANGE,
    UNSCHEDULED_POD_GENERATED_RESOURCE_CLAIM,
    EventHandlers,
    bound_pod_update_is_relevant,
)
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    DRAManager,
    EventResource,
    NamespaceIndex,
    PodInfo,
    WorkloadIndex,
)
from scheduler.framework.storage import StorageObjects
from tests.builders import ROOMY, node, pod

OURS = "default-scheduler"


class RecordingQueue:
    """Records each call as (method, pod key or event label, ...)."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def add(self, pod: objects_pb2.Pod) -> None:
        self.calls.append(("add", pod.metadata.name))

    def update(self, old: objects_pb2.Pod, new: objects_pb2.Pod) -> None:
        self.calls.append(("update", new.metadata.name))

    def delete(self, pod: objects_pb2.Pod) -> None:
        self.calls.append(("delete", pod.metadata.name))

    def assigned_pod_added(self, pod: objects_pb2.Pod) -> None:
        self.calls.append(("assigned_pod_added", pod.metadata.name))

    def assigned_pod_updated(self, old: objects_pb2.Pod, new: objects_pb2.Pod) -> None:
        self.calls.append(("assigned_pod_updated", new.metadata.name))

    def move_all_to_active_or_backoff(self, event: ClusterEvent, old: Any, new: Any) -> None:
        self.calls.append(("move", event, _name(old), _name(new)))

    def move_to_active_or_backoff(self, keys: Any, event: ClusterEvent, old: Any, new: Any) -> None:
        self.calls.append(("move_keys", list(keys), event.label))


def _name(obj: Any) -> str | None:
    return None if obj is None else obj.metadata.name


def make_pod(
    name: str = "p",
    node_name: str = "",
    *,
    scheduler: str = OURS,
    cpu: str = "1",
    labels: dict[str, str] | None = None,
    nominated: str = "",
    terminating: bool = False,
    tolerations: int = 0,
    annotations: dict[str, str] | None = None,
) -> objects_pb2.Pod:
    spec = {"tolerations": [{"key": f"k{i}", "operator": "Exists"} for i in range(tolerations)]}
    return pod(name, spec=spec, labels=labels, annotations=annotations, node_name=node_name,
               scheduler_name=scheduler, cpu=cpu, nominated=nominated,
               deletion_timestamp=1 if terminating else None)


def make_node(
    name: str = "n1",
    *,
    cpu: str = "4",
    labels: dict[str, str] | None = None,
    taints: tuple[str, ...] = (),
    unschedulable: bool = False,
    ready: str = "True",
    heartbeat: int = 0,
    annotations: dict[str, str] | None = None,
) -> objects_pb2.Node:
    result = node(name, labels=labels, annotations=annotations, allocatable={**ROOMY, "cpu": cpu},
                  taints=[{"key": key, "effect": "NoSchedule"} for key in taints],
                  unschedulable=unschedulable, ready=ready)
    result.status.conditions[0].last_heartbeat_time.seconds = heartbeat
    return result


class World:
    def __init__(self) -> None:
        self.cache = Cache(clock=FakeClock())
        self.queue = RecordingQueue()
        self.bound: list[str] = []
        self.handlers = EventHandlers(self.cache, self.queue, {OURS, "second-scheduler"},
                                      on_pod_bound=lambda pod: self.bound.append(pod.metadata.name))
        self.pods = self.handlers.pod_handlers()
        self.nodes = self.handlers.node_handlers()
        self.cache.add_node(make_node("n1"))
        self.cache.add_node(make_node("n2"))

    def cached_pods(self) -> dict[str, list[str]]:
        snapshot = Snapshot()
        self.cache.update_snapshot(snapshot)
        return {info.name: sorted(key.split("/")[1] for key in info.pods) for info in snapshot.list()}


@pytest.fixture
def world() -> World:
    return World()


# ------------------------------------------------------------------------------------ pod events

Step = Callable[[World], None]


def add(pod: objects_pb2.Pod) -> Step:
    return lambda w: w.pods["on_add"](pod)


def update(old: objects_pb2.Pod, new: objects_pb2.Pod) -> Step:
    return lambda w: w.pods["on_update"](old, new)


def delete(pod: objects_pb2.Pod) -> Step:
    return lambda w: w.pods["on_delete"](pod)


def assume(pod: objects_pb2.Pod) -> Step:
    return lambda w: w.cache.assume_pod(PodInfo(pod))


def bound_in_cache(pod: objects_pb2.Pod) -> Step:
    return lambda w: w.cache.add_pod(pod)


@pytest.mark.parametrize(
    ("setup", "event", "calls", "cached", "bound"),
    [
        pytest.param([], add(make_pod()), [("add", "p")], {}, [], id="add-pending-ours"),
        pytest.param([], add(make_pod(scheduler="second-scheduler")), [("add", "p")], {}, [],
                     id="add-pending-our-second-profile"),
        pytest.param([], add(make_pod(scheduler="other")), [], {}, [],
                     id="add-pending-other-scheduler-ignored"),
        pytest.param([], add(make_pod(terminating=True)), [], {}, [], id="add-pending-terminating-ignored"),
        pytest.param([], add(make_pod(node_name="n1")), [("assigned_pod_added", "p")], {"n1": ["p"]}, ["p"],
                     id="add-bound"),
        pytest.param([], add(make_pod(node_name="n1", scheduler="other")), [("assigned_pod_added", "p")],
                     {"n1": ["p"]}, ["p"], id="add-bound-other-scheduler-still-cached"),
        pytest.param([], update(make_pod(), make_pod(labels={"a": "b"})), [("update", "p")], {}, [],
                     id="update-pending"),
        pytest.param([], update(make_pod(scheduler="other"), make_pod(scheduler="other", labels={"a": "b"})),
                     [], {}, [], id="update-pending-other-scheduler-ignored"),
        pytest.param([], update(make_pod(), make_pod(node_name="n2")),
                     [("assigned_pod_added", "p"), ("delete", "p")], {"n2": ["p"]}, ["p"],
                     id="update-that-binds-leaves-the-queue"),
        pytest.param([assume(make_pod(node_name="n1"))], update(make_pod(), make_pod(node_name="n1")),
                     [("assigned_pod_added", "p"), ("delete", "p")], {"n1": ["p"]}, ["p"],
                     id="update-that-binds-confirms-the-assumed-pod"),
        pytest.param([assume(make_pod(node_name="n1"))], update(make_pod(), make_pod(node_name="n2")),
                     [("assigned_pod_added", "p"), ("delete", "p")], {"n2": ["p"]}, ["p"],
                     id="bound-elsewhere-than-assumed"),
        pytest.param([], update(make_pod(scheduler="other"), make_pod(scheduler="other", node_name="n1")),
                     [("assigned_pod_added", "p")], {"n1": ["p"]}, ["p"],
                     id="update-that-binds-other-schedulers-pod"),
        pytest.param([], update(make_pod(), make_pod(terminating=True)), [("delete", "p")], {}, [],
                     id="pending-pod-starts-terminating-leaves-the-queue"),
        pytest.param([], update(make_pod(nominated="n1"), make_pod(nominated="n2")),
                     [("update", "p"), ("move", ASSIGNED_POD_DELETE, "p", None)], {}, [],
                     id="nominated-node-changed-frees-the-old-one"),
        pytest.param([], update(make_pod(), make_pod(nominated="n2")), [("update", "p")], {}, [],
                     id="first-nomination-frees-nothing"),
        pytest.param([assume(make_pod(node_name="n1"))], update(make_pod(), make_pod(terminating=True)),
                     [("move", ASSIGNED_POD_DELETE, "p", None)], {"n1": []}, [],
                     id="assumed-pod-starts-terminating-is-forgotten"),
        pytest.param([], delete(make_pod()), [("delete", "p")], {}, [], id="delete-pending"),
        pytest.param([], delete(make_pod(scheduler="other")), [], {}, [],
                     id="delete-pending-other-scheduler"),
        pytest.param([], delete(make_pod(nominated="n1")),
                     [("delete", "p"), ("move", ASSIGNED_POD_DELETE, "p", None)], {}, [],
                     id="delete-nominated-pending-frees-its-node"),
        pytest.param([assume(make_pod(node_name="n1"))], delete(make_pod()),
                     [("delete", "p"), ("move", ASSIGNED_POD_DELETE, "p", None)], {"n1": []}, [],
                     id="delete-assumed-pod-forgets-it"),
        pytest.param([bound_in_cache(make_pod(node_name="n1"))], delete(make_pod(node_name="n1")),
                     [("move", ASSIGNED_POD_DELETE, "p", None)], {"n1": []}, [], id="delete-bound"),
        pytest.param([bound_in_cache(make_pod(node_name="n1", scheduler="other"))],
                     delete(make_pod(node_name="n1", scheduler="other")),
                     [("move", ASSIGNED_POD_DELETE, "p", None)], {"n1": []}, [],
                     id="delete-bound-other-scheduler"),
    ],
)
def test_pod_events(
    world: World, setup: list[Step], event: Step, calls: list[tuple[Any, ...]],
    cached: dict[str, list[str]], bound: list[str],
) -> None:
    for step in setup:
        step(world)
    event(world)
    assert world.queue.calls == calls
    assert world.cached_pods() == {"n1": [], "n2": [], **cached}
    assert world.bound == bound
    assert not world.cache.is_assumed("default/p")


def test_update_of_an_assumed_pod_is_not_queued_again(world: World) -> None:
    # Its binding is in flight: queueing it would schedule it a second time.
    world.cache.assume_pod(PodInfo(make_pod(node_name="n1")))
    world.pods["on_update"](make_pod(), make_pod(labels={"x": "y"}))
    assert world.queue.calls == []
    assert world.cache.is_assumed("default/p")
    assert world.cached_pods()["n1"] == ["p"]


@pytest.mark.parametrize(
    ("new", "calls"),
    [
        pytest.param(make_pod(node_name="n1", labels={"app": "web", "v": "2"}),
                     [("assigned_pod_updated", "p")], id="labels"),
        pytest.param(make_pod(node_name="n1", labels={"app": "web"}, cpu="500m"),
                     [("move", ASSIGNED_POD_SCALE_DOWN, "p", "p")], id="scale-down"),
        pytest.param(make_pod(node_name="n1", labels={"app": "web"}, cpu="2"),
                     [("move", ASSIGNED_POD_OTHER_UPDATE, "p", "p")], id="scale-up-is-no-scale-down"),
        pytest.param(make_pod(node_name="n1", labels={"app": "web"}, tolerations=1),
                     [("move", ASSIGNED_POD_TOLERATIONS_CHANGE, "p", "p")], id="tolerations"),
        pytest.param(make_pod(node_name="n1", labels={"app": "web"}, annotations={"x": "y"}),
                     [("move", ASSIGNED_POD_OTHER_UPDATE, "p", "p")], id="anything-else"),
        pytest.param(make_pod(node_name="n1", labels={"app": "db"}, cpu="100m"),
                     [("assigned_pod_updated", "p"), ("move", ASSIGNED_POD_SCALE_DOWN, "p", "p")],
                     id="labels-and-scale-down"),
    ],
)
def test_bound_pod_updates(world: World, new: objects_pb2.Pod, calls: list[tuple[Any, ...]]) -> None:
    old = make_pod(node_name="n1", labels={"app": "web"})
    world.cache.add_pod(old)
    world.pods["on_update"](old, new)
    assert world.queue.calls == calls
    assert world.cache.get_pod("default/p") is new


def _bound_variant(change: str) -> objects_pb2.Pod:
    new = make_pod(node_name="n1", labels={"app": "web"})
    new.metadata.resource_version = "2"
    if change == "phase":
        new.status.phase = "Running"
    elif change == "conditions":
        new.status.conditions.add(type="Ready", status="True")
    elif change == "addresses":
        new.status.host_ip, new.status.pod_ip = "10.0.0.1", "10.1.0.7"
    elif change == "managed-fields":
        new.metadata.managed_fields.add(manager="kubelet", operation="Update")
    elif change == "start-time":
        new.status.start_time.seconds = 1000
    elif change == "claim-statuses":
        new.status.resource_claim_statuses.add(name="gpu", resource_claim_name="p-gpu")
    elif change == "extended-claim-status":
        new.status.extended_resource_claim_status.resource_claim_name = "p-extended"
    elif change == "labels":
        new.metadata.labels["v"] = "2"
    elif change == "annotations":
        new.metadata.annotations["x"] = "y"
    elif change == "spec":
        new.spec.tolerations.add(key="k", operator="Exists")
    elif change == "deletion":
        new.metadata.deletion_timestamp.seconds = 1
    return new


BOUND_POD_CHANGES = [
    ("resource-version", False), ("phase", False), ("conditions", False), ("addresses", False),
    ("managed-fields", False), ("start-time", True), ("claim-statuses", True),
    ("extended-claim-status", True), ("labels", True),
    ("annotations", True), ("spec", True), ("deletion", True),
]


@pytest.mark.parametrize(("change", "relevant"), BOUND_POD_CHANGES)
def test_bound_pod_update_relevance(change: str, relevant: bool) -> None:
    old = make_pod(node_name="n1", labels={"app": "web"})
    old.metadata.resource_version = "1"
    assert bound_pod_update_is_relevant(old, _bound_variant(change)) is relevant


@pytest.mark.parametrize(("change", "relevant"), BOUND_POD_CHANGES)
def test_irrelevant_bound_pod_updates_are_skipped(world: World, change: str, relevant: bool) -> None:
    old = make_pod(node_name="n1", labels={"app": "web"})
    old.metadata.resource_version = "1"
    world.cache.add_pod(old)
    new = _bound_variant(change)
    world.pods["on_update"](old, new)
    assert (world.cache.get_pod("default/p") is new) is relevant
    assert bool(world.queue.calls) is relevant


def test_a_bound_pod_that_starts_terminating_stays_in_the_cache(world: World) -> None:
    old = make_pod(node_name="n1")
    world.cache.add_pod(old)
    world.pods["on_update"](old, make_pod(node_name="n1", terminating=True))
    assert world.cached_pods()["n1"] == ["p"]
    assert world.queue.calls == [("move", ASSIGNED_POD_OTHER_UPDATE, "p", "p")]


def test_cache_errors_are_logged_not_raised(world: World, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="scheduler.eventhandlers"):
        world.pods["on_delete"](make_pod("never-seen", node_name="n1"))
        world.pods["on_add"](make_pod("twice", node_name="n1"))
        world.pods["on_add"](make_pod("twice", node_name="n1"))
    assert "remove_pod failed: pod default/never-seen is not in the scheduler cache" in caplog.text
    assert "add_pod failed: pod default/twice was already added" in caplog.text
    # The room freed by the deletion is announced all the same; a pod is reported bound only once.
    assert world.queue.calls[0] == ("move", ASSIGNED_POD_DELETE, "never-seen", None)
    assert world.bound == ["twice"]


# ----------------------------------------------------------------------------------- node events


def test_node_add_caches_it_and_moves(world: World) -> None:
    world.nodes["on_add"](make_node("n3"))
    assert world.queue.calls == [("move", NODE_ADD, None, "n3")]
    assert world.cache.node_count() == 3


@pytest.mark.parametrize(
    ("old", "new", "events"),
    [
        pytest.param(make_node(), make_node(cpu="8"), [NODE_ALLOCATABLE_CHANGE], id="allocatable"),
        pytest.param(make_node(cpu="1"), make_node(cpu="1000m"), [], id="same-allocatable-other-spelling"),
        pytest.param(make_node(), make_node(labels={"zone": "a"}), [NODE_LABEL_CHANGE], id="labels"),
        pytest.param(make_node(taints=("a",)), make_node(), [NODE_TAINT_CHANGE], id="taint-removed"),
        pytest.param(make_node(), make_node(taints=("a",)), [NODE_TAINT_CHANGE], id="taint-added"),
        pytest.param(make_node(ready="False"), make_node(ready="True"), [NODE_CONDITION_CHANGE],
                     id="condition-status"),
        pytest.param(make_node(heartbeat=1), make_node(heartbeat=2), [], id="heartbeat-only"),
        pytest.param(make_node(unschedulable=True), make_node(), [NODE_SPEC_UNSCHEDULABLE_CHANGE],
                     id="uncordoned"),
        pytest.param(make_node(), make_node(unschedulable=True), [], id="cordoned-helps-nobody"),
        pytest.param(make_node(), make_node(annotations={"a": "b"}), [], id="annotations-only"),
        pytest.param(make_node(unschedulable=True, cpu="2"), make_node(cpu="3", labels={"x": "y"}),
                     [NODE_SPEC_UNSCHEDULABLE_CHANGE, NODE_ALLOCATABLE_CHANGE, NODE_LABEL_CHANGE],
                     id="several-changes-one-move-each"),
    ],
)
def test_node_updates_move_per_relevant_change(
    world: World, old: objects_pb2.Node, new: objects_pb2.Node, events: list[ClusterEvent]
) -> None:
    world.nodes["on_update"](old, new)
    assert world.queue.calls == [("move", event, "n1", "n1") for event in events]
    snapshot = Snapshot()
    world.cache.update_snapshot(snapshot)
    assert snapshot.get("n1").node is new


def test_uncordon_event_matches_both_unschedulable_and_taint_registrations() -> None:
    for action in (ActionType.UPDATE_NODE_UNSCHEDULABLE, ActionType.UPDATE_NODE_TAINT):
        assert NODE_SPEC_UNSCHEDULABLE_CHANGE.matches(ClusterEvent(EventResource.NODE, action))
    label_change = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL)
    assert not NODE_SPEC_UNSCHEDULABLE_CHANGE.matches(label_change)


def test_node_delete_moves_then_removes(world: World) -> None:
    world.nodes["on_delete"](make_node("n2"))
    assert world.queue.calls == [("move", NODE_DELETE, "n2", None)]
    assert world.cache.node_count() == 1


def test_delete_of_an_unknown_node_is_logged(world: World, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="scheduler.eventhandlers"):
        world.nodes["on_delete"](make_node("n9"))
    assert "remove_node failed: node n9 is not in the scheduler cache" in caplog.text


# ------------------------------------------------------------------------ PDBs, priority classes


@pytest.mark.parametrize(
    ("handlers", "resource", "obj"),
    [
        pytest.param("pod_disruption_budget_handlers", EventResource.POD_DISRUPTION_BUDGET,
                     objects_pb2.PodDisruptionBudget, id="pdb"),
        pytest.param("priority_class_handlers", EventResource.PRIORITY_CLASS, objects_pb2.PriorityClass,
                     id="priority-class"),
    ],
)
def test_other_kinds_only_requeue(world: World, handlers: str, resource: EventResource, obj: type) -> None:
    old, new = obj(), obj()
    old.metadata.name = new.metadata.name = "x"
    h = getattr(world.handlers, handlers)()
    h["on_add"](new)
    h["on_update"](old, new)
    h["on_delete"](old)
    assert [(call[1].resource, call[1].action, call[2], call[3]) for call in world.queue.calls] == [
        (resource, ActionType.ADD, None, "x"),
        (resource, ActionType.UPDATE, "x", "x"),
        (resource, ActionType.DELETE, "x", None),
    ]


def test_namespaces_update_the_labels_before_requeueing() -> None:
    """A pod requeued by a Namespace event must be judged by the namespace's new labels: the index is
    updated first, then the queue moves pods."""
    namespaces = NamespaceIndex()
    seen: list[tuple[str, Any]] = []

    class Queue(RecordingQueue):
        def move_all_to_active_or_backoff(self, event: ClusterEvent, old: Any, new: Any) -> None:
            seen.append((event.label, namespaces.labels("team-a")))

    handlers = EventHandlers(Cache(clock=FakeClock()), Queue(), {OURS}, namespaces=namespaces)
    h = handlers.namespace_handlers()
    old, new = objects_pb2.Namespace(), objects_pb2.Namespace()
    old.metadata.name = new.metadata.name = "team-a"
    old.metadata.labels["tier"] = "silver"
    new.metadata.labels["tier"] = "gold"
    h["on_add"](old)
    h["on_update"](old, new)
    h["on_delete"](new)
    assert seen == [("NamespaceAdd", {"tier": "silver"}), ("NamespaceUpdate", {"tier": "gold"}),
                    ("NamespaceDelete", None)]


def test_services_and_controllers_keep_the_workload_index_and_move_no_pod() -> None:
    """As in kube-scheduler, no plugin registers Service or controller events: the handlers only keep
    the selectors PodTopologySpread's default constraints read."""
    workloads = WorkloadIndex()
    queue = RecordingQueue()
    handlers = EventHandlers(Cache(clock=FakeClock()), queue, {OURS}, workloads=workloads)
    services, controllers = handlers.service_handlers(), handlers.controller_handlers()
    svc, rs = objects_pb2.Service(), objects_pb2.ReplicaSet()
    svc.metadata.name, svc.metadata.namespace = "web", "default"
    svc.spec.selector["app"] = "web"
    rs.metadata.name, rs.metadata.namespace = "api", "default"
    rs.spec.selector.match_labels["tier"] = "api"
    target = pod("p", labels={"app": "web"})
    target.metadata.owner_references.add(api_version="apps/v1", kind="ReplicaSet", name="api", uid="u",
                                         controller=True)
    services["on_add"](svc)
    controllers["on_add"](rs)
    assert workloads.default_selector(target) == LabelSelector.parse("app=web,tier=api")
    changed = objects_pb2.Service()
    changed.CopyFrom(svc)
    changed.spec.selector["app"] = "other"
    services["on_update"](svc, changed)
    controllers["on_delete"](rs)
    assert workloads.default_selector(target).empty
    assert queue.calls == []


def test_dra_kinds_feed_the_manager_before_requeueing() -> None:
    """A pod requeued by a ResourceClaim, ResourceSlice or DeviceClass event must be judged by the new
    object: the DRA manager has it before the queue moves pods."""
    manager = DRAManager()
    seen: list[tuple[str, bool]] = []

    class Queue(RecordingQueue):
        def move_all_to_active_or_backoff(self, event: ClusterEvent, old: Any, new: Any) -> None:
            known = {
                EventResource.RESOURCE_CLAIM: manager.resource_claims.get("default", "c") is not None,
                EventResource.RESOURCE_SLICE: bool(manager.resource_slices.list()),
                EventResource.DEVICE_CLASS: manager.device_classes.get("gpu") is not None,
            }[event.resource]
            seen.append((event.label, known))

        def move_to_active_or_backoff(self, keys: Any, event: ClusterEvent, old: Any, new: Any) -> None:
            # A claim event that frees no devices goes to the claim's users alone.
            self.move_all_to_active_or_backoff(event, old, new)

    handlers = EventHandlers(Cache(clock=FakeClock()), Queue(), {OURS}, dra_manager=manager)
    claim, resource_slice, device_class = (
        objects_pb2.ResourceClaim(), objects_pb2.ResourceSlice(), objects_pb2.DeviceClass())
    claim.metadata.name, claim.metadata.namespace = "c", "default"
    resource_slice.metadata.name = "node-1-gpu"
    device_class.metadata.name = "gpu"
    for h, obj in ((handlers.resource_claim_handlers(), claim),
                   (handlers.resource_slice_handlers(), resource_slice),
                   (handlers.device_class_handlers(), device_class)):
        h["on_add"](obj)
        h["on_update"](obj, obj)
        h["on_delete"](obj)
    assert seen == [
        ("ResourceClaimAdd", True), ("ResourceClaimUpdate", True), ("ResourceClaimDelete", False),
        ("ResourceSliceAdd", True), ("ResourceSliceUpdate", True), ("ResourceSliceDelete", False),
        ("DeviceClassAdd", True), ("DeviceClassUpdate", True), ("DeviceClassDelete", False),
    ]


def test_storage_kinds_feed_the_storage_objects_before_requeueing() -> None:
    """A pod requeued by a storage event must be judged by the new object: the storage objects have it
    before the queue moves pods, and lose it on delete."""
    storage = StorageObjects()
    seen: list[tuple[str, bool]] = []
    objs = (objects_pb2.PersistentVolume(), objects_pb2.PersistentVolumeClaim(), objects_pb2.StorageClass(),
            objects_pb2.CSINode(), objects_pb2.CSIDriver(), objects_pb2.CSIStorageCapacity())
    claim, capacity = objs[1], objs[5]
    for obj in objs:
        obj.metadata.name = "x"
    claim.metadata.namespace = capacity.metadata.namespace = "default"
    known = {
        EventResource.PERSISTENT_VOLUME: lambda: storage.persistent_volume("x") is not None,
        EventResource.PERSISTENT_VOLUME_CLAIM:
            lambda: storage.persistent_volume_claim("default", "x") is not None,
        EventResource.STORAGE_CLASS: lambda: storage.storage_class("x") is not None,
        EventResource.CSI_NODE: lambda: storage.csi_node("x") is not None,
        EventResource.CSI_DRIVER: lambda: storage.csi_driver("x") is not None,
        EventResource.CSI_STORAGE_CAPACITY: lambda: list(storage.csi_storage_capacities()) == [capacity],
    }

    class Queue(RecordingQueue):
        def move_all_to_active_or_backoff(self, event: ClusterEvent, old: Any, new: Any) -> None:
            seen.append((event.label, known[event.resource]()))

    handlers = EventHandlers(Cache(clock=FakeClock()), Queue(), {OURS}, storage=storage)
    informers = ("persistentvolumes", "persistentvolumeclaims", "storageclasses", "csinodes", "csidrivers",
                 "csistoragecapacities")
    for informer, entry in zip(informers, objs, strict=True):
        h = handlers.storage_handlers(informer)
        h["on_add"](entry)
        h["on_update"](entry, entry)
        h["on_delete"](entry)
    assert seen == [
        (f"{kind}{action}", action != "Delete")
        for kind in ("PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver",
                     "CSIStorageCapacity")
        for action in ("Add", "Update", "Delete")
    ]


def test_a_generated_claim_recorded_in_a_pending_pods_status_asks_the_pod_again(world: World) -> None:
    old = make_pod("p")
    new = make_pod("p")
    new.status.resource_claim_statuses.add(name="gpu", resource_claim_name="p-gpu-x1")
    world.pods["on_update"](old, new)
    assert world.queue.calls == [
        ("update", "p"), ("move_keys", ["default/p"], UNSCHEDULED_POD_GENERATED_RESOURCE_CLAIM.label)]
    world.queue.calls.clear()
    world.pods["on_update"](new, new)
    assert world.queue.calls == [("update", "p")]
