"""`podsched apiserver` refuses to start on a bad security file: exit code 1 and one line
naming the flag or file and the line or entry that is wrong, before it serves anything."""

from __future__ import annotations

import subprocess
import sys

import pytest
import trustme

from tests.integration.helpers import REPO

START_TIMEOUT_S = 30.0


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    directory = tmp_path_factory.mktemp("auth-files")
    ca = trustme.CA()
    serving, other = ca.issue_cert("localhost"), ca.issue_cert("localhost")
    contents = {
        "tokens.csv": "t1,alice,1,system:masters\n",
        "blank-token.csv": "t1,alice,1\n,bob,2\n",
        "duplicate-token.csv": "t1,alice,1\nt1,bob,2\n",
        "policy.yaml": "bindings:\n  - {role: admin, users: [alice]}\n",
        "unknown-role.yaml": "bindings:\n  - {role: root, users: [alice]}\n",
        "unknown-verb.yaml": "roles:\n  - {name: r, rules: [{verbs: [destroy], resources: [pods]}]}\n",
        "bad-namespace.yaml": "bindings:\n  - {role: client, users: [bob], namespaces: [Team_A]}\n",
        "garbage.pem": "not PEM\n",
    }
    for name, text in contents.items():
        (directory / name).write_text(text)
    serving.cert_chain_pems[0].write_to_path(str(directory / "server.crt"))
    serving.private_key_pem.write_to_path(str(directory / "server.key"))
    other.private_key_pem.write_to_path(str(directory / "other.key"))
    paths = {name: str(directory / name) for name in (*contents, "server.crt", "server.key", "other.key")}
    return {**paths, "missing": str(directory / "missing"), "data": str(directory / "data")}


CASES = {
    "blank-token": (
        ["--token-auth-file", "{blank-token.csv}"], "token file {blank-token.csv}, line 2: the token is blank"
    ),
    "duplicate-token": (
        ["--token-auth-file", "{duplicate-token.csv}"],
        "token file {duplicate-token.csv}, line 2: duplicate token (first on line 1)",
    ),
    "missing-token-file": (["--token-auth-file", "{missing}"], "--token-auth-file {missing}: cannot read it"),
    "unknown-role": (
        ["--token-auth-file", "{tokens.csv}", "--authorization-policy-file", "{unknown-role.yaml}"],
        'policy file {unknown-role.yaml}: bindings[0]: unknown role "root"',
    ),
    "unknown-verb": (
        ["--token-auth-file", "{tokens.csv}", "--authorization-policy-file", "{unknown-verb.yaml}"],
        "policy file {unknown-verb.yaml}: roles[0].rules[0].verbs[0]: unknown verb 'destroy'",
    ),
    "bad-binding-namespace": (
        ["--token-auth-file", "{tokens.csv}", "--authorization-policy-file", "{bad-namespace.yaml}"],
        "policy file {bad-namespace.yaml}: bindings[0].namespaces[0]: 'Team_A' is not a valid namespace name",
    ),
    "policy-without-authentication": (
        ["--authorization-policy-file", "{policy.yaml}"],
        "--authorization-policy-file {policy.yaml} needs an authenticator",
    ),
    "cert-without-key": (["--tls-cert-file", "{server.crt}"], "--tls-cert-file needs --tls-private-key-file"),
    "not-a-certificate": (
        ["--tls-cert-file", "{garbage.pem}", "--tls-private-key-file", "{server.key}"],
        "--tls-cert-file {garbage.pem}: holds no PEM certificate",
    ),
    "key-of-another-certificate": (
        ["--tls-cert-file", "{server.crt}", "--tls-private-key-file", "{other.key}"],
        "--tls-private-key-file {other.key} is not the key of the certificate in "
        "--tls-cert-file {server.crt}",
    ),
    "client-ca-not-a-certificate": (
        ["--tls-cert-file", "{server.crt}", "--tls-private-key-file", "{server.key}", "--client-ca-file",
         "{garbage.pem}"],
        "--client-ca-file {garbage.pem}: holds no PEM certificate",
    ),
}


def _fill(text: str, files: dict[str, str]) -> str:
    """``text`` with each "{file name}" replaced by that file's path."""
    for name, path in files.items():
        text = text.replace(f"{{{name}}}", path)
    return text


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_security_file_stops_the_start_with_a_clear_error(files: dict[str, str], case: str) -> None:
    args, message = CASES[case]
    done = subprocess.run(
        [
            sys.executable, "-m", "cluster.cli", "apiserver", "--listen", "127.0.0.1:0",
            "--data-dir", files["data"],
            "--controllers", "none", *(_fill(arg, files) for arg in args),
        ],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=REPO, timeout=START_TIMEOUT_S,
    )
    assert done.returncode == 1, done.stderr
    assert "serving on" not in done.stderr
    assert f"podsched apiserver: {_fill(message, files)}" in done.stderr, done.stderr
