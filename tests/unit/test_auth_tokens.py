"""The static token file (Kubernetes' format) and the token table: what a good file means, and a clear
error naming the file and line for each kind of bad line."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.apiserver.auth.identity import UserInfo
from cluster.apiserver.auth.tokens import TokenFileError, TokenTable, load_token_file, parse_token_file


def test_a_line_names_the_token_user_uid_and_groups() -> None:
    text = 't1,alice,u-1,"system:masters, ops"\n\nt2,bob,u-2\nt3,carol,,podsched:clients\n'
    assert parse_token_file(text, "tokens.csv") == {
        "t1": UserInfo("alice", "u-1", ("system:masters", "ops")),
        "t2": UserInfo("bob", "u-2"),
        "t3": UserInfo("carol", "", ("podsched:clients",)),
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("t1,alice,1\n,bob,2\n", "token file tokens.csv, line 2: the token is blank"),
        ("t1,,1\n", "token file tokens.csv, line 1: the user name is blank"),
        (
            "t1,alice\n",
            "token file tokens.csv, line 1: needs at least 3 columns (token, user name, user uid), found 2",
        ),
        ("t1,alice,1,a,b\n", "token file tokens.csv, line 1: has 5 columns, at most 4"),
        (
            "t1,alice,1\nt2,bob,2\nt1,carol,3\n",
            "token file tokens.csv, line 3: duplicate token (first on line 1)",
        ),
        ('t1,alice,1,"a,b\n', "token file tokens.csv, line 1: unexpected end of data"),
    ],
    ids=[
        "blank-token", "blank-user", "too-few-columns", "too-many-columns", "duplicate-token", "bad-quoting",
    ],
)
def test_a_bad_line_is_an_error_naming_file_and_line(text: str, message: str) -> None:
    with pytest.raises(TokenFileError) as raised:
        parse_token_file(text, "tokens.csv")
    assert str(raised.value).startswith(message)


def test_an_unreadable_or_empty_file_is_an_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "missing.csv"
    with pytest.raises(TokenFileError, match=f"--token-auth-file {missing}: cannot read it: No such file"):
        load_token_file(str(missing))
    empty = tmp_path / "empty.csv"
    empty.write_text("\n\n")
    with pytest.raises(TokenFileError, match=f"token file {empty} lists no tokens"):
        load_token_file(str(empty))


def test_the_table_finds_a_user_by_token_and_nobody_by_a_wrong_one(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text("secret,alice,1,ops\n")
    table = TokenTable(load_token_file(str(path)))
    assert table.user_of("secret") == UserInfo("alice", "1", ("ops",))
    assert table.user_of("secreT") is None
    assert table.user_of("") is None
    with pytest.raises(ValueError, match="may not be empty"):
        table.add("", UserInfo("nobody"))
