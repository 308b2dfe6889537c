"""An object's ``metadata.managedFields``, as k8s.io/apimachinery's util/managedfields: the entries'
decoding and encoding, the identity of a manager, and the record an update (create, update, patch) leaves
in the new object.

A manager is identified by its name, operation and subresource, and for an Update by its apiVersion too:
one entry per identity. An Update owns the fields it changed, taken from whoever owned them; an entry
left without fields is dropped; more than ten Update entries merge their oldest into "ancient-changes".
The object's own identity and bookkeeping (apiVersion, kind, name, namespace, uid, resourceVersion, ...)
is never owned."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from google.protobuf.descriptor import Descriptor

from cluster.api import kinds
from cluster.apiserver.http.apply import typed, updater
from cluster.apiserver.http.apply.fieldpath import (
    FieldSet,
    PathElement,
    from_fields_v1,
    go_json,
    to_fields_v1,
)
from cluster.apiserver.http.apply.updater import Managers, VersionedSet

APPLY, UPDATE = "Apply", "Update"
FIELDS_V1 = "FieldsV1"
#: Update entries kept before the oldest merge (upstream's DefaultMaxUpdateManagers).
MAX_UPDATE_MANAGERS = 10
ANCIENT_CHANGES = "ancient-changes"
#: What an update's record is built under before it joins its manager's entry (upstream's name).
_CURRENT_OPERATION = "current-operation"


def _path(*names: str) -> tuple[PathElement, ...]:
    return tuple(PathElement.field(name) for name in names)


#: Fields no manager owns (upstream's stripMetaManager).
_NEVER_OWNED = FieldSet.of(
    _path("apiVersion"), _path("kind"), _path("metadata"),
    *(_path("metadata", name) for name in (
        "name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation",
        "managedFields", "resourceVersion")),
)


@dataclass(slots=True)
class Managed:
    """Decoded managedFields: each manager's fields and the time of its last change, by identifier."""

    fields: Managers = field(default_factory=dict)
    times: dict[str, str] = field(default_factory=dict)


def identifier(manager: str, operation: str, api_version: str, subresource: str) -> str:
    """A manager's identity as upstream's BuildManagerIdentifier writes it: the entry's JSON without its
    fields and time, and without the apiVersion of an Apply (an applier is one manager in every version)."""
    entry = {"manager": manager, "operation": operation,
             "apiVersion": "" if operation == APPLY else api_version, "subresource": subresource}
    return go_json({key: value for key, value in entry.items() if value}, sort_keys=False)


def describe_manager(manager_id: str) -> str:
    """A manager as a conflict names it: ``"kubectl-client-side-apply" using v1``, ``"x" with subresource
    "status" using v1``, ``"applier"`` for an Apply."""
    entry = json.loads(manager_id)
    text = json.dumps(entry.get("manager", ""), ensure_ascii=False)
    if entry.get("subresource"):
        text += f" with subresource {json.dumps(entry['subresource'], ensure_ascii=False)}"
    if entry.get("operation") == UPDATE:
        return f"{text} using {entry.get('apiVersion', '')}"
    return text


def decode(entries: list[dict[str, Any]]) -> Managed:
    """managedFields entries decoded; ValueError names the first malformed one."""
    managed = Managed()
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ValueError(f"managed fields entry {index} is not an object")
        operation = entry.get("operation", "")
        if operation not in (APPLY, UPDATE):
            raise ValueError("operation must be `Apply` or `Update`")
        api_version = entry.get("apiVersion", "")
        if not api_version:
            raise ValueError("apiVersion must not be empty")
        fields_type = entry.get("fieldsType", "")
        if not fields_type:
            raise ValueError(f"missing fieldsType in managed fields entry {index}")
        if fields_type != FIELDS_V1:
            raise ValueError(f'invalid fieldsType "{fields_type}" in managed fields entry {index}')
        subresource = entry.get("subresource", "")
        manager_id = identifier(entry.get("manager", ""), operation, api_version, subresource)
        try:
            fields = from_fields_v1(entry.get("fieldsV1") or {})
        except ValueError as err:
            raise ValueError(f"error decoding set of managed fields entry {index}: {err}") from None
        managed.fields[manager_id] = VersionedSet(fields, api_version, operation == APPLY)
        if entry.get("time"):
            managed.times[manager_id] = entry["time"]
    return managed


def _seconds(time: str | None) -> float:
    return datetime.fromisoformat(time).timestamp() if time else 0.0


