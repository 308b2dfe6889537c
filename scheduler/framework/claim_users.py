"""Which pending pods a ResourceClaim event is offered to.

A claim event is offered to waiting pods, whose rejecting plugins' queueing hints then decide whether it
requeues them. Offering it to every waiting pod, as kube-scheduler does, costs O(waiting pods) per event,
and a claim changes several times in each pod's life (created by the resourceclaim controller, allocated
and reserved by the scheduler): quadratic in the pods. ResourceClaim events follow a narrower contract,
which every hint registered for them keeps (DynamicResources' does):

* an event that can free devices (``frees_devices``: the allocation cleared, or an allocated claim
  deleted) may help any pod, and is offered to every waiting pod;
* any other claim event can help only the pods that name the claim (``claim_names_of``: a
  resourceClaimName, or a generated name recorded in the pod's status) and the pod the claim was generated
  for (its controlling owner: a pod still waiting for its template's claim, found without an index), or,
  for a claim generated for a PodGroup, the group's pods (they may use it before their status names it).

``ClaimEventAudience`` is that choice. ``EveryPendingPod`` is the reference: every event to every pod.
``ClaimUsers`` is the fast path: an index of pending pods by the claims they name, kept by the
scheduler's pod event handlers, O(the pod's claims) per pod event and nothing for a pod without claims;
an event costs O(pods that use the claim). The two offer every event to the same pods in effect (a hint
Skips for the pods the index leaves out): a property test checks it.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from cluster.api import objects_pb2
from cluster.api.dra.podclaims import claim_names_of, controlling_pod, controlling_pod_group
from scheduler.framework.dra_manager import claim_key
from scheduler.framework.types import pod_key


def frees_devices(old: objects_pb2.ResourceClaim | None, new: objects_pb2.ResourceClaim | None) -> bool:
    """Whether the change from ``old`` to ``new`` (None: added, deleted) gives an allocation's devices back:
    the allocation was cleared (an allocation is never changed in place) or the allocated claim is gone."""
    return (old is not None and old.status.HasField("allocation")
            and (new is None or not new.status.HasField("allocation")))


class ClaimEventAudience(Protocol):
    """The pending pods a ResourceClaim event is offered to, from the pods the scheduler was told of."""

    def set_pod(self, pod: objects_pb2.Pod) -> None:
        """A pending pod of this scheduler was added or changed."""

    def remove_pod(self, pod: objects_pb2.Pod) -> None:
        """The pod is no longer pending (bound or deleted)."""

    def audience(
        self, old: objects_pb2.ResourceClaim | None, new: objects_pb2.ResourceClaim | None
    ) -> Collection[str] | None:
        """The keys of the pods the claim event from ``old`` to ``new`` is offered to; None: every
        waiting pod."""


class EveryPendingPod:
    """The reference: every claim event is offered to every waiting pod (kube-scheduler's way)."""

    def set_pod(self, pod: objects_pb2.Pod) -> None:
        pass

    def remove_pod(self, pod: objects_pb2.Pod) -> None:
        pass

    def audience(
        self, old: objects_pb2.ResourceClaim | None, new: objects_pb2.ResourceClaim | None
    ) -> Collection[str] | None:
        return None


class ClaimUsers:
    """Pending pods by the claims they name ("namespace/name"); a claim event is offered to those pods and
    to the pod it was generated for, unless it frees devices."""

    __slots__ = ("_claims_of", "_users")

    def __init__(self) -> None:
        #: claim key -> keys of the pods naming it.
        self._users: dict[str, set[str]] = {}
        #: pod key -> the claim keys it is filed under.
        self._claims_of: dict[str, tuple[str, ...]] = {}

    def set_pod(self, pod: objects_pb2.Pod) -> None:
        if not pod.spec.resource_claims:  # immutable: a pod without claims is never filed
            return
        key = pod_key(pod)
        namespace = pod.metadata.namespace
        claims = tuple(claim_key(namespace, name) for name in claim_names_of(pod))
        if pod.spec.scheduling_group.HasField("pod_group_name"):
            claims += (_group_key(namespace, pod.spec.scheduling_group.pod_group_name),)
        filed = self._claims_of.get(key, ())
        if claims == filed:
            return
        self._unfile(key, filed)
        if claims:
            self._claims_of[key] = claims
            for claim in claims:
                self._users.setdefault(claim, set()).add(key)
        else:
            self._claims_of.pop(key, None)

    def remove_pod(self, pod: objects_pb2.Pod) -> None:
        if not pod.spec.resource_claims:
            return
        key = pod_key(pod)
        self._unfile(key, self._claims_of.pop(key, ()))

    def _unfile(self, key: str, claims: tuple[str, ...]) -> None:
        for claim in claims:
            users = self._users.get(claim)
            if users is not None:
                users.discard(key)
                if not users:
                    del self._users[claim]

    def users_of(self, namespace: str, name: str) -> Collection[str]:
        """The keys of the pending pods that name claim ``namespace/name``."""
        return self._users.get(claim_key(namespace, name), ())

    def audience(
        self, old: objects_pb2.ResourceClaim | None, new: objects_pb2.ResourceClaim | None
    ) -> Collection[str] | None:
        if frees_devices(old, new):
            return None
        claim = new if new is not None else old
        assert claim is not None, "a claim event carries a claim"
        meta = claim.metadata
        keys = set(self.users_of(meta.namespace, meta.name))
        if (owner := controlling_pod(claim)) is not None:
            keys.add(f"{meta.namespace}/{owner.name}")
        elif (group := controlling_pod_group(claim)) is not None:
            keys.update(self._users.get(_group_key(meta.namespace, group.name), ()))
        return keys


def _group_key(namespace: str, name: str) -> str:
    """Where the pods of PodGroup ``namespace/name`` are filed (no claim key starts so: a claim name is a
    DNS subdomain)."""
    return f"podgroup:{namespace}/{name}"
