"""Pod groups as the scheduler sees them: which group a pod belongs to, the gang policy of a PodGroup,
and ``PodGroupIndex``, the scheduler's index of pods by group beside the PodGroups themselves.

A pod's group is ``spec.schedulingGroup.podGroupName`` (scheduling.k8s.io), else the label
``scheduling.x-k8s.io/pod-group`` (scheduler-plugins' Coscheduling), in the pod's namespace; its key is
"namespace/name". A PodGroup is a gang when its v1alpha3 ``schedulingPolicy.gang`` is set (minCount) or
its x-k8s ``minMember`` is at least 1; a ``basic`` group, like a pod of no group, is scheduled pod by pod,
unless it has a topology constraint (``spec.schedulingConstraints.topology[0].key``): a constrained group,
gang or basic, is placed in the whole-group cycle for every pod, so that it lands in one domain
(``placement_policy``).

A PodGroup may belong to a CompositePodGroup (``spec.parentCompositePodGroupName``), and a
CompositePodGroup to another: the index keeps the composites too (``CompositePolicy``: ``gang``
``minGroupCount`` or ``basic``, one topology key) and each composite's child PodGroups and child
composites, so that the whole-group cycle can take a tree at once (scheduler/gang/composite.py).

The index is kept by the scheduler's informer handlers, O(1) per event, and counts each group's live
pods as it goes (PreEnqueue asks for every pod); the lists of a group's pods cost O(group) and are read
once per whole-group cycle. Plugins read it through their Handle (``PodGroupLister``), the scheduling
loop through the same object.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from cluster.api import errors, objects_pb2, timeutil
from cluster.api.podgroups import group_name_of, is_coscheduling, min_count

if TYPE_CHECKING:
    from scheduler.framework.interface import APIClient

log = logging.getLogger(__name__)

#: How long a gang may wait for its members' placements when its PodGroup does not say (Coscheduling's
#: default scheduleTimeoutSeconds).
DEFAULT_GANG_TIMEOUT_S = 300.0
#: Attempts at writing a PodGroup's status when it keeps changing under us.
STATUS_UPDATE_ATTEMPTS = 5


def group_key_of(pod: objects_pb2.Pod) -> str:
    """"namespace/name" of the pod's PodGroup, "" for a pod of no group."""
    name = group_name_of(pod)
    return f"{pod.metadata.namespace}/{name}" if name else ""


def group_key(group: objects_pb2.PodGroup) -> str:
    return f"{group.metadata.namespace}/{group.metadata.name}"


@dataclass(frozen=True, slots=True)
class GangPolicy:
    """All or nothing: no member is bound until ``min_count`` have a placement at once."""

    #: "namespace/name" of the PodGroup.
    group: str
    min_count: int
    #: How long the group's placements may wait at Permit before all are released.
    timeout_s: float
    #: The field the PodGroup's spelling calls min_count: "minCount" or "minMember", for messages; ""
    #: for a basic group placed as a whole for its topology constraint (one pod placed is enough).
    count_field: str


def gang_policy(group: objects_pb2.PodGroup) -> GangPolicy | None:
    """The PodGroup's gang policy, or None for a group scheduled pod by pod (basic, minMember 0)."""
    spec = group.spec
    timeout = float(spec.schedule_timeout_seconds) if spec.HasField("schedule_timeout_seconds") else 0.0
    timeout = timeout if timeout > 0 else DEFAULT_GANG_TIMEOUT_S
    count = min_count(group)
    if count < 1:
        return None
    return GangPolicy(group_key(group), count, timeout, "minMember" if is_coscheduling(group) else "minCount")


def topology_key_of(group: objects_pb2.PodGroup) -> str:
    """The node label the group's pods must share a value of (its one topology constraint), "" for none."""
    topology = group.spec.scheduling_constraints.topology
    return topology[0].key if topology else ""


