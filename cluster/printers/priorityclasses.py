"""How clients print PriorityClass objects: the columns of `podsched get` and the sections of
`podsched describe`."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2
from cluster.printers.describe import DescribeText, Reader, name_fields
from cluster.printers.printer import Printer
from cluster.printers.table import AGE, NAME, Cell, Column, Columns
from cluster.printers.values import NONE, age


def _priority_class_row(pc: objects_pb2.PriorityClass, now: float) -> list[Cell]:
    return [
        pc.metadata.name,
        pc.value,
        pc.global_default,
        age(pc.metadata, now),
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
    Columns((
        NAME,
        Column("Value", "value represents the integer value of this priority class.", "integer"),
        Column("Global-Default", "globalDefault specifies whether this PriorityClass should be considered as "
                                 "the default priority for pods that do not have any priority class.",
               "boolean"),
        AGE,
        Column("PreemptionPolicy", "preemptionPolicy is the Policy for preempting pods with lower priority."),
    ), _priority_class_row),
    _describe_priority_class,
)
