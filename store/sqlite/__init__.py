"""The embedded store: etcd's data model in one SQLite file, built as k3s-io/kine builds it.

Three layers, each importing only the one below: ``store.SqliteStore`` (etcd semantics: CAS writes,
consistent lists, watches), ``log.Log`` (append, list at a revision, read after a revision,
subscriptions, compaction; owns the threads and connections), ``dialect`` (schema, statements, sqlite
error translation). ``writer`` (the group-commit writer thread), ``broadcast`` (watch fan-out) and
``datadir`` (the data directory's lock) serve the log and the store.
"""

from store.sqlite.datadir import DataDirLocked
from store.sqlite.store import SqliteStore

__all__ = ["DataDirLocked", "SqliteStore"]
