"""The InterPodAffinity plugin: the plugin class and the events that can change its verdict."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cluster.api import objects_pb2
from cluster.api.kinds import NAMESPACE_NAME_LABEL
from scheduler.config.argtypes import InterPodAffinityArgs
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    Handle,
    NamespaceLabels,
    PodInfo,
    QueueingHint,
    Signature,
)
from scheduler.framework.types import AffinityTerm, affinity_term
from scheduler.plugins.interpodaffinity.filtering import Filtering
from scheduler.plugins.interpodaffinity.scoring import Scoring
from scheduler.plugins.podcounts import pod_and_node_events
from scheduler.plugins.split import SplitPlugin

NAME = "InterPodAffinity"

#: kube-scheduler's InterPodAffinityArgs, decoded, defaulted and validated by scheduler.config.
ARGS = InterPodAffinityArgs


class InterPodAffinity(SplitPlugin):
    """Required and preferred pod (anti-)affinity, including existing pods' terms toward the pod."""

    def __init__(self, args: InterPodAffinityArgs, handle: Handle) -> None:
        self.args = args
        self._handle = handle
        self._filtering = Filtering(handle)
        self._scoring = Scoring(
            handle, args.hard_pod_affinity_weight, args.ignore_preferred_terms_of_existing_pods
        )

    @property
    def name(self) -> str:
        return NAME

    def sign(self, pod: PodInfo) -> Signature | None:
        """Unsignable while anything pod-to-pod is at play: the pod's own terms, or placed pods with
        terms (which may attract or refuse it). Then a node's verdict and score depend on the pods of
        other nodes in its topology domain, not on its NodeInfo alone. Without either, Filter passes
        and PreScore skips, whatever the pod."""
        if pod.has_affinity:
            return None
        lister = self._handle.snapshot().node_infos()
        if lister.have_pods_with_affinity() or lister.have_pods_with_required_anti_affinity():
            return None
        return ()

    # EnqueueExtensions --------------------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # A placed pod that is added may be the one the pod's affinity waits for; one that is deleted may
        # be the one its anti-affinity (or the deleted pod's own anti-affinity) refused; a label change
        # may do either. A node that is added or relabelled may open a topology domain the pod can go
        # to. Taint updates are listed too, as kube-scheduler does, for nodes that join tainted not-ready
        # and become usable by losing the taint. A Namespace created or relabelled may come under a
        # term's namespaceSelector (kube-scheduler does not listen for namespaces; without this, a pod
        # waiting for a namespace to be labelled would wait for the unschedulable timeout).
        namespaces = self._handle.namespaces

        def pod_hint(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
            return pod_change_hint(pod, old, new, namespaces.snapshot())

        return [
            *pod_and_node_events(
                pod_hint,
                ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT,
                node_change_hint,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NAMESPACE, ActionType.ADD | ActionType.UPDATE),
                namespace_change_hint,
            ),
        ]


def new(args: InterPodAffinityArgs | None, handle: Handle) -> InterPodAffinity:
    """None (a framework built without a configuration): the defaults."""
    return InterPodAffinity(InterPodAffinityArgs() if args is None else args, handle)


# ----------------------------------------------------------------------------------------- hints


def _terms(pod: objects_pb2.Pod, terms: Sequence[objects_pb2.PodAffinityTerm]) -> list[AffinityTerm]:
    return [affinity_term(pod, term) for term in terms]


def _required_affinity(pod: objects_pb2.Pod) -> list[AffinityTerm]:
    return _terms(pod, pod.spec.affinity.pod_affinity.required_during_scheduling_ignored_during_execution)


def _required_anti_affinity(pod: objects_pb2.Pod) -> list[AffinityTerm]:
    anti = pod.spec.affinity.pod_anti_affinity
    return _terms(pod, anti.required_during_scheduling_ignored_during_execution)


def _matches_all(terms: Sequence[AffinityTerm], pod: objects_pb2.Pod, namespaces: NamespaceLabels) -> bool:
    return bool(terms) and all(term.matches(pod, namespaces) for term in terms)


