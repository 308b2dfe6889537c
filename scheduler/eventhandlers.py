"""Informer event handlers: how the cluster's changes reach the cache and the scheduling queue.

After kube-scheduler's eventhandlers.go:

Pods (one handler set, dispatching on spec.nodeName):
- a *bound* pod (any scheduler's: they all take room on nodes) is the cache's: add / update / remove.
  Its arrival may satisfy pending pods' affinity or spread terms (``queue.assigned_pod_added``); its
  update may too (label change: ``queue.assigned_pod_updated``; requests scaled down or any other change:
  a move with that event); its deletion frees room (move with AssignedPod/Delete). An update that
  changes only what the scheduler never reads of a bound pod (``bound_pod_update_is_relevant``: its
  phase, conditions, addresses, resourceVersion, managedFields) is skipped altogether.
- an *unbound* pod whose schedulerName is one of ours, and that is not being deleted, is the queue's:
  add / update / delete. Other schedulers' pending pods are ignored.
- an update that binds a pod (unbound before, bound now) is a cache add, and the pod leaves the queue
  (it normally is not there: we bound it, and it was assumed; but another component may have bound it).
- a pending pod we have *assumed* (its binding is in flight) is in no queue, so its updates are not
  queued again; its deletion (or the start of it) forgets it from the cache, releasing its room.
- a pending pod that had a nominated node frees that nomination when deleted or re-nominated, which
  may help the pods of lower priority that were kept off that node: move with AssignedPod/Delete.

Nodes: add → cache + move with Node/Add; update → cache + one move per scheduling-relevant change
(allocatable, labels, taints, conditions, spec.unschedulable turned off; kube-scheduler's
NodeSchedulingPropertiesChange), no move when nothing relevant changed; delete → move with Node/Delete
(current kube-scheduler does: PodTopologySpread registers it, a deleted node can change a spread's
domains) and cache removal.

Pod groups: every pod event keeps the index of pods by group (before the queue hears of the pod, whose
PreEnqueue counts the group's pods); a pending pod of a group also asks its group's other queued pods
again (PodGroupMemberAdd). PodGroups: add / update of the spec → the index and a move of the group's
queued pods only; delete → out of the index. CompositePodGroups: add / update / delete → the index
(each PodGroup's parent, each composite's policy and children), then a move of the queued pods of every
PodGroup under it with PodGroup/Add or PodGroup/Update (the events the gang plugins register: a
composite that appears or changes can make its tree schedulable, as upstream's CompositePodGroup/Add).

Namespaces: add / update / delete → the index of namespace labels (what namespaceSelectors match), then
a move with Namespace/Add or Namespace/Update (InterPodAffinity registers both).

Services, ReplicaSets, StatefulSets and ReplicationControllers: add / update / delete → the index of
their selectors (PodTopologySpread's default constraints), and no move: as in kube-scheduler, no plugin
registers their events (the system default constraints only score).

ResourceClaims, ResourceSlices and DeviceClasses: add / update / delete → the DRA manager (the claims
and the devices they hold, the slices, the classes), then a move with ResourceClaim, ResourceSlice or
DeviceClass Add/Update/Delete, whose queueing hints (DynamicResources') decide. A claim event is offered
only to the pods its ``ClaimEventAudience`` names (scheduler/framework/claim_users.py: by default the
pending pods that name the claim and the pod it was generated for, every waiting pod when it frees
devices), so every pod event keeps that index of pending pods by claim. A pending pod's status that
gains the name of a claim generated for it is the UnscheduledPod/UpdatePodGeneratedResourceClaim event.

PodDisruptionBudgets and PriorityClasses only requeue pods: a move with their Add/Update/Delete event.
The queue moves only pods rejected by plugins that registered the event, so with the default plugins
(none registers PriorityClass events; PDBs matter to preemption) such a move costs next to nothing,
as kube-scheduler, which subscribes to a kind only if some plugin registered it.

Handlers run synchronously on the informer's task; cache errors are logged (kube-scheduler's
HandleError), never raised into the informer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from cluster.api import objects_pb2
from scheduler.cache import Cache, CacheError
from scheduler.framework import (
    POD_GROUP_ADD,
    POD_GROUP_MEMBER_ADD,
    POD_GROUP_UPDATE,
    ActionType,
    ClusterEvent,
    DRAManager,
    EventResource,
    NamespaceIndex,
    PodGroupIndex,
    Resource,
    WorkloadIndex,
    group_key_of,
    pod_key,
    pod_requests,
)
from scheduler.framework.claim_users import ClaimEventAudience, ClaimUsers
from scheduler.framework.pod_groups import composite_key, group_key
from scheduler.framework.storage import StorageObjects
from scheduler.queue import is_scheduling_relevant_update

log = logging.getLogger(__name__)

NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD, "NodeAdd")
NODE_DELETE = ClusterEvent(EventResource.NODE, ActionType.DELETE, "NodeDelete")
NODE_ALLOCATABLE_CHANGE = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_ALLOCATABLE,
                                       "NodeAllocatableChange")
NODE_LABEL_CHANGE = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL, "NodeLabelChange")
NODE_TAINT_CHANGE = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT, "NodeTaintChange")
NODE_CONDITION_CHANGE = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_CONDITION,
                                     "NodeConditionChange")
#: kube-scheduler files a node becoming schedulable under UpdateNodeTaint (spec.unschedulable is the
#: node.kubernetes.io/unschedulable taint in disguise); podsched's framework has its own action for it.
#: Both are set, so a plugin that registered either one hears it.
NODE_SPEC_UNSCHEDULABLE_CHANGE = ClusterEvent(
    EventResource.NODE, ActionType.UPDATE_NODE_UNSCHEDULABLE | ActionType.UPDATE_NODE_TAINT,
    "NodeSpecUnschedulableChange",
)

ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")
ASSIGNED_POD_LABEL_CHANGE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_LABEL,
                                         "AssignedPodUpdatePodLabel")
ASSIGNED_POD_SCALE_DOWN = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN,
                                       "AssignedPodUpdatePodScaleDown")
ASSIGNED_POD_TOLERATIONS_CHANGE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_TOLERATIONS,
                                               "AssignedPodUpdatePodTolerations")
#: A pending pod's status.resourceClaimStatuses changed: a claim was generated for it.
UNSCHEDULED_POD_GENERATED_RESOURCE_CLAIM = ClusterEvent(
    EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM,
    "UnscheduledPodUpdatePodGeneratedResourceClaim")
RESOURCE_CLAIM_ADD = ClusterEvent(EventResource.RESOURCE_CLAIM, ActionType.ADD, "ResourceClaimAdd")
RESOURCE_CLAIM_UPDATE = ClusterEvent(EventResource.RESOURCE_CLAIM, ActionType.UPDATE, "ResourceClaimUpdate")
RESOURCE_CLAIM_DELETE = ClusterEvent(EventResource.RESOURCE_CLAIM, ActionType.DELETE, "ResourceClaimDelete")
#: Any other change of a bound pod: only plugins that registered pod updates in general hear it.
ASSIGNED_POD_OTHER_UPDATE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_OTHER,
                                         "AssignedPodUpdate")


class SchedulingQueueLike(Protocol):
    """The part of ``scheduler.queue.SchedulingQueue`` the handlers drive."""

    def add(self, pod: objects_pb2.Pod) -> object: ...

    def update(self, old: objects_pb2.Pod, new: objects_pb2.Pod) -> object: ...

    def delete(self, pod: objects_pb2.Pod) -> object: ...

    def assigned_pod_added(self, pod: objects_pb2.Pod) -> object: ...

    def assigned_pod_updated(self, old: objects_pb2.Pod, new: objects_pb2.Pod) -> object: ...

    def move_all_to_active_or_backoff(self, event: ClusterEvent, old: Any, new: Any) -> object: ...

    def move_to_active_or_backoff(self, keys: Iterable[str], event: ClusterEvent, old: Any,
                                  new: Any) -> object: ...


Handlers = dict[str, Callable[..., None]]


class EventHandlers:
    """Handler sets for ``Informer.add_handler(**handlers)``, one per kind."""

    def __init__(
        self,
        cache: Cache,
        queue: SchedulingQueueLike,
        scheduler_names: Iterable[str],
        on_pod_bound: Callable[[objects_pb2.Pod], None] | None = None,
        pod_groups: PodGroupIndex | None = None,
        namespaces: NamespaceIndex | None = None,
        workloads: WorkloadIndex | None = None,
        dra_manager: DRAManager | None = None,
        claim_audience: ClaimEventAudience | None = None,
        storage: StorageObjects | None = None,
    ) -> None:
        """``scheduler_names``: the profiles' schedulerNames (the pods this scheduler schedules).
        ``on_pod_bound``: told of every pod the cache newly sees bound, after the cache has it.
        ``pod_groups``: the index of pods by group, kept here before the queue hears of a pod (its
        PreEnqueue counts the group's pods).
        ``namespaces``: the namespaces' labels, kept here before the queue hears of a change.
        ``workloads``: the Services' and workload controllers' selectors.
        ``dra_manager``: the ResourceClaims, ResourceSlices and DeviceClasses, kept here before the
        queue hears of a change.
        ``storage``: the PersistentVolumes, claims, StorageClasses and CSI objects, kept here before the
        queue hears of a change.
        ``claim_audience``: which pending pods a ResourceClaim event is offered to (default: the index
        of pending pods by the claims they name)."""
        self._cache = cache
        self._queue = queue
        self._pod_groups = pod_groups if pod_groups is not None else PodGroupIndex()
        self._namespaces = namespaces if namespaces is not None else NamespaceIndex()
        self._workloads = workloads if workloads is not None else WorkloadIndex()
        self._dra = dra_manager if dra_manager is not None else DRAManager()
        self._claim_audience = claim_audience if claim_audience is not None else ClaimUsers()
        self._storage = storage if storage is not None else StorageObjects()
        self._scheduler_names = frozenset(scheduler_names)
        self._on_pod_bound = on_pod_bound

    def pod_handlers(self) -> Handlers:
        return {"on_add": self._add_pod, "on_update": self._update_pod, "on_delete": self._delete_pod}

    def node_handlers(self) -> Handlers:
        return {"on_add": self._add_node, "on_update": self._update_node, "on_delete": self._delete_node}

    def pod_disruption_budget_handlers(self) -> Handlers:
        return self._requeue_only(EventResource.POD_DISRUPTION_BUDGET)

    def priority_class_handlers(self) -> Handlers:
        return self._requeue_only(EventResource.PRIORITY_CLASS)

    def namespace_handlers(self) -> Handlers:
        requeue = self._requeue_only(EventResource.NAMESPACE)

        def on_add(namespace: objects_pb2.Namespace) -> None:
            self._namespaces.set(namespace)
            requeue["on_add"](namespace)

        def on_update(old: objects_pb2.Namespace, new: objects_pb2.Namespace) -> None:
            self._namespaces.set(new)
            requeue["on_update"](old, new)

        def on_delete(namespace: objects_pb2.Namespace) -> None:
            self._namespaces.remove(namespace)
            requeue["on_delete"](namespace)

        return {"on_add": on_add, "on_update": on_update, "on_delete": on_delete}

    def service_handlers(self) -> Handlers:
        return {"on_add": self._workloads.set_service,
                "on_update": lambda old, new: self._workloads.set_service(new),
                "on_delete": self._workloads.remove_service}

    def controller_handlers(self) -> Handlers:
        """For the ReplicaSet, StatefulSet and ReplicationController informers."""
        return {"on_add": self._workloads.set_controller,
                "on_update": lambda old, new: self._workloads.set_controller(new),
                "on_delete": self._workloads.remove_controller}

    def resource_claim_handlers(self) -> Handlers:
        claims = self._dra.resource_claims

        def on_add(claim: objects_pb2.ResourceClaim) -> None:
            claims.on_add(claim)
            self._requeue_after_claim(RESOURCE_CLAIM_ADD, None, claim)

        def on_update(old: objects_pb2.ResourceClaim, new: objects_pb2.ResourceClaim) -> None:
            claims.on_update(old, new)
            self._requeue_after_claim(RESOURCE_CLAIM_UPDATE, old, new)

        def on_delete(claim: objects_pb2.ResourceClaim) -> None:
            claims.on_delete(claim)
            self._requeue_after_claim(RESOURCE_CLAIM_DELETE, claim, None)

        return {"on_add": on_add, "on_update": on_update, "on_delete": on_delete}

    def _requeue_after_claim(self, event: ClusterEvent, old: objects_pb2.ResourceClaim | None,
                             new: objects_pb2.ResourceClaim | None) -> None:
        keys = self._claim_audience.audience(old, new)
        if keys is None:
            self._queue.move_all_to_active_or_backoff(event, old, new)
        else:
            # Called with no keys too: the event is a move request all the same (an attempt in flight
            # that fails goes to backoff), as with the whole scan.
            self._queue.move_to_active_or_backoff(keys, event, old, new)

    def resource_slice_handlers(self) -> Handlers:
        slices = self._dra.resource_slices
        return self._feeding(EventResource.RESOURCE_SLICE, slices.set, lambda old, new: slices.set(new),
                             slices.remove)

    def device_class_handlers(self) -> Handlers:
        classes = self._dra.device_classes
        return self._feeding(EventResource.DEVICE_CLASS, classes.set, lambda old, new: classes.set(new),
                             classes.remove)

    def storage_handlers(self, informer: str) -> Handlers:
        """For the informer of ``STORAGE_INFORMER_KINDS`` named ``informer``."""
        feeds: dict[str, tuple[EventResource, Callable[[Any], None], Callable[[Any], None]]] = {
            "persistentvolumes": (EventResource.PERSISTENT_VOLUME, self._storage.set_persistent_volume,
                                  self._storage.remove_persistent_volume),
            "persistentvolumeclaims": (EventResource.PERSISTENT_VOLUME_CLAIM,
                                       self._storage.set_persistent_volume_claim,
                                       self._storage.remove_persistent_volume_claim),
            "storageclasses": (EventResource.STORAGE_CLASS, self._storage.set_storage_class,
                               self._storage.remove_storage_class),
            "csinodes": (EventResource.CSI_NODE, self._storage.set_csi_node, self._storage.remove_csi_node),
            "csidrivers": (EventResource.CSI_DRIVER, self._storage.set_csi_driver,
                           self._storage.remove_csi_driver),
            "csistoragecapacities": (EventResource.CSI_STORAGE_CAPACITY,
                                     self._storage.set_csi_storage_capacity,
                                     self._storage.remove_csi_storage_capacity),
        }
        resource, added, removed = feeds[informer]
        return self._feeding(resource, added, lambda old, new: added(new), removed)

    def _feeding(
        self,
        resource: EventResource,
        added: Callable[[Any], None],
        updated: Callable[[Any, Any], None],
        deleted: Callable[[Any], None],
    ) -> Handlers:
        """Handlers that keep an index first, then requeue with the kind's events."""
        requeue = self._requeue_only(resource)

        def on_add(obj: Any) -> None:
            added(obj)
            requeue["on_add"](obj)

        def on_update(old: Any, new: Any) -> None:
            updated(old, new)
            requeue["on_update"](old, new)

        def on_delete(obj: Any) -> None:
            deleted(obj)
            requeue["on_delete"](obj)

        return {"on_add": on_add, "on_update": on_update, "on_delete": on_delete}

    def pod_group_handlers(self) -> Handlers:
        return {"on_add": self._add_pod_group, "on_update": self._update_pod_group,
                "on_delete": self._pod_groups.remove_group}

    def composite_pod_group_handlers(self) -> Handlers:
        return {"on_add": self._add_composite, "on_update": self._update_composite,
                "on_delete": self._pod_groups.remove_composite}

    # -------------------------------------------------------------------------------- pod groups

    def _add_composite(self, composite: objects_pb2.CompositePodGroup) -> None:
        self._pod_groups.set_composite(composite)
        self._requeue_tree(composite_key(composite), POD_GROUP_ADD, None, composite)

    def _update_composite(self, old: objects_pb2.CompositePodGroup,
                          new: objects_pb2.CompositePodGroup) -> None:
        self._pod_groups.set_composite(new)
        if old.spec != new.spec:
            self._requeue_tree(composite_key(new), POD_GROUP_UPDATE, old, new)

    def _requeue_tree(self, key: str, event: ClusterEvent, old: Any, new: Any) -> None:
        keys = [pod_key(pod) for group in self._pod_groups.tree_groups(key)
                for pod in self._pod_groups.members(group)]
        if keys:
            self._queue.move_to_active_or_backoff(keys, event, old, new)


    def _add_pod_group(self, group: objects_pb2.PodGroup) -> None:
        self._pod_groups.set_group(group)
        key = group_key(group)
        if root := self._pod_groups.composite_root(key)[0]:
            # A child that comes can make its tree ready: every pod of the tree is asked again.
            self._requeue_tree(root, POD_GROUP_ADD, None, group)
        else:
            self._requeue_group(key, POD_GROUP_ADD, None, group)

    def _update_pod_group(self, old: objects_pb2.PodGroup, new: objects_pb2.PodGroup) -> None:
        self._pod_groups.set_group(new)
        if old.spec != new.spec:  # the counts and phase a controller writes change nothing here
            self._requeue_group(group_key(new), POD_GROUP_UPDATE, old, new)

    def _reaches_min_count(self, key: str) -> bool:
        """Whether the pod just added made its group's live pods reach minCount: the one add that can
        ungate its siblings (each add changes the count by one), so the others cost O(1)."""
        policy = self._pod_groups.policy(key)
        if policy is None:
            # A basic PodGroup of a CompositePodGroup is ready with its first pod.
            return self._pod_groups.member_count(key) == 1 and bool(self._pod_groups.parent_of(key))
        return self._pod_groups.member_count(key) == policy.min_count

    def _requeue_group(self, key: str, event: ClusterEvent, old: Any, new: Any) -> None:
        """Ask the group's gated or unschedulable pods again: O(group), not O(unschedulable pods)."""
        keys = [pod_key(pod) for pod in self._pod_groups.members(key)]
        if keys:
            self._queue.move_to_active_or_backoff(keys, event, old, new)

    # -------------------------------------------------------------------------------------- pods

    def _responsible_for(self, pod: objects_pb2.Pod) -> bool:
        return pod.spec.scheduler_name in self._scheduler_names

    def _add_pod(self, pod: objects_pb2.Pod) -> None:
        self._pod_groups.set_pod(pod)
        if pod.spec.node_name:
            self._add_bound_pod(pod)
        elif self._responsible_for(pod) and not _terminating(pod):
            self._claim_audience.set_pod(pod)
            self._queue.add(pod)
            if (group := group_key_of(pod)) and self._reaches_min_count(group):
                if root := self._pod_groups.composite_root(group)[0]:
                    # A child ready can make its whole tree ready: every pod of it is asked again.
                    self._requeue_tree(root, POD_GROUP_MEMBER_ADD, None, pod)
                else:
                    self._requeue_group(group, POD_GROUP_MEMBER_ADD, None, pod)

    def _update_pod(self, old: objects_pb2.Pod, new: objects_pb2.Pod) -> None:
        self._pod_groups.set_pod(new)
        if old.spec.node_name:
            self._update_bound_pod(old, new)
        elif new.spec.node_name:
            # The update that binds the pod: the cache's confirmation of an assumed pod.
            self._add_bound_pod(new)
            if self._responsible_for(old):
                self._claim_audience.remove_pod(old)
                self._queue.delete(old)
        elif self._responsible_for(old):
            self._update_pending_pod(old, new)

    def _delete_pod(self, pod: objects_pb2.Pod) -> None:
        self._pod_groups.remove_pod(pod)
        if pod.spec.node_name:
            self._cache_call(self._cache.remove_pod, pod)
            self._queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None)
        elif self._responsible_for(pod):
            self._claim_audience.remove_pod(pod)
            self._queue.delete(pod)
            self._pending_pod_gone(pod)

    def _add_bound_pod(self, pod: objects_pb2.Pod) -> None:
        if self._cache_call(self._cache.add_pod, pod) and self._on_pod_bound is not None:
            self._on_pod_bound(pod)
        self._queue.assigned_pod_added(pod)

    def _update_bound_pod(self, old: objects_pb2.Pod, new: objects_pb2.Pod) -> None:
        if not bound_pod_update_is_relevant(old, new):
            return  # the kubelet's status reports: nothing the cache or a pending pod looks at
        self._cache_call(self._cache.update_pod, old, new)
        for event in pod_scheduling_properties_change(new, old):
            if event == ASSIGNED_POD_LABEL_CHANGE:
                # The queue looks only at pods whose affinity or spread terms the new labels may meet.
                self._queue.assigned_pod_updated(old, new)
            else:
                self._queue.move_all_to_active_or_backoff(event, old, new)

    def _update_pending_pod(self, old: objects_pb2.Pod, new: objects_pb2.Pod) -> None:
        if _terminating(new):
            self._claim_audience.remove_pod(new)
        else:
            # Also while assumed: a failed binding sends the pod back to the queue.
            self._claim_audience.set_pod(new)
        if self._cache.is_assumed(pod_key(new)):
            # Its binding is in flight: queueing it again would schedule it twice. Only the start of
            # its deletion matters, which releases the room it was assumed to take.
            if _terminating(new) and not _terminating(old):
                self._forget_assumed(new)
            return
        if _terminating(new):
            self._queue.delete(new)
            self._pending_pod_gone(new)
            return
        self._queue.update(old, new)
        if old.status.resource_claim_statuses != new.status.resource_claim_statuses:
            self._queue.move_to_active_or_backoff(
                [pod_key(new)], UNSCHEDULED_POD_GENERATED_RESOURCE_CLAIM, old, new)
        nominated = old.status.nominated_node_name
        if nominated and nominated != new.status.nominated_node_name:
            # Lower-priority pods were kept off the old nominated node as if this pod ran there.
            self._queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, old, None)

    def _pending_pod_gone(self, pod: objects_pb2.Pod) -> None:
        """A pending pod of ours was deleted (or is being deleted): it was left out of the queue by the
        caller; release what it held."""
        if self._cache.is_assumed(pod_key(pod)):
            self._forget_assumed(pod)
        elif pod.status.nominated_node_name:
            self._queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None)

    def _forget_assumed(self, pod: objects_pb2.Pod) -> None:
        """An assumed pod is being deleted: its binding will fail, but its room is free now (kube-scheduler's
        handleAssumedPodDeletion). The cache's copy carries the node it was assumed on."""
        assumed = self._cache.get_pod(pod_key(pod))
        if assumed is None:
            return
        self._cache_call(self._cache.forget_pod, assumed)
        self._queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, assumed, None)

    # ------------------------------------------------------------------------------------- nodes

    def _add_node(self, node: objects_pb2.Node) -> None:
        self._cache.add_node(node)
        self._queue.move_all_to_active_or_backoff(NODE_ADD, None, node)

    def _update_node(self, old: objects_pb2.Node, new: objects_pb2.Node) -> None:
        self._cache.update_node(old, new)
        for event in node_scheduling_properties_change(new, old):
            self._queue.move_all_to_active_or_backoff(event, old, new)

    def _delete_node(self, node: objects_pb2.Node) -> None:
        self._queue.move_all_to_active_or_backoff(NODE_DELETE, node, None)
        self._cache_call(self._cache.remove_node, node)

    # ---------------------------------------------------------------------------- other kinds

    def _requeue_only(self, resource: EventResource) -> Handlers:
        add = ClusterEvent(resource, ActionType.ADD, f"{resource.value}Add")
        update = ClusterEvent(resource, ActionType.UPDATE, f"{resource.value}Update")
        delete = ClusterEvent(resource, ActionType.DELETE, f"{resource.value}Delete")
        move = self._queue.move_all_to_active_or_backoff

        def on_add(obj: Any) -> None:
            move(add, None, obj)

        def on_update(old: Any, new: Any) -> None:
            move(update, old, new)

        def on_delete(obj: Any) -> None:
            move(delete, obj, None)

        return {"on_add": on_add, "on_update": on_update, "on_delete": on_delete}

    @staticmethod
    def _cache_call(method: Callable[..., None], *objs: Any) -> bool:
        """Call a cache method; a CacheError is logged (False), as kube-scheduler's HandleError."""
        try:
            method(*objs)
        except CacheError as err:
            log.error("scheduler cache %s failed: %s", method.__name__, err)
            return False
        return True


