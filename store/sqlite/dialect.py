"""The SQL dialect: schema, connection settings, statements and sqlite error translation.

This is the bottom layer of the embedded store (kine's driver layer). It knows tables and rows, not
etcd: every function takes an open ``sqlite3.Connection`` and runs plain statements on it. The layers
above decide which transaction a statement runs in.

The data is one append-only table, ``log``, with one row per (revision, key): a write transaction
appends one row for each key it writes, all with the transaction's new ``revision`` (as etcd gives every
key of a multi-op Txn one revision). ``prev_revision`` is the revision of the key's previous row (0 when
there is none), a deletion appends a tombstone row (``deleted = 1``), and a row that starts a key's life
has ``created = 1``. A key's value at revision R is its newest row with ``revision <= R``. The current
revision is a counter in ``meta`` (``META_REVISION``), bumped once per transaction that writes; it never
goes backwards, even after compaction deleted the newest rows.

Schema version 1 keyed rows by an AUTOINCREMENT ``id`` that was the revision, one row per revision;
``create_schema`` migrates such a file in place (``id`` becomes ``revision``, ``sqlite_sequence``'s
counter becomes ``META_REVISION``).

A row does not copy the value it replaced: an event's previous value is read by joining the row named
by (``name``, ``prev_revision``). Compaction keeps every row that such a join still needs (see
``compaction_victims``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import NamedTuple

from store.base import StoreError, StoreUnavailable

#: Bumped when the schema changes incompatibly; a newer file is refused rather than misread.
SCHEMA_VERSION = 2
#: The schema written before one revision could hold several rows; ``create_schema`` migrates it.
_SCHEMA_VERSION_ONE_ROW_PER_REVISION = 1

#: The meta key holding the newest revision handed out (0 or absent in a new store).
META_REVISION = "revision"

#: Where the compaction state lives in the ``meta`` table. ``compact_revision``: reads below it are
#: refused. ``compacted_through``: rows superseded before it have been deleted. The first is written
#: before any row is deleted, so a reader that saw the old compact revision also sees all the rows it
#: needs; the second records progress, so a compaction interrupted by a crash resumes where it stopped.
META_COMPACT_REVISION = "compact_revision"
META_COMPACTED_THROUGH = "compacted_through"

#: Keep the WAL file at most this big after a checkpoint reset it (bytes). Without a limit the WAL keeps
#: its high-water size forever; 16 MiB leaves room for a few seconds of bursts without truncating often.
JOURNAL_SIZE_LIMIT = 16 * 1024 * 1024

#: How long a connection waits for a lock held by another connection of this process (a checkpoint, the
#: writer) before giving up, in milliseconds. Only this process opens the file (the data-dir lock sees to
#: it), so waits are short; a long one means something is wrong and surfaces as StoreUnavailable.
BUSY_TIMEOUT_MS = 10_000

_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS log (
        revision INTEGER NOT NULL,
        name TEXT NOT NULL,
        created INTEGER NOT NULL,
        deleted INTEGER NOT NULL,
        create_revision INTEGER NOT NULL,
        prev_revision INTEGER NOT NULL,
        value BLOB NOT NULL
    )
    """,
    # A key is written at most once per revision; and history in revision order, a revision's keys in
    # key order, is a walk of this index (watch catch-up, compaction).
    "CREATE UNIQUE INDEX IF NOT EXISTS log_revision_name ON log (revision, name)",
    # Two writes that both read revision N of a key and append a successor of it collide here, so the
    # database, not the caller, decides which one lands (kine does the same).
    "CREATE UNIQUE INDEX IF NOT EXISTS log_name_prev_revision ON log (name, prev_revision)",
    # The newest row of a key at or below a revision, and key-ordered range scans for list.
    "CREATE UNIQUE INDEX IF NOT EXISTS log_name_revision ON log (name, revision)",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID",
)

_ROW_COLUMNS = "l.revision, l.name, l.created, l.deleted, l.create_revision, l.prev_revision, l.value"

# The previous value of a row, for events: the row it replaced, unless it started the key's life.
_WITH_PREV_VALUE = f"""
    SELECT {_ROW_COLUMNS}, p.value
    FROM log AS l LEFT JOIN log AS p ON p.name = l.name AND p.revision = l.prev_revision AND l.created = 0
"""

_LATEST_SQL = f"SELECT {_ROW_COLUMNS}, NULL FROM log AS l WHERE l.name = ? ORDER BY l.revision DESC LIMIT 1"

# The newest row of each key in [lo, hi) at or below :rev, in key order. The outer scan walks the
# (name, revision) index in key order and stops after :limit live keys, so a page costs O(page) index probes
# (plus the superseded versions it steps over, which compaction keeps few), not O(range).
_LIST_SQL = """
    SELECT {columns}, NULL
    FROM log AS l
    WHERE l.name >= :lo {upper} AND l.revision <= :rev AND l.deleted = 0
      AND l.revision = (SELECT MAX(m.revision) FROM log AS m WHERE m.name = l.name AND m.revision <= :rev)
    ORDER BY l.name
    LIMIT :limit
"""

