"""Which cluster events requeue which unschedulable pods (registered events, hints, fail open), the
assigned-pod moves, the nominator, and what counts as a scheduling-relevant pod update."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.api import objects_pb2
from scheduler.clock import FakeClock
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    PodInfo,
    QueuedPodInfo,
    QueueingHint,
)
from scheduler.queue import (
    ACTIVE,
    BACKOFF,
    UNSCHEDULABLE,
    UNSCHEDULABLE_TIMEOUT,
    SchedulingQueue,
    is_scheduling_relevant_update,
)
from scheduler.queue.requeue import RequeueRules, Strategy
from tests import builders

FIT = "NodeResourcesFit"
TAINTS = "TaintToleration"
AFFINITY = "InterPodAffinity"
SPREAD = "PodTopologySpread"
GATE = "SomePendingPlugin"

NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD, "NodeAdd")
NODE_TAINT = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT, "NodeTaintChange")
NODE_ALLOCATABLE = ClusterEvent(
    EventResource.NODE, ActionType.UPDATE_NODE_ALLOCATABLE, "NodeAllocatableChange"
)
POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")
FIT_ON_NODE_ADD = {FIT: [ClusterEventWithHint(NODE_ADD)]}


def queue_hint(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE


def skip_hint(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.SKIP


def broken_hint(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    raise RuntimeError("hint bug")


def big_node_hint(pod: objects_pb2.Pod, old: Any, new: objects_pb2.Node) -> QueueingHint:
    """Queue only for a node labelled big (the hint sees the event's objects)."""
    return QueueingHint.QUEUE if new.metadata.labels.get("size") == "big" else QueueingHint.SKIP


def make_pod(name: str, *, namespace: str = "default", labels: dict[str, str] | None = None,
             affinity_to: dict[str, str] | None = None, nominated: str = "", node: str = "",
             rv: str = "1") -> objects_pb2.Pod:
    spec: dict[str, Any] = {}
    if affinity_to:
        term = {"topologyKey": "zone", "labelSelector": {"matchLabels": affinity_to}}
        spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return builders.pod(name, namespace, spec=spec, resource_version=rv, labels=labels, image="nginx",
                        node_name=node, nominated=nominated)


def fifo_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    return a.timestamp < b.timestamp


async def unschedulable(queue: SchedulingQueue, pod: objects_pb2.Pod, *plugins: str,
                        pending: tuple[str, ...] = ()) -> QueuedPodInfo:
    """Queue ``pod``, pop it and fail it: rejected by ``plugins``, left pending by ``pending``."""
    queue.add(pod)
    qpi = await queue.pop()
    assert qpi.key == f"{pod.metadata.namespace}/{pod.metadata.name}"
    qpi.unschedulable_plugins = set(plugins)
    qpi.pending_plugins = set(pending)
    assert queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle) == UNSCHEDULABLE
    return qpi


def where(queue: SchedulingQueue, name: str, namespace: str = "default") -> str | None:
    found = queue.lookup(f"{namespace}/{name}")
    return found[0] if found else None


# ---------------------------------------------------------------------------------- cluster events


