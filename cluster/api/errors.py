"""The API's error vocabulary, shared by the server (which raises these) and the client (which maps gRPC
statuses back to them). One class per outcome a caller handles differently; each carries its gRPC code
and a Kubernetes-style message (`pods "web" not found`)."""

from __future__ import annotations

import grpc


class ApiError(Exception):
    code: grpc.StatusCode = grpc.StatusCode.UNKNOWN

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(ApiError):
    code = grpc.StatusCode.NOT_FOUND


class AlreadyExists(ApiError):
    code = grpc.StatusCode.ALREADY_EXISTS


class Conflict(ApiError):
    """A compare-and-swap lost: stale resourceVersion, or Bind of a pod that is already bound."""

    code = grpc.StatusCode.ABORTED


class Invalid(ApiError):
    """The object or request fails validation; the message names each field."""

    code = grpc.StatusCode.INVALID_ARGUMENT


class Forbidden(ApiError):
    """Admission refused the object (unknown priority class, a second globalDefault, ...)."""

    code = grpc.StatusCode.FAILED_PRECONDITION


class Expired(ApiError):
    """A watch or continue token asked for a compacted resourceVersion (Kubernetes' 410 Gone)."""

    code = grpc.StatusCode.OUT_OF_RANGE


class Unavailable(ApiError):
    """The server or its store cannot be reached; retrying is safe."""

    code = grpc.StatusCode.UNAVAILABLE


class InternalError(ApiError):
    code = grpc.StatusCode.INTERNAL


_BY_CODE: dict[grpc.StatusCode, type[ApiError]] = {
    cls.code: cls for cls in (NotFound, AlreadyExists, Conflict, Invalid, Forbidden, Expired, Unavailable)
}


def from_status(code: grpc.StatusCode, details: str | None) -> ApiError:
    """The ApiError for a gRPC status (InternalError for codes the API does not use on purpose)."""
    cls = _BY_CODE.get(code, InternalError)
    return cls(details or code.name)


CONFLICT_MESSAGE = (
    "the object has been modified; please apply your changes to the latest version and try again"
)
