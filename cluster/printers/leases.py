"""How clients print Lease objects: the columns of `podsched get` and the sections of
`podsched describe`."""

from __future__ import annotations

from cluster.api import kinds, objects_pb2
from cluster.printers.describe import DescribeText, Reader, name_fields, time_text
from cluster.printers.printer import Printer
from cluster.printers.table import AGE, NAME, Cell, Column, Columns
from cluster.printers.values import NONE, age


def _lease_row(lease: objects_pb2.Lease, now: float) -> list[Cell]:
    holder = lease.spec.holder_identity if lease.spec.HasField("holder_identity") else ""
    return [lease.metadata.name, holder, age(lease.metadata, now)]


async def _describe_lease(reader: Reader, lease: objects_pb2.Lease, text: DescribeText) -> None:
    spec = lease.spec
    name_fields(text, lease, namespaced=True)
    text.mapping("Labels", lease.metadata.labels)
    text.mapping("Annotations", lease.metadata.annotations, sep=": ")
    text.section("Spec")
    text.field("Holder Identity", spec.holder_identity if spec.HasField("holder_identity") else NONE, 1)
    duration = spec.lease_duration_seconds if spec.HasField("lease_duration_seconds") else NONE
    text.field("Lease Duration Seconds", duration, 1)
    text.field("Acquire Time", time_text(spec.acquire_time), 1)
    text.field("Renew Time", time_text(spec.renew_time), 1)
    transitions = spec.lease_transitions if spec.HasField("lease_transitions") else 0
    text.field("Lease Transitions", transitions, 1)


PRINTER = Printer(
    kinds.LEASE,
    Columns((NAME, Column("Holder", "holderIdentity contains the identity of the holder of a current lease."),
             AGE), _lease_row),
    _describe_lease,
)
