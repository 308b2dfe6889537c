"""Key-value stores with etcd's semantics: the embedded SQLite log and real etcd."""

from store.base import (
    BatchReader,
    EventType,
    FutureRevision,
    Guard,
    KeyValue,
    ListResult,
    OpType,
    Store,
    StoreError,
    StoreUnavailable,
    TooOldRevision,
    TxnOp,
    TxnResult,
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
    "OpType",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "TooOldRevision",
    "TxnOp",
    "TxnResult",
    "WatchEvent",
    "WriteResult",
    "get_many",
]
