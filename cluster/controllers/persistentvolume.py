"""The PV controller (kube-controller-manager's persistentvolume-binder, pkg/controller/volume/
persistentvolume/pv_controller.go): binds PersistentVolumeClaims to PersistentVolumes, completes the
bindings the scheduler starts, and reclaims the volumes of deleted claims.

For a claim (keys "claim:namespace/name") not yet bound (no pv.kubernetes.io/bind-completed):
- Without spec.volumeName, the best matching volume (cluster.api.persistentvolumes: access modes, class,
  volumeMode, selector, capacity, the smallest that fits, one pre-bound to the claim first) is bound to it.
  For a claim of a WaitForFirstConsumer class only a volume pre-bound to it counts: the scheduler pre-binds
  one (PV claimRef) when it places the pod. With no match: a WaitForFirstConsumer claim the scheduler has
  not asked a volume for (no volume.kubernetes.io/selected-node) waits, with a Normal event
  WaitForFirstConsumer; a claim with a class is handed to the class's provisioner (the annotations
  volume.kubernetes.io/storage-provisioner and its beta twin, a Normal event ExternalProvisioning); a
  claim without a class waits with a Normal event FailedBinding. Before that, a claim that names no class
  at all gets the default StorageClass if one has appeared since it was made.
- With spec.volumeName, that volume is bound to it if it is free and satisfies the claim (else a Warning
  VolumeMismatch), or if it is pre-bound to the claim; one bound to another claim leaves it Pending.
Binding writes the volume's claimRef (and pv.kubernetes.io/bound-by-controller when the controller chose
it), the volume's phase Bound, the claim's spec.volumeName with bind-completed (and bound-by-controller),
then the claim's status: phase Bound, the volume's access modes and capacity. Each write goes at the
resourceVersion read; a conflict sends the key back to the queue and the next sync goes on from where the
objects are.

A bound claim whose volume is gone, or names another claim, is Lost (Warning ClaimLost / ClaimMisbound).

For a volume (keys "volume:name"): without a claimRef, or pre-bound by name only, it is Available. Bound
to a claim that is gone (asked of the server before believing the informer) it is Released and its
reclaim policy runs: Delete deletes it (podsched has no storage behind a volume, so deleting the object is
the whole deletion), Retain keeps it Released, Recycle makes it Available again (what a successful
recycle ends in). Bound to a claim that is bound elsewhere, it is released
(dynamically provisioned with Delete) or unbound.

podsched's controller has no periodic resync: a claim waiting for a volume is synced again when a volume
becomes available, a class appears, or the claim changes. Events are recorded once per claim and reason
(upstream records one per sync, which its event correlator folds into a count).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from cluster.api import errors, objects_pb2
from cluster.api.kinds import PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM, STORAGE_CLASS
from cluster.api.persistentvolumes import (
    ANN_BETA_STORAGE_PROVISIONER,
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_STORAGE_PROVISIONER,
    CLAIM_BOUND,
    CLAIM_LOST,
    CLAIM_PENDING,
    NOT_SUPPORTED_PROVISIONER,
    RECLAIM_DELETE,
    RECLAIM_RECYCLE,
    RECLAIM_RETAIN,
    STORAGE,
    VOLUME_AVAILABLE,
    VOLUME_BOUND,
    VOLUME_FAILED,
    VOLUME_RELEASED,
    WAIT_FOR_FIRST_CONSUMER,
    access_modes_satisfied,
    find_best_match_for_claim,
    is_volume_bound_to_claim,
    requested_storage,
    volume_capacity,
    volume_mode_mismatches,
)
from cluster.api.volumes import (
    BETA_STORAGE_CLASS_ANNOTATION,
    SELECTED_NODE_ANNOTATION,
    claim_class,
    default_class,
    is_default_class,
    volume_class,
)
from cluster.client import Client, Informer
from cluster.controllers.controller import InformerController
from cluster.controllers.events import NORMAL, WARNING, record_event, reference_to

log = logging.getLogger(__name__)

Claim = objects_pb2.PersistentVolumeClaim
Volume = objects_pb2.PersistentVolume

CLAIM_KEY_PREFIX = "claim:"
VOLUME_KEY_PREFIX = "volume:"
#: Volumes by "namespace/name" of the claim their claimRef names.
CLAIM_REF_INDEX = "claimref"
#: Claims not bound yet, by their class name: the claims a new volume or class may serve.
UNBOUND_BY_CLASS_INDEX = "unbound-class"
EVENT_COMPONENT = "persistentvolume-controller"
WAIT_FOR_FIRST_CONSUMER_MESSAGE = "waiting for first consumer to be created before binding"
NO_CLASS_MESSAGE = "no persistent volumes available for this claim and no storage class is set"


def _claim_ref_key(volume: Volume) -> list[str]:
    if not volume.spec.HasField("claim_ref"):
        return []
    return [f"{volume.spec.claim_ref.namespace}/{volume.spec.claim_ref.name}"]


def _unbound_class(claim: Claim) -> list[str]:
    return [] if ANN_BIND_COMPLETED in claim.metadata.annotations else [claim_class(claim)]


def external_provisioning_message(provisioner: str) -> str:
    return (f"Waiting for a volume to be created either by the external provisioner '{provisioner}' or "
            "manually by the system administrator. If volume creation is delayed, please verify that the "
            "provisioner is running and correctly registered.")


def volume_satisfies_claim(volume: Volume,
                           claim: Claim) -> str | None:
    """Why the volume a claim names cannot be bound to it (checkVolumeSatisfyClaim), or None."""
    if volume.metadata.HasField("deletion_timestamp"):
        return f'the volume is marked for deletion "{volume.metadata.name}"'
    if volume_capacity(volume) < requested_storage(claim):
        return "requested PV is too small"
    if volume_class(volume) != claim_class(claim):
        return "storageClassName does not match"
    if volume_mode_mismatches(claim, volume):
        return "incompatible volumeMode"
    if not access_modes_satisfied(claim, volume):
        return "incompatible accessMode"
    return None


class PersistentVolumeController(InformerController):
    """Binds claims to volumes and reclaims released volumes while ``run()`` runs."""

    name = "persistentvolume-binder"

    def __init__(self, client: Client) -> None:
        super().__init__(client)
        self._volumes = Informer(client, PERSISTENT_VOLUME, indexers={CLAIM_REF_INDEX: _claim_ref_key})
        self._claims = Informer(client, PERSISTENT_VOLUME_CLAIM,
                                indexers={UNBOUND_BY_CLASS_INDEX: _unbound_class})
        self._classes = Informer(client, STORAGE_CLASS)
        #: The event last recorded on each claim, by claim key: a claim hears each (reason, message) once.
        self._reported: dict[str, tuple[str, str]] = {}
        self._volumes.add_handler(self._volume_added, self._volume_updated, self._volume_deleted)
        self._claims.add_handler(self._claim_added, self._claim_updated, self._claim_deleted)
        self._classes.add_handler(self._class_added, self._class_updated)

    def _informers(self) -> Mapping[str, Informer[Any]]:
        return {"persistentvolume": self._volumes, "persistentvolumeclaim": self._claims,
                "storageclass": self._classes}

    def _after_sync(self, tasks: asyncio.TaskGroup) -> None:
        log.info("persistentvolume controller synced: %d volumes, %d claims, %d classes",
                 len(self._volumes), len(self._claims), len(self._classes))

    def _what(self, key: str) -> str:
        if key.startswith(CLAIM_KEY_PREFIX):
            return f"PersistentVolumeClaim {key.removeprefix(CLAIM_KEY_PREFIX)}"
        return f"PersistentVolume {key.removeprefix(VOLUME_KEY_PREFIX)}"

    async def _sync(self, key: str) -> None:
        if key.startswith(CLAIM_KEY_PREFIX):
            claim = self._claims.get(key.removeprefix(CLAIM_KEY_PREFIX))
            if claim is not None:
                await self._sync_claim(claim)
        else:
            volume = self._volumes.get(key.removeprefix(VOLUME_KEY_PREFIX))
            if volume is not None:
                await self._sync_volume(volume)

    # ----------------------------------------------------------------------------------------- events

    def _volume_added(self, volume: Volume) -> None:
        self._volume_changed(volume)

    def _volume_updated(self, old: Volume, new: Volume) -> None:
        self._volume_changed(new)

    def _volume_changed(self, volume: Volume) -> None:
        self._queue.add(VOLUME_KEY_PREFIX + volume.metadata.name)
        if volume.spec.HasField("claim_ref"):
            self._queue.add(CLAIM_KEY_PREFIX + _claim_ref_key(volume)[0])
        elif volume.status.phase == VOLUME_AVAILABLE:
            # Without a resync, the claims waiting for a volume of its class hear of it here.
            self._queue_unbound_claims(volume_class(volume))

    def _volume_deleted(self, volume: Volume) -> None:
        for key in _claim_ref_key(volume):
            self._queue.add(CLAIM_KEY_PREFIX + key)

    def _claim_added(self, claim: Claim) -> None:
        self._queue.add(CLAIM_KEY_PREFIX + self._claims.key(claim))

    def _claim_updated(self, old: Claim,
                       new: Claim) -> None:
        self._queue.add(CLAIM_KEY_PREFIX + self._claims.key(new))

    def _claim_deleted(self, claim: Claim) -> None:
        key = self._claims.key(claim)
        self._reported.pop(key, None)
        # Its volume is released: the one it names and any whose claimRef names it.
        names = {volume.metadata.name for volume in self._volumes.by_index(CLAIM_REF_INDEX, key)}
        if claim.spec.volume_name:
            names.add(claim.spec.volume_name)
        for name in sorted(names):
            self._queue.add(VOLUME_KEY_PREFIX + name)

    def _class_added(self, storage_class: objects_pb2.StorageClass) -> None:
        self._queue_unbound_claims(storage_class.metadata.name)
        if is_default_class(storage_class.metadata):
            self._queue_unbound_claims("")  # those that name no class get it

    def _class_updated(self, old: objects_pb2.StorageClass, new: objects_pb2.StorageClass) -> None:
        self._class_added(new)

    def _queue_unbound_claims(self, class_name: str) -> None:
        for claim in self._claims.by_index(UNBOUND_BY_CLASS_INDEX, class_name):
            self._queue.add(CLAIM_KEY_PREFIX + self._claims.key(claim))

    # ----------------------------------------------------------------------------------------- claims

    async def _sync_claim(self, claim: Claim) -> None:
        if ANN_BIND_COMPLETED not in claim.metadata.annotations:
            await self._sync_unbound_claim(claim)
        else:
            await self._sync_bound_claim(claim)

    def _delays_binding(self, claim: Claim) -> bool:
        """Whether the claim's class binds WaitForFirstConsumer (IsDelayBindingMode): a class not seen
        binds at once."""
        name = claim_class(claim)
        storage_class = self._classes.get(name) if name else None
        return storage_class is not None and storage_class.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER

    async def _sync_unbound_claim(self, claim: Claim) -> None:
        if claim.spec.volume_name:
            await self._sync_claim_naming_volume(claim)
            return
        delay = self._delays_binding(claim)
        volumes = [volume for _, volume in self._volumes.items()]
        volume = find_best_match_for_claim(claim, volumes, delay_binding=delay)
        if volume is not None:
            await self._bind(volume, claim)
            return
        if await self._assign_default_class(claim):
            return  # its update brings it back, with the class
        if delay and SELECTED_NODE_ANNOTATION not in claim.metadata.annotations:
            await self._report(claim, NORMAL, "WaitForFirstConsumer", WAIT_FOR_FIRST_CONSUMER_MESSAGE)
        elif claim_class(claim):
            await self._provision(claim)
            return
        else:
            await self._report(claim, NORMAL, "FailedBinding", NO_CLASS_MESSAGE)
        await self._update_claim_status(claim, CLAIM_PENDING, None)

    async def _assign_default_class(self, claim: Claim) -> bool:
        """Give a claim that names no class at all the default StorageClass, if there is one now
        (assignDefaultStorageClass: the default class may come after the claim)."""
        if (claim.spec.HasField("storage_class_name")
                or BETA_STORAGE_CLASS_ANNOTATION in claim.metadata.annotations):
            return False
        default = default_class(storage_class for _, storage_class in self._classes.items())
        if default is None:
            return False
        updated = Claim()
        updated.CopyFrom(claim)
        updated.spec.storage_class_name = default.metadata.name
        await self._client.update(updated)
        log.info("PersistentVolumeClaim %s: assigned the default StorageClass %s", self._claims.key(claim),
                 default.metadata.name)
        return True

    async def _sync_claim_naming_volume(self, claim: Claim) -> None:
        volume = self._volumes.get(claim.spec.volume_name)
        if volume is None:
            await self._update_claim_status(claim, CLAIM_PENDING, None)  # it may come: waits
            return
        if not volume.spec.HasField("claim_ref"):
            problem = volume_satisfies_claim(volume, claim)
            if problem is None:
                await self._bind(volume, claim)
                return
            await self._report(claim, WARNING, "VolumeMismatch",
                               f'Cannot bind to requested volume "{volume.metadata.name}": {problem}')
            await self._update_claim_status(claim, CLAIM_PENDING, None)
            return
        if is_volume_bound_to_claim(volume, claim):
            await self._bind(volume, claim)
            return
        await self._report(claim, WARNING, "FailedBinding",
                           f'volume "{volume.metadata.name}" already bound to a different claim.')
        if ANN_BOUND_BY_CONTROLLER in claim.metadata.annotations:
            raise errors.Invalid(
                f'invalid binding of claim "{self._claims.key(claim)}" to volume "{volume.metadata.name}": '
                f'volume already claimed by "{_claim_ref_key(volume)[0]}"')
        await self._update_claim_status(claim, CLAIM_PENDING, None)

    async def _sync_bound_claim(self, claim: Claim) -> None:
        if not claim.spec.volume_name:
            await self._lose(claim, "ClaimLost", "Bound claim has lost reference to PersistentVolume. "
                                                 "Data on the volume is lost!")
            return
        volume = self._volumes.get(claim.spec.volume_name)
        if volume is None:
            await self._lose(claim, "ClaimLost",
                             "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
        elif not volume.spec.HasField("claim_ref") or volume.spec.claim_ref.uid == claim.metadata.uid:
            await self._bind(volume, claim)
        else:
            await self._lose(claim, "ClaimMisbound",
                             "Two claims are bound to the same volume, this one is bound incorrectly")

    async def _lose(self, claim: Claim, reason: str, message: str) -> None:
        if claim.status.phase == CLAIM_LOST:
            return
        await self._update_claim_status(claim, CLAIM_LOST, None)
        await self._report(claim, WARNING, reason, message)

    async def _provision(self, claim: Claim) -> None:
        """Hand the claim to its class's provisioner (provisionClaim for an external provisioner)."""
        storage_class = self._classes.get(claim_class(claim))
        if storage_class is None:
            await self._report(claim, WARNING, "ProvisioningFailed",
                               f'{STORAGE_CLASS.resource} "{claim_class(claim)}" not found')
            return
        provisioner = storage_class.provisioner
        if provisioner == NOT_SUPPORTED_PROVISIONER:
            await self._report(claim, WARNING, "ProvisioningFailed",
                               f"no volume plugin matched name: {provisioner}")
            return
        annotations = claim.metadata.annotations
        if (annotations.get(ANN_STORAGE_PROVISIONER) != provisioner
                or annotations.get(ANN_BETA_STORAGE_PROVISIONER) != provisioner):
            updated = Claim()
            updated.CopyFrom(claim)
            updated.metadata.annotations[ANN_STORAGE_PROVISIONER] = provisioner
            updated.metadata.annotations[ANN_BETA_STORAGE_PROVISIONER] = provisioner
            claim = await self._client.update(updated)
        await self._report(claim, NORMAL, "ExternalProvisioning", external_provisioning_message(provisioner))

    # ---------------------------------------------------------------------------------------- binding

    async def _bind(self, volume: Volume, claim: Claim) -> None:
        """Bind ``volume`` and ``claim`` to each other; each write at the version read, volume first."""
        volume = await self._bind_volume_to_claim(volume, claim)
        volume = await self._update_volume_phase(volume, VOLUME_BOUND)
        claim = await self._bind_claim_to_volume(claim, volume)
        await self._update_claim_status(claim, CLAIM_BOUND, volume)

    async def _bind_volume_to_claim(self, volume: Volume,
                                    claim: Claim) -> Volume:
        ref = volume.spec.claim_ref
        if (volume.spec.HasField("claim_ref") and ref.name == claim.metadata.name
                and ref.namespace == claim.metadata.namespace and ref.uid == claim.metadata.uid):
            return volume
        updated = Volume()
        updated.CopyFrom(volume)
        updated.spec.claim_ref.CopyFrom(objects_pb2.ObjectReference(
            kind=PERSISTENT_VOLUME_CLAIM.name, api_version=PERSISTENT_VOLUME_CLAIM.api_version,
            namespace=claim.metadata.namespace, name=claim.metadata.name, uid=claim.metadata.uid,
            resource_version=claim.metadata.resource_version))
        if not is_volume_bound_to_claim(volume, claim):
            # The controller chose it (the user's pre-binding by name is kept unmarked).
            updated.metadata.annotations.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
        bound = await self._client.update(updated)
        log.info("bound PersistentVolume %s to claim %s/%s", volume.metadata.name, claim.metadata.namespace,
                 claim.metadata.name)
        return bound

    async def _bind_claim_to_volume(self, claim: Claim, volume: Volume) -> Claim:
        updated = Claim()
        updated.CopyFrom(claim)
        annotations = updated.metadata.annotations
        if claim.spec.volume_name != volume.metadata.name:
            updated.spec.volume_name = volume.metadata.name
            annotations.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
        annotations.setdefault(ANN_BIND_COMPLETED, "yes")
        if updated == claim:
            return claim
        return await self._client.update(updated)

    async def _update_claim_status(self, claim: Claim, phase: str,
                                   volume: Volume | None) -> None:
        updated = Claim()
        updated.CopyFrom(claim)
        status = updated.status
        status.phase = phase
        if volume is None:
            del status.access_modes[:]
            status.capacity.clear()
        else:
            if list(status.access_modes) != list(volume.spec.access_modes):
                del status.access_modes[:]
                status.access_modes.extend(volume.spec.access_modes)
            # The capacity is set as the claim becomes Bound, not after: a difference may be meant (a
            # file system smaller than its block device).
            if claim.status.phase != phase and STORAGE in volume.spec.capacity:
                status.capacity.clear()
                status.capacity.update(volume.spec.capacity)
        if updated.status != claim.status:
            await self._client.update_status(updated)

    async def _update_volume_phase(self, volume: Volume, phase: str) -> Volume:
        if volume.status.phase == phase:
            return volume
        updated = Volume()
        updated.CopyFrom(volume)
        updated.status.phase = phase
        updated.status.message = ""  # a message belongs to the phase it explained
        return await self._client.update_status(updated)

    # ---------------------------------------------------------------------------------------- volumes

    async def _sync_volume(self, volume: Volume) -> None:
        if not volume.spec.HasField("claim_ref") or not volume.spec.claim_ref.uid:
            # Unused, or pre-bound to a claim by name only: the claim's sync binds it.
            await self._update_volume_phase(volume, VOLUME_AVAILABLE)
            return
        ref = volume.spec.claim_ref
        claim = self._claims.get(f"{ref.namespace}/{ref.name}")
        if (claim is None and volume.status.phase not in (VOLUME_RELEASED, VOLUME_FAILED)) or (
                claim is not None and claim.metadata.uid != ref.uid):
            # A claim the informer has not shown yet (or shows an older copy of) must not release its
            # volume: the server decides.
            claim = await self._live_claim(ref.namespace, ref.name)
        if claim is not None and claim.metadata.uid != ref.uid:
            claim = None
        if claim is None:
            if volume.status.phase not in (VOLUME_RELEASED, VOLUME_FAILED):
                log.info("PersistentVolume %s is released; reclaim policy %s", volume.metadata.name,
                         volume.spec.persistent_volume_reclaim_policy)
                volume = await self._update_volume_phase(volume, VOLUME_RELEASED)
            await self._reclaim(volume)
        elif not claim.spec.volume_name:
            if volume_mode_mismatches(claim, volume):
                await self._report_volume(volume, "VolumeMismatch",
                                          "Cannot bind PersistentVolume to requested PersistentVolumeClaim "
                                          f'"{claim.metadata.name}" due to incompatible volumeMode.')
                await self._report(claim, WARNING, "VolumeMismatch",
                                   f'Cannot bind PersistentVolume "{volume.metadata.name}" to requested '
                                   "PersistentVolumeClaim due to incompatible volumeMode.")
                return
            self._queue.add(CLAIM_KEY_PREFIX + self._claims.key(claim))  # the claim's sync binds it
        elif claim.spec.volume_name == volume.metadata.name:
            await self._update_volume_phase(volume, VOLUME_BOUND)
        elif (ANN_DYNAMICALLY_PROVISIONED in volume.metadata.annotations
              and volume.spec.persistent_volume_reclaim_policy == RECLAIM_DELETE):
            # Made for this claim, which got bound elsewhere: not needed.
            if volume.status.phase not in (VOLUME_RELEASED, VOLUME_FAILED):
                volume = await self._update_volume_phase(volume, VOLUME_RELEASED)
            await self._reclaim(volume)
        else:
            await self._unbind(volume)

    async def _live_claim(self, namespace: str, name: str) -> Claim | None:
        try:
            claim = await self._client.get(PERSISTENT_VOLUME_CLAIM, name, namespace)
        except errors.NotFound:
            return None
        assert isinstance(claim, Claim)
        return claim

    async def _unbind(self, volume: Volume) -> None:
        """Roll back a binding: the controller's goes entirely, a user's pre-binding keeps its name."""
        updated = Volume()
        updated.CopyFrom(volume)
        if ANN_BOUND_BY_CONTROLLER in volume.metadata.annotations:
            updated.spec.ClearField("claim_ref")
            del updated.metadata.annotations[ANN_BOUND_BY_CONTROLLER]
        else:
            updated.spec.claim_ref.uid = ""
        unbound = await self._client.update(updated)
        await self._update_volume_phase(unbound, VOLUME_AVAILABLE)

    async def _reclaim(self, volume: Volume) -> None:
        policy = volume.spec.persistent_volume_reclaim_policy
        if policy == RECLAIM_RETAIN:
            return
        if policy == RECLAIM_DELETE:
            try:
                await self._client.delete(PERSISTENT_VOLUME, volume.metadata.name,
                                          resource_version=volume.metadata.resource_version)
            except errors.NotFound:
                return
            log.info("deleted PersistentVolume %s: its claim is gone and its reclaim policy is Delete",
                     volume.metadata.name)
        elif policy == RECLAIM_RECYCLE:  # validation admits no other policy
            updated = Volume()
            updated.CopyFrom(volume)
            updated.spec.ClearField("claim_ref")
            updated.metadata.annotations.pop(ANN_BOUND_BY_CONTROLLER, None)
            recycled = await self._client.update(updated)
            await self._update_volume_phase(recycled, VOLUME_AVAILABLE)

    # ----------------------------------------------------------------------------------------- events

    async def _report(self, claim: Claim, event_type: str, reason: str,
                      message: str) -> None:
        key = self._claims.key(claim)
        if self._reported.get(key) == (reason, message):
            return
        self._reported[key] = (reason, message)
        involved = reference_to(PERSISTENT_VOLUME_CLAIM.name, PERSISTENT_VOLUME_CLAIM.api_version,
                                claim.metadata)
        await record_event(self._client, involved, event_type, reason, message, EVENT_COMPONENT, log)

    async def _report_volume(self, volume: Volume, reason: str, message: str) -> None:
        involved = reference_to(PERSISTENT_VOLUME.name, PERSISTENT_VOLUME.api_version, volume.metadata)
        await record_event(self._client, involved, WARNING, reason, message, EVENT_COMPONENT, log)
