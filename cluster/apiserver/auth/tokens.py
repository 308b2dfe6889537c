"""Bearer tokens: Kubernetes' static token file (``--token-auth-file``) and the lookup of a presented token.

The file is CSV, one token a line: ``token,user,uid,"group1,group2"`` (kube-apiserver's format: at
least three columns, the groups column optional and quoted when it holds several). Blank lines are
skipped. Unlike kube-apiserver, which warns and carries on, a blank token, a missing user or a token
listed twice is an error naming the file and line: a typo must not silently lock someone out or let
the wrong line win.

Tokens are kept only as SHA-256 digests and looked up by the digest of the presented token, so the
time a lookup takes says nothing about how much of a guess was right.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Callable, Mapping

from cluster.apiserver.auth.flagfiles import read_flag_text
from cluster.apiserver.auth.identity import UserInfo

#: The columns a line needs and may have: token, user name, uid, then the optional groups.
MIN_COLUMNS = 3
MAX_COLUMNS = 4


class TokenFileError(ValueError):
    """The token file cannot be read or a line of it is wrong; the message names the file and line."""


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class TokenTable:
    """The users the server knows by bearer token."""

    def __init__(self, users_by_token: Mapping[str, UserInfo] | None = None) -> None:
        self._by_digest: dict[bytes, UserInfo] = {}
        for token, user in (users_by_token or {}).items():
            self.add(token, user)

    def add(self, token: str, user: UserInfo) -> None:
        if not token:
            raise ValueError("a token may not be empty")
        self._by_digest[_digest(token)] = user

    def with_users_changed(self, change: Callable[[UserInfo], UserInfo]) -> TokenTable:
        """The same tokens, each naming ``change(user)`` of its user."""
        table = TokenTable()
        table._by_digest = {digest: change(user) for digest, user in self._by_digest.items()}
        return table

    def user_of(self, token: str) -> UserInfo | None:
        """The user ``token`` belongs to, or None for a token nobody has."""
        return self._by_digest.get(_digest(token))

    def __len__(self) -> int:
        return len(self._by_digest)


def parse_token_file(text: str, path: str) -> dict[str, UserInfo]:
    """The users of a static token file's ``text`` by token; ``path`` names the file in errors."""
    users: dict[str, UserInfo] = {}
    first_line: dict[str, int] = {}
    reader = csv.reader(io.StringIO(text), skipinitialspace=True, strict=True)
    try:
        for record in reader:
            line = reader.line_num
            if not any(field.strip() for field in record):
                continue
            where = f"token file {path}, line {line}"
            if len(record) < MIN_COLUMNS:
                raise TokenFileError(
                    f"{where}: needs at least {MIN_COLUMNS} columns (token, user name, user uid), "
                    f"found {len(record)}"
                )
            if len(record) > MAX_COLUMNS:
                raise TokenFileError(
                    f"{where}: has {len(record)} columns, at most {MAX_COLUMNS} (token, user name, user uid, "
                    f'"group1,group2"): quote the groups column when it lists several'
                )
            token, name, uid = (field.strip() for field in record[:MIN_COLUMNS])
            if not token:
                raise TokenFileError(f"{where}: the token is blank")
            if not name:
                raise TokenFileError(f"{where}: the user name is blank")
            if token in users:
                raise TokenFileError(f"{where}: duplicate token (first on line {first_line[token]})")
            groups = record[3].split(",") if len(record) == MAX_COLUMNS else []
            users[token] = UserInfo(name, uid, tuple(group.strip() for group in groups if group.strip()))
            first_line[token] = line
    except csv.Error as exc:
        raise TokenFileError(f"token file {path}, line {reader.line_num}: {exc}") from exc
    return users


def load_token_file(path: str) -> dict[str, UserInfo]:
    """The users of the static token file at ``path`` by token; TokenFileError if it is unreadable or
    wrong."""
    users = parse_token_file(read_flag_text("--token-auth-file", path, TokenFileError), path)
    if not users:
        raise TokenFileError(f"token file {path} lists no tokens")
    return users
