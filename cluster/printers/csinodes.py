"""How clients print CSINode objects: kubectl's columns (NAME, DRIVERS, AGE) and describe's sections."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2
from cluster.printers.describe import DescribeText, Reader, name_fields
from cluster.printers.printer import Printer
from cluster.printers.table import AGE, NAME, Cell, Column, Columns
from cluster.printers.values import age


def _csi_node_row(node: objects_pb2.CSINode, now: float) -> list[Cell]:
    return [node.metadata.name, len(node.spec.drivers), age(node.metadata, now)]


async def _describe_csi_node(reader: Reader, node: objects_pb2.CSINode, text: DescribeText) -> None:
    name_fields(text, node, namespaced=False)
    text.mapping("Labels", node.metadata.labels)
    text.mapping("Annotations", node.metadata.annotations, sep=": ")
    text.section("Spec")
    text.section("Drivers", 1)
    for driver in node.spec.drivers:
        text.section(driver.name, 2)
        text.field("Node ID", driver.node_id, 3)
        if driver.allocatable.HasField("count"):
            text.section("Allocatables", 3)
            text.field("Count", driver.allocatable.count, 4)
        if driver.topology_keys:
            text.field("Topology Keys", "[" + " ".join(driver.topology_keys) + "]", 3)


PRINTER = Printer(
    kinds.CSI_NODE,
    Columns(
        (NAME, Column("Drivers", "Drivers indicates the number of CSI drivers registered on the node",
                      type="integer"), AGE),
        _csi_node_row,
    ),
    _describe_csi_node,
)
