"""Key-value stores with etcd's semantics: the embedded SQLite log, real etcd, and the in-memory store of
the in-process control planes (store.memory)."""

from store.base import (
    BatchReader,
    EventType,
    FutureRevision,
    Guard,
    KeyValue,
    ListResult,
    OpType,
    ProgressMark,
    Store,
    StoreError,
    StoreUnavailable,
    TooOldRevision,
    TransactionTooLarge,
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
    "ProgressMark",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "TooOldRevision",
    "TransactionTooLarge",
    "TxnOp",
    "TxnResult",
    "WatchEvent",
    "WriteResult",
    "get_many",
]
