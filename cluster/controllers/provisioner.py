"""A stand-in dynamic provisioner: what a CSI external-provisioner does for its driver, for every
StorageClass provisioner it serves (by default all but kubernetes.io/no-provisioner), with no storage
behind the volumes it makes.

For a claim (keys "claim:namespace/name") not bound to a volume, whose class's provisioner it serves and
which the PV controller handed to that provisioner (volume.kubernetes.io/storage-provisioner, or its beta
twin, names it): a class binding Immediate is provisioned at once, a WaitForFirstConsumer one once the
scheduler chose a node (volume.kubernetes.io/selected-node). The PersistentVolume ``pvc-<claim uid>`` gets
the claim's storage request as its capacity, the claim's access modes and volumeMode, the class's name,
reclaim policy (Delete when unset) and mount options, a CSI source (driver: the provisioner, volumeHandle:
the volume's name), a claimRef pre-binding it to the claim (the PV controller completes the binding), the
annotation pv.kubernetes.io/provisioned-by, and node affinity from the topology:

- WaitForFirstConsumer: the selected node's values of the topology keys its CSINode lists for the driver;
  without a CSINode entry, of the keys of the class's allowedTopologies; with neither, its
  kubernetes.io/hostname.
- Immediate: the class's allowedTopologies, if any.

Where the class has CSIStorageCapacity objects, the selected node must lie in the topology of one whose
maximumVolumeSize (or else capacity) holds the request. When it does not, or the node (or one of its
topology labels) is missing, provisioning fails for good, as the external-provisioner's final errors do:
a Warning event ProvisioningFailed on the claim, and the selected-node annotation removed so that the
scheduler places the pod again. A successful one is reported as a Normal event ProvisioningSucceeded.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Mapping
from typing import Any

from cluster.api import errors, objects_pb2
from cluster.api.kinds import (
    CSI_NODE,
    CSI_STORAGE_CAPACITY,
    NODE,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    STORAGE_CLASS,
)
from cluster.api.persistentvolumes import (
    ANN_BETA_STORAGE_PROVISIONER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_STORAGE_PROVISIONER,
    NOT_SUPPORTED_PROVISIONER,
    RECLAIM_DELETE,
    STORAGE,
    WAIT_FOR_FIRST_CONSUMER,
    requested_storage,
)
from cluster.api.quantity import parse_quantity
from cluster.api.selectors import LabelSelector
from cluster.api.volumes import SELECTED_NODE_ANNOTATION, claim_class
from cluster.client import Client, Informer
from cluster.controllers.controller import InformerController
from cluster.controllers.events import NORMAL, WARNING, record_event, reference_to

log = logging.getLogger(__name__)

Claim = objects_pb2.PersistentVolumeClaim
StorageClass = objects_pb2.StorageClass

CLAIM_KEY_PREFIX = "claim:"
HOSTNAME_LABEL = "kubernetes.io/hostname"
#: Claims not bound to a volume yet, by their class name.
UNBOUND_BY_CLASS_INDEX = "unbound-class"
#: CSIStorageCapacity objects by their storage class name.
CLASS_INDEX = "class"
PROVISIONING_FAILED = "ProvisioningFailed"
PROVISIONING_SUCCEEDED = "ProvisioningSucceeded"


class ProvisioningFailed(Exception):
    """A final failure: retrying on the same node cannot succeed."""


def provisioned_volume_name(claim: Claim) -> str:
    return f"pvc-{claim.metadata.uid}"


def _unbound_class(claim: Claim) -> list[str]:
    return [] if claim.spec.volume_name else [claim_class(claim)]


def _capacity_class(capacity: objects_pb2.CSIStorageCapacity) -> list[str]:
    return [capacity.storage_class_name]


def _requested_provisioner(claim: Claim) -> str:
    annotations = claim.metadata.annotations
    return annotations.get(ANN_STORAGE_PROVISIONER) or annotations.get(ANN_BETA_STORAGE_PROVISIONER, "")


def allowed_topology_affinity(storage_class: StorageClass) -> objects_pb2.VolumeNodeAffinity | None:
    """The node affinity the class's allowedTopologies describe (None: they allow everywhere)."""
    if not storage_class.allowed_topologies:
        return None
    affinity = objects_pb2.VolumeNodeAffinity()
    for topology in storage_class.allowed_topologies:
        term = affinity.required.node_selector_terms.add()
        for expression in topology.match_label_expressions:
            term.match_expressions.add(key=expression.key, operator="In", values=list(expression.values))
    return affinity


def capacity_limit(capacity: objects_pb2.CSIStorageCapacity) -> str | None:
    """What one volume may take of ``capacity``'s topology: maximumVolumeSize, else capacity."""
    if capacity.HasField("maximum_volume_size"):
        return capacity.maximum_volume_size
    return capacity.capacity if capacity.HasField("capacity") else None


