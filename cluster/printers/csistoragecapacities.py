"""How clients print CSIStorageCapacity objects: kubectl's columns (NAME, STORAGECLASSNAME, CAPACITY: the
server-side printer has no AGE for this kind) and describe's sections."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2
from cluster.printers.describe import DescribeText, Reader, name_fields, selector_text
from cluster.printers.printer import Printer
from cluster.printers.table import NAME, Cell, Column, Columns

UNSET = "<unset>"


def _capacity_row(capacity: objects_pb2.CSIStorageCapacity, now: float) -> list[Cell]:
    return [
        capacity.metadata.name,
        capacity.storage_class_name,
        capacity.capacity if capacity.HasField("capacity") else UNSET,
    ]


async def _describe_capacity(
    reader: Reader, capacity: objects_pb2.CSIStorageCapacity, text: DescribeText
) -> None:
    name_fields(text, capacity, namespaced=True)
    text.mapping("Labels", capacity.metadata.labels)
    text.mapping("Annotations", capacity.metadata.annotations, sep=": ")
    text.field("NodeTopology", selector_text(capacity.node_topology, capacity.HasField("node_topology")))
    text.field("StorageClass", capacity.storage_class_name)
    text.field("Capacity", capacity.capacity if capacity.HasField("capacity") else UNSET)
    text.field("MaximumVolumeSize",
               capacity.maximum_volume_size if capacity.HasField("maximum_volume_size") else UNSET)


PRINTER = Printer(
    kinds.CSI_STORAGE_CAPACITY,
    Columns(
        (
            NAME,
            Column("StorageClassName", "storageClassName represents the name of the StorageClass that the "
                                       "reported capacity applies to."),
            Column("Capacity", "capacity is the value reported by the CSI driver in its GetCapacityResponse "
                               "for a GetCapacityRequest with topology and parameters that match the "
                               "previous fields."),
        ),
        _capacity_row,
    ),
    _describe_capacity,
)
