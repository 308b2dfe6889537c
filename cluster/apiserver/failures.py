"""The one mapping from what went wrong in a request to the API error its caller is told, for both
wires: an ApiError is itself (Kubernetes' wording, built where it is raised); an unreachable store is
Unavailable (clients retry, and fail over to another server); a compacted or future revision that escaped
a more specific handler is Expired or a too-large-version error; anything else is a bug: InternalError,
and the traceback goes to the log, not to the caller."""

from __future__ import annotations

import logging

from cluster.api import errors
from cluster.apiserver import messages
from store.base import FutureRevision, StoreUnavailable, TooOldRevision, TransactionTooLarge

log = logging.getLogger("cluster.apiserver.service")


def error_of(exc: Exception, rpc: str) -> errors.ApiError:
    if isinstance(exc, errors.ApiError):
        if isinstance(exc, errors.InternalError):
            log.error("%s failed: %s", rpc, exc.message)
        return exc
    if isinstance(exc, StoreUnavailable):
        log.warning("%s: the store is unavailable: %s", rpc, exc)
        return errors.Unavailable(f"the store is unavailable: {exc}")
    if isinstance(exc, TooOldRevision):
        return messages.too_old_resource_version(exc.requested, exc.compacted)
    if isinstance(exc, TransactionTooLarge):
        return errors.Invalid(f"{rpc}: the store cannot write this much in one transaction: {exc}")
    if isinstance(exc, FutureRevision):
        return messages.too_large_resource_version(exc.requested, exc.current)
    log.exception("%s failed", rpc)
    return errors.InternalError(f"internal error in {rpc}: {type(exc).__name__}: {exc}")
