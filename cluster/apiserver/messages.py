"""The API server's error messages, worded as kube-apiserver words them, so that what a user reads from
podsched matches what they would read from kubectl.

Kubernetes names a resource in messages by its group-qualified plural (``Kind.resource``: "pods",
"priorityclasses.scheduling.k8s.io").
"""

from __future__ import annotations

from cluster.api import errors
from cluster.api.kinds import Kind


def not_found(kind: Kind, name: str) -> errors.NotFound:
    return errors.NotFound(f'{kind.resource} "{name}" not found')


def already_exists(kind: Kind, name: str) -> errors.AlreadyExists:
    return errors.AlreadyExists(f'{kind.resource} "{name}" already exists')


def conflict(kind: Kind | str, name: str, reason: str = errors.CONFLICT_MESSAGE) -> errors.Conflict:
    """``kind`` may be a subresource spelled out ("pods/binding"), as Bind's conflicts name it."""
    what = kind if isinstance(kind, str) else kind.resource
    return errors.Conflict(f'Operation cannot be fulfilled on {what} "{name}": {reason}')


def stale_precondition(kind: Kind, name: str, expected: str, actual: str) -> errors.Conflict:
    """A Delete (or Bind) precondition on resourceVersion that no longer holds."""
    return conflict(
        kind, name,
        f"Precondition failed: ResourceVersion in precondition: {expected}, "
        f"ResourceVersion in object meta: {actual}",
    )


def stale_uid(kind: Kind, name: str, expected: str, actual: str) -> errors.Conflict:
    """A precondition on uid that no longer holds: the object was deleted and made again."""
    return conflict(
        kind, name, f"Precondition failed: UID in precondition: {expected}, UID in object meta: {actual}"
    )


def forbidden(kind: Kind, name: str, reason: str) -> errors.Forbidden:
    if name:
        return errors.Forbidden(f'{kind.resource} "{name}" is forbidden: {reason}')
    return errors.Forbidden(f"{kind.resource} is forbidden: {reason}")


def too_old_resource_version(requested: int, compacted: int) -> errors.Expired:
    return errors.Expired(f"too old resource version: {requested} ({compacted})")


def too_large_resource_version(requested: int, current: int) -> errors.Invalid:
    return errors.Invalid(f"Too large resource version: {requested}, current: {current}")


CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. "
    "You can start a new list without the continue parameter."
)
