"""DynamicResources' queueing hints (kube-scheduler's isSchedulableAfterClaimChange and
isSchedulableAfterPodChange): which claim and pod events may make a pod it rejected schedulable.

The claim hint keeps the contract of ResourceClaim events (scheduler/framework/claim_users.py): it
queues only pods that use the claim, unless the change frees devices; the scheduler offers the other
claim events to those pods alone."""

from __future__ import annotations

from typing import Any

from cluster.api import objects_pb2
from scheduler.framework import QueueingHint
from scheduler.framework.claim_users import frees_devices
from scheduler.framework.dra_manager import ResourceClaimTracker
from scheduler.plugins.dynamicresources.claims import ClaimProblem, pod_claims, uses_claim


def after_claim_change(
    tracker: ResourceClaimTracker, group: objects_pb2.PodGroup | None, pod: objects_pb2.Pod, old: Any,
    new: Any,
) -> QueueingHint:
    """A claim was added or updated (``group``: the pod's PodGroup, whose claims the pod may use)."""
    modified: objects_pb2.ResourceClaim = new
    original: objects_pb2.ResourceClaim | None = old
    frees = frees_devices(original, modified)
    if not frees and not uses_claim(pod, modified, group):
        # Run for every waiting pod on every claim event: a claim the pod does not name is skipped by
        # its name, without looking the pod's claims up.
        return QueueingHint.SKIP
    try:
        uses = any(claim.metadata.uid == modified.metadata.uid for claim in pod_claims(pod, tracker, group))
    except ClaimProblem:
        # Some claim of the pod is still missing (or unusable): this change alone does not help.
        return QueueingHint.SKIP
    if frees:
        # A deallocated claim frees devices any pod may use.
        return QueueingHint.QUEUE
    if not uses:
        return QueueingHint.SKIP
    if original is None:
        return QueueingHint.QUEUE
    # A change of metadata or spec alone (a finalizer added) changes nothing the plugin looks at.
    return QueueingHint.SKIP if original.status == modified.status else QueueingHint.QUEUE


def after_pod_change(
    tracker: ResourceClaimTracker, group: objects_pb2.PodGroup | None, pod: objects_pb2.Pod, old: Any,
    new: Any,
) -> QueueingHint:
    """The pod's status got the name of a claim generated for it (or for its PodGroup)."""
    modified: objects_pb2.Pod = new
    if pod.metadata.uid != modified.metadata.uid:
        return QueueingHint.SKIP
    try:
        pod_claims(modified, tracker, group)
    except ClaimProblem:
        return QueueingHint.SKIP
    return QueueingHint.QUEUE
