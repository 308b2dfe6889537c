"""The etcd launcher's checks that need no etcd process: finding the binary, sizes, saved layouts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cluster.launcher.etcd import LAYOUT_FILE, EtcdCluster, EtcdNotFound, EtcdStartError, find_etcd_binary


def test_etcd_bin_wins_over_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = tmp_path / "my-etcd"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.setenv("ETCD_BIN", str(binary))

    assert find_etcd_binary() == str(binary)


@pytest.mark.parametrize("kind", ["missing", "not-executable"])
def test_a_bad_etcd_bin_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    binary = tmp_path / "etcd"
    if kind == "not-executable":
        binary.write_text("")
    monkeypatch.setenv("ETCD_BIN", str(binary))

    with pytest.raises(EtcdNotFound, match=f"ETCD_BIN={binary} is not an executable file"):
        find_etcd_binary()


def test_no_etcd_on_path_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ETCD_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))

    with pytest.raises(EtcdNotFound, match=r"apt-get install etcd-server.*ETCD_BIN"):
        find_etcd_binary()


@pytest.mark.parametrize("size", [0, -1])
def test_a_cluster_needs_a_member(size: int) -> None:
    with pytest.raises(ValueError, match=f"at least one member, got size={size}"):
        EtcdCluster(size)


async def test_a_saved_layout_of_another_size_is_refused(tmp_path: Path) -> None:
    layout = {
        "token": "t",
        "members": [{"name": f"etcd{i}", "client_port": 1000 + i, "peer_port": 2000 + i} for i in range(3)],
    }
    (tmp_path / LAYOUT_FILE).write_text(json.dumps(layout))

    with pytest.raises(EtcdStartError, match="describes a 3-member cluster, not 1 members"):
        await EtcdCluster(1, tmp_path, binary=os.devnull).start()


def test_endpoints_are_empty_before_start() -> None:
    assert EtcdCluster(3).endpoints == []
