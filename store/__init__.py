"""Key-value stores with etcd's semantics: the embedded SQLite log and real etcd."""

from store.base import (
    BatchReader,
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
    get_many,
)

__all__ = [
    "BatchReader",
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
    "get_many",
]
