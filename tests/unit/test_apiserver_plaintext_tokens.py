"""Which listen addresses a token-authenticating server without TLS refuses (tokens would cross a network
in clear text), and what lets it serve them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import trustme

from cluster.apiserver.server import ApiServerOptions


@pytest.fixture
def tokens(tmp_path: Path) -> str:
    path = tmp_path / "tokens.csv"
    path.write_text('secret,ada,1,"system:masters"\n')
    return str(path)


@pytest.mark.parametrize("listen", ["0.0.0.0:7443", "[::]:7443", "10.0.0.5:7443", "apiserver.example:7443"])
def test_a_non_loopback_address_is_refused_naming_the_flag_that_accepts_it(tokens: str, listen: str) -> None:
    refused = rf"in clear text on {re.escape(listen)}, .* with --insecure-allow-plaintext-tokens$"
    with pytest.raises(ValueError, match=refused):
        ApiServerOptions(listen=listen, token_auth_file=tokens)


@pytest.mark.parametrize("listen", ["127.0.0.1:7443", "[::1]:7443", "localhost:7443"])
def test_loopback_is_served(tokens: str, listen: str) -> None:
    assert not ApiServerOptions(listen=listen, token_auth_file=tokens).plaintext_tokens_off_loopback


def test_the_accept_flag_serves_any_address(tokens: str) -> None:
    options = ApiServerOptions(listen="0.0.0.0:7443", token_auth_file=tokens, allow_plaintext_tokens=True)
    assert options.plaintext_tokens_off_loopback  # served, and warned about at start


def test_tls_carries_tokens_on_any_address(tokens: str, tmp_path: Path) -> None:
    ca = trustme.CA()
    served = ca.issue_cert("localhost")
    served.cert_chain_pems[0].write_to_path(str(tmp_path / "server.crt"))
    served.private_key_pem.write_to_path(str(tmp_path / "server.key"))
    options = ApiServerOptions(
        listen="0.0.0.0:7443", token_auth_file=tokens,
        tls_cert_file=str(tmp_path / "server.crt"), tls_private_key_file=str(tmp_path / "server.key"),
    )
    assert not options.plaintext_tokens_off_loopback


def test_without_tokens_nothing_is_refused() -> None:
    # The server moves itself to loopback instead (nobody is authenticated, so everyone is an admin).
    assert not ApiServerOptions(listen="0.0.0.0:7443").plaintext_tokens_off_loopback


def test_the_http_api_off_loopback_is_refused_like_grpc(tokens: str) -> None:
    refused = r"in clear text on 0\.0\.0\.0:6443, .* with --insecure-allow-plaintext-tokens$"
    with pytest.raises(ValueError, match=refused):
        ApiServerOptions(listen="127.0.0.1:7443", http_listen="0.0.0.0:6443", token_auth_file=tokens)
    assert not ApiServerOptions(listen="127.0.0.1:7443", http_listen="127.0.0.1:6443",
                                token_auth_file=tokens).plaintext_tokens_off_loopback