@pytest.mark.parametrize(
    ("registered", "rejected_by", "event", "new", "moves"),
    [
        ({FIT: [ClusterEventWithHint(NODE_ADD)]}, FIT, NODE_ADD, None, True),
        ({FIT: [ClusterEventWithHint(NODE_ADD, queue_hint)]}, FIT, NODE_ADD, None, True),
        ({FIT: [ClusterEventWithHint(NODE_ADD, skip_hint)]}, FIT, NODE_ADD, None, False),
        ({FIT: [ClusterEventWithHint(NODE_ADD, broken_hint)]}, FIT, NODE_ADD, None, True),
        ({FIT: [ClusterEventWithHint(NODE_ADD, big_node_hint)]},
         FIT, NODE_ADD, builders.node("n", labels={"size": "big"}), True),
        ({FIT: [ClusterEventWithHint(NODE_ADD, big_node_hint)]}, FIT, NODE_ADD, builders.node("n"), False),
        ({FIT: [ClusterEventWithHint(NODE_ADD)], TAINTS: [ClusterEventWithHint(NODE_TAINT)]},
         FIT, NODE_TAINT, None, False),
        ({FIT: [ClusterEventWithHint(NODE_ALLOCATABLE)]}, FIT, NODE_TAINT, None, False),
        ({FIT: [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.UPDATE))]},
         FIT, NODE_TAINT, None, True),
        ({FIT: [ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE))]},
         FIT, POD_DELETE, None, True),
        ({FIT: [ClusterEventWithHint(ClusterEvent(EventResource.WILDCARD, ActionType.ALL))]},
         FIT, NODE_TAINT, None, True),
        ({FIT: [ClusterEventWithHint(NODE_ADD, skip_hint), ClusterEventWithHint(NODE_ADD, queue_hint)]},
         FIT, NODE_ADD, None, True),
        ({}, FIT, UNSCHEDULABLE_TIMEOUT, None, True),
    ],
    ids=[
        "registered-no-hint", "hint-queue", "hint-skip-stays", "hint-raising-fails-open",
        "hint-sees-new-object-queue", "hint-sees-new-object-skip",
        "event-of-another-plugin-stays", "other-action-stays", "update-covers-taint-change",
        "pod-covers-assigned-pod", "wildcard-registration", "any-hint-queue-wins", "wildcard-event",
    ],
)
async def test_event_requeues_only_pods_whose_rejecting_plugin_cares(
    registered: dict[str, list[ClusterEventWithHint]], rejected_by: str, event: ClusterEvent,
    new: Any, moves: bool,
) -> None:
    clock = FakeClock()
    queue = SchedulingQueue(fifo_less, clock=clock, events_to_register=registered)
    await unschedulable(queue, make_pod("web"), rejected_by)
    assert queue.move_all_to_active_or_backoff(event, None, new) == int(moves)
    assert where(queue, "web") == (BACKOFF if moves else UNSCHEDULABLE)  # its 1 s backoff still runs
    clock.advance(1)
    queue.flush_backoff_completed()
    assert where(queue, "web") == (ACTIVE if moves else UNSCHEDULABLE)


async def test_moved_pod_whose_backoff_is_over_goes_straight_to_active() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(fifo_less, clock=clock, events_to_register=FIT_ON_NODE_ADD)
    await unschedulable(queue, make_pod("web"), FIT)
    clock.advance(1)
    queue.move_all_to_active_or_backoff(NODE_ADD)
    assert where(queue, "web") == ACTIVE


async def test_queue_from_a_pending_plugin_skips_the_backoff() -> None:
    queue = SchedulingQueue(fifo_less, clock=FakeClock(), events_to_register={
        GATE: [ClusterEventWithHint(NODE_ADD)], FIT: [ClusterEventWithHint(NODE_TAINT)],
    })
    await unschedulable(queue, make_pod("pending"), pending=(GATE,))
    await unschedulable(queue, make_pod("both"), FIT, pending=(GATE,))
    queue.move_all_to_active_or_backoff(NODE_TAINT)
    assert (where(queue, "pending"), where(queue, "both")) == (UNSCHEDULABLE, BACKOFF)
    queue.move_all_to_active_or_backoff(NODE_ADD)
    assert where(queue, "pending") == ACTIVE


async def test_event_no_plugin_registered_is_not_a_move_request() -> None:
    queue = SchedulingQueue(fifo_less, clock=FakeClock(), events_to_register=FIT_ON_NODE_ADD)
    await unschedulable(queue, make_pod("web"), FIT)
    queue.move_all_to_active_or_backoff(NODE_TAINT)
    assert queue.move_request_cycle == -1
    queue.move_all_to_active_or_backoff(NODE_ADD)
    assert queue.move_request_cycle == queue.scheduling_cycle == 1


@pytest.mark.parametrize(
    ("unschedulable_plugins", "pending_plugins", "event", "expected"),
    [
        (set(), set(), NODE_TAINT, Strategy.AFTER_BACKOFF),
        ({FIT}, set(), UNSCHEDULABLE_TIMEOUT, Strategy.AFTER_BACKOFF),
        ({FIT}, set(), NODE_ADD, Strategy.AFTER_BACKOFF),
        ({TAINTS}, set(), NODE_ADD, Strategy.SKIP),
        (set(), {GATE}, NODE_ADD, Strategy.IMMEDIATELY),
        ({FIT}, {GATE}, NODE_ADD, Strategy.IMMEDIATELY),
        ({FIT}, {GATE}, NODE_TAINT, Strategy.AFTER_BACKOFF),
    ],
    ids=["error-always", "wildcard-always", "rejector-cares", "rejector-does-not-care",
         "pending-plugin-queue", "pending-wins-over-unschedulable", "unschedulable-with-pending-skipping"],
)
def test_requeue_strategy(
    unschedulable_plugins: set[str], pending_plugins: set[str], event: ClusterEvent, expected: Strategy
) -> None:
    rules = RequeueRules({
        FIT: [ClusterEventWithHint(NODE_ADD), ClusterEventWithHint(NODE_TAINT)],
        GATE: [ClusterEventWithHint(NODE_ADD), ClusterEventWithHint(NODE_TAINT, skip_hint)],
    })
    qpi = QueuedPodInfo(PodInfo(make_pod("web")), timestamp=0, unschedulable_plugins=unschedulable_plugins,
                        pending_plugins=pending_plugins)
    hints = rules.for_event(event)
    assert hints is not None
    assert hints.strategy(qpi, None, None) is expected


