"""List: every selected object of a kind, read at one store revision, optionally in pages.

A page is at most ``limit`` *selected* objects. With selectors the server keeps reading store pages
until it has ``limit`` matches or the prefix ends, as kube-apiserver does, so a client never gets a
short or empty page while more matches remain. The continue token records the revision of the first
page and the key after the last object returned; every later page is read at that revision, so the
pages together are one consistent snapshot. Once that revision is compacted the token is Expired.
"""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.message import Message

from cluster.api import errors
from cluster.apiserver import continuation, messages
from cluster.apiserver.limits import DEFAULT_MAX_PAGE_SIZE, check_page_size
from cluster.apiserver.selection import Selection
from cluster.apiserver.storage import Storage
from store.base import FutureRevision, TooOldRevision

#: Objects per store read when the caller sets no limit or selectors filter: large enough that a
#: list of 10,000 pods takes a few dozen reads, small enough that one read stays a few MiB.
STORE_PAGE_SIZE = 500


@dataclass(frozen=True, slots=True)
class ObjectPage:
    items: list[Message]
    #: The store revision the page (and every page of the same list) was read at.
    revision: int
    #: Empty when no objects remain.
    continue_token: str


async def list_objects(
    registry: Storage,
    selection: Selection,
    namespace: str = "",
    *,
    limit: int = 0,
    continue_token: str = "",
    max_page_size: int = DEFAULT_MAX_PAGE_SIZE,
) -> ObjectPage:
    """One page of the objects ``selection`` selects (all of them with ``limit=0``), in key order; a
    ``limit`` above ``max_page_size`` is Invalid (limits.py)."""
    check_page_size(limit, max_page_size)
    kind = selection.kind
    prefix = kind.key_prefix(namespace)
    revision = 0
    start: str | None = None
    if continue_token:
        resumed = continuation.decode(continue_token, prefix)
        revision, start = resumed.revision, resumed.start_key
    page_size = limit if limit and selection.everything else max(limit, STORE_PAGE_SIZE)

    items: list[Message] = []
    while True:
        try:
            page = await registry.store.list(prefix, page_size, start, revision)
        except TooOldRevision as exc:
            raise errors.Expired(messages.CONTINUE_EXPIRED) from exc
        except FutureRevision as exc:
            raise messages.too_large_resource_version(exc.requested, exc.current) from exc
        revision = page.revision
        for index, kv in enumerate(page.items):
            obj = registry.decode_kv(kind, kv)
            if not selection.matches(obj):
                continue
            items.append(obj)
            if limit and len(items) == limit:
                more = index + 1 < len(page.items) or page.continue_key is not None
                # The next page starts just after this key: "\x00" is the smallest suffix.
                token = continuation.encode(revision, kv.key + "\x00", prefix) if more else ""
                return ObjectPage(items, revision, token)
        if page.continue_key is None:
            return ObjectPage(items, revision, "")
        start = page.continue_key