def _terminating(pod: objects_pb2.Pod) -> bool:
    return pod.metadata.HasField("deletion_timestamp")


# --------------------------------------------------------------------------- what changed, as events


def bound_pod_update_is_relevant(old: objects_pb2.Pod, new: objects_pb2.Pod) -> bool:
    """Whether a bound pod's update changes anything the scheduler reads of it: whatever counts for a
    pending pod (kube-scheduler's isPodUpdated: all but the status, resourceVersion, generation and
    managedFields), the claims its status names, or its start time, by which preemption orders victims.
    Phase, conditions, addresses and messages count for nothing."""
    old_status, new_status = old.status, new.status
    return (old_status.start_time != new_status.start_time
            or old_status.resource_claim_statuses != new_status.resource_claim_statuses
            or old_status.extended_resource_claim_status != new_status.extended_resource_claim_status
            or is_scheduling_relevant_update(old, new))


def pod_scheduling_properties_change(new: objects_pb2.Pod, old: objects_pb2.Pod) -> list[ClusterEvent]:
    """The events a bound pod's update amounts to (kube-scheduler's PodSchedulingPropertiesChange): a
    label change, requests scaled down, tolerations added; or, when none of those, a general update."""
    events = []
    if new.metadata.labels != old.metadata.labels:
        events.append(ASSIGNED_POD_LABEL_CHANGE)
    if _scaled_down(pod_requests(new), pod_requests(old)):
        events.append(ASSIGNED_POD_SCALE_DOWN)
    # Tolerations can be added, never changed or removed (API validation): the count tells.
    if len(new.spec.tolerations) != len(old.spec.tolerations):
        events.append(ASSIGNED_POD_TOLERATIONS_CHANGE)
    return events or [ASSIGNED_POD_OTHER_UPDATE]


