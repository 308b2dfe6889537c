"""How a write request becomes the object that is stored, as Kubernetes' registry strategies and
rest.BeforeCreate / rest.BeforeUpdate prepare it.

Create: the server owns uid, creationTimestamp and generation (1), clears deletion fields, fills the
namespace ("default" for namespaced kinds; none for cluster-scoped ones), turns generateName into a name,
and applies defaults. A pod starts Pending, or Running when it names its node already (kubelet.py). A
Namespace starts Active and, on create and update, carries the label kubernetes.io/metadata.name = its
name.
Update replaces metadata and spec but keeps what the server owns and the stored status; generation
moves when the desired state changes. UpdateStatus replaces the status and keeps everything else.

The annotations in fencing.SERVER_ANNOTATIONS are the server's: a create drops them and an update keeps
the stored values, whatever the request says. One of them records a Lease's tenure (fencing.py): an update
that keeps the same non-empty holderIdentity stores the tenure's token (the old Lease's, which is its
annotation or else its resourceVersion); any other update, and every create, starts a tenure whose token
is the write's own revision, so the annotation goes.
"""

from __future__ import annotations

import random
import uuid

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import errors, objects_pb2, validation
from cluster.api.kinds import NAMESPACE_NAME_LABEL, Kind
from cluster.api.schedulinggates import SCHEDULING_GATED, SCHEDULING_GATED_MESSAGE
from cluster.apiserver import fencing, kubelet
from cluster.apiserver.defaults import apply_defaults

DEFAULT_NAMESPACE = "default"
PENDING = "Pending"
NAMESPACE_ACTIVE = "Active"

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


def prepare_for_create(kind: Kind, obj: Message, now: Timestamp, rng: random.Random) -> None:
    check_type_meta(kind, obj)
    meta = obj.metadata
    if meta.resource_version:
        raise errors.Invalid("resourceVersion should not be set on objects to be created")
    normalize_namespace(kind, obj)
    if not meta.name and meta.generate_name:
        meta.name = generate_name(meta.generate_name, rng)
    meta.uid = str(uuid.uuid4())
    meta.creation_timestamp.CopyFrom(now)
    meta.generation = 1
    meta.ClearField("deletion_timestamp")
    meta.ClearField("deletion_grace_period_seconds")
    for key in fencing.SERVER_ANNOTATIONS:
        _drop_annotation(obj, key)
    apply_defaults(obj)
    if isinstance(obj, objects_pb2.Pod):
        _initial_pod_status(obj, now)
    elif isinstance(obj, objects_pb2.Namespace):
        obj.ClearField("status")
        obj.status.phase = NAMESPACE_ACTIVE
        _label_namespace_name(obj)


def _initial_pod_status(pod: objects_pb2.Pod, now: Timestamp) -> None:
    """Status is the server's on create: a new pod is Pending, unless it is created on a node."""
    start_time = Timestamp()
    start_time.CopyFrom(pod.status.start_time)
    pod.ClearField("status")
    pod.status.phase = PENDING
    if pod.spec.scheduling_gates:
        # kube-apiserver says at once why the pod is not scheduled (and kubectl shows SchedulingGated).
        pod.status.conditions.add(
            type=kubelet.POD_SCHEDULED, status="False", reason=SCHEDULING_GATED,
            message=SCHEDULING_GATED_MESSAGE, last_transition_time=now,
        )
    if pod.spec.node_name:
        pod.status.start_time.CopyFrom(start_time)
        kubelet.mark_running(pod, now)


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
    if isinstance(new, objects_pb2.Lease):
        _track_lease_tenure(new, old)
    elif isinstance(new, objects_pb2.Namespace):
        _label_namespace_name(new)
    apply_defaults(new)
    if "status" in kind.message.DESCRIPTOR.fields_by_name:
        new.status.CopyFrom(old.status)
    meta.generation = old_meta.generation + (1 if desired_state_changed(new, old) else 0)


def _label_namespace_name(namespace: objects_pb2.Namespace) -> None:
    """Every Namespace carries its own name as a label, whatever the request wrote there, so that a
    namespaceSelector can pick namespaces by name (Kubernetes' namespace strategy does the same on create
    and update)."""
    namespace.metadata.labels[NAMESPACE_NAME_LABEL] = namespace.metadata.name


def _track_lease_tenure(new: objects_pb2.Lease, old: objects_pb2.Lease) -> None:
    holder = new.spec.holder_identity
    if holder and holder == old.spec.holder_identity:
        new.metadata.annotations[fencing.FENCING_TOKEN_ANNOTATION] = str(fencing.tenure_token(old))
    else:
        # A new tenure (or none, when released): its token is this write's revision.
        _drop_annotation(new, fencing.FENCING_TOKEN_ANNOTATION)


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