def encode(managed: Managed) -> list[dict[str, Any]]:
    """The managedFields entries, in upstream's order: by operation, time, manager, apiVersion,
    subresource."""
    entries = []
    for manager_id, versioned in managed.fields.items():
        ident = json.loads(manager_id)
        entry: dict[str, Any] = {"manager": ident.get("manager", "")}
        entry["operation"] = APPLY if versioned.applied else ident.get("operation", UPDATE)
        entry["apiVersion"] = versioned.api_version
        if manager_id in managed.times:
            entry["time"] = managed.times[manager_id]
        entry["fieldsType"] = FIELDS_V1
        entry["fieldsV1"] = to_fields_v1(versioned.fields)
        if ident.get("subresource"):
            entry["subresource"] = ident["subresource"]
        if not entry["manager"]:
            del entry["manager"]
        entries.append(entry)
    entries.sort(key=lambda e: (e["operation"], _seconds(e.get("time")), e.get("manager", ""),
                                e["apiVersion"], e.get("subresource", "")))
    return entries


def strip_never_owned(managed: Managed, manager_id: str) -> None:
    """Drop the object's identity and bookkeeping from a manager's fields, and the manager when that
    leaves it nothing."""
    versioned = managed.fields.get(manager_id)
    if versioned is None:
        return
    rest = versioned.fields.difference(_NEVER_OWNED)
    if rest.empty():
        del managed.fields[manager_id]
    else:
        managed.fields[manager_id] = VersionedSet(rest, versioned.api_version, versioned.applied)


def cap_update_managers(managed: Managed) -> None:
    """Merge the oldest Update entries, per apiVersion, into one "ancient-changes" entry until at most
    MAX_UPDATE_MANAGERS remain (upstream's capManagersManager)."""
    updaters = [manager_id for manager_id, versioned in managed.fields.items() if not versioned.applied]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return
    updaters.sort(key=lambda m: (_seconds(managed.times.get(m)), m))
    first_of_version: dict[str, str] = {}
    remaining = len(updaters)
    for manager_id in updaters:
        if remaining <= MAX_UPDATE_MANAGERS:
            break
        versioned = managed.fields[manager_id]
        version = versioned.api_version
        bucket = identifier(ANCIENT_CHANGES, UPDATE, version, "")
        first = first_of_version.get(version)
        if first is None:
            first_of_version[version] = manager_id
            continue
        if bucket not in managed.fields:
            managed.fields[bucket] = managed.fields.pop(first)
            managed.times.pop(first, None)
        managed.fields[bucket] = VersionedSet(
            versioned.fields.union(managed.fields[bucket].fields), version, versioned.applied)
        del managed.fields[manager_id]
        time = managed.times.pop(manager_id, None)
        if time is not None:
            managed.times[bucket] = time
        else:
            managed.times.pop(bucket, None)
        remaining -= 1


def entries_of(obj: dict[str, Any] | None) -> Any:
    """The object's managedFields as given (None when the object has none)."""
    if obj is None:
        return None
    return (obj.get("metadata") or {}).get("managedFields")


def without_managed_fields(obj: dict[str, Any] | None) -> dict[str, Any]:
    """A copy of the object without metadata.managedFields ({} for no object)."""
    if obj is None:
        return {}
    out = dict(obj)
    metadata = dict(out.get("metadata") or {})
    metadata.pop("managedFields", None)
    if metadata or "metadata" in out:
        out["metadata"] = metadata
    return out


def with_managed_fields(obj: dict[str, Any], managed: Managed) -> dict[str, Any]:
    """The object with ``managed`` as its metadata.managedFields (none when no manager is left)."""
    out = without_managed_fields(obj)
    entries = encode(managed)
    if entries:
        out["metadata"] = {**out.get("metadata", {}), "managedFields": entries}
    return out


def _is_reset(entries: Any) -> bool:
    """Whether an update asks to clear managedFields: an empty list, or one empty entry."""
    return isinstance(entries, list) and (entries == [] or entries == [{}])


def decoded_or_empty(entries: Any) -> Managed:
    """The entries decoded, or none when they are malformed."""
    try:
        return decode(entries or [])
    except (ValueError, TypeError, AttributeError):
        return Managed()


