"""How clients print Namespace objects: the columns of `podsched get` and the sections of
`podsched describe`."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2
from cluster.printers.describe import DescribeText, Reader, name_fields
from cluster.printers.printer import Printer
from cluster.printers.table import AGE, NAME, Cell, Column, Columns
from cluster.printers.values import NONE, age


def _namespace_row(namespace: objects_pb2.Namespace, now: float) -> list[Cell]:
    return [namespace.metadata.name, namespace.status.phase, age(namespace.metadata, now)]


async def _describe_namespace(reader: Reader, namespace: objects_pb2.Namespace, text: DescribeText) -> None:
    name_fields(text, namespace, namespaced=False)
    text.mapping("Labels", namespace.metadata.labels)
    text.mapping("Annotations", namespace.metadata.annotations, sep=": ")
    text.field("Status", namespace.status.phase or NONE)


PRINTER = Printer(
    kinds.NAMESPACE,
    Columns((NAME, Column("Status", "The status of the namespace"), AGE), _namespace_row),
    _describe_namespace,
)
