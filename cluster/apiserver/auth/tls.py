"""The API server's TLS material (``--tls-cert-file``, ``--tls-private-key-file``, ``--client-ca-file``),
checked at start so that a wrong file is an error naming the flag and the file, not a failed handshake
later.

With a client CA the server requires and verifies client certificates. gRPC Python offers only two
modes: ``require_client_auth=True`` (request, require, verify) and ``False``, which does not even
request one (grpcio 1.85's cygrpc maps it to GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE). kube-apiserver
asks for a certificate without requiring it; here a client CA means every connection presents a
certificate from that CA, and a bearer token on such a connection still names the caller.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from cluster.apiserver.auth.flagfiles import read_flag_file


class TlsFileError(ValueError):
    """A TLS file is missing, unreadable or not what its flag needs; the message names flag and file."""


@dataclass(frozen=True, slots=True)
class ServerTls:
    certificate_chain: bytes
    private_key: bytes
    #: PEM of the CAs client certificates must chain to; None serves TLS without client certificates.
    client_ca: bytes | None = None

    def credentials(self) -> grpc.ServerCredentials:
        return grpc.ssl_server_credentials(
            [(self.private_key, self.certificate_chain)],
            root_certificates=self.client_ca,
            require_client_auth=self.client_ca is not None,
        )


def _certificates(flag: str, path: str, data: bytes) -> list[x509.Certificate]:
    try:
        certificates = x509.load_pem_x509_certificates(data)
    except ValueError as exc:
        raise TlsFileError(f"{flag} {path}: holds no PEM certificate") from exc
    return certificates


def _public_key_der(key: object) -> bytes:
    return key.public_bytes(  # type: ignore[attr-defined]
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def load_server_tls(
    cert_file: str | None, key_file: str | None, client_ca_file: str | None
) -> ServerTls | None:
    """The server's TLS material from its files, or None when no certificate is configured."""
    if (cert_file is None) != (key_file is None):
        given, missing = (
            ("--tls-cert-file", "--tls-private-key-file") if key_file is None
            else ("--tls-private-key-file", "--tls-cert-file")
        )
        raise TlsFileError(f"{given} needs {missing}: the certificate and its private key go together")
    if cert_file is None or key_file is None:
        if client_ca_file is not None:
            raise TlsFileError(
                f"--client-ca-file {client_ca_file} needs --tls-cert-file and --tls-private-key-file: "
                "client certificates are only exchanged over TLS"
            )
        return None
    chain = read_flag_file("--tls-cert-file", cert_file, TlsFileError)
    leaf = _certificates("--tls-cert-file", cert_file, chain)[0]
    key_pem = read_flag_file("--tls-private-key-file", key_file, TlsFileError)
    try:
        key = serialization.load_pem_private_key(key_pem, password=None)
    except (ValueError, TypeError) as exc:  # TypeError: the key is encrypted
        raise TlsFileError(
            f"--tls-private-key-file {key_file}: holds no unencrypted PEM private key"
        ) from exc
    if _public_key_der(key.public_key()) != _public_key_der(leaf.public_key()):
        raise TlsFileError(
            f"--tls-private-key-file {key_file} is not the key of the certificate in "
            f"--tls-cert-file {cert_file}"
        )
    client_ca = None
    if client_ca_file is not None:
        client_ca = read_flag_file("--client-ca-file", client_ca_file, TlsFileError)
        _certificates("--client-ca-file", client_ca_file, client_ca)
    return ServerTls(chain, key_pem, client_ca)