def placement_policy(group: objects_pb2.PodGroup) -> GangPolicy:
    """The policy a topology-constrained group is placed with: its gang policy, or for a basic group at
    least one pod per cycle (upstream's feasibility rule for the basic policy)."""
    policy = gang_policy(group)
    if policy is not None:
        return policy
    spec = group.spec
    timeout = float(spec.schedule_timeout_seconds) if spec.HasField("schedule_timeout_seconds") else 0.0
    return GangPolicy(group_key(group), 1, timeout if timeout > 0 else DEFAULT_GANG_TIMEOUT_S, "")


@dataclass(frozen=True, slots=True)
class CompositePolicy:
    """What a CompositePodGroup asks of its children (upstream's CompositePodGroupSchedulingPolicy)."""

    #: "namespace/name" of the CompositePodGroup.
    key: str
    #: Children (PodGroups and CompositePodGroups) that must be feasible: ``gang.minGroupCount``, 1 for
    #: ``basic``.
    min_group_count: int
    #: The node label every pod of the tree must share a value of, "" for none.
    topology_key: str
    #: "minGroupCount" for a gang, "" for a basic composite (for messages).
    count_field: str


def composite_key(composite: objects_pb2.CompositePodGroup) -> str:
    return f"{composite.metadata.namespace}/{composite.metadata.name}"


def composite_policy(composite: objects_pb2.CompositePodGroup) -> CompositePolicy:
    spec = composite.spec
    topology = spec.scheduling_constraints.topology
    if spec.scheduling_policy.HasField("gang"):
        return CompositePolicy(composite_key(composite), max(spec.scheduling_policy.gang.min_group_count, 1),
                               topology[0].key if topology else "", "minGroupCount")
    return CompositePolicy(composite_key(composite), 1, topology[0].key if topology else "", "")


def parent_composite_key(namespace: str,
                         spec: objects_pb2.PodGroupSpec | objects_pb2.CompositePodGroupSpec) -> str:
    """"namespace/name" of the CompositePodGroup ``spec`` names as its parent, "" for none."""
    if spec.HasField("parent_composite_pod_group_name") and spec.parent_composite_pod_group_name:
        return f"{namespace}/{spec.parent_composite_pod_group_name}"
    return ""


#: A PodGroup or a CompositePodGroup: both carry metav1 conditions in their status.
AnyGroup = TypeVar("AnyGroup", objects_pb2.PodGroup, objects_pb2.CompositePodGroup)


def with_pod_group_condition(group: AnyGroup, type_: str, status: str, reason: str,
                             message: str) -> AnyGroup | None:
    """A copy of ``group`` with its condition ``type_`` set so (metav1.Condition: the transition time
    moves only when the status does), or None if it says so already."""
    updated = type(group)()
    updated.CopyFrom(group)
    condition = next((c for c in updated.status.conditions if c.type == type_), None)
    if condition is None:
        condition = updated.status.conditions.add(type=type_)
    if (condition.status, condition.reason, condition.message) == (status, reason, message):
        return None
    if condition.status != status:
        condition.last_transition_time.CopyFrom(timeutil.now())
    condition.status, condition.reason, condition.message = status, reason, message
    condition.observed_generation = group.metadata.generation
    return updated


async def write_pod_group_status(
    client: APIClient,
    group: AnyGroup | None,
    change: Callable[[AnyGroup], AnyGroup | None],
    what: str,
) -> None:
    """Write ``change(group)`` with UpdateStatus at the group's resourceVersion; on a conflict read the
    group again and change that. Nothing when the group is gone or ``change`` finds nothing to do.
    Other failures are logged (``what`` names the write), not raised: the status is a report, and the
    scheduler's next attempt writes it again."""
    for _ in range(STATUS_UPDATE_ATTEMPTS):
        if group is None:
            return
        updated = change(group)
        if updated is None:
            return
        try:
            await client.update_status(updated)
            return
        except errors.Conflict:
            plural = "podgroups" if isinstance(group, objects_pb2.PodGroup) else "compositepodgroups"
            try:
                fetched = await client.get(plural, group.metadata.name, group.metadata.namespace)
            except errors.NotFound:
                return
            group = fetched if isinstance(fetched, type(group)) else None
        except errors.NotFound:
            return
        except errors.ApiError as err:
            log.warning("could not write %s: %s", what, err.message)
            return
    log.warning("gave up writing %s: the pod group keeps changing", what)


