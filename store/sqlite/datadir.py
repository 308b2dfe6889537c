"""The data directory's exclusive lock: one process per embedded store.

SQLite would let a second process open the same file and interleave its writes with ours, which breaks
what the first process keeps in memory (watch fan-out, the compaction lock) and lets two API servers
hand out conflicting answers. So the store holds an exclusive ``flock`` on a lock file in the data
directory for as long as it is open; a second opener fails at once, naming the directory. The kernel
drops the lock when the process dies, however it dies, so a crash never leaves a stale lock behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import os

from store.base import StoreError
from store.sqlite.filemodes import FILE_MODE

LOCK_FILE = "podsched.lock"


class DataDirLocked(StoreError):
    """Another process (or another open store in this one) holds the data directory."""

    def __init__(self, data_dir: str, holder: str) -> None:
        super().__init__(
            f"data directory {data_dir} is already in use by another podsched store ({holder}); "
            "stop it or choose another --data-dir"
        )
        self.data_dir = data_dir


class DataDirLock:
    """An exclusive, non-blocking flock on ``<data_dir>/podsched.lock``, holding this process's pid."""

    def __init__(self, data_dir: str, fd: int) -> None:
        self.data_dir = data_dir
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, data_dir: str) -> DataDirLock:
        path = os.path.join(data_dir, LOCK_FILE)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise DataDirLocked(data_dir, holder) from None
        except BaseException:
            os.close(fd)
            raise
        # Record who holds it, for the error message a second opener prints.
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(data_dir, fd)

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        os.close(fd)  # closing the descriptor drops the flock


def _read_holder(fd: int) -> str:
    with contextlib.suppress(OSError, ValueError):
        pid = int(os.pread(fd, 32, 0).decode().strip())
        return f"held by pid {pid}"
    return "lock held"
