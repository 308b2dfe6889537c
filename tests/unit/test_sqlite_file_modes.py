"""The embedded store's data directory is 0700 and its files 0600, whatever the umask, as etcd's are."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from store.base import StoreUnavailable
from store.sqlite import SqliteStore
from store.sqlite.filemodes import private_dir

STORE_FILES = ("podsched.db", "podsched.db-shm", "podsched.db-wal", "podsched.lock")


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """The common umask 022, under which files would be 0644 and directories 0755 by default."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def file_modes(data: Path) -> dict[str, int]:
    return {path.name: mode(path) for path in data.iterdir()}


async def write_and_close(data: Path) -> None:
    store = await SqliteStore.open(data)
    try:
        await store.create("/registry/pods/default/web", b"secret")
        # While the store is open the WAL and the shared-memory file exist; check them then.
        assert file_modes(data) == {name: 0o600 for name in STORE_FILES}
    finally:
        await store.close()


async def test_a_new_data_directory_is_0700_and_its_files_0600(tmp_path: Path) -> None:
    data = tmp_path / "nested" / "data"
    await write_and_close(data)
    assert mode(data) == 0o700


async def test_an_existing_open_directory_and_files_are_tightened_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    await write_and_close(data)
    data.chmod(0o755)
    for name in ("podsched.db", "podsched.lock"):
        (data / name).chmod(0o644)
    (data / "podsched.db-wal").write_bytes(b"")  # an earlier run's side file
    (data / "podsched.db-wal").chmod(0o666)

    with caplog.at_level(logging.WARNING, logger="store.sqlite.filemodes"):
        await write_and_close(data)

    assert mode(data) == 0o700
    warnings = [record.getMessage() for record in caplog.records]
    assert f"data directory {data} had mode 0755, open to other users; changed it to 0700" in warnings
    for name, before in (("podsched.db", "0644"), ("podsched.lock", "0644"), ("podsched.db-wal", "0666")):
        assert f"file {data / name} had mode {before}, open to other users; changed it to 0600" in warnings


async def test_a_private_directory_is_left_alone_without_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    await write_and_close(data)
    with caplog.at_level(logging.WARNING, logger="store.sqlite.filemodes"):
        await write_and_close(data)
    assert caplog.records == []


def test_a_directory_that_cannot_be_tightened_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)

    def not_the_owner(path: str, mode: int) -> None:
        raise PermissionError(1, "Operation not permitted", path)

    # Someone else's directory: only its owner (or root) may change its mode.
    monkeypatch.setattr(os, "chmod", not_the_owner)
    refused = rf"data directory {data} has mode 0755, open to other users, and cannot be changed to 0700"
    with pytest.raises(StoreUnavailable, match=refused + ": Operation not permitted"):
        private_dir(str(data))


def test_a_setgid_bit_alone_is_no_opening(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o2700)  # what a directory inherits under a setgid parent
    with caplog.at_level(logging.WARNING, logger="store.sqlite.filemodes"):
        private_dir(str(data))
    assert mode(data) == 0o2700
    assert caplog.records == []
