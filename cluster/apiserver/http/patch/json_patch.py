"""JSON patch (RFC 6902), as kube-apiserver applies ``application/json-patch+json``: the operations are
those of the ``jsonpatch`` library; the bounds and the errors are kube-apiserver's.

A body that is not an array of operation objects is a 400; more than 10000 operations a 413; an operation
that cannot be applied (a test that fails, a path that is missing, an unknown op) kube-apiserver's generic
422, whose message does not say which. Copies may add at most 3 MiB to the object in all, as kube-apiserver
bounds its library's copies, so that a short patch cannot grow an object without limit.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonpatch
import jsonpointer

from cluster.api import errors
from cluster.apiserver.http.patch import failures

#: kube-apiserver's maxJSONPatchOperations.
MAX_OPERATIONS = 10000
#: kube-apiserver's default JSONPatchMaxCopyBytes.
MAX_COPY_BYTES = 3 * 1024 * 1024

_JSON_KINDS = {dict: "object", list: "array", str: "string", bool: "bool", int: "number", float: "number"}


def apply_json_patch(document: Any, operations: Any) -> Any:
    """``document`` with the decoded JSON patch ``operations`` applied; ``document`` is not changed."""
    ops = _operations(operations)
    if len(ops) > MAX_OPERATIONS:
        raise errors.RequestEntityTooLarge(
            "Request entity too large: The allowed maximum operations in a JSON patch is "
            f"{MAX_OPERATIONS}, got {len(ops)}"
        )
    try:
        # Validates every operation before any is applied.
        jsonpatch.JsonPatch(ops)
        return _apply(copy.deepcopy(document), ops)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        raise failures.rejected() from exc


def _operations(operations: Any) -> list[dict[str, Any]]:
    """The operations, or the 400 kube-apiserver's decoder answers for a body of another shape (null is no
    operations at all, as there)."""
    if operations is None:
        return []
    if not isinstance(operations, list):
        raise errors.BadRequest(_cannot_unmarshal(operations, "jsonpatch.Patch"))
    for op in operations:
        if not isinstance(op, dict):
            raise errors.BadRequest(_cannot_unmarshal(op, "jsonpatch.Operation"))
    return operations


def _cannot_unmarshal(value: Any, go_type: str) -> str:
    kind = "null" if value is None else _JSON_KINDS[type(value)]
    return f"json: cannot unmarshal {kind} into Go value of type {go_type}"


def _apply(document: Any, ops: list[dict[str, Any]]) -> Any:
    copied = 0
    for op in ops:
        if op.get("op") == "copy":
            value = jsonpointer.resolve_pointer(document, op.get("from", ""))
            copied += len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
            if copied > MAX_COPY_BYTES:
                raise failures.rejected()
        document = jsonpatch.JsonPatch([op]).apply(document, in_place=True)
    return document