def _matches_any(terms: Sequence[AffinityTerm], pod: objects_pb2.Pod, namespaces: NamespaceLabels) -> bool:
    return any(term.matches(pod, namespaces) for term in terms)


def pod_change_hint(pod: objects_pb2.Pod, old: Any, new: Any, namespaces: NamespaceLabels) -> QueueingHint:
    """Whether a placed pod's add / label update / delete may let ``pod`` through Filter, with the
    namespaces' labels as ``namespaces`` has them."""
    if (new is not None and not new.spec.node_name) or (old is not None and not old.spec.node_name):
        # An unscheduled pod is on no node: it counts for no topology domain.
        return QueueingHint.SKIP
    affinity = _required_affinity(pod)
    anti = _required_anti_affinity(pod)
    if old is not None and new is not None:
        # Affinity looks for one pod matching all terms; anti-affinity refuses a pod matching any term.
        if not _matches_all(affinity, old, namespaces) and _matches_all(affinity, new, namespaces):
            return QueueingHint.QUEUE
        if _matches_any(anti, old, namespaces) and not _matches_any(anti, new, namespaces):
            return QueueingHint.QUEUE
        # The updated pod's own anti-affinity may have stopped refusing ``pod`` (matchLabelKeys take
        # their values from the updated pod's labels).
        refused_before = _matches_any(_required_anti_affinity(old), pod, namespaces)
        if refused_before and not _matches_any(_required_anti_affinity(new), pod, namespaces):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
    if new is not None:
        return QueueingHint.QUEUE if _matches_all(affinity, new, namespaces) else QueueingHint.SKIP
    if old is None:
        return QueueingHint.QUEUE
    if _matches_any(anti, old, namespaces) or _matches_any(_required_anti_affinity(old), pod, namespaces):
        return QueueingHint.QUEUE
    # The deleted pod was the last that matched the affinity terms: a pod matching its own terms may now
    # start the group afresh (the first-pod rule).
    if _matches_all(affinity, old, namespaces) and _matches_all(affinity, pod, namespaces):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def node_change_hint(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    """Whether an added or updated node may let ``pod`` through Filter."""
    if new is None:
        return QueueingHint.QUEUE
    keys = {term.topology_key for term in (*_required_affinity(pod), *_required_anti_affinity(pod))}
    new_labels = new.metadata.labels
    if not keys:
        # Rejected for existing pods' anti-affinity: any new or relabelled node may lie outside the
        # domains they guard.
        return QueueingHint.QUEUE
    if old is None or old.spec.taints != new.spec.taints:
        # Added (or, as kube-scheduler treats taint updates, usable for the first time): it helps if it
        # carries one of the pod's topology keys.
        return QueueingHint.QUEUE if any(key in new_labels for key in keys) else QueueingHint.SKIP
    old_labels = old.metadata.labels
    # A topology label gained, lost or changed: the node moved between domains.
    if any(old_labels.get(key) != new_labels.get(key) for key in keys):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def namespace_change_hint(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    """Whether a Namespace created or relabelled may let ``pod`` through Filter: its labels now bring it
    under a required affinity term's namespaceSelector, or take it out of a required anti-affinity
    term's; or it is the pod's own namespace, whose labels existing pods' terms judge the pod by."""
    name = new.metadata.name
    # Before its object existed, a namespace counted as carrying only its name label.
    old_labels = old.metadata.labels if old is not None else {NAMESPACE_NAME_LABEL: name}
    if old_labels == new.metadata.labels:
        return QueueingHint.SKIP
    if name == pod.metadata.namespace:
        return QueueingHint.QUEUE
    before = NamespaceLabels({name: old_labels})
    after = NamespaceLabels({name: new.metadata.labels})
    for term in _required_affinity(pod):
        if not term.matches_namespace(name, before) and term.matches_namespace(name, after):
            return QueueingHint.QUEUE
    for term in _required_anti_affinity(pod):
        if term.matches_namespace(name, before) and not term.matches_namespace(name, after):
            return QueueingHint.QUEUE
    return QueueingHint.SKIP
