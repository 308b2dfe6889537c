"""PersistentVolume (v1): defaulted as upstream's SetDefaults_PersistentVolume (reclaim policy Retain,
volume mode Filesystem, phase Pending); a created volume starts with that status only, as upstream's
strategy resets it, and a status update that changes the phase records lastPhaseTransitionTime. The
leading scheduler's PreBind writes a volume's claimRef under its fence: an Update may carry one, and a
fenced write stamps the volume (podsched.io/written-under-fence) as an Event's."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import objects_pb2
from cluster.api.kinds import PERSISTENT_VOLUME
from cluster.api.validation import persistentvolumes
from cluster.apiserver.defaults import DEFAULT_VOLUME_MODE
from cluster.apiserver.fencing import record_written_under_fence
from cluster.apiserver.registry.kind import UPDATE, KindStrategy
from cluster.printers import persistentvolumes as printer

PENDING = "Pending"


def _defaults(pv: objects_pb2.PersistentVolume) -> None:
    spec = pv.spec
    if not spec.persistent_volume_reclaim_policy:
        spec.persistent_volume_reclaim_policy = "Retain"
    if not spec.HasField("volume_mode"):
        spec.volume_mode = DEFAULT_VOLUME_MODE
    if not pv.status.phase:
        pv.status.phase = PENDING


def _prepare_for_create(pv: objects_pb2.PersistentVolume, now: Timestamp) -> None:
    pv.ClearField("status")
    pv.status.phase = PENDING
    pv.status.last_phase_transition_time.CopyFrom(now)


def _prepare_for_status_update(
    pv: objects_pb2.PersistentVolume, stored: objects_pb2.PersistentVolume, now: Timestamp
) -> None:
    # Upstream's status strategy stamps every change of phase.
    if pv.status.phase != stored.status.phase:
        pv.status.last_phase_transition_time.CopyFrom(now)


STRATEGY = KindStrategy(
    kind=PERSISTENT_VOLUME,
    printer=printer.PRINTER,
    validation=persistentvolumes.PERSISTENT_VOLUME,
    defaults=_defaults,
    prepare_for_create=_prepare_for_create,
    prepare_for_update=None,
    prepare_for_status_update=_prepare_for_status_update,
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
