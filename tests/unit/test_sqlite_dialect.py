"""The SQL dialect on its own: prefix ranges, error translation, schema versions, the compaction rule."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store.base import StoreUnavailable
from store.sqlite import dialect
from store.sqlite.dialect import DuplicateSuccessor
from store.sqlite.log import LogTxn


@pytest.fixture
def conn(tmp_path: Path) -> sqlite3.Connection:
    connection = dialect.connect(str(tmp_path / "t.db"), synchronous="NORMAL")
    dialect.create_schema(connection)
    yield connection
    connection.close()


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ("", ("", None)),
        ("/registry/pods/", ("/registry/pods/", "/registry/pods0")),
        ("a%", ("a%", "a&")),
        ("a_", ("a_", "a`")),
        ("a\U0010ffff", ("a\U0010ffff", "b")),
        ("\U0010ffff\U0010ffff", ("\U0010ffff\U0010ffff", None)),
        ("x\ud7ff", ("x\ud7ff", "x\ue000")),
    ],
    ids=["empty", "registry", "percent", "underscore", "max-code-point", "only-max", "before-surrogates"],
)
def test_prefix_range(prefix: str, expected: tuple[str, str | None]) -> None:
    assert dialect.prefix_range(prefix) == expected


_KEY_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from("/%_ab\\^[]*?"), st.characters(blacklist_categories=("Cs",), min_codepoint=1)
    ),
    max_size=6,
)


@given(prefix=_KEY_TEXT, keys=st.lists(_KEY_TEXT, max_size=12))
def test_prefix_range_selects_exactly_the_keys_with_the_prefix_in_sqlite(
    prefix: str, keys: list[str]
) -> None:
    # SQLite's ordering of TEXT must agree with Python's str.startswith for every key, wildcards and
    # non-ASCII included: this is what replaces LIKE.
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE k (name TEXT NOT NULL)")
    db.executemany("INSERT INTO k VALUES (?)", [(key,) for key in keys])
    lo, hi = dialect.prefix_range(prefix)
    if hi is None:
        selected = db.execute("SELECT name FROM k WHERE name >= ?", (lo,)).fetchall()
    else:
        selected = db.execute("SELECT name FROM k WHERE name >= ? AND name < ?", (lo, hi)).fetchall()
    assert sorted(row[0] for row in selected) == sorted(key for key in keys if key.startswith(prefix))


def _insert(
    conn: sqlite3.Connection, revision: int, name: str, *, prev: int = 0, deleted: bool = False
) -> None:
    dialect.insert(
        conn,
        revision=revision,
        name=name,
        created=prev == 0,
        deleted=deleted,
        create_revision=revision,
        prev_revision=prev,
        value=b"v%d" % revision,
    )


def test_two_successors_of_one_revision_are_refused_by_the_database(conn: sqlite3.Connection) -> None:
    _insert(conn, 1, "/k")
    _insert(conn, 2, "/k", prev=1)
    with pytest.raises(DuplicateSuccessor):
        _insert(conn, 3, "/k", prev=1)
    assert dialect.latest(conn, "/k").revision == 2


def test_other_driver_errors_are_unavailable() -> None:
    error = dialect.translate_error(sqlite3.OperationalError("disk I/O error"))
    assert isinstance(error, StoreUnavailable)
    assert "disk I/O error" in str(error)


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "t.db")
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA user_version = {dialect.SCHEMA_VERSION + 1}")
    raw.close()
    conn = dialect.connect(path, synchronous="NORMAL")
    with pytest.raises(StoreUnavailable, match="newer than this program"):
        dialect.create_schema(conn)
    conn.close()


def test_revisions_never_go_back_after_the_newest_rows_are_deleted(conn: sqlite3.Connection) -> None:
    created = LogTxn(conn).append(
        "/k", created=True, deleted=False, create_revision=0, prev_revision=0, value=b"v", prev_value=None
    )
    LogTxn(conn).append(
        "/k", created=False, deleted=True, create_revision=created.revision,
        prev_revision=created.revision, value=b"", prev_value=b"v",
    )
    dialect.delete_rows(conn, [("/k", 1), ("/k", 2)])
    assert conn.execute("SELECT COUNT(*) FROM log").fetchone()[0] == 0
    assert dialect.current_revision(conn) == 2


# A log of three keys:
#   /a: 1 created, 3 updated, 6 updated
#   /b: 2 created, 4 deleted
#   /c: 5 created, 7 deleted
_HISTORY = [
    (1, "/a", 0, False),
    (2, "/b", 0, False),
    (3, "/a", 1, False),
    (4, "/b", 2, True),
    (5, "/c", 0, False),
    (6, "/a", 3, False),
    (7, "/c", 5, True),
]


@pytest.mark.parametrize(
    ("compact_to", "victims"),
    [
        (1, set()),
        # Row 1 is superseded by 3, but 3 is the compact revision: a watch from 3 needs 1's value as
        # 3's previous value.
        (3, set()),
        # The tombstone at 4 is the compact revision itself: a watch from 4 delivers it, so it stays,
        # and so does the value it deleted (row 2), its previous value.
        (4, {1}),
        (5, {1, 2, 4}),
        (7, {1, 2, 3, 4}),
        (8, {1, 2, 3, 4, 5, 7}),
    ],
    ids=[
        "nothing-below-1",
        "successor-at-boundary",
        "tombstone-at-boundary",
        "tombstone-below",
        "superseded-below",
        "everything-but-newest",
    ],
)
def test_compaction_deletes_only_rows_no_read_at_or_after_the_revision_needs(
    conn: sqlite3.Connection, compact_to: int, victims: set[int]
) -> None:
    for revision, name, prev, deleted in _HISTORY:
        _insert(conn, revision, name, prev=prev, deleted=deleted)
    # In batches of two revisions, as the log runs it.
    found: set[int] = set()
    for lo in range(0, compact_to, 2):
        found |= {revision for _, revision in dialect.compaction_victims(conn, lo, min(lo + 2, compact_to))}
    assert found == victims
