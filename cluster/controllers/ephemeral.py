"""The ephemeral volume controller (kube-controller-manager's ephemeral-volume, pkg/controller/volume/
ephemeral): makes the PersistentVolumeClaim of each generic ephemeral volume of a pod, and, since podsched
has no garbage collector, deletes the claims of pods that are gone.

For a pod (keys "pod:namespace/name") not being deleted, each volume with ``ephemeral.volumeClaimTemplate``
gets the claim ``<pod name>-<volume name>``: the template's labels, annotations and spec, and an
ownerReference to the pod (controller and blockOwnerDeletion set). A claim of that name that the pod does
not own is never adopted: the sync fails naming it (upstream's "was not created for pod"), and the pod waits
until that claim goes. A failed create is reported on the pod as a Warning event FailedBinding.

For a claim (keys "claim:namespace/name") whose controlling owner is a pod: when that pod is gone (or
another pod of that name stands in its place), the claim is deleted with its resourceVersion as
precondition, as the garbage collector would (asking the server about a pod the informer does not show).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from cluster.api import errors, objects_pb2
from cluster.api.kinds import PERSISTENT_VOLUME_CLAIM, POD
from cluster.api.volumes import ephemeral_claim_name
from cluster.client import Client, Informer
from cluster.controllers.controller import InformerController
from cluster.controllers.events import WARNING, record_event, reference_to

log = logging.getLogger(__name__)

POD_KEY_PREFIX = "pod:"
CLAIM_KEY_PREFIX = "claim:"
#: Pods by "namespace/name" of the claims their ephemeral volumes make.
EPHEMERAL_CLAIM_INDEX = "ephemeral-claim"
#: Claims by the uid of the pod that controls them.
OWNER_INDEX = "owner"
EVENT_COMPONENT = "ephemeral_volume"
FAILED_BINDING = "FailedBinding"


def ephemeral_volumes(pod: objects_pb2.Pod) -> list[objects_pb2.Volume]:
    return [volume for volume in pod.spec.volumes if volume.HasField("ephemeral")]


def _claims_of(pod: objects_pb2.Pod) -> list[str]:
    namespace = pod.metadata.namespace
    return [f"{namespace}/{ephemeral_claim_name(pod, volume)}" for volume in ephemeral_volumes(pod)]


def controlling_pod(claim: objects_pb2.PersistentVolumeClaim) -> objects_pb2.OwnerReference | None:
    """The pod that controls ``claim``, as its ownerReferences name it."""
    return next((ref for ref in claim.metadata.owner_references
                 if ref.controller and ref.kind == POD.name and ref.api_version == POD.api_version), None)


def _controlling_pod_uid(claim: objects_pb2.PersistentVolumeClaim) -> list[str]:
    owner = controlling_pod(claim)
    return [owner.uid] if owner is not None else []


def not_for_pod(pod: objects_pb2.Pod, claim: objects_pb2.PersistentVolumeClaim) -> str | None:
    """Why ``claim`` is not the one made for ``pod`` (ephemeral.VolumeIsForPod), or None."""
    owner = controlling_pod(claim)
    if owner is None or owner.uid != pod.metadata.uid:
        return (f"PVC {claim.metadata.namespace}/{claim.metadata.name} was not created for pod "
                f"{pod.metadata.namespace}/{pod.metadata.name} (pod is not owner)")
    return None


def claim_for(pod: objects_pb2.Pod, volume: objects_pb2.Volume) -> objects_pb2.PersistentVolumeClaim:
    """The claim the controller makes for ``pod``'s ephemeral ``volume``."""
    template = volume.ephemeral.volume_claim_template
    claim = objects_pb2.PersistentVolumeClaim(api_version=PERSISTENT_VOLUME_CLAIM.api_version,
                                              kind=PERSISTENT_VOLUME_CLAIM.name)
    meta = claim.metadata
    meta.name = ephemeral_claim_name(pod, volume)
    meta.namespace = pod.metadata.namespace
    meta.labels.update(template.metadata.labels)
    meta.annotations.update(template.metadata.annotations)
    meta.owner_references.append(objects_pb2.OwnerReference(
        api_version=POD.api_version, kind=POD.name, name=pod.metadata.name, uid=pod.metadata.uid,
        controller=True, block_owner_deletion=True))
    claim.spec.CopyFrom(template.spec)
    return claim


