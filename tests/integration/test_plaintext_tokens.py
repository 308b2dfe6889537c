"""A token-authenticating `podsched apiserver` without TLS takes tokens in clear text, so it serves a
non-loopback address only when --insecure-allow-plaintext-tokens accepts that, and says so."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cluster.launcher.process import ApiServerProcess, die_with_parent_prefix
from tests.integration.helpers import REPO, run_cli

TOKEN = "admin-token"


def token_file(tmp_path: Path) -> str:
    path = tmp_path / "tokens.csv"
    path.write_text(f'{TOKEN},ada,1,"system:masters"\n')
    return str(path)


def test_a_token_server_without_tls_refuses_a_non_loopback_address_naming_the_flag(tmp_path: Path) -> None:
    done = subprocess.run(
        [*die_with_parent_prefix(), sys.executable, "-m", "cluster.cli", "apiserver", "--listen", "0.0.0.0:0",
         "--data-dir", str(tmp_path / "data"), "--token-auth-file", token_file(tmp_path)],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=REPO, timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert (
        "podsched apiserver: --token-auth-file without TLS would take bearer tokens in clear text on "
        "0.0.0.0:0, where anyone on the network path can read and reuse them: serve TLS (--tls-cert-file "
        "and --tls-private-key-file), listen on loopback (--listen 127.0.0.1:PORT), or accept the risk with "
        "--insecure-allow-plaintext-tokens"
    ) in done.stderr
    assert "serving on" not in done.stderr
    # Refused before the store was opened: nothing was created.
    assert not (tmp_path / "data").exists()


def test_a_token_server_without_tls_serves_loopback_without_a_word(tmp_path: Path) -> None:
    server = ApiServerProcess(["--data-dir", str(tmp_path / "data")],
                              extra_args=["--token-auth-file", token_file(tmp_path), "--controllers", "none"])
    server.start()
    try:
        listed = run_cli(server.address, "get", "pods", env={"PODSCHED_TOKEN": TOKEN})
        assert listed.code == 0, listed.stderr
    finally:
        server.stop()
    assert "clear text" not in server.log()


def test_the_accept_flag_serves_any_address_with_a_warning(tmp_path: Path) -> None:
    server = ApiServerProcess(
        ["--data-dir", str(tmp_path / "data")], host="0.0.0.0",
        extra_args=["--token-auth-file", token_file(tmp_path), "--insecure-allow-plaintext-tokens",
                    "--controllers", "none"],
    )
    server.start()
    try:
        port = server.address.rpartition(":")[2]
        listed = run_cli(f"127.0.0.1:{port}", "get", "pods", env={"PODSCHED_TOKEN": TOKEN})
        assert listed.code == 0, listed.stderr
    finally:
        server.stop()
    assert (
        f"WARNING cluster.apiserver.server: bearer tokens are taken in clear text on 0.0.0.0:{port} "
        "(--insecure-allow-plaintext-tokens): anyone who can see the traffic can read and reuse them; serve "
        "TLS with --tls-cert-file and --tls-private-key-file"
    ) in server.log()
