"""NodeVolumeLimits: a node attaches at most so many volumes of each CSI driver (kube-scheduler's
nodevolumelimits, csi.go).

The limit of a driver on a node is its CSINode's ``drivers[].allocatable.count``, else the node's
``attachable-volumes-csi-<driver>`` allocatable; a driver with neither is not limited. The volumes
counted are unique (driver, volume handle) pairs over the node's pods and the pod being scheduled:

* a claim bound to a CSI PersistentVolume: its driver and volumeHandle;
* a claim bound to an in-tree GCE PD, AWS EBS or Azure Disk volume, and such a disk inline in the pod:
  the CSI driver csi-translation-lib migrates it to, with the handle it translates to, when the node
  has a CSINode (migration of these plugins is always on);
* a claim not bound yet (or whose volume is missing) with a StorageClass: its provisioner's driver (in
  that case too), with a handle made up for the claim;
* an ephemeral volume: its claim ``<pod>-<volume>``, which must be the pod's, as above.

A pod over a limit: "node(s) exceed max volume count". A claim the pod names that does not exist makes it
unresolvable. CSI inline (``csi``) volumes are not attached through the attach limits, as in
kube-scheduler.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlparse

from cluster.api import objects_pb2
from cluster.api.volumes import claim_class, claim_names, ephemeral_claim_name
from scheduler.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    PodInfo,
    PreFilterResult,
    QueueingHint,
    Signature,
    Status,
)
from scheduler.plugins.volumeclaims import claim_not_found, not_for_pod
from scheduler.plugins.volumezone import LABEL_BETA_ZONE, LABEL_ZONE

NAME = "NodeVolumeLimits"

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"

#: The prefix of a node's allocatable that limits a CSI driver's attachments.
CSI_ATTACH_LIMIT_PREFIX = "attachable-volumes-csi-"
#: Every attach limit of a node's allocatable starts so (IsAttachableVolumeResourceName).
ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"
_RESOURCE_NAME_LENGTH_LIMIT = 63

GCE_PD_PLUGIN, GCE_PD_DRIVER = "kubernetes.io/gce-pd", "pd.csi.storage.gke.io"
AWS_EBS_PLUGIN, AWS_EBS_DRIVER = "kubernetes.io/aws-ebs", "ebs.csi.aws.com"
AZURE_DISK_PLUGIN, AZURE_DISK_DRIVER = "kubernetes.io/azure-disk", "disk.csi.azure.com"
CINDER_PLUGIN, CINDER_DRIVER = "kubernetes.io/cinder", "cinder.csi.openstack.org"

#: The in-tree plugins whose volumes count as their CSI driver's wherever a CSINode exists: their
#: migration is GA, so kube-scheduler no longer asks the node's annotation.
_ALWAYS_MIGRATED = {GCE_PD_PLUGIN: GCE_PD_DRIVER, AWS_EBS_PLUGIN: AWS_EBS_DRIVER,
                    AZURE_DISK_PLUGIN: AZURE_DISK_DRIVER, CINDER_PLUGIN: CINDER_DRIVER}
#: In-tree provisioners csi-translation-lib knows but whose volumes the limits do not count.
_NOT_COUNTED_PLUGINS = frozenset({"kubernetes.io/azure-file", "kubernetes.io/vsphere-volume",
                                  "kubernetes.io/portworx-volume", "kubernetes.io/rbd"})

#: The inline volume sources csi-translation-lib migrates (that this model holds), with their plugins.
_INLINE_MIGRATABLE = {"gce_persistent_disk": GCE_PD_PLUGIN, "aws_elastic_block_store": AWS_EBS_PLUGIN,
                      "azure_disk": AZURE_DISK_PLUGIN}

_UNSPECIFIED = "UNSPECIFIED"
_MULTI_ZONE_DELIMITER = "__"


class _ClaimMissing(Exception):
    """The pod being scheduled names a claim that does not exist: it cannot run until it does."""


class _Unusable(Exception):
    """A volume of the pod cannot be counted (kube-scheduler's errors, reported as an ERROR)."""


def attach_limit_key(driver: str) -> str:
    """The node allocatable that limits ``driver``'s attachments (GetCSIAttachLimitKey): a name too long
    for a resource name keeps 23 characters of the driver's name and 16 of its SHA-1."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= _RESOURCE_NAME_LENGTH_LIMIT:
        digest = hashlib.sha1(driver.encode()).hexdigest()[:16]
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + digest
    return CSI_ATTACH_LIMIT_PREFIX + driver


def migration_on(csi_node: objects_pb2.CSINode | None, plugin: str) -> bool:
    """Whether the node counts the in-tree ``plugin``'s volumes as its CSI driver's (isCSIMigrationOn):
    never without a CSINode."""
    return csi_node is not None and plugin in _ALWAYS_MIGRATED


def inline_migratable(volume: objects_pb2.Volume) -> bool:
    return any(volume.HasField(source) for source in _INLINE_MIGRATABLE)


def ebs_volume_id(kubernetes_id: str) -> str:
    """The EBS volume ID of an in-tree volume ID ("vol-1", or "aws://zone/vol-1")."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    aws_id = urlparse(kubernetes_id).path.strip("/")
    if not aws_id.startswith("vol-") or "/" in aws_id:
        raise _Unusable(f"Invalid format for AWS volume ({kubernetes_id})")
    return aws_id


def _gce_zonal(zone: str, disk: str) -> str:
    return f"projects/{_UNSPECIFIED}/zones/{zone}/disks/{disk}"


def _gce_volume_handle(volume: objects_pb2.PersistentVolume) -> str:
    """The handle pd.csi.storage.gke.io gives an in-tree GCE PD volume: its zone (or, for a regional disk
    over several zones, its region) from the volume's zone label."""
    labels = volume.metadata.labels
    zones_label = labels.get(LABEL_BETA_ZONE) or labels.get(LABEL_ZONE, "")
    disk = volume.spec.gce_persistent_disk.pd_name
    zones = zones_label.split(_MULTI_ZONE_DELIMITER)
    if len(zones) == 1 and zones[0]:
        return _gce_zonal(zones[0], disk)
    if len(zones) > 1:
        regions = {zone.rsplit("-", 1)[0] for zone in zones}
        if len(regions) != 1:
            raise _Unusable(f"multiple or no regions in zones {zones}")
        return f"projects/{_UNSPECIFIED}/regions/{regions.pop()}/disks/{disk}"
    return _gce_zonal(_UNSPECIFIED, disk)


def _translated_volume(volume: objects_pb2.PersistentVolume) -> tuple[str, str]:
    """The (CSI driver, volume handle) of a PersistentVolume, its in-tree source translated; ("", "")
    for a volume no CSI driver serves."""
    spec = volume.spec
    if spec.HasField("csi"):
        return spec.csi.driver, spec.csi.volume_handle
    if spec.HasField("gce_persistent_disk"):
        return GCE_PD_DRIVER, _gce_volume_handle(volume)
    if spec.HasField("aws_elastic_block_store"):
        return AWS_EBS_DRIVER, ebs_volume_id(spec.aws_elastic_block_store.volume_id)
    if spec.HasField("azure_disk"):
        return AZURE_DISK_DRIVER, spec.azure_disk.disk_uri
    return "", ""


def _in_tree_plugin(volume: objects_pb2.PersistentVolume) -> str:
    spec = volume.spec
    if spec.HasField("gce_persistent_disk"):
        return GCE_PD_PLUGIN
    if spec.HasField("aws_elastic_block_store"):
        return AWS_EBS_PLUGIN
    if spec.HasField("azure_disk"):
        return AZURE_DISK_PLUGIN
    return ""


def _inline_volume(volume: objects_pb2.Volume) -> tuple[str, str, str]:
    """(in-tree plugin, CSI driver, volume handle) of a migratable inline volume."""
    if volume.HasField("gce_persistent_disk"):
        # Inline, the disk's zone is unknown.
        return GCE_PD_PLUGIN, GCE_PD_DRIVER, _gce_zonal(_UNSPECIFIED, volume.gce_persistent_disk.pd_name)
    if volume.HasField("aws_elastic_block_store"):
        try:
            handle = ebs_volume_id(volume.aws_elastic_block_store.volume_id)
        except _Unusable as error:
            raise _Unusable(f"converting volume({volume.name}) from inline to csi: {error}") from None
        return AWS_EBS_PLUGIN, AWS_EBS_DRIVER, handle
    return AZURE_DISK_PLUGIN, AZURE_DISK_DRIVER, volume.azure_disk.disk_uri


def volume_limits(node_info: NodeInfo, csi_node: objects_pb2.CSINode | None) -> dict[str, int]:
    """The node's attach limits by allocatable name: its allocatable's, overridden by its CSINode's."""
    limits = {name: value for name, value in node_info.allocatable.scalar.items()
              if name.startswith(ATTACHABLE_VOLUMES_PREFIX)}
    if csi_node is not None:
        for driver in csi_node.spec.drivers:
            if driver.HasField("allocatable") and driver.allocatable.HasField("count"):
                limits[attach_limit_key(driver.name)] = driver.allocatable.count
    return limits


class NodeVolumeLimits:
    def __init__(self, handle: Handle) -> None:
        self._storage = handle.storage
        # Made-up handles of claims not bound yet must never equal a real volume's.
        self._unbound_prefix = uuid.uuid4().hex

    @property
    def name(self) -> str:
        return NAME

    def sign(self, pod: PodInfo) -> Signature | None:
        """A pod with volumes that count depends on storage objects beyond the node: never batched."""
        return None if self._counts_volumes(pod.pod) else ()

    @staticmethod
    def _counts_volumes(pod: objects_pb2.Pod) -> bool:
        volumes = pod.spec.volumes
        if not volumes:
            return False  # most pods: no generator made
        return any(volume.HasField("persistent_volume_claim") or volume.HasField("ephemeral")
                   or inline_migratable(volume) for volume in volumes)

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        return None, (None if self._counts_volumes(pod.pod) else Status.skip())

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        return self._filter(pod, node_info, Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED))

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        """``filter`` of each node (each with its own CSINode and pods), one Status object for the nodes
        over a limit."""
        exceeded = Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return [self._filter(pod, node_info, exceeded) for node_info in nodes]

    def _filter(self, pod: PodInfo, node_info: NodeInfo, exceeded: Status) -> Status | None:
        if not pod.pod.spec.volumes:
            return None
        csi_node = self._storage.csi_node(node_info.name)
        new_volumes: dict[str, str] = {}
        try:
            self._attachable(pod.pod, csi_node, True, new_volumes)
        except _ClaimMissing as missing:
            return Status.unresolvable(str(missing))
        except _Unusable as error:
            return Status.as_error(str(error))
        if not new_volumes:
            return None
        limits = volume_limits(node_info, csi_node)
        if not limits:
            return None
        attached: dict[str, str] = {}
        try:
            for other in node_info.pods.values():
                self._attachable(other.pod, csi_node, False, attached)
        except _Unusable as error:
            return Status.as_error(str(error))
        # A volume the node's pods use already is attached already.
        attached_counts = Counter(attached.values())
        new_counts = Counter(key for volume, key in new_volumes.items() if volume not in attached)
        for key, count in new_counts.items():
            limit = limits.get(key)
            if limit is not None and attached_counts[key] + count > limit:
                return exceeded
        return None

    def _attachable(self, pod: objects_pb2.Pod, csi_node: objects_pb2.CSINode | None, new_pod: bool,
                    result: dict[str, str]) -> None:
        """Put each volume of ``pod`` that a CSI driver attaches into ``result``, "driver/handle" ->
        the driver's limit name (filterAttachableVolumes)."""
        namespace = pod.metadata.namespace
        for volume in pod.spec.volumes:
            ephemeral = False
            if volume.HasField("persistent_volume_claim"):
                name = volume.persistent_volume_claim.claim_name
            elif volume.HasField("ephemeral"):
                name, ephemeral = ephemeral_claim_name(pod, volume), True
            else:
                if inline_migratable(volume):
                    plugin, driver, handle = _inline_volume(volume)
                    if migration_on(csi_node, plugin):
                        result[f"{driver}/{handle}"] = attach_limit_key(driver)
                continue
            if not name:
                raise _Unusable("PersistentVolumeClaim had no name")
            claim = self._storage.persistent_volume_claim(namespace, name)
            if claim is None:
                if new_pod:
                    raise _ClaimMissing(f"looking up PVC {namespace}/{name}: {claim_not_found(name)}")
                continue  # a pod already there with a claim gone: not counted
            if ephemeral:
                problem = not_for_pod(pod, claim)
                if problem:
                    raise _Unusable(problem)
            driver, handle = self._claim_volume(csi_node, claim)
            if driver and handle:
                result[f"{driver}/{handle}"] = attach_limit_key(driver)

    def _claim_volume(self, csi_node: objects_pb2.CSINode | None,
                      claim: objects_pb2.PersistentVolumeClaim) -> tuple[str, str]:
        """The (driver, handle) of a claim's volume; ("", "") when it does not count (getCSIDriverInfo)."""
        volume_name = claim.spec.volume_name
        volume = self._storage.persistent_volume(volume_name) if volume_name else None
        if volume is None:
            # Not bound yet, or bound to a volume not seen yet: its class says which driver it will be.
            return self._class_volume(csi_node, claim)
        if not volume.spec.HasField("csi"):
            plugin = _in_tree_plugin(volume)
            if not plugin or not migration_on(csi_node, plugin):
                return "", ""
            try:
                return _translated_volume(volume)
            except _Unusable:
                return "", ""
        return _translated_volume(volume)

    def _class_volume(self, csi_node: objects_pb2.CSINode | None,
                      claim: objects_pb2.PersistentVolumeClaim) -> tuple[str, str]:
        """The driver of the claim's class's provisioner, with a handle made up for the claim
        (getCSIDriverInfoFromSC). A claim without a class binds Immediately: it is not counted."""
        class_name = claim_class(claim)
        storage_class = self._storage.storage_class(class_name) if class_name else None
        if storage_class is None:
            return "", ""
        # If the claim is bound while Filter runs, and another pod on the node uses its volume, the
        # volume is counted twice: kube-scheduler accepts that too.
        handle = f"{self._unbound_prefix}-{claim.metadata.namespace}/{claim.metadata.name}"
        provisioner = storage_class.provisioner
        if provisioner in _ALWAYS_MIGRATED:
            if not migration_on(csi_node, provisioner):
                return "", ""
            return _ALWAYS_MIGRATED[provisioner], handle
        if provisioner in _NOT_COUNTED_PLUGINS:
            return "", ""
        return provisioner, handle

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            # Any new CSINode may bring limits that let the pod in.
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD)),
            # A deleted pod detaches its volumes.
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE), _after_pod_deleted),
            # The claim the pod names, created.
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                                 _after_claim_added),
        ]


def _after_pod_deleted(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    deleted: objects_pb2.Pod = old
    if not deleted.spec.volumes or not deleted.spec.node_name:
        return QueueingHint.SKIP
    if NodeVolumeLimits._counts_volumes(deleted):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def _after_claim_added(pod: objects_pb2.Pod, old: Any, new: Any) -> QueueingHint:
    claim: objects_pb2.PersistentVolumeClaim = new
    if claim.metadata.namespace != pod.metadata.namespace:
        return QueueingHint.SKIP
    wanted = set(claim_names(pod))
    wanted.update(ephemeral_claim_name(pod, volume) for volume in pod.spec.volumes
                  if volume.HasField("ephemeral"))
    return QueueingHint.QUEUE if claim.metadata.name in wanted else QueueingHint.SKIP


def new(args: None, handle: Handle) -> NodeVolumeLimits:
    return NodeVolumeLimits(handle)
