"""Storage objects for the volume plugins' unit tables (upstream's makePV, makePVC, makeStorageClass ...
of volumebinding's test_utils.go), and ``StorageObjects`` holding them."""

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
    result = objects_pb2.StorageClass(metadata=objects_pb2.ObjectMeta(name=name), provisioner=provisioner)
    if mode is not None:
        result.volume_binding_mode = mode
    for term in allowed_topologies:
        result.allowed_topologies.append(objects_pb2.TopologySelectorTerm(match_label_expressions=[
            objects_pb2.TopologySelectorLabelRequirement(key=key, values=list(values))
            for key, values in term.items()]))
    return result


def claim(name: str, class_name: str | None = None, *, request: str = "", volume_name: str = "",
          bound: bool = False, phase: str = "", selected_node: str | None = None,
          access_modes: Sequence[str] = ("ReadWriteOnce",), uid: str = "", resource_version: str = "1",
          annotations: Mapping[str, str] | None = None, owner_uid: str = "",
          deleting: bool = False, selector: Mapping[str, str] | None = None,
          ) -> objects_pb2.PersistentVolumeClaim:
    """``bound``: the PV controller completed the binding to ``volume_name``; ``owner_uid``: a pod that
    controls it (a generic ephemeral volume's claim)."""
    result = objects_pb2.PersistentVolumeClaim()
    meta = result.metadata
    meta.name, meta.namespace, meta.uid = name, NAMESPACE, uid or f"uid-{name}"
    meta.resource_version = resource_version
    meta.annotations.update(annotations or {})
    if bound:
        meta.annotations["pv.kubernetes.io/bind-completed"] = "yes"
    if selected_node is not None:
        meta.annotations["volume.kubernetes.io/selected-node"] = selected_node
    if owner_uid:
        meta.owner_references.append(objects_pb2.OwnerReference(
            api_version="v1", kind="Pod", name="owner", uid=owner_uid, controller=True))
    if deleting:
        meta.deletion_timestamp.seconds = 1
    if class_name is not None:
        result.spec.storage_class_name = class_name
    result.spec.access_modes.extend(access_modes)
    if request:
        result.spec.resources.requests["storage"] = request
    if selector is not None:
        result.spec.selector.match_labels.update(selector)
    result.spec.volume_name = volume_name
    result.status.phase = phase or ("Bound" if bound else "Pending")
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
    result = objects_pb2.PersistentVolume()
    meta = result.metadata
    meta.name, meta.resource_version = name, resource_version
    meta.labels.update(labels or {})
    meta.annotations.update(annotations or {})
    result.spec.capacity["storage"] = capacity
    result.spec.access_modes.extend(access_modes)
    result.spec.storage_class_name = class_name
    if volume_mode is not None:
        result.spec.volume_mode = volume_mode
    if node_labels is not None:
        term = result.spec.node_affinity.required.node_selector_terms.add()
        for key, values in node_labels.items():
            term.match_expressions.add(key=key, operator="In", values=list(values))
    if claim_ref is not None:
        result.spec.claim_ref.CopyFrom(objects_pb2.ObjectReference(
            kind="PersistentVolumeClaim", namespace=claim_ref.metadata.namespace,
            name=claim_ref.metadata.name, uid=claim_ref.metadata.uid if claim_ref_uid else ""))
    result.status.phase = phase
    return result


def csi_driver(name: str, storage_capacity: bool | None = True) -> objects_pb2.CSIDriver:
    result = objects_pb2.CSIDriver(metadata=objects_pb2.ObjectMeta(name=name))
    if storage_capacity is not None:
        result.spec.storage_capacity = storage_capacity
    return result


def capacity(name: str, class_name: str, node_labels: Mapping[str, str] | None, *, total: str | None = None,
             maximum: str | None = None, resource_version: str = "1") -> objects_pb2.CSIStorageCapacity:
    """``node_labels``: its nodeTopology's matchLabels (None: no topology, no node reaches it)."""
    result = objects_pb2.CSIStorageCapacity(
        metadata=objects_pb2.ObjectMeta(name=name, namespace="kube-system",
                                        resource_version=resource_version),
        storage_class_name=class_name)
    if node_labels is not None:
        result.node_topology.CopyFrom(objects_pb2.LabelSelector(match_labels=dict(node_labels)))
    if total is not None:
        result.capacity = total
    if maximum is not None:
        result.maximum_volume_size = maximum
    return result


def csi_node(name: str, annotations: Mapping[str, str] | None = None) -> objects_pb2.CSINode:
    meta = objects_pb2.ObjectMeta(name=name, annotations=dict(annotations or {}))
    return objects_pb2.CSINode(metadata=meta)


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
