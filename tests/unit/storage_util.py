"""Storage objects for the volume plugins' unit tables, in the terms of upstream's makePV, makePVC,
makeStorageClass ... (volumebinding's test_utils.go) over ``tests.builders``, and ``StorageObjects``
holding them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from google.protobuf import json_format

from cluster.api import objects_pb2
from scheduler.framework.storage import StorageObjects
from tests import builders

NAMESPACE = "default"
WAIT = "WaitForFirstConsumer"
IMMEDIATE = "Immediate"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"

StorageObject = (objects_pb2.PersistentVolume | objects_pb2.PersistentVolumeClaim | objects_pb2.StorageClass
                 | objects_pb2.CSINode | objects_pb2.CSIDriver | objects_pb2.CSIStorageCapacity)


def storage_class(name: str, mode: str | None = WAIT, provisioner: str = NO_PROVISIONER,
                  allowed_topologies: Sequence[Mapping[str, Sequence[str]]] = ()) -> objects_pb2.StorageClass:
    """``allowed_topologies``: one term per mapping of label key to values."""
    terms = [{"matchLabelExpressions": [{"key": key, "values": list(values)} for key, values in term.items()]}
             for term in allowed_topologies]
    return builders.storage_class(name, provisioner, binding_mode=mode, allowed_topologies=terms)


def claim(name: str, class_name: str | None = None, *, request: str = "", volume_name: str = "",
          bound: bool = False, phase: str = "", selected_node: str | None = None,
          access_modes: Sequence[str] = ("ReadWriteOnce",), uid: str = "", resource_version: str = "1",
          annotations: Mapping[str, str] | None = None, owner_uid: str = "",
          deleting: bool = False, selector: Mapping[str, str] | None = None,
          ) -> objects_pb2.PersistentVolumeClaim:
    """``request`` "": no storage request; ``bound``: the PV controller completed the binding to
    ``volume_name``; ``owner_uid``: a pod that controls it (a generic ephemeral volume's claim)."""
    result = builders.persistent_volume_claim(
        name, NAMESPACE, storage=request or "0", access_modes=access_modes, storage_class=class_name,
        volume_name=volume_name, phase=phase or ("Bound" if bound else "Pending"), annotations=annotations,
        spec={"selector": {"matchLabels": dict(selector)}} if selector is not None else None)
    if not request:
        del result.spec.resources.requests["storage"]
    meta = result.metadata
    meta.uid, meta.resource_version = uid or f"uid-{name}", resource_version
    if bound:
        meta.annotations["pv.kubernetes.io/bind-completed"] = "yes"
    if selected_node is not None:
        meta.annotations["volume.kubernetes.io/selected-node"] = selected_node
    if owner_uid:
        meta.owner_references.append(objects_pb2.OwnerReference(
            api_version="v1", kind="Pod", name="owner", uid=owner_uid, controller=True))
    if deleting:
        meta.deletion_timestamp.seconds = 1
    return result


def volume(name: str, class_name: str = "", *, capacity: str = "1Gi",
           node_labels: Mapping[str, Sequence[str]] | None = None, phase: str = "Available",
           claim_ref: objects_pb2.PersistentVolumeClaim | None = None, claim_ref_uid: bool = True,
           access_modes: Sequence[str] = ("ReadWriteOnce",),
           volume_mode: str | None = None, labels: Mapping[str, str] | None = None,
           resource_version: str = "1", annotations: Mapping[str, str] | None = None,
           ) -> objects_pb2.PersistentVolume:
    """``node_labels``: a required node affinity of one term, each key In its values; ``claim_ref``: the
    claim it is (pre-)bound to (without its uid when ``claim_ref_uid`` is False, as a user pre-binds)."""
    spec: dict[str, Any] = {}
    if node_labels is not None:
        expressions = [{"key": key, "operator": "In", "values": list(values)}
                       for key, values in node_labels.items()]
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}}
    if claim_ref is not None:
        ref = claim_ref.metadata
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": ref.namespace, "name": ref.name,
                            "uid": ref.uid if claim_ref_uid else ""}
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    result = builders.persistent_volume(name, capacity=capacity, access_modes=access_modes,
                                        storage_class=class_name, spec=spec, phase=phase)
    result.metadata.resource_version = resource_version
    result.metadata.labels.update(labels or {})
    result.metadata.annotations.update(annotations or {})
    return result


def csi_driver(name: str, storage_capacity: bool | None = True) -> objects_pb2.CSIDriver:
    spec = {} if storage_capacity is None else {"storageCapacity": storage_capacity}
    return builders.csi_driver(name, spec)


def capacity(name: str, class_name: str, node_labels: Mapping[str, str] | None, *, total: str | None = None,
             maximum: str | None = None) -> objects_pb2.CSIStorageCapacity:
    """``node_labels``: its nodeTopology's matchLabels (None: no topology, no node reaches it)."""
    result = builders.csi_storage_capacity(
        name, class_name, namespace="kube-system", capacity=total, maximum_volume_size=maximum,
        node_topology=None if node_labels is None else {"matchLabels": dict(node_labels)})
    result.metadata.resource_version = "1"
    return result


def csi_node(name: str, annotations: Mapping[str, str] | None = None) -> objects_pb2.CSINode:
    result = builders.csi_node(name)
    result.metadata.annotations.update(annotations or {})
    return result


def pod(name: str = "pod-a", claims: Iterable[str] = (), *, ephemeral: Iterable[str] = (), uid: str = "",
        csi_drivers: Iterable[str] = ()) -> objects_pb2.Pod:
    """A pod with a persistentVolumeClaim volume per name in ``claims``, a generic ephemeral volume per
    name in ``ephemeral`` and an inline CSI volume per driver in ``csi_drivers``."""
    volumes: list[dict[str, Any]] = [{"name": f"vol-{index}", "persistentVolumeClaim": {"claimName": name}}
                                     for index, name in enumerate(claims)]
    volumes += [{"name": name, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}} for name in ephemeral]
    volumes += [{"name": f"csi-{driver}", "csi": {"driver": driver}} for driver in csi_drivers]
    result = builders.pod(name, NAMESPACE, uid=uid or f"uid-{name}")
    for data in volumes:
        result.spec.volumes.append(json_format.ParseDict(data, objects_pb2.Volume()))
    return result


def storage(*objects: StorageObject) -> StorageObjects:
    """StorageObjects holding ``objects``, as the informers would."""
    held = StorageObjects()
    for obj in objects:
        add(held, obj)
    return held


def add(held: StorageObjects, obj: StorageObject) -> None:
    """Deliver ``obj`` as an informer's add or update."""
    if isinstance(obj, objects_pb2.PersistentVolume):
        held.set_persistent_volume(obj)
    elif isinstance(obj, objects_pb2.PersistentVolumeClaim):
        held.set_persistent_volume_claim(obj)
    elif isinstance(obj, objects_pb2.StorageClass):
        held.set_storage_class(obj)
    elif isinstance(obj, objects_pb2.CSINode):
        held.set_csi_node(obj)
    elif isinstance(obj, objects_pb2.CSIDriver):
        held.set_csi_driver(obj)
    else:
        held.set_csi_storage_capacity(obj)