class EphemeralVolumeController(InformerController):
    """Makes pods' ephemeral claims and deletes those of gone pods while ``run()`` runs."""

    name = "ephemeral-volume"

    def __init__(self, client: Client) -> None:
        super().__init__(client)
        self._pods = Informer(client, POD, indexers={EPHEMERAL_CLAIM_INDEX: _claims_of})
        self._claims = Informer(client, PERSISTENT_VOLUME_CLAIM, indexers={OWNER_INDEX: _controlling_pod_uid})
        self._pods.add_handler(self._pod_changed, self._pod_updated, self._pod_deleted)
        self._claims.add_handler(self._claim_added, None, self._claim_deleted)

    def _informers(self) -> Mapping[str, Informer[Any]]:
        return {"pod": self._pods, "persistentvolumeclaim": self._claims}

    def _after_sync(self, tasks: asyncio.TaskGroup) -> None:
        log.info("ephemeral volume controller synced: %d pods, %d claims", len(self._pods), len(self._claims))

    def _what(self, key: str) -> str:
        if key.startswith(POD_KEY_PREFIX):
            return f"pod {key.removeprefix(POD_KEY_PREFIX)}"
        return f"PersistentVolumeClaim {key.removeprefix(CLAIM_KEY_PREFIX)}"

    # ----------------------------------------------------------------------------------------- events

    def _pod_changed(self, pod: objects_pb2.Pod) -> None:
        if ephemeral_volumes(pod) and not pod.metadata.HasField("deletion_timestamp"):
            key = self._pods.key(pod)
            claims = [self._claims.get(claim) for claim in _claims_of(pod)]
            if any(claim is None or not_for_pod(pod, claim) for claim in claims):
                self._queue.add(POD_KEY_PREFIX + key)

    def _pod_updated(self, old: objects_pb2.Pod, new: objects_pb2.Pod) -> None:
        self._pod_changed(new)

    def _pod_deleted(self, pod: objects_pb2.Pod) -> None:
        for claim in self._claims.by_index(OWNER_INDEX, pod.metadata.uid):
            self._queue.add(CLAIM_KEY_PREFIX + self._claims.key(claim))

    def _claim_added(self, claim: objects_pb2.PersistentVolumeClaim) -> None:
        if controlling_pod(claim) is not None:
            # Its pod may be gone already (it went while the controller was not running).
            self._queue.add(CLAIM_KEY_PREFIX + self._claims.key(claim))

    def _claim_deleted(self, claim: objects_pb2.PersistentVolumeClaim) -> None:
        # A pod whose claim went gets it again.
        for pod in self._pods.by_index(EPHEMERAL_CLAIM_INDEX, self._claims.key(claim)):
            self._pod_changed(pod)

    # ------------------------------------------------------------------------------------------ syncs

    async def _sync(self, key: str) -> None:
        if key.startswith(POD_KEY_PREFIX):
            pod = self._pods.get(key.removeprefix(POD_KEY_PREFIX))
            if pod is not None and not pod.metadata.HasField("deletion_timestamp"):
                await self._sync_pod(pod)
        else:
            claim = self._claims.get(key.removeprefix(CLAIM_KEY_PREFIX))
            if claim is not None:
                await self._collect(claim)

    async def _sync_pod(self, pod: objects_pb2.Pod) -> None:
        for volume in ephemeral_volumes(pod):
            name = ephemeral_claim_name(pod, volume)
            existing = self._claims.get(f"{pod.metadata.namespace}/{name}")
            if existing is not None:
                problem = not_for_pod(pod, existing)
                if problem is not None:
                    # Logged as a warning and tried again (after a backoff, or once that claim goes).
                    raise errors.AlreadyExists(problem)
                continue
            try:
                await self._client.create(claim_for(pod, volume))
            except errors.AlreadyExists:
                continue  # made meanwhile: its event brings the owner check
            except errors.ApiError as exc:
                involved = reference_to(POD.name, POD.api_version, pod.metadata)
                await record_event(self._client, involved, WARNING, FAILED_BINDING,
                                   f"PVC creation failed: {exc.message}", EVENT_COMPONENT, log)
                raise
            log.info("created PersistentVolumeClaim %s/%s for ephemeral volume %s of pod %s",
                     pod.metadata.namespace, name, volume.name, pod.metadata.name)

    async def _collect(self, claim: objects_pb2.PersistentVolumeClaim) -> None:
        """Delete ``claim`` if the pod that controls it is gone."""
        owner = controlling_pod(claim)
        if owner is None:
            return
        pod = self._pods.get(f"{claim.metadata.namespace}/{owner.name}")
        if pod is None or pod.metadata.uid != owner.uid:
            pod = await self._live_pod(claim.metadata.namespace, owner.name)
        if pod is not None and pod.metadata.uid == owner.uid:
            return
        try:
            await self._client.delete(PERSISTENT_VOLUME_CLAIM, claim.metadata.name, claim.metadata.namespace,
                                      resource_version=claim.metadata.resource_version)
        except errors.NotFound:
            return
        log.info("deleted PersistentVolumeClaim %s/%s: its pod %s is gone", claim.metadata.namespace,
                 claim.metadata.name, owner.name)

    async def _live_pod(self, namespace: str, name: str) -> objects_pb2.Pod | None:
        try:
            pod = await self._client.get(POD, name, namespace)
        except errors.NotFound:
            return None
        assert isinstance(pod, objects_pb2.Pod)
        return pod
