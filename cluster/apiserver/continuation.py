"""List continue tokens, shaped like kube-apiserver's: URL-safe base64 (unpadded) of a small JSON
document holding the revision every page is read at and the key the next page starts from.

The key is stored relative to the list's prefix and re-joined to it on decode, so a token can only
ever continue the listing it came from; a token from another list, or one edited by hand, is Invalid.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

from cluster.api import errors

_VERSION = "meta.k8s.io/v1"
#: "namespace/name" and the "\x00" after it, each at most a DNS subdomain long: a longer start key is no
#: token this server issued, and must not reach the store (etcd refuses requests over 2 MiB).
_MAX_START_KEY_LENGTH = 2 * 253 + 2


@dataclass(frozen=True, slots=True)
class Continuation:
    #: The store revision of the list's first page; every later page is read at it.
    revision: int
    #: The full store key the next page starts from.
    start_key: str


def encode(revision: int, start_key: str, prefix: str) -> str:
    if not start_key.startswith(prefix):
        raise ValueError(f"continue key {start_key!r} is outside the listed prefix {prefix!r}")
    document = {"v": _VERSION, "rv": revision, "start": start_key[len(prefix):]}
    raw = json.dumps(document, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def decode(token: str, prefix: str) -> Continuation:
    """The continuation a token encodes, for a list of ``prefix``; a malformed token is Invalid."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        document = json.loads(raw)
    except (binascii.Error, ValueError) as exc:
        raise _invalid("not a continue token this server issued") from exc
    if not isinstance(document, dict) or document.get("v") != _VERSION:
        raise _invalid("not a continue token this server issued")
    revision = document.get("rv")
    start = document.get("start")
    if not isinstance(revision, int) or isinstance(revision, bool) or revision <= 0:
        raise _invalid("incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    if not isinstance(start, str) or not start:
        raise _invalid("encoded start key missing")
    if len(start) > _MAX_START_KEY_LENGTH:
        raise _invalid("encoded start key longer than any object's key")
    return Continuation(revision, prefix + start)


def _invalid(reason: str) -> errors.Invalid:
    return errors.Invalid(f"continue key is not valid: {reason}")