def live_or_new(live: dict[str, Any] | None, new: dict[str, Any], subresource: str) -> Managed:
    """The managedFields an update starts from (upstream's decodeLiveOrNew): a write to a subresource
    keeps the live object's; otherwise the new object's own when it sets valid ones, none when it asks
    for a reset, else the live object's (a client that does not know managedFields never loses them)."""
    if subresource:
        return decoded_or_empty(entries_of(live))
    requested = entries_of(new)
    if _is_reset(requested):
        return Managed()
    try:
        managed = decode(requested or [])
    except (ValueError, TypeError, AttributeError):
        managed = Managed()
    if not managed.fields:
        return decoded_or_empty(entries_of(live))
    return managed


def type_of(obj: dict[str, Any], message: Descriptor | None) -> typed.Type:
    """The schema of an object: its message's, or its kind's message's."""
    if message is None:
        message = kinds.kind_by_name(str(obj.get("kind", ""))).message.DESCRIPTOR
    return typed.of_message(message)


_POD_TEMPLATE = {"metadata": {}, "spec": {"containers": None}}
#: The fields of a kind's empty Go object that its JSON holds beyond metadata, spec and status: the
#: structs, and the lists and pointers without omitempty (null), that a create then changes rather than adds.
_ZERO_FIELDS: dict[str, dict[str, Any]] = {
    "Pod": {"spec": {"containers": None}},
    "ReplicaSet": {"spec": {"selector": None, "template": _POD_TEMPLATE}},
    "StatefulSet": {"spec": {"selector": None, "template": _POD_TEMPLATE}},
    "Event": {"involvedObject": {}, "source": {}},
}


def reset_fields(schema: typed.Type, subresource: str) -> FieldSet:
    """The fields a write's strategy resets, which no manager gains by it (upstream's GetResetFields): the
    status of a write to the object itself, the spec of a write to its status (and, for a pod, its
    deletionTimestamp and ownerReferences)."""
    assert schema.message is not None, "an object's schema is its message's"
    reset = {"": "status", "status": "spec"}.get(subresource)
    paths = [_path(reset)] if reset and typed.field_type(schema.message, reset).kind == "struct" else []
    if subresource == "status" and schema.message.name == "Pod":
        paths += [_path("metadata", "deletionTimestamp"), _path("metadata", "ownerReferences")]
    return FieldSet.of(*paths)


def _zero_object(schema: typed.Type) -> dict[str, Any]:
    """What a create is compared with: upstream's new, empty object of the kind, whose metadata, spec and
    status structs are there, empty (so a create owns ``f:spec``'s fields, not ``f:spec`` itself), as are
    its other fields without omitempty."""
    assert schema.message is not None, "an object's schema is its message's"
    zero: dict[str, Any] = {name: {} for name in ("metadata", "spec", "status")
                            if typed.field_type(schema.message, name).kind == "struct"}
    return {**zero, **copy.deepcopy(_ZERO_FIELDS.get(schema.message.name, {}))}


def record_update(live: dict[str, Any] | None, new: dict[str, Any], manager: str, api_version: str,
                  subresource: str, now: str, *, message: Descriptor | None = None) -> dict[str, Any]:
    """``new`` (the object a create, update or patch writes; ``live`` None for a create) with its
    managedFields updated: the fields that changed now belong to ``manager`` (an Update in
    ``api_version``, at ``now``, RFC 3339), taken from every other manager. ``message`` is the object's
    schema (by default its kind's message). Should the record fail (an object that does not fit its
    schema), the live object's managedFields are kept, as upstream's UpdateNoErrors does."""
    managed = live_or_new(live, new, subresource)
    schema = type_of(new, message)
    before = without_managed_fields(live) if live is not None else _zero_object(schema)
    after = without_managed_fields(new)
    try:
        managed.fields = updater.update(before, after, schema, api_version, managed.fields,
                                        _CURRENT_OPERATION, reset_fields(schema, subresource))
    except typed.SchemaError:
        return with_managed_fields(new, decoded_or_empty(entries_of(live)))
    strip_never_owned(managed, _CURRENT_OPERATION)
    current = managed.fields.pop(_CURRENT_OPERATION, None)
    if current is not None:
        manager_id = identifier(manager or "unknown", UPDATE, api_version, subresource)
        previous = managed.fields.get(manager_id)
        owned = current.fields if previous is None else current.fields.union(previous.fields)
        managed.fields[manager_id] = VersionedSet(owned, api_version, applied=False)
        managed.times[manager_id] = now
    cap_update_managers(managed)
    return with_managed_fields(new, managed)
