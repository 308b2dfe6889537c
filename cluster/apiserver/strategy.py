"""How a write request becomes the object that is stored, as Kubernetes' registry strategies and
rest.BeforeCreate / rest.BeforeUpdate prepare it.

Create: the server owns uid, creationTimestamp and generation (1), clears deletion fields, fills the
namespace ("default" for namespaced kinds; none for cluster-scoped ones), turns generateName into a name,
and applies the kind's defaults, then the kind's own PrepareForCreate (a pod's initial status, a
Namespace's label: each kind's registry module, cluster/apiserver/registry).
Update replaces metadata and spec but keeps what the server owns and the stored status; generation
moves when the desired state changes. UpdateStatus replaces the status and keeps everything else.

The annotations in fencing.SERVER_ANNOTATIONS are the server's: a create drops them and an update keeps
the stored values, whatever the request says (a Lease's registry module then decides its tenure's).
"""

from __future__ import annotations

import random
import uuid

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import errors, validation
from cluster.api.kinds import Kind
from cluster.apiserver import fencing
from cluster.apiserver.registry import strategy_of

DEFAULT_NAMESPACE = "default"

#: apimachinery's alphabet for generated names: no vowels (no accidental words) and no 0/1/3
#: (no look-alikes of o/l/e).
_GENERATED_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
GENERATED_SUFFIX_LENGTH = 5
#: A generated name must still be a valid DNS label (63 characters).
_MAX_GENERATE_NAME_BASE = 63 - GENERATED_SUFFIX_LENGTH

#: Fields that are bookkeeping, not desired state: changing only these does not move generation.
_NOT_DESIRED_STATE = frozenset({"api_version", "kind", "metadata", "status"})


def generate_name(base: str, rng: random.Random) -> str:
    suffix = "".join(rng.choice(_GENERATED_ALPHABET) for _ in range(GENERATED_SUFFIX_LENGTH))
    return base[:_MAX_GENERATE_NAME_BASE] + suffix


def check_type_meta(kind: Kind, obj: Message, old: Message | None = None) -> None:
    """apiVersion and kind, when a request sets them, must be the kind's own. An object keeps the
    apiVersion it was written in (a kind served in several spells its fields differently): a create
    without one gets the preferred version, an update without one keeps the stored object's, and an update
    may not move the object to another version."""
    problems = []
    if obj.api_version and obj.api_version not in kind.api_versions:
        problems.append(validation.not_supported("apiVersion", obj.api_version, list(kind.api_versions)))
    elif old is not None and obj.api_version and old.api_version and obj.api_version != old.api_version:
        problems.append(validation.invalid("apiVersion", obj.api_version, validation.IMMUTABLE))
    if obj.kind and obj.kind != kind.name:
        problems.append(validation.not_supported("kind", obj.kind, [kind.name]))
    if problems:
        validation.ensure_valid(obj, problems)
    obj.api_version = obj.api_version or (old.api_version if old is not None else "") or kind.api_version
    obj.kind = kind.name


def normalize_namespace(kind: Kind, obj: Message) -> None:
    if kind.namespaced:
        obj.metadata.namespace = obj.metadata.namespace or DEFAULT_NAMESPACE
    else:
        obj.metadata.namespace = ""


def prepare_for_create(
    kind: Kind, obj: Message, now: Timestamp, rng: random.Random, *, uid: str | None = None
) -> None:
    """Turn a Create request's object into the object to store: ``rng`` draws a generated name's suffix,
    ``uid`` is the object's UID (a random one when None)."""
    check_type_meta(kind, obj)
    meta = obj.metadata
    if meta.resource_version:
        raise errors.Invalid("resourceVersion should not be set on objects to be created")
    normalize_namespace(kind, obj)
    if not meta.name and meta.generate_name:
        meta.name = generate_name(meta.generate_name, rng)
    meta.uid = uid or str(uuid.uuid4())
    meta.creation_timestamp.CopyFrom(now)
    meta.generation = 1
    meta.ClearField("deletion_timestamp")
    meta.ClearField("deletion_grace_period_seconds")
    for key in fencing.SERVER_ANNOTATIONS:
        _drop_annotation(obj, key)
    kind_strategy = strategy_of(kind)
    if kind_strategy.defaults is not None:
        kind_strategy.defaults(obj)
    if kind_strategy.prepare_for_create is not None:
        kind_strategy.prepare_for_create(obj, now)


def prepare_for_update(kind: Kind, new: Message, old: Message) -> None:
    """Turn an Update request's object into the object to store over ``old``."""
    check_type_meta(kind, new, old)
    meta, old_meta = new.metadata, old.metadata
    # An update that leaves uid out means the object it names; a different uid fails validation.
    meta.uid = meta.uid or old_meta.uid
    normalize_namespace(kind, new)
    meta.creation_timestamp.CopyFrom(old_meta.creation_timestamp)
    # Only Delete sets or changes the deletion fields.
    meta.ClearField("deletion_timestamp")
    meta.ClearField("deletion_grace_period_seconds")
    if old_meta.HasField("deletion_timestamp"):
        meta.deletion_timestamp.CopyFrom(old_meta.deletion_timestamp)
    if old_meta.HasField("deletion_grace_period_seconds"):
        meta.deletion_grace_period_seconds = old_meta.deletion_grace_period_seconds
    for key in fencing.SERVER_ANNOTATIONS:
        _drop_annotation(new, key)
        if key in old_meta.annotations:
            meta.annotations[key] = old_meta.annotations[key]
    kind_strategy = strategy_of(kind)
    if kind_strategy.prepare_for_update is not None:
        kind_strategy.prepare_for_update(new, old)
    if kind_strategy.defaults is not None:
        kind_strategy.defaults(new)
    if "status" in kind.message.DESCRIPTOR.fields_by_name:
        new.status.CopyFrom(old.status)
    meta.generation = old_meta.generation + (1 if desired_state_changed(new, old) else 0)


def _drop_annotation(obj: Message, key: str) -> None:
    annotations = obj.metadata.annotations
    if key in annotations:
        del annotations[key]


def prepare_for_status_update(kind: Kind, new: Message, old: Message) -> Message:
    """The object to store for an UpdateStatus request: ``old`` with ``new``'s status."""
    if "status" not in kind.message.DESCRIPTOR.fields_by_name:
        raise errors.Invalid(f"{kind.name} has no status: use Update to change it")
    updated = kind.message()
    updated.CopyFrom(old)
    updated.status.CopyFrom(new.status)
    return updated


def desired_state_changed(new: Message, old: Message) -> bool:
    """Whether anything but metadata and status differs (the spec, or a spec-less kind's fields)."""
    for field in new.DESCRIPTOR.fields:
        if field.name not in _NOT_DESIRED_STATE and getattr(new, field.name) != getattr(old, field.name):
            return True
    return False
