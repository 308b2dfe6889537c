"""Owner-only modes for the data directory and the files in it.

The database holds every object of the cluster, so as etcd does with its data directory the store keeps
the directory 0700 and its files 0600. A directory or file that already exists
with looser modes is tightened, with a warning, rather than refused: etcd also warns and carries on, and
the fix is the same either way. SQLite gives the ``-wal`` and ``-shm`` files the database file's mode, so
creating the database file 0600 before SQLite opens it covers them as they appear.
"""

from __future__ import annotations

import logging
import os
import stat

from store.base import StoreUnavailable

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: str) -> None:
    """Create ``path`` 0700 (its missing parents as usual), or tighten an existing one to 0700."""
    try:
        os.makedirs(path, mode=DIR_MODE, exist_ok=True)
    except OSError as exc:
        raise StoreUnavailable(f"sqlite: cannot create the data directory {path}: {exc.strerror}") from exc
    _tighten(path, DIR_MODE, "data directory")


def private_file(path: str) -> None:
    """Create ``path`` empty with mode 0600 if it is missing, or tighten an existing one to 0600."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    except FileExistsError:
        _tighten(path, FILE_MODE, "file")
    except OSError as exc:
        raise StoreUnavailable(f"sqlite: cannot create {path}: {exc.strerror}") from exc
    else:
        os.close(fd)


def tighten_if_present(path: str) -> None:
    """Tighten ``path`` to 0600 if it exists (SQLite's side files, left by an earlier run)."""
    if os.path.lexists(path):
        _tighten(path, FILE_MODE, "file")


def _tighten(path: str, mode: int, what: str) -> None:
    current = stat.S_IMODE(os.stat(path).st_mode)
    if not current & 0o077:  # nothing for the group or others (a setgid bit is no opening)
        return
    try:
        os.chmod(path, mode)
    except OSError as exc:
        raise StoreUnavailable(
            f"sqlite: {what} {path} has mode {current:04o}, open to other users, and cannot be "
            f"changed to {mode:04o}: {exc.strerror}"
        ) from exc
    log.warning("%s %s had mode %04o, open to other users; changed it to %04o", what, path, current, mode)
