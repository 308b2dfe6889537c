"""Every served kind's printer, by kind: one module per kind declares it."""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message

from cluster.api import kinds
from cluster.printers import (
    compositepodgroups,
    csidrivers,
    csinodes,
    csistoragecapacities,
    deviceclasses,
    events,
    leasecandidates,
    leases,
    namespaces,
    nodes,
    persistentvolumeclaims,
    persistentvolumes,
    poddisruptionbudgets,
    podgroups,
    pods,
    priorityclasses,
    resourceclaims,
    resourceclaimtemplates,
    resourcequotas,
    resourceslices,
    runtimeclasses,
    schedulingworkloads,
    services,
    storageclasses,
    workloads,
)
from cluster.printers.printer import Printer

PRINTERS: dict[kinds.Kind[Any], Printer[Any]] = {
    printer.kind: printer
    for printer in (
        pods.PRINTER, nodes.PRINTER, priorityclasses.PRINTER, poddisruptionbudgets.PRINTER,
        resourcequotas.PRINTER, podgroups.PRINTER, leases.PRINTER, leasecandidates.PRINTER, events.PRINTER,
        namespaces.PRINTER, runtimeclasses.PRINTER, services.PRINTER, workloads.REPLICA_SET,
        workloads.STATEFUL_SET, workloads.REPLICATION_CONTROLLER, deviceclasses.PRINTER,
        resourceslices.PRINTER, resourceclaims.PRINTER, resourceclaimtemplates.PRINTER,
        schedulingworkloads.PRINTER, compositepodgroups.PRINTER, persistentvolumes.PRINTER,
        persistentvolumeclaims.PRINTER, storageclasses.PRINTER, csinodes.PRINTER, csidrivers.PRINTER,
        csistoragecapacities.PRINTER,
    )
}


def header(kind: kinds.Kind[Any], *, wide: bool, all_namespaces: bool) -> list[str]:
    cells = PRINTERS[kind].columns.headers(wide)
    return ["NAMESPACE", *cells] if all_namespaces else cells


def row(kind: kinds.Kind[Any], obj: Message, *, wide: bool, all_namespaces: bool) -> list[str]:
    cells = PRINTERS[kind].columns.cells(obj, wide)
    return [kinds.metadata_of(obj).namespace, *cells] if all_namespaces else cells
