"""What happened to every pod of a simulation: the ``PodTracker`` follows pods through an informer, and
``PodOutcome`` is one line of the result (docs/scenario-format.md's JSON); ``PodGroupOutcome`` is one
line of its ``podGroups`` section, made at the end from the PodGroup and the pods that name it. A pod
with resource claims also gets what its claims were allocated (claims.py).

The tracker remembers pods after they are deleted (preemption's victims are reported with
``"deleted": true`` and the node they ran on), and knows which pods are terminating and until when,
because the simulator finishes graceful deletions itself on the virtual clock (see driver.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message

from cluster.api import kinds, objects_pb2, podgroups
from cluster.api.volumes import uses_claims
from cluster.client import Client, Informer
from cluster.simulate.claims import ClaimOutcome, claim_outcomes
from cluster.simulate.volumes import VolumeOutcome, volume_outcomes

POD_SCHEDULED = "PodScheduled"


@dataclass(frozen=True, slots=True)
class PodOutcome:
    namespace: str
    name: str
    #: spec.nodeName at the end (for a deleted pod: the node it ran on), or None.
    node: str | None
    nominated_node: str | None
    deleted: bool
    #: The message of a PodScheduled=False condition (the scheduler's FitError), or None.
    reason: str | None
    #: Each of spec.resourceClaims with its devices; None for a pod without resource claims (whose line
    #: then has no "claims" key, as before claims existed).
    claims: tuple[ClaimOutcome, ...] | None = None
    #: Each volume that uses a PersistentVolumeClaim, with the claim's volume; None for a pod without
    #: such volumes (whose line then has no "volumes" key).
    volumes: tuple[VolumeOutcome, ...] | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "namespace": self.namespace,
            "name": self.name,
            "node": self.node,
            "nominatedNode": self.nominated_node,
            "deleted": self.deleted,
            "reason": self.reason,
        }
        if self.claims is not None:
            document["claims"] = [claim.to_json() for claim in self.claims]
        if self.volumes is not None:
            document["volumes"] = [volume.to_json() for volume in self.volumes]
        return document

    @classmethod
    def of(
        cls, pod: objects_pb2.Pod, *, deleted: bool,
        claims: Mapping[tuple[str, str], objects_pb2.ResourceClaim] | None = None,
        volume_claims: Mapping[tuple[str, str], objects_pb2.PersistentVolumeClaim] | None = None,
    ) -> PodOutcome:
        """``pod``'s outcome; ``claims``: the ResourceClaims at the end by namespace and name (None: the
        simulation has none); ``volume_claims`` the same of the PersistentVolumeClaims."""
        return cls(
            namespace=pod.metadata.namespace,
            name=pod.metadata.name,
            node=pod.spec.node_name or None,
            nominated_node=pod.status.nominated_node_name or None,
            deleted=deleted,
            reason=unschedulable_message(pod),
            claims=claim_outcomes(pod, claims or {}) if pod.spec.resource_claims else None,
            volumes=volume_outcomes(pod, volume_claims or {}) if uses_claims(pod) else None,
        )


def unschedulable_message(pod: objects_pb2.Pod) -> str | None:
    for condition in pod.status.conditions:
        if condition.type == POD_SCHEDULED and condition.status == "False":
            return condition.message or None
    return None


@dataclass(frozen=True, slots=True)
class PodGroupOutcome:
    namespace: str
    name: str
    #: The spelling the group was written in: scheduling.k8s.io/v1alpha3 or scheduling.x-k8s.io/v1alpha1.
    api_version: str
    #: schedulingPolicy.gang.minCount or minMember; None for a group that is no gang (basic, minMember 0).
    min_count: int | None
    #: The live pods that name the group, and how many of them are bound.
    members: int
    bound: int
    #: For a gang not admitted, the message of the group's PodGroupInitiallyScheduled=False condition, or
    #: None.
    reason: str | None

    @property
    def admitted(self) -> bool | None:
        """Whether the gang got its placement (at least minCount members bound); None for no gang, whose
        pods are scheduled one by one."""
        return None if self.min_count is None else self.bound >= self.min_count

    def to_json(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "apiVersion": self.api_version,
            "minCount": self.min_count,
            "members": self.members,
            "bound": self.bound,
            "admitted": self.admitted,
            "reason": self.reason,
        }

    @classmethod
    def of(cls, group: objects_pb2.PodGroup, pods: Iterable[objects_pb2.Pod]) -> PodGroupOutcome:
        """``group``'s outcome among ``pods`` (the live pods of the simulation)."""
        meta = group.metadata
        members = [pod for pod in pods if pod.metadata.namespace == meta.namespace
                   and podgroups.group_name_of(pod) == meta.name]
        min_count = podgroups.min_count(group) or None
        bound = sum(1 for pod in members if pod.spec.node_name)
        waiting = min_count is not None and bound < min_count
        return cls(
            namespace=meta.namespace,
            name=meta.name,
            api_version=group.api_version,
            min_count=min_count,
            members=len(members),
            bound=bound,
            reason=not_scheduled_message(group) if waiting else None,
        )


