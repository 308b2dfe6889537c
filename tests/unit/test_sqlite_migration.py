"""A data file written by schema 1 (one row per revision, keyed by an AUTOINCREMENT id) opens, reads and
writes correctly after the in-place migration."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from store.base import EventType, TxnOp
from store.sqlite import SqliteStore, dialect
from store.sqlite.store import DB_FILE
from tests.contract.watching import take

# Schema 1 exactly as the previous release wrote it.
_SCHEMA_1 = (
    """
    CREATE TABLE log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        created INTEGER NOT NULL,
        deleted INTEGER NOT NULL,
        create_revision INTEGER NOT NULL,
        prev_revision INTEGER NOT NULL,
        value BLOB NOT NULL
    )
    """,
    "CREATE UNIQUE INDEX log_name_prev_revision ON log (name, prev_revision)",
    "CREATE INDEX log_name_id ON log (name, id)",
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID",
    "PRAGMA user_version = 1",
)

# (id, name, created, deleted, create_revision, prev_revision, value): /a created, updated; /b created,
# deleted; /c created at 5; then revision 6 (/d) was written and its row deleted again, as compaction of
# a short-lived key can leave it, so the last revision handed out has no row.
_ROWS = [
    (1, "/a", 1, 0, 1, 0, b"a1"),
    (2, "/b", 1, 0, 2, 0, b"b1"),
    (3, "/a", 0, 0, 1, 1, b"a2"),
    (4, "/b", 0, 1, 2, 2, b""),
    (5, "/c", 1, 0, 5, 0, b"c1"),
    (6, "/d", 1, 0, 6, 0, b"d1"),
]


def _write_schema_1(data_dir: Path) -> None:
    data_dir.mkdir(mode=0o700)
    conn = sqlite3.connect(data_dir / DB_FILE)
    for statement in _SCHEMA_1:
        conn.execute(statement)
    conn.executemany("INSERT INTO log VALUES (?, ?, ?, ?, ?, ?, ?)", _ROWS)
    conn.execute("DELETE FROM log WHERE id = 6")
    conn.execute("INSERT INTO meta VALUES ('compact_revision', 2)")
    conn.commit()
    conn.close()


async def test_a_schema_1_file_is_migrated_and_reads_as_before(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    _write_schema_1(data_dir)

    store = await SqliteStore.open(data_dir)
    try:
        assert await store.current_revision() == 6
        assert await store.compacted_revision() == 2
        a = await store.get("/a")
        assert a is not None and (a.value, a.create_revision, a.mod_revision) == (b"a2", 1, 3)
        assert await store.get("/b") is None
        listed = await store.list("/", revision=3)
        assert [(kv.key, kv.value, kv.mod_revision) for kv in listed.items] == [
            ("/a", b"a2", 3), ("/b", b"b1", 2),
        ]
        events = store.watch("/", from_revision=3)
        try:
            got = await take(events, 3)
        finally:
            await events.aclose()  # type: ignore[attr-defined]
        assert [(e.type, e.key, e.revision, e.prev_value) for e in got] == [
            (EventType.PUT, "/a", 3, b"a1"),
            (EventType.DELETE, "/b", 4, b"b1"),
            (EventType.PUT, "/c", 5, None),
        ]
        # New writes continue after the last revision handed out, several keys at one revision.
        result = await store.txn([TxnOp.update("/a", b"a3", 3), TxnOp.create("/b", b"b2")])
        assert result.succeeded and result.revision == 7
        b = await store.get("/b")
        assert b is not None and (b.create_revision, b.mod_revision) == (7, 7)
    finally:
        await store.close()

    conn = sqlite3.connect(data_dir / DB_FILE)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == dialect.SCHEMA_VERSION
        columns = [row[1] for row in conn.execute("PRAGMA table_info(log)")]
        assert "revision" in columns and "id" not in columns
        assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'log_schema_1'").fetchone() is None
    finally:
        conn.close()
    # And it opens again as an up-to-date file.
    store = await SqliteStore.open(data_dir)
    try:
        assert await store.current_revision() == 7
    finally:
        await store.close()
