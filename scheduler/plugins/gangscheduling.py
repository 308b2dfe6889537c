"""GangScheduling: a gang's pods wait at the queue's door (PreEnqueue) until their PodGroup exists and
has at least minCount (minMember) pods, as kube-scheduler's GangScheduling plugin.

A pod of no group, or of a group scheduled pod by pod (v1alpha3 ``basic``, x-k8s minMember 0), is never
gated. A gated pod is asked again when its PodGroup is added or changed, or a pod joins its group (the
scheduler's event handlers send these to the group's members only). A pod that passed the door while
its PodGroup existed and finds it gone when it pops is rejected at PreFilter, for every node, until the
PodGroup is created again: it must not be placed alone. The whole-group cycle that places
an admitted gang at once is the scheduling loop's (scheduler/gang/cycle.py): it names the plugins that
registered PodGroup events, this one, among the rejecting ones of a gang that did not fit, so these events
requeue the gang too.

A pod whose PodGroup belongs to a CompositePodGroup waits instead for its tree, as upstream's: until every
composite above it exists, and until the topmost one is ready: at least minGroupCount (one for basic)
of its children ready, a child PodGroup being ready with minCount pods (one for basic), a child
composite by the same rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.framework import (
    POD_GROUP_ADD,
    POD_GROUP_MEMBER_ADD,
    POD_GROUP_UPDATE,
    ClusterEventWithHint,
    CycleState,
    Handle,
    NodeInfo,
    PodInfo,
    PreFilterResult,
    Signature,
    Status,
)
from scheduler.framework.pod_groups import composite_policy

NAME = "GangScheduling"


class GangScheduling:
    def __init__(self, handle: Handle) -> None:
        self._groups = handle.pod_groups

    @property
    def name(self) -> str:
        return NAME

    def sign(self, pod: PodInfo) -> Signature:
        """PreFilter only rejects a pod whose PodGroup is missing, and runs for every pod: it leaves no
        state for Filter or Score, and so never stands in the way of batching."""
        return ()

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        key = pod.group_key
        if not key:
            return None
        missing = self._missing_group(key)
        if missing is not None:
            return missing
        if self._groups.parent_of(key):
            return self._tree_waits(key)
        policy = self._groups.policy(key)
        if policy is None:
            return None
        members = self._groups.member_count(key)
        if members < policy.min_count:
            return Status.unresolvable(
                f"pod group {key}: {members} pods, waiting for {policy.count_field} {policy.min_count}")
        return None

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        key = pod.group_key
        return None, (self._missing_group(key) if key else None)

    def pre_filter_extensions(self) -> None:
        return None

    def _missing_group(self, key: str) -> Status | None:
        if self._groups.pod_group(key) is None:
            return Status.unresolvable(f"waiting for PodGroup {key} to be created")
        return None

    def _tree_waits(self, key: str) -> Status | None:
        root, missing = self._groups.composite_root(key)
        if missing:
            return Status.unresolvable(f"waiting for CompositePodGroup {missing} to be created")
        if not self._tree_ready(root, set()):
            return Status.unresolvable(f"waiting for composite pod group {root} tree to meet quorum")
        return None

    def _tree_ready(self, composite: str, seen: set[str]) -> bool:
        found = self._groups.composite(composite)
        if found is None or composite in seen:
            return False
        seen.add(composite)
        children, composites = self._groups.composite_children(composite)
        ready = 0
        for child in children:
            policy = self._groups.policy(child)
            if self._groups.member_count(child) >= (policy.min_count if policy is not None else 1):
                ready += 1
        ready += sum(1 for child in composites if self._tree_ready(child, seen))
        return ready >= composite_policy(found).min_group_count

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return (
            ClusterEventWithHint(POD_GROUP_ADD),
            ClusterEventWithHint(POD_GROUP_UPDATE),
            ClusterEventWithHint(POD_GROUP_MEMBER_ADD),
        )


def new(args: None, handle: Handle) -> GangScheduling:
    return GangScheduling(handle)
