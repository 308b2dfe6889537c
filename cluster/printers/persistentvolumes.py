"""How clients print PersistentVolume objects: kubectl's columns (NAME, CAPACITY, ACCESS MODES, RECLAIM
POLICY, STATUS, CLAIM, STORAGECLASS, VOLUMEATTRIBUTESCLASS, REASON, AGE; VOLUMEMODE with -o wide) and
describe's sections."""

from __future__ import annotations

from google.protobuf import json_format

from cluster.api import kinds, objects_pb2, timeutil
from cluster.api.volumes import access_modes_text, volume_class
from cluster.printers.describe import DescribeText, Reader, name_fields
from cluster.printers.printer import Printer
from cluster.printers.table import AGE, NAME, Cell, Column, Columns, wide
from cluster.printers.values import NONE, age

UNSET = "<unset>"
#: The sources a volume may have, for describe's Source section.
_SOURCES = tuple(
    field for field in objects_pb2.PersistentVolumeSpec.DESCRIPTOR.fields if field.number >= 10
)
#: How kubectl's describe names the modelled sources.
_SOURCE_TYPES = {
    "local": "LocalVolume (a persistent volume backed by local storage on a node)",
    "host_path": "HostPath (bare host directory volume)",
    "csi": "CSI (a Container Storage Interface (CSI) volume source)",
    "gce_persistent_disk": "GCEPersistentDisk (a Persistent Disk resource in Google Compute Engine)",
    "aws_elastic_block_store": "AWSElasticBlockStore (a Persistent Disk resource in AWS)",
    "azure_disk": "AzureDisk (an Azure Data Disk mount on the host and bind mount to the pod)",
}


def volume_phase(meta: objects_pb2.ObjectMeta, phase: str) -> str:
    """A volume's or a claim's phase as kubectl shows it: "Terminating" once deletion has begun."""
    return "Terminating" if timeutil.is_set(meta.deletion_timestamp) else phase


def _claim(pv: objects_pb2.PersistentVolume) -> str:
    if not pv.spec.HasField("claim_ref"):
        return ""
    return f"{pv.spec.claim_ref.namespace}/{pv.spec.claim_ref.name}"


def _pv_row(pv: objects_pb2.PersistentVolume, now: float) -> list[Cell]:
    spec = pv.spec
    return [
        pv.metadata.name,
        spec.capacity.get("storage", "0"),
        access_modes_text(spec.access_modes),
        spec.persistent_volume_reclaim_policy,
        volume_phase(pv.metadata, pv.status.phase),
        _claim(pv),
        volume_class(pv),
        spec.volume_attributes_class_name if spec.HasField("volume_attributes_class_name") else UNSET,
        pv.status.reason,
        age(pv.metadata, now),
        spec.volume_mode if spec.HasField("volume_mode") else UNSET,
    ]


def source_section(text: DescribeText, spec: objects_pb2.PersistentVolumeSpec) -> None:
    """The volume's source: its type and its fields, one per line."""
    text.section("Source")
    for field in _SOURCES:
        if spec.HasField(field.name):
            text.field("Type", _SOURCE_TYPES.get(field.name, field.json_name), 1)
            fields = json_format.MessageToDict(getattr(spec, field.name))
            for key in sorted(fields):
                text.field(key[:1].upper() + key[1:], fields[key], 1)
            return
    text.field("Type", NONE, 1)


def node_affinity_section(text: DescribeText, spec: objects_pb2.PersistentVolumeSpec) -> None:
    """kubectl's Node Affinity: each required term's expressions, operators in lower case."""
    if not spec.HasField("node_affinity"):
        text.field("Node Affinity", NONE)
        return
    text.field("Node Affinity", "")
    text.field("Required Terms", "", 1)
    for i, term in enumerate(spec.node_affinity.required.node_selector_terms):
        expressions = [f"{e.key} {e.operator.lower()} [{', '.join(e.values)}]"
                       for e in term.match_expressions]
        text.field(f"Term {i}", ", ".join(expressions) or NONE, 2)


async def _describe_pv(reader: Reader, pv: objects_pb2.PersistentVolume, text: DescribeText) -> None:
    spec = pv.spec
    name_fields(text, pv, namespaced=False)
    text.mapping("Labels", pv.metadata.labels)
    text.mapping("Annotations", pv.metadata.annotations, sep=": ")
    text.field("StorageClass", volume_class(pv))
    text.field("Status", volume_phase(pv.metadata, pv.status.phase))
    text.field("Claim", _claim(pv))
    text.field("Reclaim Policy", spec.persistent_volume_reclaim_policy)
    text.field("Access Modes", access_modes_text(spec.access_modes))
    text.field("VolumeMode", spec.volume_mode if spec.HasField("volume_mode") else UNSET)
    text.field("Capacity", spec.capacity.get("storage", "0"))
    node_affinity_section(text, spec)
    text.field("Message", pv.status.message)
    source_section(text, spec)


PRINTER = Printer(
    kinds.PERSISTENT_VOLUME,
    Columns(
        (
            NAME,
            Column("Capacity", "capacity is the description of the persistent volume's resources and "
                               "capacity."),
            Column("Access Modes", "accessModes contains all ways the volume can be mounted."),
            Column("Reclaim Policy", "persistentVolumeReclaimPolicy defines what happens to a persistent "
                                     "volume when released from its claim."),
            Column("Status", "phase indicates if a volume is available, bound to a claim, or released by a "
                             "claim."),
            Column("Claim", "claimRef is part of a bi-directional binding between PersistentVolume and "
                            "PersistentVolumeClaim."),
            Column("StorageClass", "StorageClass of the pv"),
            Column("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
            Column("Reason", "reason is a brief CamelCase string that describes any failure and is meant "
                             "for machine parsing and tidy display in the CLI."),
            AGE,
            wide(Column("VolumeMode", "volumeMode defines if a volume is intended to be used with a "
                                      "formatted filesystem or to remain in raw block state.")),
        ),
        _pv_row,
    ),
    _describe_pv,
)
