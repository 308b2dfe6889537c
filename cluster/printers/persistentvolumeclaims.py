"""How clients print PersistentVolumeClaim objects: kubectl's columns (NAME, STATUS, VOLUME, CAPACITY,
ACCESS MODES, STORAGECLASS, VOLUMEATTRIBUTESCLASS, AGE; VOLUMEMODE with -o wide) and describe's sections,
with the pods that use the claim."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2
from cluster.api.volumes import access_modes_text, claim_class, ephemeral_claim_name
from cluster.printers.describe import DescribeText, Reader, name_fields
from cluster.printers.persistentvolumes import UNSET, volume_phase
from cluster.printers.printer import Printer
from cluster.printers.table import AGE, NAME, Cell, Column, Columns, wide
from cluster.printers.values import NONE, age


def _bound(pvc: objects_pb2.PersistentVolumeClaim) -> tuple[str, str]:
    """The capacity and access modes kubectl shows: the status's, once the claim names a volume."""
    if not pvc.spec.volume_name:
        return "", ""
    return pvc.status.capacity.get("storage", "0"), access_modes_text(pvc.status.access_modes)


def _pvc_row(pvc: objects_pb2.PersistentVolumeClaim, now: float) -> list[Cell]:
    spec = pvc.spec
    capacity, modes = _bound(pvc)
    return [
        pvc.metadata.name,
        volume_phase(pvc.metadata, pvc.status.phase),
        spec.volume_name,
        capacity,
        modes,
        claim_class(pvc),
        spec.volume_attributes_class_name if spec.HasField("volume_attributes_class_name") else UNSET,
        age(pvc.metadata, now),
        spec.volume_mode if spec.HasField("volume_mode") else UNSET,
    ]


def _uses_claim(pod: objects_pb2.Pod, claim: str) -> bool:
    """Whether a volume of the pod is the claim: by name, or as the claim made for its ephemeral volume."""
    return any(
        (volume.HasField("persistent_volume_claim") and volume.persistent_volume_claim.claim_name == claim)
        or (volume.HasField("ephemeral") and ephemeral_claim_name(pod, volume) == claim)
        for volume in pod.spec.volumes
    )


async def _describe_pvc(reader: Reader, pvc: objects_pb2.PersistentVolumeClaim, text: DescribeText) -> None:
    capacity, modes = _bound(pvc)
    name_fields(text, pvc, namespaced=True)
    text.field("StorageClass", claim_class(pvc))
    text.field("Status", volume_phase(pvc.metadata, pvc.status.phase))
    text.field("Volume", pvc.spec.volume_name)
    text.mapping("Labels", pvc.metadata.labels)
    text.mapping("Annotations", pvc.metadata.annotations, sep=": ")
    text.field("Capacity", capacity)
    text.field("Access Modes", modes)
    text.field("VolumeMode", pvc.spec.volume_mode if pvc.spec.HasField("volume_mode") else UNSET)
    pods = await reader.list_all(kinds.POD, pvc.metadata.namespace)
    users = sorted(pod.metadata.name for pod in pods.items if _uses_claim(pod, pvc.metadata.name))
    text.field("Used By", "\n".join(users) if users else NONE)


PRINTER = Printer(
    kinds.PERSISTENT_VOLUME_CLAIM,
    Columns(
        (
            NAME,
            Column("Status", "phase represents the current phase of PersistentVolumeClaim."),
            Column("Volume", "volumeName is the binding reference to the PersistentVolume backing this "
                             "claim."),
            Column("Capacity", "capacity represents the actual resources of the underlying volume."),
            Column("Access Modes", "accessModes contains the actual access modes the volume backing the PVC "
                                   "has."),
            Column("StorageClass", "StorageClass of the pvc"),
            Column("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
            AGE,
            wide(Column("VolumeMode", "volumeMode defines what type of volume is required by the claim.")),
        ),
        _pvc_row,
    ),
    _describe_pvc,
)
