"""The PodTopologySpread plugin: the plugin class and the events that can change its verdict.

Default constraints. A pod with no constraints of its own is spread by ``defaultConstraints`` (or, with
``defaultingType: System``, kube-scheduler's built-in zone/hostname ScheduleAnyway pair), with the
selector of the Services and the ReplicationController, ReplicaSet or StatefulSet controller that select
it (the Handle's ``workloads``); nothing applies when none does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cluster.api import objects_pb2
from scheduler.config.argtypes import SYSTEM_DEFAULTING, PodTopologySpreadArgs
from scheduler.framework import ActionType, ClusterEventWithHint, Handle, PodInfo, QueueingHint, Signature
from scheduler.plugins.podcounts import pod_and_node_events
from scheduler.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    SYSTEM_DEFAULT_CONSTRAINTS,
    Constraint,
    Constraints,
    constraints_of,
    has_all_keys,
)
from scheduler.plugins.podtopologyspread.filtering import Filtering
from scheduler.plugins.podtopologyspread.scoring import Scoring
from scheduler.plugins.split import SplitPlugin

NAME = "PodTopologySpread"

#: kube-scheduler's PodTopologySpreadArgs, decoded, defaulted and validated by scheduler.config.
ARGS = PodTopologySpreadArgs


class PodTopologySpread(SplitPlugin):
    """Spread pods over topology domains: DoNotSchedule constraints filter, ScheduleAnyway ones score."""

    def __init__(self, args: PodTopologySpreadArgs, handle: Handle) -> None:
        self.args = args
        system = args.defaulting_type == SYSTEM_DEFAULTING
        self._constraints = Constraints(
            SYSTEM_DEFAULT_CONSTRAINTS if system else args.default_constraints, system, handle.workloads
        )
        self._filtering = Filtering(handle, self._constraints)
        self._scoring = Scoring(handle, self._constraints)

    @property
    def name(self) -> str:
        return NAME

    def sign(self, pod: PodInfo) -> Signature | None:
        """Unsignable with any spread constraint: skews count pods over whole topology domains, not
        one node. Without constraints Filter and Score skip, whatever the pod."""
        return None if self._constraints.spreads(pod.pod) else ()

    # EnqueueExtensions --------------------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # A placed pod added, relabelled or deleted changes the count of its domain, hence the skew. A
        # node added, deleted, relabelled (it moves between domains, or gains the keys) or with new
        # taints (nodeTaintsPolicy: Honor) changes the domains and hence the global minimum.
        # The hints judge the constraints Filter judged: the pod's own, or the DoNotSchedule defaults.
        def on_pod(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
            return pod_change_hint(pod, old, new, self._constraints.of(pod, DO_NOT_SCHEDULE))

        def on_node(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
            return node_change_hint(pod, old, new, self._constraints.of(pod, DO_NOT_SCHEDULE))

        return pod_and_node_events(
            on_pod,
            ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT,
            on_node,
        )


def new(args: PodTopologySpreadArgs | None, handle: Handle) -> PodTopologySpread:
    """None (a framework built without a configuration): the defaults."""
    return PodTopologySpread(PodTopologySpreadArgs() if args is None else args, handle)


# ----------------------------------------------------------------------------------------- hints


def _matches_any(constraints: Sequence[Constraint], labels: Mapping[str, str]) -> bool:
    return any(c.selector.matches(labels) for c in constraints)


def pod_change_hint(
    pod: objects_pb2.Pod, old: Any, new: Any, constraints: Sequence[Constraint] | None = None
) -> QueueingHint:
    """Whether a placed pod's add / label update / delete may change the pending pod's skews under
    ``constraints`` (by default the pod's own DoNotSchedule ones)."""
    for other in (old, new):
        # Only placed pods of the pod's own namespace are counted.
        if other is None:
            continue
        if not other.spec.node_name or other.metadata.namespace != pod.metadata.namespace:
            return QueueingHint.SKIP
    if constraints is None:
        constraints = constraints_of(pod, DO_NOT_SCHEDULE)
    if old is not None and new is not None:
        if old.metadata.labels == new.metadata.labels:
            return QueueingHint.SKIP
        # Only a change in whether the pod matches some constraint moves a count.
        flipped = any(c.selector.matches(old.metadata.labels) != c.selector.matches(new.metadata.labels)
                      for c in constraints)
        return QueueingHint.QUEUE if flipped else QueueingHint.SKIP
    changed = new if new is not None else old
    if changed is None:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE if _matches_any(constraints, changed.metadata.labels) else QueueingHint.SKIP


def node_change_hint(
    pod: objects_pb2.Pod, old: Any, new: Any, constraints: Sequence[Constraint] | None = None
) -> QueueingHint:
    """Whether an added, deleted or updated node may change the pending pod's domains under
    ``constraints`` (by default the pod's own DoNotSchedule ones)."""
    if constraints is None:
        constraints = constraints_of(pod, DO_NOT_SCHEDULE)
    old_matches = old is not None and has_all_keys(old.metadata.labels, constraints)
    new_matches = new is not None and has_all_keys(new.metadata.labels, constraints)
    if old is not None and new is not None:
        if old_matches != new_matches:
            # The node joined or left the eligible nodes.
            return QueueingHint.QUEUE
        if new_matches and (
            any(old.metadata.labels[c.topology_key] != new.metadata.labels[c.topology_key]
                for c in constraints)
            or old.spec.taints != new.spec.taints
        ):
            # It moved to another domain, or its taints changed (nodeTaintsPolicy: Honor counts them).
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
    # Added or deleted: it matters if it is (was) in some domain of every constraint.
    return QueueingHint.QUEUE if (new_matches or old_matches) else QueueingHint.SKIP
