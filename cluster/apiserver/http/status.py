"""What went wrong, as kube-apiserver says it over HTTP: a metav1.Status with the error's reason, code,
message and details, sent with that HTTP code (kubectl prints ``Error from server (NotFound): ...`` from
it, and ``The Pod "x" is invalid:`` with one line per cause)."""

from __future__ import annotations

from typing import Any

from cluster.api import errors


def status_of(error: errors.ApiError, *, name: str = "", group: str = "", kind: str = "") -> dict[str, Any]:
    """The Status of ``error``; the object's ``name``, ``group`` and ``kind`` (a resource's plural, as
    kube names it in a NotFound's details) fill in details the error does not carry."""
    details = error.details
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": error.message,
        "reason": error.reason,
        "code": error.http_code,
    }
    shown: dict[str, Any] = {}
    if details is not None:
        shown = {key: value for key, value in (
            ("name", details.name), ("group", details.group), ("kind", details.kind)) if value}
        if details.causes:
            shown["causes"] = [
                {"reason": cause.type, "message": cause.message,
                 **({"field": cause.field} if cause.field else {})}
                for cause in details.causes
            ]
        if details.retry_after_seconds:
            shown["retryAfterSeconds"] = details.retry_after_seconds
    elif name or kind:
        shown = {key: value for key, value in (("name", name), ("group", group), ("kind", kind)) if value}
    if shown:
        body["details"] = shown
    if error.reason == "Unknown":
        del body["reason"]
    return body


def retry_after(error: errors.ApiError) -> int | None:
    """Seconds for a Retry-After header: a 429's own; 1 for one without details (flow control's and the
    watch limit's, as kube's filters send them); None otherwise. A 429 with details and no seconds (an
    eviction its budget refuses) has none, as in kube: client-go would retry it on its own, unseen."""
    if error.http_code != 429:
        return None
    if error.details is None:
        return 1
    return error.details.retry_after_seconds or None
