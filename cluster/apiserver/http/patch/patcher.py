"""A PATCH request's body applied to the object it names, as kube-apiserver's patch handler does before
the update: the Content-Type chooses JSON patch, JSON merge patch or strategic merge patch; the patch must
be JSON; the patched object keeps the name and namespace of the URL, and its kind.

Server-side apply (``application/apply-patch+yaml``) is accepted by the API, and named among the accepted
types, but is not applied here.
"""

from __future__ import annotations

import json
from typing import Any

from google.protobuf.descriptor import Descriptor

from cluster.api import errors
from cluster.api.validation import cause_of
from cluster.api.validation.field import invalid
from cluster.apiserver.http.patch.json_patch import apply_json_patch
from cluster.apiserver.http.patch.merge import merge_patch
from cluster.apiserver.http.patch.strategic import apply_strategic_merge_patch, message_schema

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"

#: The patch types ``apply_patch`` applies.
PATCH_TYPES = frozenset({JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH})
#: Every patch type the API accepts, in kube-apiserver's order (its 415 lists them so).
ACCEPTED_PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)


def patch_type(content_type: str) -> str:
    """The media type of a Content-Type header, without its parameters (``; charset=utf-8``)."""
    cut = content_type.find(";")
    return content_type[:cut] if cut > 0 else content_type


def unsupported_patch_type() -> errors.UnsupportedMediaType:
    """kube-apiserver's 415 for a PATCH whose Content-Type is not a patch type."""
    return errors.UnsupportedMediaType(
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(ACCEPTED_PATCH_TYPES)
    )


def apply_patch(
    content_type: str, original: dict[str, Any], patch: bytes, message: Descriptor
) -> dict[str, Any]:
    """``original`` (an object's Kubernetes JSON, of protobuf ``message``) with ``patch`` applied as its
    Content-Type says; ``original`` is not changed. The result still goes through decoding (with its field
    validation), admission and validation as an update."""
    kind = patch_type(content_type)
    if kind not in PATCH_TYPES:
        raise unsupported_patch_type()
    try:
        body = _decode(patch)
        if kind == JSON_PATCH:
            patched = apply_json_patch(original, body)
        elif kind == MERGE_PATCH:
            patched = _merge(original, body)
        else:
            patched = _strategic(original, body, message)
    except RecursionError as exc:
        # Far deeper than any object; Python's stack, not the patch's content, sets the bound.
        raise errors.BadRequest("invalid JSON patch: nested too deeply") from exc
    if not isinstance(patched, dict):
        raise _undecodable(
            patched,
            f"json: cannot unmarshal {_json_kind(patched)} into Go value of type map[string]interface {{}}",
        )
    _keep_identity(original, patched, kind == STRATEGIC_MERGE_PATCH)
    return patched


def _decode(patch: bytes) -> Any:
    try:
        return json.loads(patch, parse_constant=_not_json)
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.BadRequest("invalid JSON patch") from exc


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _merge(original: dict[str, Any], body: Any) -> Any:
    # The library kube-apiserver uses takes an object or an array; anything else is not a merge patch.
    if not isinstance(body, dict | list):
        raise errors.BadRequest("Invalid JSON Patch")
    return merge_patch(original, body)


def _strategic(original: dict[str, Any], body: Any, message: Descriptor) -> dict[str, Any]:
    if body is None:
        # Decoding null into a map leaves it empty: no change.
        body = {}
    if not isinstance(body, dict):
        raise errors.BadRequest(
            f"json: cannot unmarshal {_json_kind(body)} into Go value of type map[string]interface {{}}"
        )
    return apply_strategic_merge_patch(original, body, message_schema(message))


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, str):
        return "string"
    return "number"


def _undecodable(patched: Any, detail: str) -> errors.Invalid:
    """kube-apiserver's 422 for a patched object it cannot decode: an error of the field ``patch``, of no
    kind and no name."""
    problem = invalid("patch", json.dumps(patched, separators=(",", ":")), detail)
    return errors.Invalid(f' "" is invalid: {problem}', errors.StatusDetails(causes=(cause_of(problem),)))


def _keep_identity(original: dict[str, Any], patched: dict[str, Any], strategic: bool) -> None:
    """The patched object is still the URL's: the same name, the same namespace (filled in when the patch
    removed it), the same apiVersion and kind. kube-apiserver decodes a JSON or merge patch's result by
    its apiVersion and kind, so another kind fails to decode; a strategic merge's result is converted into
    the object's own type, so a changed kind is dropped."""
    for key in ("apiVersion", "kind"):
        if key not in original:
            continue
        if strategic or patched.get(key) in (None, ""):
            patched[key] = original[key]
        elif patched[key] != original[key]:
            raise _undecodable(
                patched,
                f"the object is a {original.get('apiVersion', '')} "
                f"{original.get('kind', '')}: a patch cannot change its {key}",
            )
    metadata = patched.get("metadata")
    if metadata is None:
        metadata = patched["metadata"] = {}
    elif not isinstance(metadata, dict):
        raise _undecodable(
            patched,
            f"metadata: json: cannot unmarshal {_json_kind(metadata)} into Go struct "
            "field of type v1.ObjectMeta",
        )
    was = original.get("metadata", {})
    namespace = was.get("namespace", "")
    if metadata.get("namespace", "") != namespace:
        if metadata.get("namespace", "") == "" or namespace == "":
            # Unset takes the request's namespace; a cluster-scoped object's is cleared.
            if namespace:
                metadata["namespace"] = namespace
            else:
                metadata.pop("namespace", None)
        else:
            raise errors.BadRequest(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
    name = was.get("name", "")
    if metadata.get("name", "") != name:
        raise errors.BadRequest(
            f"the name of the object ({metadata.get('name', '')}) does not match the name on the URL ({name})"
        )
