"""The server's TLS files, checked at start: a clear error naming the flag and file for each kind of
mistake, and the identity a client certificate names (CN = user, O = groups)."""

from __future__ import annotations

import datetime

import pytest
import trustme
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from cluster.apiserver.auth.certificates import user_of_certificate
from cluster.apiserver.auth.identity import UserInfo
from cluster.apiserver.auth.tls import TlsFileError, load_server_tls


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    directory = tmp_path_factory.mktemp("tls")
    ca, other = trustme.CA(), trustme.CA()
    server = ca.issue_cert("localhost")
    stranger = other.issue_cert("localhost")
    paths = {
        "cert": directory / "server.crt", "key": directory / "server.key", "ca": directory / "ca.crt",
        "other-key": directory / "other.key", "garbage": directory / "garbage.pem",
        "encrypted-key": directory / "encrypted.key",
    }
    server.cert_chain_pems[0].write_to_path(str(paths["cert"]))
    server.private_key_pem.write_to_path(str(paths["key"]))
    ca.cert_pem.write_to_path(str(paths["ca"]))
    stranger.private_key_pem.write_to_path(str(paths["other-key"]))
    paths["garbage"].write_text("not a certificate\n")
    key = serialization.load_pem_private_key(server.private_key_pem.bytes(), password=None)
    paths["encrypted-key"].write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"passphrase"),
    ))
    return {name: str(path) for name, path in paths.items()}


def test_a_certificate_its_key_and_a_client_ca_load(files: dict[str, str]) -> None:
    tls = load_server_tls(files["cert"], files["key"], files["ca"])
    assert tls is not None and tls.client_ca is not None
    assert tls.certificate_chain.startswith(b"-----BEGIN CERTIFICATE-----")
    assert load_server_tls(None, None, None) is None


@pytest.mark.parametrize(
    ("cert", "key", "ca", "message"),
    [
        ("cert", None, None, "--tls-cert-file needs --tls-private-key-file"),
        (None, "key", None, "--tls-private-key-file needs --tls-cert-file"),
        (None, None, "ca", "--client-ca-file {ca} needs --tls-cert-file and --tls-private-key-file"),
        ("missing", "key", None, "--tls-cert-file {missing}: cannot read it: No such file or directory"),
        ("garbage", "key", None, "--tls-cert-file {garbage}: holds no PEM certificate"),
        ("cert", "garbage", None, "--tls-private-key-file {garbage}: holds no unencrypted PEM private key"),
        ("cert", "encrypted-key", None, "--tls-private-key-file {encrypted-key}: holds no unencrypted PEM"),
        (
            "cert", "other-key", None,
            "--tls-private-key-file {other-key} is not the key of the certificate in --tls-cert-file {cert}",
        ),
        ("cert", "key", "garbage", "--client-ca-file {garbage}: holds no PEM certificate"),
        ("cert", "key", "missing", "--client-ca-file {missing}: cannot read it"),
    ],
    ids=[
        "cert-without-key", "key-without-cert", "ca-without-tls", "unreadable-cert", "not-a-cert",
        "not-a-key",
        "encrypted-key", "key-of-another-cert", "ca-not-a-cert", "unreadable-ca",
    ],
)
def test_each_bad_tls_file_is_an_error_naming_flag_and_file(
    files: dict[str, str], cert: str | None, key: str | None, ca: str | None, message: str
) -> None:
    paths = {**files, "missing": "/nonexistent/tls.pem"}
    with pytest.raises(TlsFileError) as raised:
        load_server_tls(paths.get(cert or ""), paths.get(key or ""), paths.get(ca or ""))
    assert str(raised.value).startswith(message.format(**paths))


def _certificate_pem(subject: x509.Name) -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM)


def test_a_certificate_names_its_cn_as_user_and_its_organizations_as_groups() -> None:
    subject = x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:masters"),
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "ops"),
        x509.NameAttribute(NameOID.COMMON_NAME, "alice"),
    ])
    expected = UserInfo("alice", groups=("system:masters", "ops"))
    assert user_of_certificate(_certificate_pem(subject)) == expected


def test_a_certificate_without_a_common_name_names_nobody() -> None:
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:masters")])
    assert user_of_certificate(_certificate_pem(subject)) is None
