"""How clients print RuntimeClass objects: the columns of `podsched get` and the sections of
`podsched describe`."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2
from cluster.printers.describe import DescribeText, Reader, name_fields
from cluster.printers.printer import Printer
from cluster.printers.table import AGE, NAME, Cell, Column, Columns
from cluster.printers.values import NONE, age, toleration_text


def _runtime_class_row(runtime_class: objects_pb2.RuntimeClass, now: float) -> list[Cell]:
    return [runtime_class.metadata.name, runtime_class.handler, age(runtime_class.metadata, now)]


async def _describe_runtime_class(
    reader: Reader, runtime_class: objects_pb2.RuntimeClass, text: DescribeText
) -> None:
    name_fields(text, runtime_class, namespaced=False)
    text.mapping("Labels", runtime_class.metadata.labels)
    text.mapping("Annotations", runtime_class.metadata.annotations, sep=": ")
    text.field("Handler", runtime_class.handler)
    text.mapping("Overhead", runtime_class.overhead.pod_fixed, sep=": ")
    text.mapping("Node-Selectors", runtime_class.scheduling.node_selector)
    tolerations = [toleration_text(t) for t in runtime_class.scheduling.tolerations]
    text.field("Tolerations", "\n".join(tolerations) if tolerations else NONE)


PRINTER = Printer(
    kinds.RUNTIME_CLASS,
    Columns((NAME, Column("Handler", "handler specifies the underlying runtime and configuration that the "
                                     "CRI implementation will use to handle pods of this class."), AGE),
            _runtime_class_row),
    _describe_runtime_class,
)
