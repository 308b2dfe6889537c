"""CompositePodGroup (scheduling.k8s.io/v1alpha3): a group of PodGroups (or of CompositePodGroups)
scheduled together, made from a Workload's composite template; status by the status subresource. Its
disruption mode defaults to single, its priority is the Priority admission plugin's, its Workload is
checked by PodGroupWorkloadExists."""

from __future__ import annotations

from cluster.api import objects_pb2
from cluster.api.kinds import COMPOSITE_POD_GROUP
from cluster.api.validation import scheduling
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import compositepodgroups


def _defaults(group: objects_pb2.CompositePodGroup) -> None:
    if not group.spec.HasField("disruption_mode"):
        group.spec.disruption_mode.single.SetInParent()


STRATEGY = KindStrategy(
    kind=COMPOSITE_POD_GROUP,
    printer=compositepodgroups.PRINTER,
    validation=scheduling.COMPOSITE_POD_GROUP,
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
