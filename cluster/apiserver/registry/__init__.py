"""The registry of kinds: one module per kind declares everything the API server does with it (a
``KindStrategy``, kind.py), as kube-apiserver's pkg/registry/<group>/<kind>. The verbs look a kind's
strategy up here, once per request."""

from __future__ import annotations

from typing import Any

from cluster.api.kinds import Kind
from cluster.apiserver.registry import (
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
    replicasets,
    replicationcontrollers,
    resourceclaims,
    resourceclaimtemplates,
    resourcequotas,
    resourceslices,
    runtimeclasses,
    services,
    statefulsets,
    storageclasses,
    workloads,
)
from cluster.apiserver.registry.kind import KindStrategy

STRATEGIES: dict[Kind[Any], KindStrategy[Any]] = {
    module.STRATEGY.kind: module.STRATEGY
    for module in (
        pods, nodes, priorityclasses, poddisruptionbudgets, resourcequotas, podgroups, leases,
        leasecandidates, events, namespaces, runtimeclasses, services, replicasets, statefulsets,
        replicationcontrollers, deviceclasses, resourceslices, resourceclaims, resourceclaimtemplates,
        workloads, compositepodgroups, persistentvolumes, persistentvolumeclaims, storageclasses, csinodes,
        csidrivers, csistoragecapacities,
    )
}


def strategy_of(kind: Kind[Any]) -> KindStrategy[Any]:
    return STRATEGIES[kind]


def fenced_kinds(verb: str) -> tuple[Kind[Any], ...]:
    """The kinds whose writes by ``verb`` may carry a fence, by name."""
    fenced = (s.kind for s in STRATEGIES.values() if verb in s.fenced_verbs)
    return tuple(sorted(fenced, key=lambda kind: kind.name))
