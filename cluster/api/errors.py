"""The API's error vocabulary, shared by the server (which raises these) and the client (which maps gRPC
statuses back to them). One class per outcome a caller handles differently; each carries its gRPC code
and a Kubernetes-style message (`pods "web" not found`)."""

from __future__ import annotations

from dataclasses import dataclass

import grpc

#: The trailing-metadata key that carries an error's reason (Kubernetes' StatusReason) over gRPC.
REASON_KEY = "podsched-reason"


@dataclass(frozen=True, slots=True)
class StatusCause:
    """One cause of an error, as metav1.StatusCause: a field error (type ``FieldValueInvalid``, field
    ``spec.containers[0].image``), a disruption budget that refuses an eviction, a field manager's
    conflict. kubectl prints each as ``field: message``."""

    type: str
    message: str
    field: str = ""


@dataclass(frozen=True, slots=True)
class StatusDetails:
    """What an error is about, as metav1.StatusDetails: the object, and the causes."""

    name: str = ""
    group: str = ""
    kind: str = ""
    causes: tuple[StatusCause, ...] = ()
    #: Seconds a client should wait before it tries again (429's Retry-After); 0 says nothing.
    retry_after_seconds: int = 0


class ApiError(Exception):
    code: grpc.StatusCode = grpc.StatusCode.UNKNOWN
    #: Kubernetes' StatusReason; sent beside the code so that two errors sharing a code stay apart.
    reason: str = "Unknown"
    #: The HTTP status of Kubernetes' metav1.Status for this reason.
    http_code: int = 500

    def __init__(self, message: str, details: StatusDetails | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class NotFound(ApiError):
    code = grpc.StatusCode.NOT_FOUND
    reason = "NotFound"
    http_code = 404


class AlreadyExists(ApiError):
    code = grpc.StatusCode.ALREADY_EXISTS
    reason = "AlreadyExists"
    http_code = 409


class Conflict(ApiError):
    """A compare-and-swap lost: stale resourceVersion, or Bind of a pod that is already bound."""

    code = grpc.StatusCode.ABORTED
    reason = "Conflict"
    http_code = 409


class Invalid(ApiError):
    """The object or request fails validation; the message names each field."""

    code = grpc.StatusCode.INVALID_ARGUMENT
    reason = "Invalid"
    http_code = 422


class Forbidden(ApiError):
    """Admission refused the object (unknown priority class, a second globalDefault, ...)."""

    code = grpc.StatusCode.FAILED_PRECONDITION
    reason = "Forbidden"
    http_code = 403


class Unauthorized(ApiError):
    """The call carries no credentials the server accepts (Kubernetes' 401): a missing or unknown
    bearer token, or no verified client certificate."""

    code = grpc.StatusCode.UNAUTHENTICATED
    reason = "Unauthorized"
    http_code = 401


class PermissionDenied(ApiError):
    """The caller is known but its roles do not allow this verb on this resource (Kubernetes' 403 from
    the authorizer; admission's refusals are Forbidden)."""

    code = grpc.StatusCode.PERMISSION_DENIED
    reason = "Forbidden"
    http_code = 403


class Expired(ApiError):
    """A watch or continue token asked for a compacted resourceVersion (Kubernetes' 410 Gone)."""

    code = grpc.StatusCode.OUT_OF_RANGE
    reason = "Expired"
    http_code = 410


class Unavailable(ApiError):
    """The server or its store cannot be reached; retrying is safe."""

    code = grpc.StatusCode.UNAVAILABLE
    reason = "ServiceUnavailable"
    http_code = 503


class Fenced(ApiError):
    """A fenced write (Bind, UpdateStatus, Delete) whose lease is no longer held in the fence's tenure: the
    writer was deposed, whether or not it knows. It must stop writing (a scheduler steps down)."""

    code = grpc.StatusCode.FAILED_PRECONDITION
    reason = "Fenced"
    http_code = 409


class TooManyRequests(ApiError):
    """Flow control will not run the request now (Kubernetes' 429): its priority level's seats are taken
    and the caller's queue is full, or it waited too long; retrying later may succeed."""

    code = grpc.StatusCode.RESOURCE_EXHAUSTED
    reason = "TooManyRequests"
    http_code = 429


class Timeout(ApiError):
    """The server cut the call at its request timeout (Kubernetes' 504 Timeout); the write may or may not
    have landed, as with any timeout: read before trying again."""

    code = grpc.StatusCode.DEADLINE_EXCEEDED
    reason = "Timeout"
    http_code = 504


class BadRequest(ApiError):
    """The request itself is malformed (Kubernetes' 400): a body that is not JSON, a patch that cannot be
    read, a query parameter of the wrong form."""

    code = grpc.StatusCode.INVALID_ARGUMENT
    reason = "BadRequest"
    http_code = 400


class RequestEntityTooLarge(ApiError):
    """The request is larger, or asks for more work, than the server takes in one (Kubernetes' 413): a
    body over the limit, a JSON patch of more operations than its bound."""

    code = grpc.StatusCode.INVALID_ARGUMENT
    reason = "RequestEntityTooLarge"
    http_code = 413


class UnsupportedMediaType(ApiError):
    """The body's Content-Type is not one the verb takes (Kubernetes' 415), e.g. a patch type it does not
    know."""

    code = grpc.StatusCode.INVALID_ARGUMENT
    reason = "UnsupportedMediaType"
    http_code = 415


class MethodNotSupported(ApiError):
    """The resource does not serve this verb (Kubernetes' 405)."""

    code = grpc.StatusCode.UNIMPLEMENTED
    reason = "MethodNotAllowed"
    http_code = 405


class NotAcceptable(ApiError):
    """None of the media types the client accepts can be served (Kubernetes' 406)."""

    code = grpc.StatusCode.INVALID_ARGUMENT
    reason = "NotAcceptable"
    http_code = 406


class InternalError(ApiError):
    code = grpc.StatusCode.INTERNAL
    reason = "InternalError"
    http_code = 500


_BY_CODE: dict[grpc.StatusCode, type[ApiError]] = {
    cls.code: cls
    for cls in (
        NotFound, AlreadyExists, Conflict, Invalid, Forbidden, Expired, Unavailable, Unauthorized,
        PermissionDenied,
    )
}
# PermissionDenied shares admission's reason "Forbidden"; its own code finds it through _BY_CODE.
# TooManyRequests only by its reason: gRPC itself says RESOURCE_EXHAUSTED of a message too large;
# Timeout too: gRPC says DEADLINE_EXCEEDED when the client's own deadline passes.
_WITH_REASONS: tuple[type[ApiError], ...] = (*_BY_CODE.values(), Fenced, TooManyRequests, Timeout)
_BY_REASON: dict[str, type[ApiError]] = {
    cls.reason: cls
    for cls in _WITH_REASONS
    if cls is not PermissionDenied
}


def from_status(code: grpc.StatusCode, details: str | None, reason: str = "") -> ApiError:
    """The ApiError for a gRPC status and the reason its trailing metadata carried (InternalError for
    codes the API does not use on purpose). A reason only counts with the code it belongs to."""
    cls = _BY_REASON.get(reason)
    if cls is None or cls.code != code:
        cls = _BY_CODE.get(code, InternalError)
    return cls(details or code.name)


def reason_of(metadata: object) -> str:
    """The reason in a call's trailing metadata (a grpc.aio Metadata or a sequence of pairs), or ""."""
    for key, value in metadata or ():  # type: ignore[attr-defined]
        if key == REASON_KEY:
            return value.decode() if isinstance(value, bytes) else str(value)
    return ""


CONFLICT_MESSAGE = (
    "the object has been modified; please apply your changes to the latest version and try again"
)
