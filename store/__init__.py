"""Key-value stores with etcd's semantics: the embedded SQLite log and real etcd."""

from store.base import (
    EventType,
    FutureRevision,
    Guard,
    KeyValue,
    ListResult,
    Store,
    StoreError,
    StoreUnavailable,
    TooOldRevision,
    WatchEvent,
    WriteResult,
)

__all__ = [
    "EventType",
    "FutureRevision",
    "Guard",
    "KeyValue",
    "ListResult",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "TooOldRevision",
    "WatchEvent",
    "WriteResult",
]
