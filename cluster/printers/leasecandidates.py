"""How clients print LeaseCandidate objects: the columns of `podsched get` and the sections of
`podsched describe`."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2
from cluster.printers.describe import DescribeText, Reader, name_fields, time_text
from cluster.printers.printer import Printer
from cluster.printers.table import AGE, NAME, Cell, Column, Columns
from cluster.printers.values import NONE, age


def _lease_candidate_row(candidate: objects_pb2.LeaseCandidate, now: float) -> list[Cell]:
    spec = candidate.spec
    return [candidate.metadata.name, spec.lease_name, spec.binary_version, spec.emulation_version,
            age(candidate.metadata, now)]


async def _describe_lease_candidate(
    reader: Reader, candidate: objects_pb2.LeaseCandidate, text: DescribeText
) -> None:
    spec = candidate.spec
    name_fields(text, candidate, namespaced=True)
    text.mapping("Labels", candidate.metadata.labels)
    text.mapping("Annotations", candidate.metadata.annotations, sep=": ")
    text.section("Spec")
    text.field("Lease Name", spec.lease_name, 1)
    text.field("Binary Version", spec.binary_version, 1)
    text.field("Emulation Version", spec.emulation_version or NONE, 1)
    text.field("Strategy", spec.strategy, 1)
    text.field("Renew Time", time_text(spec.renew_time), 1)
    text.field("Ping Time", time_text(spec.ping_time), 1)


PRINTER = Printer(
    kinds.LEASE_CANDIDATE,
    Columns((
        NAME,
        Column("LeaseName", "LeaseName is the name of the lease for which this candidate is contending."),
        Column("BinaryVersion", "BinaryVersion is the binary version."),
        Column("EmulationVersion", "EmulationVersion is the emulation version."),
        AGE,
    ), _lease_candidate_row),
    _describe_lease_candidate,
)
