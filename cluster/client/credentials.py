"""What a client presents to the API server and whom it trusts: a bearer token, the certificate authority
that signed the server's certificate, and a client certificate (mutual TLS), as kubectl's flags name them.

The token travels as gRPC metadata ``authorization: Bearer <token>`` on every call, TLS or not: gRPC refuses
call credentials on a plaintext channel, and a token over plaintext loopback is how development servers
and tests run (a warning is logged when it would cross a network in the clear). A CA or a client
certificate turns the channel into TLS.

Every file is read and checked when the credentials are made, so that a wrong path or a key that does not
belong to its certificate is an error naming the flag and the file before any connection is tried.
cryptography, which checks them, is imported only then: a command without TLS files does not pay for it.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import grpc

from cluster.api import errors

if TYPE_CHECKING:
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric.types import (
        CertificatePublicKeyTypes,
        PrivateKeyTypes,
        PublicKeyTypes,
    )

TOKEN_ENV = "PODSCHED_TOKEN"
CA_FILE_ENV = "PODSCHED_CA_FILE"
CLIENT_CERT_ENV = "PODSCHED_CLIENT_CERT"
CLIENT_KEY_ENV = "PODSCHED_CLIENT_KEY"

#: The metadata key of the bearer token: HTTP's Authorization header, lower case as gRPC requires.
AUTHORIZATION_KEY = "authorization"

#: Each setting's command-line flag (kubectl's names) and environment variable, for error messages.
FLAGS: Mapping[str, tuple[str, str]] = {
    "token": ("--token", TOKEN_ENV),
    "ca_file": ("--certificate-authority", CA_FILE_ENV),
    "client_cert_file": ("--client-certificate", CLIENT_CERT_ENV),
    "client_key_file": ("--client-key", CLIENT_KEY_ENV),
}


class CredentialsError(ValueError):
    """A credential setting that cannot be used; the message names where it came from (a flag or an
    environment variable) and the file."""


class TlsError(errors.Unavailable):
    """The TLS handshake with a server failed: a setting to fix, never worth a retry."""


@dataclass(frozen=True, slots=True)
class ClientCredentials:
    """A token and/or TLS settings (file paths). Construction reads and checks every file given."""

    #: Sent as ``authorization: Bearer <token>`` on every call ("" sends none).
    token: str = ""
    #: PEM file of the CA(s) that sign the server's certificate; given, the channel is TLS.
    ca_file: str = ""
    #: PEM files of the client's certificate and its private key (both or neither): mutual TLS.
    client_cert_file: str = ""
    client_key_file: str = ""
    #: Check the server's certificate for this name instead of the host of the address dialled
    #: (kubectl's --tls-server-name): for certificates that do not name the address a client uses.
    tls_server_name: str = ""
    #: Where each setting came from ("--token", "$PODSCHED_CA_FILE"), to name it in errors.
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    ca_pem: bytes = field(init=False, default=b"", repr=False)
    client_cert_pem: bytes = field(init=False, default=b"", repr=False)
    client_key_pem: bytes = field(init=False, default=b"", repr=False)

    def __post_init__(self) -> None:
        if self.token and not _header_safe(self.token):
            raise CredentialsError(
                f"{self._source('token')}: the token must be printable ASCII without spaces or line breaks"
            )
        if bool(self.client_cert_file) != bool(self.client_key_file):
            given, missing = (
                ("client_cert_file", "client_key_file") if self.client_cert_file
                else ("client_key_file", "client_cert_file")
            )
            flag, variable = FLAGS[missing]
            raise CredentialsError(f"{self._source(given)} needs {flag} (or ${variable}) too")
        if self.ca_file:
            pem = self._read("ca_file")
            self._certificates("ca_file", pem)
            object.__setattr__(self, "ca_pem", pem)
        if self.client_cert_file:
            cert_pem, key_pem = self._read("client_cert_file"), self._read("client_key_file")
            certificate = self._certificates("client_cert_file", cert_pem)[0]
            key = self._private_key(key_pem)
            if _public_bytes(key.public_key()) != _public_bytes(certificate.public_key()):
                raise CredentialsError(
                    f"{self._source('client_key_file')} {self.client_key_file} is not the key of "
                    f"{self._source('client_cert_file')} {self.client_cert_file}"
                )
            object.__setattr__(self, "client_cert_pem", cert_pem)
            object.__setattr__(self, "client_key_pem", key_pem)

    @classmethod
    def from_env_and_flags(
        cls,
        *,
        token: str | None = None,
        ca_file: str | None = None,
        client_cert_file: str | None = None,
        client_key_file: str | None = None,
        tls_server_name: str = "",
        token_source: str = "",
        environ: Mapping[str, str] | None = None,
    ) -> ClientCredentials:
        """Each setting from its flag (not None), else from its environment variable; CredentialsError
        naming the flag or variable and the file when one cannot be used. ``token_source`` names where a
        ``token`` came from when not from --token (``--token-file FILE``)."""
        env = os.environ if environ is None else environ
        given = {"token": token, "ca_file": ca_file, "client_cert_file": client_cert_file,
                 "client_key_file": client_key_file}
        values: dict[str, str] = {}
        sources: dict[str, str] = {}
        for setting, flag_value in given.items():
            flag, variable = FLAGS[setting]
            if flag_value is not None:
                values[setting], sources[setting] = flag_value, flag
                if setting == "token" and token_source:
                    sources[setting] = token_source
            elif env.get(variable):
                values[setting], sources[setting] = env[variable], f"${variable}"
        return cls(**values, tls_server_name=tls_server_name, sources=sources)

    @classmethod
    def trusting_certificate(
        cls, cert_file: str, *, token: str = "", client_pem: tuple[bytes, bytes] | None = None
    ) -> ClientCredentials:
        """Credentials that trust exactly the serving certificate in ``cert_file`` and check it under a
        name it carries: how a server's own controllers reach it over TLS, whoever signed the certificate
        (a leaf certificate is accepted as its own trust anchor) and whatever address it names.
        ``client_pem`` is a client certificate and key (PEM) held in memory, never in a file."""
        from cryptography import x509

        credentials = cls(token=token, ca_file=cert_file, sources={"ca_file": "the serving certificate"})
        certificate = x509.load_pem_x509_certificates(credentials.ca_pem)[0]
        object.__setattr__(credentials, "tls_server_name", _a_name_of(certificate))
        if client_pem is not None:
            object.__setattr__(credentials, "client_cert_pem", client_pem[0])
            object.__setattr__(credentials, "client_key_pem", client_pem[1])
        return credentials

    @property
    def tls(self) -> bool:
        return bool(self.ca_file or self.client_cert_file)

    def channel_credentials(self) -> grpc.ChannelCredentials:
        """gRPC's TLS credentials for these settings (system roots when no CA file is given)."""
        return grpc.ssl_channel_credentials(
            root_certificates=self.ca_pem or None,
            private_key=self.client_key_pem or None,
            certificate_chain=self.client_cert_pem or None,
        )

    def channel_options(self) -> tuple[tuple[str, str], ...]:
        return (("grpc.ssl_target_name_override", self.tls_server_name),) if self.tls_server_name else ()

    def channel(self, target: str, options: Sequence[tuple[str, Any]] = ()) -> grpc.aio.Channel:
        """A channel to ``target`` with these settings: TLS when they ask for it, else plaintext."""
        if self.tls:
            return grpc.aio.secure_channel(
                target, self.channel_credentials(), options=(*options, *self.channel_options())
            )
        return grpc.aio.insecure_channel(target, options=options)

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The metadata every call carries: the bearer token, if any."""
        return ((AUTHORIZATION_KEY, f"Bearer {self.token}"),) if self.token else ()

    # ------------------------------------------------------------------------------------------ reading

    def _source(self, setting: str) -> str:
        return self.sources.get(setting) or FLAGS[setting][0]

    def _read(self, setting: str) -> bytes:
        path: str = getattr(self, setting)
        try:
            with open(path, "rb") as file:
                return file.read()
        except OSError as exc:
            raise CredentialsError(f"unable to read {self._source(setting)} {path}: {exc.strerror}") from None

    def _certificates(self, setting: str, pem: bytes) -> list[x509.Certificate]:
        from cryptography import x509

        try:
            return x509.load_pem_x509_certificates(pem)
        except ValueError:
            raise CredentialsError(
                f"{self._source(setting)} {getattr(self, setting)}: no PEM certificate in the file"
            ) from None

    def _private_key(self, pem: bytes) -> PrivateKeyTypes:
        from cryptography.exceptions import UnsupportedAlgorithm
        from cryptography.hazmat.primitives import serialization

        where = f"{self._source('client_key_file')} {self.client_key_file}"
        try:
            return serialization.load_pem_private_key(pem, password=None)
        except TypeError:
            raise CredentialsError(f"{where}: the key is encrypted; give an unencrypted key") from None
        except (ValueError, UnsupportedAlgorithm):
            raise CredentialsError(f"{where}: no PEM private key in the file") from None


def _header_safe(token: str) -> bool:
    return all(0x21 <= ord(char) <= 0x7E for char in token)


def _public_bytes(key: PublicKeyTypes | CertificatePublicKeyTypes) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def _a_name_of(certificate: x509.Certificate) -> str:
    """A DNS name or IP address the certificate is valid for: its first SAN, else its common name."""
    from cryptography import x509

    try:
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        names = None
    if names is not None:
        dns = names.get_values_for_type(x509.DNSName)
        if dns:
            return dns[0]
        addresses = [address for address in names.get_values_for_type(x509.IPAddress)
                     if isinstance(address, ipaddress.IPv4Address | ipaddress.IPv6Address)]
        if addresses:
            return str(addresses[0])
    common = certificate.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
    return str(common[0].value) if common else ""
