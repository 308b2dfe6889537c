"""`podsched apiserver --data-dir` keeps the cluster's data to its own user: the directory 0700, its files
0600, and an existing directory left open to others is tightened with a warning."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.launcher.process import ApiServerProcess
from tests.integration.helpers import pod_manifest, run_cli, write_yaml

STORE_FILES = ("podsched.db", "podsched.db-shm", "podsched.db-wal", "podsched.lock")


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """The server inherits the common umask 022, under which new files would be 0644 by default."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def serve_and_write(data: Path, tmp_path: Path) -> str:
    """Start a server on ``data``, create a pod, check the modes while it runs; its log."""
    server = ApiServerProcess(["--data-dir", str(data)])
    server.start()
    try:
        manifest = write_yaml(tmp_path / "pod.yaml", pod_manifest("web", "default"))
        applied = run_cli(server.address, "apply", "-f", manifest)
        assert applied.code == 0, applied.stderr
        assert mode(data) == 0o700
        assert {name: mode(data / name) for name in STORE_FILES} == {name: 0o600 for name in STORE_FILES}
    finally:
        assert server.stop() == 0
    return server.log()


def test_a_new_data_directory_is_private_to_the_server_user(tmp_path: Path) -> None:
    log = serve_and_write(tmp_path / "new" / "data", tmp_path)
    assert "open to other users" not in log


def test_an_open_data_directory_is_tightened_with_a_warning(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o755)
    (data / "podsched.db").write_bytes(b"")  # an empty file is a new SQLite database
    (data / "podsched.db").chmod(0o644)

    log = serve_and_write(data, tmp_path)

    assert f"WARNING store.sqlite.filemodes: data directory {data} had mode 0755, open to other users; " \
           "changed it to 0700" in log
    assert f"WARNING store.sqlite.filemodes: file {data / 'podsched.db'} had mode 0644, open to other " \
           "users; changed it to 0600" in log
