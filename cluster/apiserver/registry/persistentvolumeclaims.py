"""PersistentVolumeClaim (v1): defaulted as upstream's SetDefaults_PersistentVolumeClaim (volume mode
Filesystem, phase Pending); a created claim starts with that status only, as upstream's strategy resets
it. The leading scheduler's PreBind annotates a claim with the node it chose
(volume.kubernetes.io/selected-node) under its fence: an Update may carry one, and a fenced write stamps the
claim (podsched.io/written-under-fence) as an Event's."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import objects_pb2
from cluster.api.kinds import PERSISTENT_VOLUME_CLAIM
from cluster.api.validation import persistentvolumes
from cluster.apiserver.defaults import default_claim_spec
from cluster.apiserver.fencing import record_written_under_fence
from cluster.apiserver.registry.kind import UPDATE, KindStrategy
from cluster.apiserver.registry.persistentvolumes import PENDING
from cluster.printers import persistentvolumeclaims as printer


def _defaults(pvc: objects_pb2.PersistentVolumeClaim) -> None:
    default_claim_spec(pvc.spec)
    if not pvc.status.phase:
        pvc.status.phase = PENDING


def _prepare_for_create(pvc: objects_pb2.PersistentVolumeClaim, now: Timestamp) -> None:
    pvc.ClearField("status")
    pvc.status.phase = PENDING


STRATEGY = KindStrategy(
    kind=PERSISTENT_VOLUME_CLAIM,
    printer=printer.PRINTER,
    validation=persistentvolumes.PERSISTENT_VOLUME_CLAIM,
    defaults=_defaults,
    prepare_for_create=_prepare_for_create,
    prepare_for_update=None,
    prepare_for_status_update=None,
    server_validation=None,
    fenced_verbs=frozenset({UPDATE}),
    record_fence=record_written_under_fence,
    check_update=None,
    nominates=False,
    graceful_delete=None,
    check_delete=None,
    after_write=None,
    after_status_update=None,
    after_delete=None,
)