def is_terminating(pod: objects_pb2.Pod) -> bool:
    return pod.metadata.HasField("deletion_timestamp")


class PodGroupIndex:
    """The pods of each group (pending and bound, as the pod informer has them) and the PodGroups (as
    the PodGroup informer has them). ``is_assumed`` tells which pending pods the scheduler's cache has
    assumed on a node (a binding in flight)."""

    def __init__(self, is_assumed: Callable[[str], bool] = lambda key: False,
                 assumed_node: Callable[[str], str] = lambda key: "") -> None:
        """``assumed_node``: the node the cache assumed a pod on, by pod key ("" for none)."""
        self._is_assumed = is_assumed
        self._assumed_node = assumed_node
        self._members: dict[str, dict[str, objects_pb2.Pod]] = {}
        self._group_of_pod: dict[str, str] = {}
        #: Per group, its pods that are not terminating: PreEnqueue asks for every pod it admits.
        self._live: dict[str, int] = {}
        self._groups: dict[str, objects_pb2.PodGroup] = {}
        self._composites: dict[str, objects_pb2.CompositePodGroup] = {}
        #: Per CompositePodGroup key, the keys of the PodGroups and of the CompositePodGroups naming it
        #: as their parent (known before the parent itself may be).
        self._child_groups: dict[str, set[str]] = {}
        self._child_composites: dict[str, set[str]] = {}

    # ------------------------------------------------------------------------- informer handlers

    def set_pod(self, pod: objects_pb2.Pod) -> None:
        """The pod was added or changed (its group label can change: it moves with it)."""
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        group = group_key_of(pod)
        old_group = self._group_of_pod.get(key)
        if old_group is not None:
            self._discard(old_group, key)
        if not group:
            return
        self._members.setdefault(group, {})[key] = pod
        self._group_of_pod[key] = group
        if not is_terminating(pod):
            self._live[group] = self._live.get(group, 0) + 1

    def remove_pod(self, pod: objects_pb2.Pod) -> None:
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        group = self._group_of_pod.get(key)
        if group is not None:
            self._discard(group, key)

    def set_group(self, group: objects_pb2.PodGroup) -> None:
        key = group_key(group)
        old = self._groups.get(key)
        if old is not None:
            _unlink(self._child_groups, parent_composite_key(old.metadata.namespace, old.spec), key)
        self._groups[key] = group
        _link(self._child_groups, parent_composite_key(group.metadata.namespace, group.spec), key)

    def remove_group(self, group: objects_pb2.PodGroup) -> None:
        key = group_key(group)
        old = self._groups.pop(key, None)
        if old is not None:
            _unlink(self._child_groups, parent_composite_key(old.metadata.namespace, old.spec), key)

    def set_composite(self, composite: objects_pb2.CompositePodGroup) -> None:
        key = composite_key(composite)
        old = self._composites.get(key)
        if old is not None:
            _unlink(self._child_composites, parent_composite_key(old.metadata.namespace, old.spec), key)
        self._composites[key] = composite
        _link(self._child_composites, parent_composite_key(composite.metadata.namespace, composite.spec), key)

    def remove_composite(self, composite: objects_pb2.CompositePodGroup) -> None:
        key = composite_key(composite)
        old = self._composites.pop(key, None)
        if old is not None:
            _unlink(self._child_composites, parent_composite_key(old.metadata.namespace, old.spec), key)

    def _discard(self, group: str, key: str) -> None:
        self._group_of_pod.pop(key, None)
        members = self._members.get(group)
        if members is None:
            return
        pod = members.pop(key, None)
        if pod is not None and not is_terminating(pod):
            self._live[group] -= 1
        if not members:
            del self._members[group]
            self._live.pop(group, None)

    # ---------------------------------------------------------------------------------- reading

    def pod_group(self, key: str) -> objects_pb2.PodGroup | None:
        """The PodGroup with key "namespace/name", None if the scheduler has not seen it."""
        return self._groups.get(key)

    def composite(self, key: str) -> objects_pb2.CompositePodGroup | None:
        """The CompositePodGroup with key "namespace/name", None if the scheduler has not seen it."""
        return self._composites.get(key)

    def parent_of(self, key: str) -> str:
        """The key of PodGroup ``key``'s CompositePodGroup, "" for none (or an unknown group): O(1)."""
        group = self._groups.get(key)
        return parent_composite_key(group.metadata.namespace, group.spec) if group is not None else ""

    def composite_root(self, key: str) -> tuple[str, str]:
        """(the key of the topmost CompositePodGroup above PodGroup ``key``, the key of the first
        ancestor the scheduler has not seen, "" when every one is known). ("", "") for a PodGroup
        without a parent. A loop of parents (the API refuses one) ends at the composite met twice."""
        parent = self.parent_of(key)
        seen: set[str] = set()
        while parent and parent not in seen:
            seen.add(parent)
            composite = self._composites.get(parent)
            if composite is None:
                return parent, parent
            above = parent_composite_key(composite.metadata.namespace, composite.spec)
            if not above:
                return parent, ""
            parent = above
        return parent, ""

    def composite_children(self, key: str) -> tuple[list[str], list[str]]:
        """The keys of CompositePodGroup ``key``'s child PodGroups and child CompositePodGroups, each
        sorted (the order the tree is placed in)."""
        return sorted(self._child_groups.get(key, ())), sorted(self._child_composites.get(key, ()))

    def tree_groups(self, root: str) -> list[str]:
        """The keys of every PodGroup under CompositePodGroup ``root``, depth first, in placing order."""
        groups: list[str] = []
        seen: set[str] = set()

        def walk(composite: str) -> None:
            if composite in seen:
                return
            seen.add(composite)
            children, composites = self.composite_children(composite)
            groups.extend(children)
            for child in composites:
                walk(child)

        walk(root)
        return groups

    def policy(self, key: str) -> GangPolicy | None:
        """The gang policy of group ``key``; None when it has none or is not known."""
        group = self._groups.get(key)
        return gang_policy(group) if group is not None else None

    def topology_key(self, key: str) -> str:
        """The group's topology constraint's node label, "" for none or an unknown group."""
        group = self._groups.get(key)
        return topology_key_of(group) if group is not None else ""

    def placed(self, key: str) -> list[tuple[objects_pb2.Pod, str]]:
        """The group's pods that are on a node, bound or assumed, each with its node."""
        placed = []
        for pod_key, pod in self._members.get(key, {}).items():
            node = pod.spec.node_name or (self._assumed_node(pod_key) if self._is_assumed(pod_key) else "")
            if node:
                placed.append((pod, node))
        return placed

    def members(self, key: str) -> Sequence[objects_pb2.Pod]:
        """Every pod of the group the informer has (pending, assumed, bound, terminating)."""
        return list(self._members.get(key, {}).values())

    def member_count(self, key: str) -> int:
        """The group's pods that are not terminating, in O(1)."""
        return self._live.get(key, 0)

    def pending(self, key: str) -> list[objects_pb2.Pod]:
        """The group's pods that wait for a node: unbound, not assumed, not terminating."""
        return [
            pod for pod_key, pod in self._members.get(key, {}).items()
            if not pod.spec.node_name and not is_terminating(pod) and not self._is_assumed(pod_key)
        ]

    def assumed_count(self, key: str) -> int:
        """The group's pods with a binding in flight."""
        return sum(1 for pod_key, pod in self._members.get(key, {}).items()
                   if not pod.spec.node_name and self._is_assumed(pod_key))

    def bound_count(self, key: str) -> int:
        """The group's pods bound to a node (not terminating)."""
        return sum(1 for pod in self._members.get(key, {}).values()
                   if pod.spec.node_name and not is_terminating(pod))


def _link(children: dict[str, set[str]], parent: str, child: str) -> None:
    if parent:
        children.setdefault(parent, set()).add(child)


def _unlink(children: dict[str, set[str]], parent: str, child: str) -> None:
    siblings = children.get(parent)
    if siblings is not None:
        siblings.discard(child)
        if not siblings:
            del children[parent]