# ------------------------------------------------------------------------------------ assigned pods


AFFINITY_EVENTS = {
    # InterPodAffinity: a pod landing, leaving or relabelled can satisfy a term.
    AFFINITY: [ClusterEventWithHint(ClusterEvent(
        EventResource.POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE))],
    SPREAD: [ClusterEventWithHint(ClusterEvent(
        EventResource.POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE))],
    # NodeResourcesFit: only a pod leaving frees resources.
    FIT: [ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE))],
}


async def test_assigned_pod_moves_pods_whose_affinity_it_satisfies() -> None:
    queue = SchedulingQueue(fifo_less, clock=FakeClock(), events_to_register=AFFINITY_EVENTS)
    await unschedulable(queue, make_pod("wants-db", affinity_to={"app": "db"}), AFFINITY)
    await unschedulable(queue, make_pod("wants-cache", affinity_to={"app": "cache"}), AFFINITY)
    await unschedulable(queue, make_pod("other-ns", namespace="prod", affinity_to={"app": "db"}), AFFINITY)
    await unschedulable(queue, make_pod("fit-only", affinity_to={"app": "db"}), FIT)
    await unschedulable(queue, make_pod("spread"), SPREAD)
    await unschedulable(queue, make_pod("spread-prod", namespace="prod"), SPREAD)
    assert queue.assigned_pod_added(make_pod("db-0", labels={"app": "db"}, node="node-a")) == 2
    assert [where(queue, name) for name in ("wants-db", "wants-cache", "fit-only", "spread")] == [
        BACKOFF, UNSCHEDULABLE, UNSCHEDULABLE, BACKOFF]
    assert where(queue, "other-ns", "prod") == UNSCHEDULABLE
    assert where(queue, "spread-prod", "prod") == UNSCHEDULABLE
    assert queue.move_request_cycle == queue.scheduling_cycle


async def test_assigned_pod_label_change_moves_pods_it_now_satisfies() -> None:
    queue = SchedulingQueue(fifo_less, clock=FakeClock(), events_to_register=AFFINITY_EVENTS)
    await unschedulable(queue, make_pod("wants-db", affinity_to={"app": "db"}), AFFINITY)
    old = make_pod("db-0", labels={"app": "tmp"}, node="node-a")
    status_only = make_pod("db-0", labels={"app": "tmp"}, node="node-a", rv="2")
    status_only.status.phase = "Running"
    assert queue.assigned_pod_updated(old, status_only) == 0
    assert queue.move_request_cycle == -1  # labels unchanged: nothing to look at
    relabelled = make_pod("db-0", labels={"app": "db"}, node="node-a", rv="3")
    assert queue.assigned_pod_updated(status_only, relabelled) == 1
    assert where(queue, "wants-db") == BACKOFF


async def test_assigned_pod_events_need_a_registered_plugin() -> None:
    queue = SchedulingQueue(fifo_less, clock=FakeClock(), events_to_register={FIT: AFFINITY_EVENTS[FIT]})
    await unschedulable(queue, make_pod("wants-db", affinity_to={"app": "db"}), FIT)
    assert queue.assigned_pod_added(make_pod("db-0", labels={"app": "db"}, node="node-a")) == 0
    assert queue.move_request_cycle == -1
    assert where(queue, "wants-db") == UNSCHEDULABLE


# ---------------------------------------------------------------------------------------- nominator


def names(pod_infos: list[PodInfo]) -> list[str]:
    return [p.pod.metadata.name for p in pod_infos]


