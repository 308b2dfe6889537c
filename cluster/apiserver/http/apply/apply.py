"""Server-side apply (``application/apply-patch+yaml``) as kube-apiserver does it, and the field manager
a write is recorded under.

An apply merges a partial object (the applied configuration) into the live one, or creates the object;
the manager then owns exactly the fields it applied. A field it applied before and applies no more is
removed, unless another manager owns it. Changing a field another manager owns is a conflict (409, a
``FieldManagerConflict`` cause per field) unless the apply is forced, which takes the field over."""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import Descriptor

from cluster.api import errors, kinds
from cluster.api.validation import cause_of
from cluster.api.validation.meta import validate_field_manager
from cluster.apiserver.http.apply import managedfields, typed, updater
from cluster.apiserver.http.apply.fieldpath import path_string
from cluster.apiserver.http.apply.managedfields import APPLY, Managed


def manager_of(field_manager_param: str | None, user_agent: str) -> str:
    """The manager a write is recorded under: its ``fieldManager`` parameter, else its User-Agent's first
    token (``kubectl-edit`` of ``kubectl-edit/v1.37.1 (linux/amd64) kubernetes/abc``)."""
    if field_manager_param:
        return field_manager_param
    return user_agent.split("/")[0]


def _check_apply_manager(manager: str) -> None:
    problems = [] if manager else ["fieldManager: Required value: is required for apply patch"]
    problems += validate_field_manager(manager, "fieldManager")
    if problems:
        detail = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
        raise errors.Invalid(
            f'PatchOptions.meta.k8s.io "" is invalid: {detail}',
            errors.StatusDetails(group="meta.k8s.io", kind="PatchOptions",
                                 causes=tuple(cause_of(problem) for problem in problems)))


def _check_type(applied: dict[str, Any], api_version: str, kind: str) -> None:
    """The applied object's apiVersion and kind are the URL's (upstream's versionCheckManager)."""
    applied_version = str(applied.get("apiVersion", ""))
    applied_kind = str(applied.get("kind", ""))
    if (applied_version, applied_kind) != (api_version, kind):
        group, _, version = applied_version.rpartition("/")
        raise errors.BadRequest(f"invalid object type: {group}/{version}, Kind={applied_kind}")


def _check_name(obj: dict[str, Any], name: str, namespace: str) -> None:
    """The object is the one the URL names (the apiserver's checkName)."""
    metadata = obj.get("metadata") or {}
    obj_name = str(metadata.get("name", ""))
    if obj_name != name:
        raise errors.BadRequest(
            f"the name of the object ({obj_name}) does not match the name on the URL ({name})")
    obj_namespace = str(metadata.get("namespace", ""))
    if namespace and obj_namespace and obj_namespace != namespace:
        raise errors.BadRequest(
            f"the namespace of the object ({obj_namespace}) does not match the namespace on the URL "
            f"({namespace})")


def conflict_error(conflicts: list[tuple[str, Any]]) -> errors.Conflict:
    """The 409 kube-apiserver answers an apply's conflicts with (NewConflictError)."""
    causes = tuple(
        errors.StatusCause("FieldManagerConflict", f"conflict with {managedfields.describe_manager(manager)}",
                           path_string(path))
        for manager, path in conflicts)
    if len(conflicts) == 1:
        manager, path = conflicts[0]
        message = (f"Apply failed with 1 conflict: conflict with {managedfields.describe_manager(manager)}: "
                   f"{path_string(path)}")
    else:
        lines: list[str] = []
        for manager in sorted({manager for manager, _ in conflicts}):
            lines.append(f"conflicts with {managedfields.describe_manager(manager)}:")
            lines += [f"- {path_string(path)}" for owner, path in conflicts if owner == manager]
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return errors.Conflict(message, errors.StatusDetails(causes=causes))


def server_side_apply(live: dict[str, Any] | None, applied: dict[str, Any], manager: str, force: bool,
                      api_version: str, message: Descriptor, now: str, *, name: str = "",
                      namespace: str = "", subresource: str = "") -> dict[str, Any]:
    """The object after ``manager`` applied ``applied`` (the request's body as a dict) to ``live`` (None
    when the object does not exist: the apply creates it), with its managedFields; ``now`` (RFC 3339) is
    the manager's time when the object changed. ``name`` and ``namespace`` are the URL's (the live
    object's name by default); ``subresource`` is "status" for an apply to it. Raises
    ``errors.Conflict`` for fields other managers own (unless ``force``), ``errors.Invalid`` without a
    fieldManager, ``errors.BadRequest`` for a body that is no object, an applied object of another
    apiVersion or kind, with managedFields, or naming another object."""
    if not isinstance(applied, dict):
        raise errors.BadRequest(
            f"error decoding YAML: cannot unmarshal {type(applied).__name__} into an object")
    _check_apply_manager(manager)
    _check_type(applied, api_version, kinds.kind_by_name(message.name).name)
    if isinstance((applied.get("metadata") or {}).get("managedFields"), list):
        raise errors.BadRequest("metadata.managedFields must be nil")
    # kube-apiserver fails an apply on live managedFields it cannot decode, which it never stores; a gRPC
    # write stores what it is given, so here they are dropped as an HTTP update drops them.
    managed = managedfields.decoded_or_empty(managedfields.entries_of(live))
    before = managedfields.without_managed_fields(live)
    manager_id = managedfields.identifier(manager, APPLY, "", subresource)
    schema = typed.of_message(message)
    try:
        merged, managed.fields, changed = updater.apply(
            before, applied, schema, api_version, managed.fields, manager_id, force,
            managedfields.reset_fields(schema, subresource))
    except updater.Conflicts as conflicts:
        raise conflict_error(conflicts.conflicts) from None
    except typed.SchemaError as err:
        raise errors.BadRequest(f"failed to create typed patch object: {err}") from None
    managedfields.strip_never_owned(managed, manager_id)
    if changed:
        managed.times[manager_id] = now
    managedfields.cap_update_managers(managed)
    result = typed.without_nulls(merged)
    url_name = name or str((before.get("metadata") or {}).get("name", ""))
    if url_name:
        _check_name(result, url_name, namespace)
    return managedfields.with_managed_fields(result, Managed(managed.fields, managed.times))