class VolumeProvisioner(InformerController):
    """Makes the volumes of claims handed to the provisioners it serves while ``run()`` runs."""

    name = "volume-provisioner"

    def __init__(self, client: Client, provisioners: Collection[str] = ()) -> None:
        """``provisioners``: the provisioner names served (empty: all but kubernetes.io/no-provisioner)."""
        super().__init__(client)
        self._served = frozenset(provisioners)
        self._claims = Informer(client, PERSISTENT_VOLUME_CLAIM,
                                indexers={UNBOUND_BY_CLASS_INDEX: _unbound_class})
        self._classes = Informer(client, STORAGE_CLASS)
        self._volumes = Informer(client, PERSISTENT_VOLUME)
        self._nodes = Informer(client, NODE)
        self._csi_nodes = Informer(client, CSI_NODE)
        self._capacities = Informer(client, CSI_STORAGE_CAPACITY, indexers={CLASS_INDEX: _capacity_class})
        self._claims.add_handler(self._claim_added, self._claim_updated)
        self._classes.add_handler(self._class_added, self._class_updated)

    def serves(self, provisioner: str) -> bool:
        if self._served:
            return provisioner in self._served
        return bool(provisioner) and provisioner != NOT_SUPPORTED_PROVISIONER

    def _informers(self) -> Mapping[str, Informer[Any]]:
        return {"persistentvolumeclaim": self._claims, "storageclass": self._classes,
                "persistentvolume": self._volumes, "node": self._nodes, "csinode": self._csi_nodes,
                "csistoragecapacity": self._capacities}

    def _after_sync(self, tasks: asyncio.TaskGroup) -> None:
        served = ", ".join(sorted(self._served)) or f"all but {NOT_SUPPORTED_PROVISIONER}"
        log.info("volume provisioner synced (serving %s): %d claims, %d classes", served, len(self._claims),
                 len(self._classes))

    def _what(self, key: str) -> str:
        return f"PersistentVolumeClaim {key.removeprefix(CLAIM_KEY_PREFIX)}"

    # ----------------------------------------------------------------------------------------- events

    def _claim_added(self, claim: Claim) -> None:
        if self._wants_volume(claim):
            self._queue.add(CLAIM_KEY_PREFIX + self._claims.key(claim))

    def _claim_updated(self, old: Claim,
                       new: Claim) -> None:
        self._claim_added(new)

    def _class_added(self, storage_class: StorageClass) -> None:
        for claim in self._claims.by_index(UNBOUND_BY_CLASS_INDEX, storage_class.metadata.name):
            self._claim_added(claim)

    def _class_updated(self, old: StorageClass, new: StorageClass) -> None:
        self._class_added(new)

    def _wants_volume(self, claim: Claim) -> bool:
        """Whether ``claim`` asks one of the served provisioners for a volume it has not got."""
        if claim.spec.volume_name or claim.metadata.HasField("deletion_timestamp"):
            return False
        provisioner = _requested_provisioner(claim)
        return self.serves(provisioner) and self._volumes.get(provisioned_volume_name(claim)) is None

    # ------------------------------------------------------------------------------------------- sync

    async def _sync(self, key: str) -> None:
        claim = self._claims.get(key.removeprefix(CLAIM_KEY_PREFIX))
        if claim is None or not self._wants_volume(claim):
            return
        storage_class = self._classes.get(claim_class(claim)) if claim_class(claim) else None
        if storage_class is None or storage_class.provisioner != _requested_provisioner(claim):
            return  # the PV controller hands it over again once the class is seen
        selected = claim.metadata.annotations.get(SELECTED_NODE_ANNOTATION, "")
        if storage_class.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER and not selected:
            return  # the scheduler has not placed its pod yet
        try:
            affinity = self._node_affinity(claim, storage_class, selected)
        except ProvisioningFailed as failure:
            await self._fail(claim, storage_class, str(failure))
            return
        volume = self._volume_for(claim, storage_class, affinity)
        try:
            await self._client.create(volume)
        except errors.AlreadyExists:
            return
        log.info("provisioned PersistentVolume %s for claim %s", volume.metadata.name, key)
        message = f"Successfully provisioned volume {volume.metadata.name}"
        await self._report(claim, NORMAL, PROVISIONING_SUCCEEDED, message, storage_class.provisioner)

    def _node_affinity(self, claim: Claim, storage_class: StorageClass,
                       selected: str) -> objects_pb2.VolumeNodeAffinity | None:
        """Where the volume may be used; raises ProvisioningFailed when the selected node cannot have it."""
        if not selected:
            return allowed_topology_affinity(storage_class)
        node = self._nodes.get(selected)
        if node is None:
            raise ProvisioningFailed(f'failed to get target node: node "{selected}" not found')
        self._check_capacity(claim, storage_class, node)
        affinity = objects_pb2.VolumeNodeAffinity()
        term = affinity.required.node_selector_terms.add()
        for key in self._topology_keys(storage_class, selected):
            value = node.metadata.labels.get(key)
            if value is None:
                raise ProvisioningFailed(f'topology key "{key}" not found on node "{selected}"')
            term.match_expressions.add(key=key, operator="In", values=[value])
        return affinity

    def _topology_keys(self, storage_class: StorageClass, node_name: str) -> list[str]:
        csi_node = self._csi_nodes.get(node_name)
        if csi_node is not None:
            for driver in csi_node.spec.drivers:
                if driver.name == storage_class.provisioner and driver.topology_keys:
                    return sorted(driver.topology_keys)
        keys = {expression.key for topology in storage_class.allowed_topologies
                for expression in topology.match_label_expressions}
        return sorted(keys) or [HOSTNAME_LABEL]

    def _check_capacity(self, claim: Claim, storage_class: StorageClass,
                        node: objects_pb2.Node) -> None:
        capacities = self._capacities.by_index(CLASS_INDEX, storage_class.metadata.name)
        if not capacities:
            return  # the driver publishes no capacity: nothing says it lacks any
        requested = requested_storage(claim)
        for capacity in capacities:
            topology = capacity.node_topology if capacity.HasField("node_topology") else None
            if not LabelSelector.from_proto(topology).matches(node.metadata.labels):
                continue
            limit = capacity_limit(capacity)
            if limit is not None and parse_quantity(limit) >= requested:
                return
        raise ProvisioningFailed(
            f'no capacity for {claim.spec.resources.requests.get(STORAGE, "0")} in the topology of node '
            f'"{node.metadata.name}"')

    def _volume_for(self, claim: Claim, storage_class: StorageClass,
                    affinity: objects_pb2.VolumeNodeAffinity | None) -> objects_pb2.PersistentVolume:
        name = provisioned_volume_name(claim)
        volume = objects_pb2.PersistentVolume(api_version=PERSISTENT_VOLUME.api_version,
                                              kind=PERSISTENT_VOLUME.name)
        volume.metadata.name = name
        volume.metadata.annotations[ANN_DYNAMICALLY_PROVISIONED] = storage_class.provisioner
        spec = volume.spec
        spec.capacity[STORAGE] = claim.spec.resources.requests.get(STORAGE, "0")
        spec.access_modes.extend(claim.spec.access_modes)
        if claim.spec.HasField("volume_mode"):
            spec.volume_mode = claim.spec.volume_mode
        spec.persistent_volume_reclaim_policy = (
            storage_class.reclaim_policy if storage_class.HasField("reclaim_policy") else RECLAIM_DELETE)
        spec.storage_class_name = storage_class.metadata.name
        spec.mount_options.extend(storage_class.mount_options)
        spec.csi.driver = storage_class.provisioner
        spec.csi.volume_handle = name
        spec.claim_ref.CopyFrom(objects_pb2.ObjectReference(
            kind=PERSISTENT_VOLUME_CLAIM.name, api_version=PERSISTENT_VOLUME_CLAIM.api_version,
            namespace=claim.metadata.namespace, name=claim.metadata.name, uid=claim.metadata.uid,
            resource_version=claim.metadata.resource_version))
        if affinity is not None:
            spec.node_affinity.CopyFrom(affinity)
        return volume

    async def _fail(self, claim: Claim, storage_class: StorageClass,
                    why: str) -> None:
        """Report a final failure and give the node back to the scheduler."""
        message = f'failed to provision volume with StorageClass "{storage_class.metadata.name}": {why}'
        log.info("claim %s/%s: %s", claim.metadata.namespace, claim.metadata.name, message)
        await self._report(claim, WARNING, PROVISIONING_FAILED, message, storage_class.provisioner)
        if SELECTED_NODE_ANNOTATION in claim.metadata.annotations:
            updated = Claim()
            updated.CopyFrom(claim)
            del updated.metadata.annotations[SELECTED_NODE_ANNOTATION]
            try:
                await self._client.update(updated)
            except errors.NotFound:
                return

    async def _report(self, claim: Claim, event_type: str, reason: str, message: str,
                      provisioner: str) -> None:
        involved = reference_to(PERSISTENT_VOLUME_CLAIM.name, PERSISTENT_VOLUME_CLAIM.api_version,
                                claim.metadata)
        await record_event(self._client, involved, event_type, reason, message, provisioner, log)
