"""Storage objects for the volume plugins' tables: claims, volumes, classes and CSINodes from short
arguments, and the ``StorageObjects`` a handle hands the plugins."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from google.protobuf import json_format

from cluster.api import objects_pb2
from scheduler.framework.storage import StorageObjects
from tests import builders

StorageObject = (objects_pb2.PersistentVolume | objects_pb2.PersistentVolumeClaim | objects_pb2.StorageClass
                 | objects_pb2.CSINode)


def claim(
    name: str, namespace: str = "default", *, volume_name: str = "", storage_class: str | None = None,
    access_modes: Iterable[str] = (), owners: Iterable[Mapping[str, Any]] = (),
) -> objects_pb2.PersistentVolumeClaim:
    result = objects_pb2.PersistentVolumeClaim()
    result.metadata.name, result.metadata.namespace = name, namespace
    for owner in owners:
        json_format.ParseDict(dict(owner), result.metadata.owner_references.add())
    result.spec.volume_name = volume_name
    result.spec.access_modes.extend(access_modes)
    if storage_class is not None:
        result.spec.storage_class_name = storage_class
    return result


def volume(name: str, *, labels: Mapping[str, str] | None = None,
           source: Mapping[str, Any] | None = None) -> objects_pb2.PersistentVolume:
    """A PersistentVolume; ``source`` is its spec's volume source as a manifest ({"csi": {...}})."""
    result = json_format.ParseDict({"metadata": {"name": name}, "spec": dict(source or {})},
                                   objects_pb2.PersistentVolume())
    result.metadata.labels.update(labels or {})
    return result


def storage_class(name: str, *, provisioner: str = "",
                  binding_mode: str | None = None) -> objects_pb2.StorageClass:
    result = objects_pb2.StorageClass(provisioner=provisioner)
    result.metadata.name = name
    if binding_mode is not None:
        result.volume_binding_mode = binding_mode
    return result


def csi_node(name: str, drivers: Mapping[str, int | None]) -> objects_pb2.CSINode:
    """A CSINode with the given drivers, each with its allocatable count (None: no count)."""
    result = objects_pb2.CSINode()
    result.metadata.name = name
    for driver, count in drivers.items():
        entry = result.spec.drivers.add(name=driver, node_id=name)
        if count is not None:
            entry.allocatable.count = count
    return result


def storage(*objects: StorageObject) -> StorageObjects:
    known = StorageObjects()
    for obj in objects:
        if isinstance(obj, objects_pb2.PersistentVolume):
            known.set_persistent_volume(obj)
        elif isinstance(obj, objects_pb2.PersistentVolumeClaim):
            known.set_persistent_volume_claim(obj)
        elif isinstance(obj, objects_pb2.StorageClass):
            known.set_storage_class(obj)
        else:
            known.set_csi_node(obj)
    return known


def claim_volume(claim_name: str, name: str = "") -> dict[str, Any]:
    """A pod volume (manifest) of the claim."""
    return {"name": name or claim_name, "persistentVolumeClaim": {"claimName": claim_name}}


def volume_pod(name: str = "pod", namespace: str = "default", *, volumes: Iterable[Mapping[str, Any]] = (),
               claims: Iterable[str] = (), node_name: str = "", uid: str = "",
               priority: int | None = None) -> objects_pb2.Pod:
    """A pod with the given volumes (manifests), then one volume per claim name."""
    listed = [dict(v) for v in volumes] + [claim_volume(c, f"claim-{i}") for i, c in enumerate(claims)]
    return builders.pod(name, namespace, spec={"volumes": listed} if listed else None, node_name=node_name,
                        uid=uid, priority=priority)
