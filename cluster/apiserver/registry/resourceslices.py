"""ResourceSlice (resource.k8s.io/v1): the devices a driver publishes. A device taint written without
`timeAdded` gets the time it was first stored, as resource/v1's defaults give it (to the second): on
create the request's time, on update the stored taint's own or, for a new taint, the update's."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import objects_pb2, timeutil
from cluster.api.kinds import RESOURCE_SLICE
from cluster.api.validation import resource
from cluster.apiserver.registry.kind import KindStrategy
from cluster.printers import resourceslices


def _stamp_taints(resource_slice: objects_pb2.ResourceSlice, now: Timestamp,
                  stored: objects_pb2.ResourceSlice | None = None) -> None:
    known: dict[tuple[str, str, str, str], Timestamp] = {}
    for device in stored.spec.devices if stored is not None else ():
        for taint in device.taints:
            known[(device.name, taint.key, taint.value, taint.effect)] = taint.time_added
    for device in resource_slice.spec.devices:
        for taint in device.taints:
            if not taint.HasField("time_added"):
                before = known.get((device.name, taint.key, taint.value, taint.effect))
                taint.time_added.CopyFrom(before if before is not None else Timestamp(seconds=now.seconds))


def _on_create(resource_slice: objects_pb2.ResourceSlice, now: Timestamp) -> None:
    _stamp_taints(resource_slice, now)


def _on_update(resource_slice: objects_pb2.ResourceSlice, stored: objects_pb2.ResourceSlice) -> None:
    _stamp_taints(resource_slice, timeutil.now(), stored)


STRATEGY = KindStrategy(
    kind=RESOURCE_SLICE,
    printer=resourceslices.PRINTER,
    validation=resource.RESOURCE_SLICE,
    defaults=None,
    prepare_for_create=_on_create,
    prepare_for_update=_on_update,
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
