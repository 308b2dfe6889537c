"""JSON merge patch (RFC 7386), as kube-apiserver applies ``application/merge-patch+json`` through its
json-patch library: objects merge key by key, null removes a key, anything else replaces.

One difference from the RFC's letter is the library's, kept so that results match kube-apiserver's: a
value that lands where the target had nothing (or null), and the patch itself when it is an array, lose
their null-valued keys at every depth, also inside arrays; an array that replaces an existing object's
key is taken as it is.
"""

from __future__ import annotations

from typing import Any


def merge_patch(target: Any, patch: Any) -> Any:
    """``target`` with ``patch`` merged in; neither is changed (the result may share their unchanged
    parts)."""
    if not isinstance(patch, dict):
        return without_nulls(patch)
    merged = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        elif merged.get(key) is None:
            merged[key] = without_nulls(value)
        else:
            merged[key] = _merge_value(merged[key], value)
    return merged


def _merge_value(current: Any, patch: Any) -> Any:
    if not isinstance(current, dict):
        return without_nulls(patch)
    if not isinstance(patch, dict):
        return patch
    return merge_patch(current, patch)


def without_nulls(value: Any) -> Any:
    """``value`` without null-valued object keys at any depth; null items of arrays stay."""
    if isinstance(value, dict):
        return {key: without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [without_nulls(item) for item in value]
    return value
