"""Workload (scheduling.k8s.io/v1alpha3): the templates a workload controller makes PodGroups and
CompositePodGroups from; no status. A group naming one of its templates is checked against it by the
PodGroupWorkloadExists admission plugin."""

from __future__ import annotations

from cluster.api.kinds import WORKLOAD
from cluster.api.validation import workload
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import schedulingworkloads

STRATEGY = KindStrategy(
    kind=WORKLOAD,
    printer=schedulingworkloads.PRINTER,
    validation=workload.WORKLOAD,
    defaults=None,
    prepare_for_create=None,
    prepare_for_update=None,
    prepare_for_status_update=None,
    server_validation=None,
    fenced_verbs=frozenset(),
    record_fence=None,
    check_update=None,
    nominates=False,
    graceful_delete=None,
    check_delete=None,
    after_write=None,
    after_status_update=None,
    after_delete=None,
)
