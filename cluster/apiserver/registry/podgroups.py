"""PodGroup (scheduling.k8s.io/v1alpha3, and Coscheduling's scheduling.x-k8s.io/v1alpha1): upstream's
disruption mode defaults to single; its priority is the Priority admission plugin's, its Workload the
PodGroupWorkloadExists plugin's, its quota rule the ResourceQuota plugin's."""

from __future__ import annotations

from cluster.api import objects_pb2
from cluster.api import podgroups as podgroup_api
from cluster.api.kinds import POD_GROUP
from cluster.api.validation import scheduling
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import podgroups


def _defaults(group: objects_pb2.PodGroup) -> None:
    if not podgroup_api.is_coscheduling(group) and not group.spec.HasField("disruption_mode"):
        group.spec.disruption_mode.single.SetInParent()


STRATEGY = KindStrategy(
    kind=POD_GROUP,
    printer=podgroups.PRINTER,
    validation=scheduling.POD_GROUP,
    defaults=_defaults,
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
