"""The volume binder's assume caches (kube-scheduler's PVAssumeCache and PVCAssumeCache): the informers'
PersistentVolumes and claims with the binder's assumed versions over them.

Reserve assumes a PV's claimRef and a claim's selected-node annotation before PreBind writes them, so the
next pods' cycles see the volume taken; Unreserve restores the informer's object. An assumed object
gives way once the informer delivers a newer version (the write echoed, or someone else's), and goes
with the object when the informer drops it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from cluster.api import objects_pb2
from cluster.api.volumes import volume_class
from scheduler.framework import StorageLister
from scheduler.plugins.volumebinding.claims import resource_version

Obj = TypeVar("Obj", objects_pb2.PersistentVolume, objects_pb2.PersistentVolumeClaim)


class AssumeError(Exception):
    """An object cannot be assumed (upstream's messages)."""


class _AssumeCache(Generic[Obj]):
    def __init__(self, kind: str, api_object: Callable[[str], Obj | None]) -> None:
        self._kind = kind
        self._api_object: Callable[[str], Obj | None] = api_object
        self._assumed: dict[str, Obj] = {}

    def get(self, key: str) -> Obj | None:
        """The assumed version while the informer has nothing newer, else the informer's object."""
        api = self._api_object(key)
        assumed = self._assumed.get(key)
        if assumed is None:
            return api
        if api is None or resource_version(api) > resource_version(assumed):
            del self._assumed[key]
            return api
        return assumed

    def get_api(self, key: str) -> Obj | None:
        """The informer's object, whatever is assumed."""
        return self._api_object(key)

    def assume(self, key: str, obj: Obj) -> None:
        """Take ``obj`` as the object until the informer delivers a newer one or ``restore``."""
        stored = self.get(key)
        if stored is None:
            raise AssumeError(f"{self._kind} {key!r} not found")
        if resource_version(obj) < resource_version(stored):
            raise AssumeError(f"{self._kind} {key!r} is out of sync (stored: {resource_version(stored)}, "
                              f"assume: {resource_version(obj)})")
        self._assumed[key] = obj

    def restore(self, key: str) -> None:
        self._assumed.pop(key, None)


class PVAssumeCache(_AssumeCache[objects_pb2.PersistentVolume]):
    def __init__(self, storage: StorageLister) -> None:
        super().__init__("PersistentVolume", storage.persistent_volume)
        self._storage = storage

    def list_by_class(self, class_name: str) -> list[objects_pb2.PersistentVolume]:
        """Every PV of the class, assumed versions included, in name order."""
        return sorted((volume for volume in self._latest() if volume_class(volume) == class_name),
                      key=lambda volume: volume.metadata.name)

    def _latest(self) -> Iterator[objects_pb2.PersistentVolume]:
        for volume in self._storage.persistent_volumes():
            latest = self.get(volume.metadata.name) if self._assumed else volume
            if latest is not None:
                yield latest


class PVCAssumeCache(_AssumeCache[objects_pb2.PersistentVolumeClaim]):
    """Keyed by "namespace/name"."""

    def __init__(self, storage: StorageLister) -> None:
        def api_claim(key: str) -> objects_pb2.PersistentVolumeClaim | None:
            namespace, _, name = key.partition("/")
            return storage.persistent_volume_claim(namespace, name)

        super().__init__("PersistentVolumeClaim", api_claim)
