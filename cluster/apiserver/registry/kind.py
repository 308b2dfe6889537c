"""What the API server knows of one kind, as kube-apiserver's pkg/registry/<group>/<kind>/strategy.go and
storage.go declare it: every hook a write of the kind passes through, in one place.

Every field is given by every kind's module, a hook it does without as None: a kind's registration is
complete by construction, and tests/unit/test_kind_registry.py checks that every served kind has one.
The generic steps (type meta, server-owned metadata, generation, the status kept on Update) are
cluster/apiserver/strategy.py's; these are what each kind adds to them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic

from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api.kinds import Kind, M
from cluster.api.validation import KindValidation
from cluster.apiserver.context import Context
from cluster.apiserver.fencing import LeaseFence
from cluster.apiserver.graceful import DeletionPlan
from cluster.printers.printer import Printer

#: The verbs a write under a fence may be (fencing.py); UpdateStatus and Delete take one for every kind.
CREATE = "Create"
UPDATE = "Update"


@dataclass(frozen=True, slots=True)
class KindStrategy(Generic[M]):
    kind: Kind[M]
    #: How clients print it (cluster/printers): `podsched get`'s columns and describe's sections, one
    #: definition for every client and for the server.
    printer: Printer[M]
    #: Its validation (cluster/api/validation, by API group): object, update, status, status update.
    validation: KindValidation[M]
    #: SetDefaults: fills what a request may leave out, on every write.
    defaults: Callable[[M], None] | None
    #: PrepareForCreate's part for this kind, after the generic one and the defaults (``now``: the
    #: request's time): the status the server owns at birth, labels it keeps.
    prepare_for_create: Callable[[M, Timestamp], None] | None
    #: PrepareForUpdate's part for this kind, given the new object and the stored one, before defaults.
    prepare_for_update: Callable[[M, M], None] | None
    #: The status strategy's PrepareForUpdate part for this kind: given the object an UpdateStatus stores
    #: (the new status on the stored object), the stored one and the request's time.
    prepare_for_status_update: Callable[[M, M, Timestamp], None] | None
    #: Rules only the server holds (they name objects the server makes), checked with validation.
    server_validation: Callable[[M], list[str]] | None
    #: The verbs (CREATE, UPDATE) whose writes of this kind may carry a fence.
    fenced_verbs: frozenset[str]
    #: Records on the object the fence of the write that stores it (None: no fence), on create and
    #: update.
    record_fence: Callable[[M, LeaseFence | None], None] | None
    #: Checks an update of the stored object into the new one against the server's leadership rules,
    #: given the request's fence.
    check_update: Callable[[Context, M, M, LeaseFence | None], None] | None
    #: Whether a status update is also checked by the caller's nomination rule (leadership.py): the
    #: kind's status holds what only the leader decides (a pod's nominated node, a claim's allocation).
    nominates: bool
    #: Graceful deletion (RESTGracefulDeleteStrategy): what a delete with a grace period (None: the
    #: object's own) does to the stored object at a time; None: every delete removes it at once.
    graceful_delete: Callable[[M, int | None, float], DeletionPlan] | None
    #: Refuses a delete by name before anything is read (storage.go's Delete for the kind).
    check_delete: Callable[[str], None] | None
    #: After a create or an update is written (not on a dry run).
    after_write: Callable[[Context, M], None] | None
    #: After a status update is written (not on a dry run), given the replaced object and the new one.
    after_status_update: Callable[[Context, M, M], Awaitable[None]] | None
    #: After the object is removed for good (not on a dry run, not when a graceful delete marks it).
    after_delete: Callable[[Context, M], Awaitable[None]] | None
