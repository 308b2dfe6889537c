"""Event (v1). Events are written under a fence by a scheduler (its events belong to its term): an Event
stores the fence it was written under in annotation podsched.io/written-under-fence; an unfenced write of it
drops that annotation."""

from __future__ import annotations

from cluster.api.kinds import EVENT
from cluster.api.validation import core
from cluster.apiserver.fencing import record_written_under_fence
from cluster.apiserver.registry.kind import CREATE, UPDATE, KindStrategy
from cluster.printers import events

STRATEGY = KindStrategy(
    kind=EVENT,
    printer=events.PRINTER,
    validation=core.EVENT,
    defaults=None,
    prepare_for_create=None,
    prepare_for_update=None,
    prepare_for_status_update=None,
    server_validation=None,
    fenced_verbs=frozenset({CREATE, UPDATE}),
    record_fence=record_written_under_fence,
    check_update=None,
    nominates=False,
    graceful_delete=None,
    check_delete=None,
    after_write=None,
    after_status_update=None,
    after_delete=None,
)
