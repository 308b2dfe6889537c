"""ReplicationController (v1), kept for its selector (PodTopologySpread's system default spreading)."""

from __future__ import annotations

from cluster.api import objects_pb2
from cluster.api.kinds import REPLICATION_CONTROLLER
from cluster.api.validation import core
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import workloads


def default_replication_controller(rc: objects_pb2.ReplicationController) -> None:
    """SetDefaults_ReplicationController: selector and labels from the template's labels, one replica."""
    template_labels = rc.spec.template.metadata.labels
    if not rc.spec.selector:
        rc.spec.selector.update(template_labels)
    if not rc.metadata.labels:
        rc.metadata.labels.update(template_labels)
    if not rc.spec.HasField("replicas"):
        rc.spec.replicas = 1


STRATEGY = KindStrategy(
    kind=REPLICATION_CONTROLLER,
    printer=workloads.REPLICATION_CONTROLLER,
    validation=core.REPLICATION_CONTROLLER,
    defaults=default_replication_controller,
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