def _scaled_down(new: Resource, old: Resource) -> bool:
    """Whether any resource the old requests named is now requested less (or not at all)."""
    return any(new.get(name) < old.get(name) for name in old.names())


def node_scheduling_properties_change(new: objects_pb2.Node, old: objects_pb2.Node) -> list[ClusterEvent]:
    """The events a node update amounts to (kube-scheduler's NodeSchedulingPropertiesChange), in
    kube-scheduler's order; empty when nothing that scheduling looks at changed (annotations,
    heartbeats, capacity alone). A node becoming unschedulable helps no pod, so only the flag turning
    off counts."""
    events = []
    if old.spec.unschedulable and not new.spec.unschedulable:
        events.append(NODE_SPEC_UNSCHEDULABLE_CHANGE)
    # Semantic comparison: "1" and "1000m" CPUs are the same allocatable.
    if Resource.from_quantities(new.status.allocatable) != Resource.from_quantities(old.status.allocatable):
        events.append(NODE_ALLOCATABLE_CHANGE)
    if new.metadata.labels != old.metadata.labels:
        events.append(NODE_LABEL_CHANGE)
    if list(new.spec.taints) != list(old.spec.taints):
        events.append(NODE_TAINT_CHANGE)
    if _condition_statuses(new) != _condition_statuses(old):
        events.append(NODE_CONDITION_CHANGE)
    return events


def _condition_statuses(node: objects_pb2.Node) -> dict[str, str]:
    """Conditions by type, status only: heartbeat and transition times change nothing."""
    return {condition.type: condition.status for condition in node.status.conditions}