def not_scheduled_message(group: objects_pb2.PodGroup) -> str | None:
    for condition in group.status.conditions:
        if condition.type == podgroups.POD_GROUP_INITIALLY_SCHEDULED and condition.status == "False":
            return condition.message or None
    return None


def outcomes_json(
    outcomes: Iterable[PodOutcome], groups: Iterable[PodGroupOutcome] | None = None
) -> dict[str, Any]:
    """The result document, pods sorted by namespace then name; with ``groups`` (a scenario that has
    PodGroups), a ``podGroups`` section sorted the same way."""
    ordered = sorted(outcomes, key=lambda o: (o.namespace, o.name))
    document: dict[str, Any] = {"pods": [outcome.to_json() for outcome in ordered]}
    if groups is not None:
        document["podGroups"] = [group.to_json()
                                 for group in sorted(groups, key=lambda g: (g.namespace, g.name))]
    return document


class PodTracker:
    """Every pod of the simulation as last seen, including the deleted ones."""

    def __init__(self, client: Client) -> None:
        self.informer = Informer(client, kinds.POD)
        self._deleted: dict[str, objects_pb2.Pod] = {}
        #: key -> deletionTimestamp (wall seconds) of the pods being deleted gracefully.
        self._terminating: dict[str, int] = {}
        #: Bumped whenever a pod's node, nomination or existence changes: the driver's measure of progress.
        self.progress = 0
        self.informer.add_handler(on_add=self._added, on_update=self._updated, on_delete=self._gone)

    def _added(self, pod: Message) -> None:
        assert isinstance(pod, objects_pb2.Pod)
        self._deleted.pop(self.informer.key(pod), None)
        self._note_terminating(pod)
        self.progress += 1

    def _updated(self, old: Message, new: Message) -> None:
        assert isinstance(old, objects_pb2.Pod) and isinstance(new, objects_pb2.Pod)
        self._note_terminating(new)
        if (old.spec.node_name, old.status.nominated_node_name) != (
            new.spec.node_name, new.status.nominated_node_name
        ):
            self.progress += 1

    def _gone(self, pod: Message) -> None:
        assert isinstance(pod, objects_pb2.Pod)
        key = self.informer.key(pod)
        self._deleted[key] = pod
        self._terminating.pop(key, None)
        self.progress += 1

    def _note_terminating(self, pod: objects_pb2.Pod) -> None:
        key = self.informer.key(pod)
        if pod.metadata.HasField("deletion_timestamp"):
            self._terminating[key] = pod.metadata.deletion_timestamp.seconds
        else:
            self._terminating.pop(key, None)

    def terminating(self) -> dict[str, int]:
        """key -> the wall second at which each terminating pod's grace period ends."""
        return dict(self._terminating)

    def live_pods(self) -> list[objects_pb2.Pod]:
        return [pod for _, pod in self.informer.items()]

    def uses_claims(self) -> bool:
        """Whether any pod, live or deleted, has resource claims."""
        return any(pod.spec.resource_claims for pod in [*self.live_pods(), *self._deleted.values()])

    def uses_volume_claims(self) -> bool:
        """Whether any pod, live or deleted, has a volume that uses a PersistentVolumeClaim."""
        return any(uses_claims(pod) for pod in [*self.live_pods(), *self._deleted.values()])

    def outcomes(
        self, claims: Mapping[tuple[str, str], objects_pb2.ResourceClaim] | None = None,
        volume_claims: Mapping[tuple[str, str], objects_pb2.PersistentVolumeClaim] | None = None,
    ) -> list[PodOutcome]:
        """Every pod's outcome; ``claims`` and ``volume_claims`` as ``PodOutcome.of`` takes them."""
        live = [PodOutcome.of(pod, deleted=False, claims=claims, volume_claims=volume_claims)
                for pod in self.live_pods()]
        gone = [PodOutcome.of(pod, deleted=True, claims=claims, volume_claims=volume_claims)
                for pod in self._deleted.values()]
        return live + gone
