"""How clients print PodDisruptionBudget objects: the columns of `podsched get` and the sections of
`podsched describe`."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2
from cluster.printers.describe import DescribeText, Reader, name_fields, selector_text
from cluster.printers.printer import Printer
from cluster.printers.table import AGE, NAME, Cell, Column, Columns
from cluster.printers.values import age, int_or_string


def _pdb_row(pdb: objects_pb2.PodDisruptionBudget, now: float) -> list[Cell]:
    spec = pdb.spec
    return [
        pdb.metadata.name,
        int_or_string(spec.min_available) if spec.HasField("min_available") else "N/A",
        int_or_string(spec.max_unavailable) if spec.HasField("max_unavailable") else "N/A",
        pdb.status.disruptions_allowed,
        age(pdb.metadata, now),
    ]


async def _describe_pdb(reader: Reader, pdb: objects_pb2.PodDisruptionBudget, text: DescribeText) -> None:
    spec, status = pdb.spec, pdb.status
    name_fields(text, pdb, namespaced=True)
    if spec.HasField("min_available"):
        text.field("Min available", int_or_string(spec.min_available))
    if spec.HasField("max_unavailable"):
        text.field("Max unavailable", int_or_string(spec.max_unavailable))
    text.field("Selector", selector_text(spec.selector, spec.HasField("selector")))
    text.section("Status")
    text.field("Allowed disruptions", status.disruptions_allowed, 2)
    text.field("Current", status.current_healthy, 2)
    text.field("Desired", status.desired_healthy, 2)
    text.field("Total", status.expected_pods, 2)


PRINTER = Printer(
    kinds.POD_DISRUPTION_BUDGET,
    Columns((
        NAME,
        Column("Min Available", "The minimum number of pods that must be available."),
        Column("Max Unavailable", "The maximum number of pods that may be unavailable."),
        Column("Allowed Disruptions", "Calculated number of pods that may be disrupted at this time.",
               "integer"),
        AGE,
    ), _pdb_row),
    _describe_pdb,
)