async def test_pending_pods_nominated_in_their_status_are_tracked_per_node() -> None:
    queue = SchedulingQueue(fifo_less, clock=FakeClock())
    queue.add(make_pod("a", nominated="node-1"))
    queue.add(make_pod("b", nominated="node-1"))
    queue.add(make_pod("c", nominated="node-2"))
    queue.add(make_pod("d"))
    assert names(queue.nominated_pods_for_node("node-1")) == ["a", "b"]
    assert names(queue.nominated_pods_for_node("node-2")) == ["c"]
    assert queue.nominated_pods_for_node("node-3") == []
    # The nominator hands out the queue's own PodInfo (parsed once).
    assert queue.nominated_pods_for_node("node-2")[0] is queue.lookup("default/c")[1].pod_info
    # Filter asks once which nodes have nominated pods, rather than once per node.
    assert sorted(queue.nominated_node_names()) == ["node-1", "node-2"]
    queue.delete(make_pod("c", nominated="node-2"))
    assert sorted(queue.nominated_node_names()) == ["node-1"]


async def test_preemption_nomination_survives_updates_until_the_status_lands() -> None:
    queue = SchedulingQueue(fifo_less, clock=FakeClock())
    pod = make_pod("web")
    queue.add(pod)
    qpi = await queue.pop()
    queue.add_nominated_pod(qpi.pod_info, "node-1")
    assert names(queue.nominated_pods_for_node("node-1")) == ["web"]
    # An update without nominatedNodeName on either side (the status write is still in flight).
    relabelled = make_pod("web", labels={"x": "y"}, rv="2")
    queue.update(pod, relabelled)
    assert names(queue.nominated_pods_for_node("node-1")) == ["web"]
    assert queue.nominated_pods_for_node("node-1")[0].pod is relabelled
    # The status lands with another node: that one wins.
    landed = make_pod("web", labels={"x": "y"}, nominated="node-2", rv="3")
    queue.update(relabelled, landed)
    assert queue.nominated_pods_for_node("node-1") == []
    assert names(queue.nominated_pods_for_node("node-2")) == ["web"]
    # The nomination is cleared in the status: gone.
    cleared = make_pod("web", labels={"x": "y"}, rv="4")
    queue.update(landed, cleared)
    assert queue.nominated_pods_for_node("node-2") == []


@pytest.mark.parametrize(
    "how", ["delete-nominated", "empty-node-name", "delete-pod"],
)
async def test_nomination_removal(how: str) -> None:
    queue = SchedulingQueue(fifo_less, clock=FakeClock())
    pod = make_pod("web", nominated="node-1")
    queue.add(pod)
    if how == "delete-nominated":
        queue.delete_nominated_pod_if_exists(pod)
        assert where(queue, "web") == ACTIVE
    elif how == "empty-node-name":
        queue.add_nominated_pod(queue.lookup("default/web")[1].pod_info, "")
    else:
        queue.delete(pod)
    assert queue.nominated_pods_for_node("node-1") == []


async def test_update_nominated_pod_moves_between_nodes_and_bound_pods_are_not_nominated() -> None:
    queue = SchedulingQueue(fifo_less, clock=FakeClock())
    old = make_pod("web", nominated="node-1")
    queue.add_nominated_pod(PodInfo(old), "node-1")
    new = make_pod("web", nominated="node-2", rv="2")
    queue.update_nominated_pod(old, PodInfo(new))
    assert queue.nominated_pods_for_node("node-1") == []
    assert names(queue.nominated_pods_for_node("node-2")) == ["web"]
    queue.add_nominated_pod(PodInfo(make_pod("bound", node="node-3")), "node-3")
    assert queue.nominated_pods_for_node("node-3") == []


# ------------------------------------------------------------------------------ relevant pod updates


def _variant(change: str) -> tuple[objects_pb2.Pod, objects_pb2.Pod]:
    old = make_pod("web", labels={"app": "web"})
    new = objects_pb2.Pod()
    new.CopyFrom(old)
    if change == "resource-version":
        new.metadata.resource_version = "2"
    elif change == "generation":
        new.metadata.generation = 5
    elif change == "status":
        new.status.phase = "Pending"
        new.status.nominated_node_name = "node-1"
    elif change == "labels":
        new.metadata.labels["tier"] = "gold"
    elif change == "annotations":
        new.metadata.annotations["note"] = "x"
    elif change == "managed-fields":
        new.metadata.managed_fields.add(manager="kubelet", operation="Update")
    elif change == "spec":
        new.spec.tolerations.add(key="dedicated", operator="Exists")
    return old, new


@pytest.mark.parametrize(
    ("change", "relevant"),
    [("resource-version", False), ("generation", False), ("status", False), ("managed-fields", False),
     ("labels", True), ("annotations", True), ("spec", True)],
)
def test_scheduling_relevant_update(change: str, relevant: bool) -> None:
    old, new = _variant(change)
    assert is_scheduling_relevant_update(old, new) is relevant
    assert is_scheduling_relevant_update(None, new) is True
