"""How clients print StorageClass objects: kubectl's columns (NAME, marked "(default)" for a default
class, PROVISIONER, RECLAIMPOLICY, VOLUMEBINDINGMODE, ALLOWVOLUMEEXPANSION, AGE) and describe's
sections."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2
from cluster.api.volumes import is_default_class
from cluster.printers.describe import DescribeText, Reader, name_fields
from cluster.printers.printer import Printer
from cluster.printers.table import AGE, NAME, Cell, Column, Columns
from cluster.printers.values import NONE, age


def reclaim_policy(sc: objects_pb2.StorageClass) -> str:
    return sc.reclaim_policy if sc.HasField("reclaim_policy") else "Delete"


def binding_mode(sc: objects_pb2.StorageClass) -> str:
    return sc.volume_binding_mode if sc.HasField("volume_binding_mode") else "Immediate"


def topology_text(terms: list[objects_pb2.TopologySelectorTerm]) -> str:
    lines = []
    for i, term in enumerate(terms):
        expressions = [f"{e.key} in [{', '.join(e.values)}]" for e in term.match_label_expressions]
        lines.append(f"Term {i}: " + ", ".join(expressions))
    return "\n".join(lines) if lines else NONE


def _sc_row(sc: objects_pb2.StorageClass, now: float) -> list[Cell]:
    name = sc.metadata.name + (" (default)" if is_default_class(sc.metadata) else "")
    return [name, sc.provisioner, reclaim_policy(sc), binding_mode(sc), sc.allow_volume_expansion,
            age(sc.metadata, now)]


async def _describe_sc(reader: Reader, sc: objects_pb2.StorageClass, text: DescribeText) -> None:
    name_fields(text, sc, namespaced=False)
    text.field("IsDefaultClass", "Yes" if is_default_class(sc.metadata) else "No")
    text.mapping("Annotations", sc.metadata.annotations, sep="=")
    text.field("Provisioner", sc.provisioner)
    text.mapping("Parameters", sc.parameters)
    text.field("AllowVolumeExpansion", str(sc.allow_volume_expansion).lower()
               if sc.HasField("allow_volume_expansion") else "<unset>")
    text.field("MountOptions", "\n".join(sc.mount_options) if sc.mount_options else NONE)
    text.field("ReclaimPolicy", reclaim_policy(sc))
    text.field("VolumeBindingMode", binding_mode(sc))
    text.field("AllowedTopologies", topology_text(list(sc.allowed_topologies)))


PRINTER = Printer(
    kinds.STORAGE_CLASS,
    Columns(
        (
            NAME,
            Column("Provisioner", "provisioner indicates the type of the provisioner."),
            Column("ReclaimPolicy", "reclaimPolicy controls the reclaimPolicy for dynamically provisioned "
                                    "PersistentVolumes of this storage class."),
            Column("VolumeBindingMode", "volumeBindingMode indicates how PersistentVolumeClaims should be "
                                        "provisioned and bound."),
            Column("AllowVolumeExpansion", "allowVolumeExpansion shows whether the storage class allow "
                                           "volume expand."),
            AGE,
        ),
        _sc_row,
    ),
    _describe_sc,
)
