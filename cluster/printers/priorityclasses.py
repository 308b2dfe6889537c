"""How clients print PriorityClass objects: the columns of `podsched get` and the sections of
`podsched describe`."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2
from cluster.printers.describe import DescribeText, Reader, name_fields
from cluster.printers.printer import Printer
from cluster.printers.table import Columns
from cluster.printers.values import NONE, age


def _priority_class_row(pc: objects_pb2.PriorityClass) -> list[str]:
    return [
        pc.metadata.name,
        str(pc.value),
        "true" if pc.global_default else "false",
        age(pc.metadata),
        pc.preemption_policy if pc.HasField("preemption_policy") else NONE,
    ]


async def _describe_priority_class(
    reader: Reader, pc: objects_pb2.PriorityClass, text: DescribeText
) -> None:
    name_fields(text, pc, namespaced=False)
    text.field("Value", pc.value)
    text.field("GlobalDefault", "true" if pc.global_default else "false")
    text.field("PreemptionPolicy", pc.preemption_policy if pc.HasField("preemption_policy") else NONE)
    text.field("Description", pc.description)
    text.mapping("Annotations", pc.metadata.annotations, sep=": ")


PRINTER = Printer(
    kinds.PRIORITY_CLASS,
    Columns(("NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"), _priority_class_row),
    _describe_priority_class,
)