# Strictly after the position (:rev, :after) in (revision, key) order: :after "" starts at the first
# key of :rev, since no key is empty. The (revision, name) index is named because the planner, without
# statistics, prefers the key range and sorts all of a prefix's history; a watch catching up wants the
# few rows after its position, in index order.
_AFTER_SQL = _WITH_PREV_VALUE.replace("FROM log AS l", "FROM log AS l INDEXED BY log_revision_name") + """
    WHERE (l.revision, l.name) > (:rev, :after) AND l.name >= :lo {upper}
    ORDER BY l.revision, l.name
    LIMIT :limit
"""

_INSERT_SQL = """
    INSERT INTO log (revision, name, created, deleted, create_revision, prev_revision, value)
    VALUES (?, ?, ?, ?, ?, ?, ?)
"""


class Row(NamedTuple):
    """One row of the log, with the value of the row it replaced when the query asked for it."""

    revision: int
    name: str
    created: bool
    deleted: bool
    create_revision: int
    prev_revision: int
    value: bytes
    prev_value: bytes | None


class DuplicateSuccessor(StoreError):
    """Another row already succeeds the same (key, previous revision): a concurrent write won the race."""


def translate_error(exc: sqlite3.Error) -> StoreError:
    """Map a driver error onto the store's vocabulary (kine's TranslateErr).

    The unique index on (name, prev_revision) means "someone else wrote this key first". Every other
    failure (disk full, I/O error, a locked or corrupt file, a closed connection) leaves the data
    unreachable for now, which callers may retry.
    """
    if isinstance(exc, sqlite3.IntegrityError) and "log.name, log.prev_revision" in str(exc):
        return DuplicateSuccessor(str(exc))
    return StoreUnavailable(f"sqlite: {exc}")


def connect(path: str, *, synchronous: str) -> sqlite3.Connection:
    """Open ``path`` in WAL mode, in autocommit mode so that transactions are explicit (BEGIN/COMMIT).

    ``synchronous``: NORMAL or FULL. In WAL mode NORMAL writes every commit to the WAL file (the OS page
    cache) before COMMIT returns and fsyncs only at checkpoints: a killed process loses nothing, since
    the kernel still writes those pages out; only a power loss or kernel crash can drop the last
    commits. FULL also fsyncs the WAL at every commit, which survives power loss at the cost of a disk
    flush per transaction (group commit amortises it over a batch of writes).
    """
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    # Freed pages go to a free list that incremental_vacuum returns to the file system. This only takes
    # effect on a brand-new file, and only before it switches to WAL; on an existing file it is a no-op.
    conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if mode.lower() != "wal":
        conn.close()
        raise StoreUnavailable(f"sqlite: {path} cannot use WAL mode (journal_mode is {mode})")
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    conn.execute(f"PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}")
    return conn


def create_schema(conn: sqlite3.Connection) -> None:
    """Create the tables on first use, migrate a file of the previous schema, and refuse a file written
    by a newer, incompatible schema."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise StoreUnavailable(
            f"sqlite: database schema version {version} is newer than this program's {SCHEMA_VERSION}"
        )
    conn.execute("BEGIN IMMEDIATE")
    try:
        if version == _SCHEMA_VERSION_ONE_ROW_PER_REVISION:
            _migrate_from_one_row_per_revision(conn)
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _migrate_from_one_row_per_revision(conn: sqlite3.Connection) -> None:
    """Rewrite a schema-1 log (``id`` AUTOINCREMENT, the revision) into the current table, inside the
    caller's transaction: every row keeps its revision, and the last revision handed out (which
    compaction may have left without a row) moves from ``sqlite_sequence`` into ``meta``."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'log'").fetchone()
    last = 0 if row is None else int(row[0])
    conn.execute("DROP INDEX IF EXISTS log_name_prev_revision")
    conn.execute("DROP INDEX IF EXISTS log_name_id")
    conn.execute("ALTER TABLE log RENAME TO log_schema_1")
    for statement in _SCHEMA:
        conn.execute(statement)
    conn.execute(
        """
        INSERT INTO log (revision, name, created, deleted, create_revision, prev_revision, value)
        SELECT id, name, created, deleted, create_revision, prev_revision, value FROM log_schema_1
        ORDER BY id
        """
    )
    conn.execute("DROP TABLE log_schema_1")
    set_meta(conn, META_REVISION, last)


