"""`podsched certs`: every file it writes, checked with cryptography (who signed it, for which names and
usages, whose subject), the key and token files' permissions, the token file's format, and its refusals."""

from __future__ import annotations

import csv
import ipaddress
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from cluster.cli.main import main
from cluster.client import ClientCredentials
from cluster.launcher.certs import ROLE_GROUPS, Bundle, new_token


def load(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def subject(cert: x509.Certificate, oid: x509.ObjectIdentifier) -> list[str]:
    return [str(attribute.value) for attribute in cert.subject.get_attributes_for_oid(oid)]


def sans(cert: x509.Certificate) -> set[str]:
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return {*names.get_values_for_type(x509.DNSName), *map(str, names.get_values_for_type(x509.IPAddress))}


def usages(cert: x509.Certificate) -> set[x509.ObjectIdentifier]:
    return set(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value)


def matches_key(cert: x509.Certificate, key_path: Path) -> bool:
    key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    der = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    return key.public_key().public_bytes(*der) == cert.public_key().public_bytes(*der)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One real `podsched certs` run, as a user types it."""
    directory = tmp_path_factory.mktemp("certs") / "pki"
    result = subprocess.run(
        [sys.executable, "-m", "cluster.cli", "certs", "--dir", str(directory),
         "--hosts", "apiserver-1,etcd-1,10.1.2.3", "--days", "30", "--users", "admin,scheduler,alice=client"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return directory, result


def test_the_cluster_ca_signs_the_api_server_and_the_users(pki: tuple[Path, object]) -> None:
    directory, _ = pki
    ca = load(directory / "ca.crt")
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert matches_key(ca, directory / "ca.key")
    for name in ("apiserver", "users/admin", "users/scheduler", "users/alice"):
        cert = load(directory / f"{name}.crt")
        cert.verify_directly_issued_by(ca)
        assert matches_key(cert, directory / f"{name}.key"), name
        assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca


def test_the_api_server_certificate_names_loopback_and_the_hosts(pki: tuple[Path, object]) -> None:
    cert = load(pki[0] / "apiserver.crt")
    assert sans(cert) == {"localhost", "127.0.0.1", "::1", "apiserver-1", "etcd-1", "10.1.2.3"}
    assert usages(cert) == {ExtendedKeyUsageOID.SERVER_AUTH}
    ips = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert ipaddress.ip_address("10.1.2.3") in ips.get_values_for_type(x509.IPAddress)


@pytest.mark.parametrize(
    ("user", "group"),
    [("admin", "system:masters"), ("scheduler", "podsched:schedulers"), ("alice", "podsched:clients")],
)
def test_a_user_certificate_carries_the_user_and_the_role_group(
    pki: tuple[Path, object], user: str, group: str
) -> None:
    cert = load(pki[0] / "users" / f"{user}.crt")
    assert subject(cert, NameOID.COMMON_NAME) == [user]
    assert subject(cert, NameOID.ORGANIZATION_NAME) == [group]
    assert usages(cert) == {ExtendedKeyUsageOID.CLIENT_AUTH}


def test_etcd_has_a_ca_of_its_own_that_signs_its_members_and_the_api_server_client(
    pki: tuple[Path, object],
) -> None:
    directory, _ = pki
    etcd_ca, cluster_ca = load(directory / "etcd" / "ca.crt"), load(directory / "ca.crt")
    assert etcd_ca.subject != cluster_ca.subject
    for name in ("etcd/server", "etcd/peer", "apiserver-etcd-client"):
        cert = load(directory / f"{name}.crt")
        cert.verify_directly_issued_by(etcd_ca)
        assert matches_key(cert, directory / f"{name}.key")
    both = {ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH}
    assert usages(load(directory / "etcd" / "server.crt")) == both
    assert usages(load(directory / "etcd" / "peer.crt")) == both
    assert "etcd-1" in sans(load(directory / "etcd" / "server.crt"))
    # A user's certificate is not etcd's: the cluster CA never signs what etcd trusts.
    with pytest.raises((ValueError, TypeError)):
        load(directory / "users" / "admin.crt").verify_directly_issued_by(etcd_ca)


def test_certificates_last_the_days_asked_and_the_cas_ten_years(pki: tuple[Path, object]) -> None:
    directory, _ = pki
    leaf, ca = load(directory / "apiserver.crt"), load(directory / "ca.crt")
    leaf_days = (leaf.not_valid_after_utc - leaf.not_valid_before_utc).days
    assert 30 <= leaf_days <= 31
    assert (ca.not_valid_after_utc - ca.not_valid_before_utc).days >= 3650


def test_keys_and_tokens_are_private_and_certificates_readable(pki: tuple[Path, object]) -> None:
    directory, _ = pki
    keys = list(directory.rglob("*.key"))
    assert len(keys) == 9
    for path in [*keys, directory / "tokens.csv"]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    for path in directory.rglob("*.crt"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path


def test_the_token_file_is_kubernetes_static_token_format(pki: tuple[Path, object]) -> None:
    with (pki[0] / "tokens.csv").open(newline="") as file:
        rows = list(csv.reader(file))
    assert [(row[1], row[3]) for row in rows] == [
        ("admin", "system:masters"), ("scheduler", "podsched:schedulers"), ("alice", "podsched:clients")
    ]
    tokens = [row[0] for row in rows]
    assert len(set(tokens)) == 3 and all(len(token) >= 32 for token in tokens)
    assert all(len(row) == 4 and row[2] for row in rows)


def test_a_token_can_follow_the_token_flag_as_its_own_argument() -> None:
    """A token starting with '-' made ``podsched get pods --token <token>`` fail with 'expected one argument'
    (one token in 64 with URL-safe base64)."""
    tokens = {new_token() for _ in range(2000)}
    assert len(tokens) == 2000
    assert all(len(token) == 64 and token.isalnum() for token in tokens)


def test_it_prints_every_file_and_how_to_use_them(pki: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    directory, result = pki
    for name in ("ca.crt", "apiserver.key", "etcd/peer.crt", "users/alice.crt", "tokens.csv"):
        assert name in result.stdout
    assert f"export PODSCHED_CA_FILE={directory.resolve()}/ca.crt" in result.stdout
    assert "--tls-cert-file" in result.stdout


def test_an_existing_ca_is_kept_unless_forced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certs", "--dir", str(tmp_path), "--users", "admin"]) == 0
    first = (tmp_path / "ca.crt").read_bytes()
    assert main(["certs", "--dir", str(tmp_path), "--users", "admin"]) == 1
    assert f"{tmp_path}/ca.crt already exists: pass --force" in capsys.readouterr().err
    assert (tmp_path / "ca.crt").read_bytes() == first
    assert main(["certs", "--dir", str(tmp_path), "--users", "admin", "--force"]) == 0
    assert (tmp_path / "ca.crt").read_bytes() != first


def test_the_default_users_are_one_per_role(tmp_path: Path) -> None:
    assert main(["certs", "--dir", str(tmp_path)]) == 0
    for role, group in ROLE_GROUPS.items():
        assert subject(load(tmp_path / "users" / f"{role}.crt"), NameOID.ORGANIZATION_NAME) == [group]


@pytest.mark.parametrize(
    ("flags", "complaint"),
    [
        (["--users", "admin,root"], "unknown role 'root'"),
        (["--users", "bob=wizard"], "unknown role 'wizard'"),
        (["--users", "admin,admin"], "user 'admin' is listed twice"),
        (["--users", "../x=admin"], "a user name must be"),
        (["--users", ","], "at least one user is needed"),
        (["--hosts", "http://x"], "'http://x' is neither a host name nor an IP address"),
        (["--days", "0"], "--days must be at least 1"),
        (["--days", "ten"], "invalid int value"),
    ],
)
def test_bad_flags_exit_2_naming_the_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], complaint: str
) -> None:
    assert main(["certs", "--dir", str(tmp_path / "pki"), *flags]) == 2
    assert complaint in capsys.readouterr().err
    assert not (tmp_path / "pki").exists()


def test_an_unwritable_directory_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert main(["certs", "--dir", str(blocker / "pki")]) == 1
    assert f"cannot write into {blocker}/pki" in capsys.readouterr().err


def test_if_absent_keeps_an_existing_ca_and_succeeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["certs", "--dir", str(tmp_path), "--users", "admin", "--if-absent"]) == 0
    first = (tmp_path / "ca.crt").read_bytes()
    assert main(["certs", "--dir", str(tmp_path), "--users", "admin", "--if-absent"]) == 0
    assert f"{tmp_path} already holds a CA; left as it is" in capsys.readouterr().out
    assert (tmp_path / "ca.crt").read_bytes() == first
    assert main(["certs", "--dir", str(tmp_path), "--force", "--if-absent"]) == 2


def test_a_users_flags_variables_and_credentials_name_its_files(pki: tuple[Path, object]) -> None:
    """The three ways a client acts as a user of the bundle agree: what kubectl's flags and the
    PODSCHED_* variables give a client is what user_credentials gives a program."""
    directory, _ = pki
    bundle = Bundle(directory)
    ca, cert, key = (str(directory / name) for name in ("ca.crt", "users/alice.crt", "users/alice.key"))
    assert bundle.user_flags("alice") == [
        "--certificate-authority", ca, "--client-certificate", cert, "--client-key", key,
    ]  # fmt: skip
    assert bundle.user_env("alice") == {
        "PODSCHED_CA_FILE": ca, "PODSCHED_CLIENT_CERT": cert, "PODSCHED_CLIENT_KEY": key,
    }  # fmt: skip
    credentials = bundle.user_credentials("alice")
    assert credentials == ClientCredentials.from_env_and_flags(environ=bundle.user_env("alice"))
    assert (credentials.ca_file, credentials.client_cert_file, credentials.client_key_file) == (ca, cert, key)
    assert credentials.client_cert_pem == (directory / "users/alice.crt").read_bytes()
