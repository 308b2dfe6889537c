"""``StorageObjects``: the PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes, CSIDrivers
and CSIStorageCapacities the scheduler knows, as its informers deliver them (kube-scheduler's listers of
those kinds), for the volume plugins through ``Handle.storage``.

Kept by name; the objects are the informers' own, never changed here. The volume binder's assumed PV and
PVC updates live in its plugin, over these."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from cluster.api import kinds, objects_pb2

#: The scheduler's informers of the storage kinds, by the names ``Scheduler.informers`` gives them.
STORAGE_INFORMER_KINDS: dict[str, kinds.Kind[Any]] = {
    kind.plural: kind
    for kind in (kinds.PERSISTENT_VOLUME, kinds.PERSISTENT_VOLUME_CLAIM, kinds.STORAGE_CLASS, kinds.CSI_NODE,
                 kinds.CSI_DRIVER, kinds.CSI_STORAGE_CAPACITY)
}


class StorageObjects:
    def __init__(self) -> None:
        self._volumes: dict[str, objects_pb2.PersistentVolume] = {}
        self._claims: dict[tuple[str, str], objects_pb2.PersistentVolumeClaim] = {}
        self._classes: dict[str, objects_pb2.StorageClass] = {}
        self._csi_nodes: dict[str, objects_pb2.CSINode] = {}
        self._csi_drivers: dict[str, objects_pb2.CSIDriver] = {}
        self._capacities: dict[tuple[str, str], objects_pb2.CSIStorageCapacity] = {}
        #: Set at the next change, for those waiting on ``changed`` (None: nobody waits).
        self._change: asyncio.Event | None = None

    # ----------------------------------------------------------------------------------------- reads

    def persistent_volume(self, name: str) -> objects_pb2.PersistentVolume | None:
        return self._volumes.get(name)

    def persistent_volumes(self) -> Iterable[objects_pb2.PersistentVolume]:
        return self._volumes.values()

    def persistent_volume_claim(self, namespace: str, name: str) -> objects_pb2.PersistentVolumeClaim | None:
        return self._claims.get((namespace, name))

    def storage_class(self, name: str) -> objects_pb2.StorageClass | None:
        return self._classes.get(name)

    def storage_classes(self) -> Iterable[objects_pb2.StorageClass]:
        return self._classes.values()

    def csi_node(self, name: str) -> objects_pb2.CSINode | None:
        return self._csi_nodes.get(name)

    def csi_driver(self, name: str) -> objects_pb2.CSIDriver | None:
        return self._csi_drivers.get(name)

    def csi_storage_capacities(self) -> Iterable[objects_pb2.CSIStorageCapacity]:
        return self._capacities.values()

    async def changed(self) -> None:
        """Return at the next change the informers deliver (VolumeBinding's PreBind waits by it for the
        PV controller to complete the bindings it wrote)."""
        if self._change is None:
            self._change = asyncio.Event()
        await self._change.wait()

    def _changed(self) -> None:
        if self._change is not None:
            self._change.set()
            self._change = None

    # ------------------------------------------------------------------------- fed by the informers

    def set_persistent_volume(self, volume: objects_pb2.PersistentVolume) -> None:
        self._volumes[volume.metadata.name] = volume
        self._changed()

    def remove_persistent_volume(self, volume: objects_pb2.PersistentVolume) -> None:
        self._volumes.pop(volume.metadata.name, None)
        self._changed()

    def set_persistent_volume_claim(self, claim: objects_pb2.PersistentVolumeClaim) -> None:
        self._claims[claim.metadata.namespace, claim.metadata.name] = claim
        self._changed()

    def remove_persistent_volume_claim(self, claim: objects_pb2.PersistentVolumeClaim) -> None:
        self._claims.pop((claim.metadata.namespace, claim.metadata.name), None)
        self._changed()

    def set_storage_class(self, storage_class: objects_pb2.StorageClass) -> None:
        self._classes[storage_class.metadata.name] = storage_class
        self._changed()

    def remove_storage_class(self, storage_class: objects_pb2.StorageClass) -> None:
        self._classes.pop(storage_class.metadata.name, None)
        self._changed()

    def set_csi_node(self, csi_node: objects_pb2.CSINode) -> None:
        self._csi_nodes[csi_node.metadata.name] = csi_node
        self._changed()

    def remove_csi_node(self, csi_node: objects_pb2.CSINode) -> None:
        self._csi_nodes.pop(csi_node.metadata.name, None)
        self._changed()

    def set_csi_driver(self, driver: objects_pb2.CSIDriver) -> None:
        self._csi_drivers[driver.metadata.name] = driver
        self._changed()

    def remove_csi_driver(self, driver: objects_pb2.CSIDriver) -> None:
        self._csi_drivers.pop(driver.metadata.name, None)
        self._changed()

    def set_csi_storage_capacity(self, capacity: objects_pb2.CSIStorageCapacity) -> None:
        self._capacities[capacity.metadata.namespace, capacity.metadata.name] = capacity
        self._changed()

    def remove_csi_storage_capacity(self, capacity: objects_pb2.CSIStorageCapacity) -> None:
        self._capacities.pop((capacity.metadata.namespace, capacity.metadata.name), None)
        self._changed()