def prefix_range(prefix: str) -> tuple[str, str | None]:
    """The half-open key range [lo, hi) of keys starting with ``prefix``; hi None means unbounded.

    LIKE would treat ``%`` and ``_`` in keys as wildcards, so prefixes are matched as a range instead:
    hi is the smallest string greater than every string starting with the prefix, found by bumping
    the last code point that can be bumped. SQLite compares TEXT as UTF-8 bytes, which orders strings
    exactly as Python compares code points.
    """
    chars = list(prefix)
    while chars:
        code = ord(chars[-1]) + 1
        if 0xD800 <= code <= 0xDFFF:  # surrogates cannot appear in a stored key; skip over them
            code = 0xE000
        if code <= 0x10FFFF:
            chars[-1] = chr(code)
            return prefix, "".join(chars)
        chars.pop()
    return prefix, None


def _upper(hi: str | None) -> str:
    return "" if hi is None else "AND l.name < :hi"


def _rows(cursor: sqlite3.Cursor) -> list[Row]:
    return [
        Row(id_, name, bool(created), bool(deleted), create_rev, prev_rev, value, prev_value)
        for id_, name, created, deleted, create_rev, prev_rev, value, prev_value in cursor
    ]


def current_revision(conn: sqlite3.Connection) -> int:
    """The last revision ever handed out (0 for a new store), whether or not its rows still exist."""
    return get_meta(conn, META_REVISION)


def get_meta(conn: sqlite3.Connection, key: str) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return 0 if row is None else int(row[0])


def set_meta(conn: sqlite3.Connection, key: str, value: int) -> None:
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def latest(conn: sqlite3.Connection, name: str) -> Row | None:
    """The newest row of ``name`` (possibly a tombstone), or None if the log has none."""
    rows = _rows(conn.execute(_LATEST_SQL, (name,)))
    return rows[0] if rows else None


def insert(
    conn: sqlite3.Connection,
    *,
    revision: int,
    name: str,
    created: bool,
    deleted: bool,
    create_revision: int,
    prev_revision: int,
    value: bytes,
) -> None:
    """Append one row at ``revision``; raises DuplicateSuccessor if the key moved on meanwhile."""
    try:
        conn.execute(
            _INSERT_SQL, (revision, name, int(created), int(deleted), create_revision, prev_revision, value)
        )
    except sqlite3.Error as exc:
        raise translate_error(exc) from exc


def list_latest(
    conn: sqlite3.Connection, lo: str, hi: str | None, revision: int, limit: int
) -> list[Row]:
    """Live keys in [lo, hi) as of ``revision``, in key order, at most ``limit`` (-1: all)."""
    sql = _LIST_SQL.format(columns=_ROW_COLUMNS, upper=_upper(hi))
    return _rows(conn.execute(sql, {"lo": lo, "hi": hi, "rev": revision, "limit": limit}))


def after(
    conn: sqlite3.Connection, lo: str, hi: str | None, revision: int, after_key: str, limit: int
) -> list[Row]:
    """Rows of keys in [lo, hi) after the position (``revision``, ``after_key``) in (revision, key)
    order (``after_key`` "": from the first key of ``revision`` on), with previous values."""
    sql = _AFTER_SQL.format(upper=_upper(hi))
    params = {"lo": lo, "hi": hi, "rev": revision, "after": after_key, "limit": limit}
    return _rows(conn.execute(sql, params))


def compaction_victims(conn: sqlite3.Connection, lo: int, hi: int) -> list[tuple[str, int]]:
    """(key, revision) of the rows that rows with lo <= revision < hi make obsolete, given that reads
    start at >= hi.

    A row is obsolete once a successor exists below hi: every read at or after hi sees the successor
    (or something newer) instead, and every event a watch from hi delivers is at or after hi, so no
    event's previous value is that row. A tombstone below hi is obsolete too: its key reads as absent
    without it, since its own predecessor goes with it. Rows whose successor is at or after hi stay,
    which is what lets a watch from exactly the compact revision report correct previous values.
    """
    cursor = conn.execute(
        """
        SELECT name, prev_revision FROM log WHERE revision >= ? AND revision < ? AND prev_revision != 0
        UNION
        SELECT name, revision FROM log WHERE revision >= ? AND revision < ? AND deleted = 1
        """,
        (lo, hi, lo, hi),
    )
    return [(name, revision) for name, revision in cursor]


def delete_rows(conn: sqlite3.Connection, rows: Iterable[tuple[str, int]]) -> None:
    """Delete the rows named by (key, revision)."""
    conn.executemany("DELETE FROM log WHERE name = ? AND revision = ?", rows)


def checkpoint(conn: sqlite3.Connection) -> None:
    """Copy the WAL into the database and truncate it, so the WAL does not keep its high-water size.
    Readers in the middle of a transaction can make this partial; the next checkpoint finishes it."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()


def free_pages(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA freelist_count").fetchone()[0])


def incremental_vacuum(conn: sqlite3.Connection, pages: int) -> None:
    """Return up to ``pages`` free pages to the file system (the file shrinks)."""
    conn.execute(f"PRAGMA incremental_vacuum({int(pages)})").fetchall()
