"""A certificate authority and every certificate and token a secure local cluster needs, written into one
directory by `write_bundle` (`podsched certs`, and `podsched up --tls` when its directory has none).

The files follow kubeadm's layout (/etc/kubernetes/pki), so that they read familiar::

    ca.crt ca.key                         the cluster CA: signs the API server's and the users' certificates
    apiserver.crt apiserver.key           the API server's serving certificate
    apiserver-etcd-client.crt .key        the API server's client certificate for etcd
    etcd/ca.crt etcd/ca.key               etcd's own CA, as kubeadm keeps it apart: a certificate of the
                                          cluster CA (a user's) must not open etcd, which trusts only this
    etcd/server.crt .key etcd/peer.crt .key   etcd members' serving and peer certificates
    users/NAME.crt users/NAME.key         a client certificate per user: CN=NAME, O=the user's group
    tokens.csv                            kube-apiserver's static token file: token,user,uid,"groups"

Server certificates name localhost, 127.0.0.1, ::1 and every ``--hosts`` entry (both the API server's
and etcd's: one list serves a compose file's service names). A user is ``ROLE`` (admin, scheduler,
client, readonly; the user is named after the role) or ``NAME=ROLE``; a role's group is the built-in
group the API server binds to it (admin → system:masters, scheduler → podsched:schedulers, client →
podsched:clients, readonly → podsched:readonly). Keys are ECDSA P-256; key files and tokens.csv are
0600. An existing CA is never replaced unless ``force`` (that would void every certificate it signed).
"""

from __future__ import annotations

import csv
import datetime
import io
import ipaddress
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from cluster.client.credentials import FLAGS, ClientCredentials
from cluster.launcher.etcd import EtcdTls
from cluster.outputfiles import write_with_mode

#: kubeadm's validity of a leaf certificate: one year; its CA: ten years.
DEFAULT_DAYS = 365
CA_DAYS = 3650
#: The names every server certificate carries, so that a local client can always dial it.
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
#: Each role's built-in group (the group the API server's authorizer binds to the role).
ROLE_GROUPS = {
    "admin": "system:masters",
    "scheduler": "podsched:schedulers",
    "client": "podsched:clients",
    "readonly": "podsched:readonly",
}
DEFAULT_USERS = tuple(ROLE_GROUPS)
#: The file kube-apiserver's --token-auth-file reads.
TOKEN_FILE = "tokens.csv"
CA_CERT, CA_KEY = "ca.crt", "ca.key"
#: Clock skew allowance: certificates are valid from a little before they were made (kubeadm: 5 min).
BACKDATE = datetime.timedelta(minutes=5)


class CertsError(Exception):
    """The certificates cannot be written as asked; the message says why."""


@dataclass(frozen=True, slots=True)
class User:
    name: str
    role: str

    @property
    def group(self) -> str:
        return ROLE_GROUPS[self.role]


#: One user per role, named after it.
DEFAULT_BUNDLE_USERS = tuple(User(role, role) for role in DEFAULT_USERS)


@dataclass(frozen=True, slots=True)
class Bundle:
    """Where `write_bundle` put each file a cluster's processes need (absolute paths)."""

    dir: Path

    def path(self, name: str) -> Path:
        return self.dir / name

    @property
    def ca_cert(self) -> Path:
        return self.dir / CA_CERT

    @property
    def token_file(self) -> Path:
        return self.dir / TOKEN_FILE

    def user_cert(self, user: str) -> Path:
        return self.dir / "users" / f"{user}.crt"

    def user_key(self, user: str) -> Path:
        return self.dir / "users" / f"{user}.key"

    def apiserver_flags(self) -> list[str]:
        """`podsched apiserver` flags serving TLS, checking client certificates and tokens."""
        return [
            "--tls-cert-file", str(self.path("apiserver.crt")),
            "--tls-private-key-file", str(self.path("apiserver.key")),
            "--client-ca-file", str(self.ca_cert),
            "--token-auth-file", str(self.token_file),
        ]  # fmt: skip

    def etcd_client_flags(self) -> list[str]:
        """`podsched apiserver` flags that open etcd with client-certificate auth."""
        return [
            "--etcd-cafile", str(self.path("etcd/ca.crt")),
            "--etcd-certfile", str(self.path("apiserver-etcd-client.crt")),
            "--etcd-keyfile", str(self.path("apiserver-etcd-client.key")),
        ]  # fmt: skip

    def user_flags(self, user: str) -> list[str]:
        """Client flags for ``user``'s certificate (mutual TLS) against the cluster CA."""
        return [arg for setting, path in self._user_files(user).items() for arg in (FLAGS[setting][0], path)]

    def user_env(self, user: str) -> dict[str, str]:
        """The PODSCHED_* variables that make every client command act as ``user`` over TLS."""
        return {FLAGS[setting][1]: path for setting, path in self._user_files(user).items()}

    def user_credentials(self, user: str) -> ClientCredentials:
        """``user``'s client certificate (mutual TLS) against the cluster CA, as a client presents it."""
        files = self._user_files(user)
        return ClientCredentials(ca_file=files["ca_file"], client_cert_file=files["client_cert_file"],
                                 client_key_file=files["client_key_file"])

    def _user_files(self, user: str) -> dict[str, str]:
        """``user``'s TLS files by ClientCredentials setting: what its flags and variables name."""
        return {
            "ca_file": str(self.ca_cert),
            "client_cert_file": str(self.user_cert(user)),
            "client_key_file": str(self.user_key(user)),
        }

    def etcd_tls(self) -> EtcdTls:
        """The files that run etcd members with TLS and client-cert auth, probed as the API server."""
        return EtcdTls(
            ca_file=self.path("etcd/ca.crt"),
            server_cert_file=self.path("etcd/server.crt"), server_key_file=self.path("etcd/server.key"),
            peer_cert_file=self.path("etcd/peer.crt"), peer_key_file=self.path("etcd/peer.key"),
            client_cert_file=self.path("apiserver-etcd-client.crt"),
            client_key_file=self.path("apiserver-etcd-client.key"),
        )

    def tokens(self) -> dict[str, str]:
        """user name -> token, from tokens.csv."""
        with self.token_file.open(newline="") as file:
            return {row[1]: row[0] for row in csv.reader(file) if row}

    def exists(self) -> bool:
        return self.ca_cert.exists()


def parse_users(text: str) -> tuple[User, ...]:
    """``admin,alice=client`` -> users; ValueError naming the entry that is wrong."""
    users: list[User] = []
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        name, sep, role = entry.partition("=")
        role = role if sep else name
        if role not in ROLE_GROUPS:
            raise ValueError(f"{entry!r}: unknown role {role!r} (roles: {', '.join(ROLE_GROUPS)})")
        if not name or any(char in name for char in "/\\,\"") or name.startswith("."):
            raise ValueError(f"{entry!r}: a user name must be non-empty, without / \\ , or \"")
        if any(user.name == name for user in users):
            raise ValueError(f"user {name!r} is listed twice")
        users.append(User(name, role))
    if not users:
        raise ValueError("at least one user is needed")
    return tuple(users)


def parse_hosts(text: str) -> tuple[str, ...]:
    hosts = tuple(part.strip() for part in text.split(",") if part.strip())
    for host in hosts:
        if any(char.isspace() or char in "/:@" for char in host) and not _is_ip(host):
            raise ValueError(f"{host!r} is neither a host name nor an IP address")
    return hosts


def write_bundle(
    directory: Path,
    *,
    hosts: Sequence[str] = (),
    days: int = DEFAULT_DAYS,
    users: Sequence[User] = DEFAULT_BUNDLE_USERS,
    force: bool = False,
) -> tuple[Bundle, list[str]]:
    """Issue every certificate, key and token into ``directory``; the bundle and a line per file pair
    written. CertsError when a CA exists there (and not ``force``) or a file cannot be written."""
    if days < 1:
        raise CertsError(f"--days must be at least 1, got {days}")
    bundle = Bundle(directory.resolve())
    if bundle.exists() and not force:
        raise CertsError(
            f"{bundle.ca_cert} already exists: pass --force to replace the CA and every certificate "
            "(certificates it signed stop being trusted)"
        )
    names = tuple(dict.fromkeys((*LOCAL_HOSTS, *hosts)))
    now = datetime.datetime.now(datetime.UTC) - BACKDATE
    ca = Issuer.new_ca("podsched-ca", now, max(days, CA_DAYS))
    etcd_ca = Issuer.new_ca("podsched-etcd-ca", now, max(days, CA_DAYS))
    server, client, both = (
        [ExtendedKeyUsageOID.SERVER_AUTH],
        [ExtendedKeyUsageOID.CLIENT_AUTH],
        [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH],
    )
    files: list[tuple[str, bytes, bytes | None, str]] = [
        ("ca", ca.cert_pem, ca.key_pem, "the cluster CA (podsched-ca)"),
        ("apiserver", *ca.issue("podsched-apiserver", (), names, server, now, days),
         f"the API server, for {', '.join(names)}"),
        ("apiserver-etcd-client", *etcd_ca.issue("podsched-apiserver-etcd-client", (), (), client, now, days),
         "the API server's client certificate for etcd"),
        ("etcd/ca", etcd_ca.cert_pem, etcd_ca.key_pem, "etcd's CA (podsched-etcd-ca)"),
        # etcd dials its own members with its serving certificate too: both usages, as kubeadm issues it.
        ("etcd/server", *etcd_ca.issue("podsched-etcd-server", (), names, both, now, days),
         f"etcd members, for {', '.join(names)}"),
        ("etcd/peer", *etcd_ca.issue("podsched-etcd-peer", (), names, both, now, days),
         "etcd members' traffic with each other"),
    ]
    for user in users:
        files.append((f"users/{user.name}", *ca.issue(user.name, (user.group,), (), client, now, days),
                      f"user {user.name} (group {user.group})"))
    lines = []
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        for stem, cert_pem, key_pem, what in files:
            write_with_mode(bundle.path(f"{stem}.crt"), cert_pem, 0o644)
            assert key_pem is not None
            write_with_mode(bundle.path(f"{stem}.key"), key_pem, 0o600)
            lines.append(f"  {stem}.crt, {stem}.key: {what}")
        write_with_mode(bundle.token_file, _token_file(users), 0o600)
    except OSError as exc:
        raise CertsError(f"cannot write into {directory}: {exc}") from exc
    lines.append(f"  {TOKEN_FILE}: a bearer token for each of {', '.join(user.name for user in users)}")
    return bundle, lines


# --------------------------------------------------------------------------------------------- issuing


@dataclass(frozen=True, slots=True)
class Issuer:
    """A CA (its certificate and key) that issues leaf certificates."""

    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    @classmethod
    def new_ca(cls, name: str, now: datetime.datetime, days: int) -> Issuer:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        cert = (
            _builder(subject, subject, key.public_key(), now, days)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(_usage(cert_sign=True), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256())
        )
        return cls(cert, key)

    @property
    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    @property
    def key_pem(self) -> bytes:
        return _key_pem(self.key)

    def issue(
        self,
        common_name: str,
        organizations: Sequence[str],
        hosts: Sequence[str],
        usages: list[x509.ObjectIdentifier],
        now: datetime.datetime,
        days: int,
    ) -> tuple[bytes, bytes]:
        """A leaf certificate signed by this CA and its key, both PEM."""
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name(
            [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations]
            + [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
        )
        builder = (
            _builder(subject, self.cert.subject, key.public_key(), now, days)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_usage(cert_sign=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), critical=False
            )
        )
        if hosts:
            names = [x509.IPAddress(ipaddress.ip_address(host)) if _is_ip(host) else x509.DNSName(host)
                     for host in hosts]
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        return cert.public_bytes(serialization.Encoding.PEM), _key_pem(key)


def _builder(
    subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey, now: datetime.datetime,
    days: int,
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + BACKDATE + datetime.timedelta(days=days))
    )


def _usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True, content_commitment=False, key_encipherment=not cert_sign,
        data_encipherment=False, key_agreement=False, key_cert_sign=cert_sign, crl_sign=cert_sign,
        encipher_only=False, decipher_only=False,
    )


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _token_file(users: Sequence[User]) -> bytes:
    """kube-apiserver's static token file: token,user,uid,"group1,group2" per line."""
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
    for user in users:
        writer.writerow([new_token(), user.name, str(uuid.uuid4()), user.group])
    return out.getvalue().encode()


def new_token() -> str:
    """256 random bits in hex: a token never starts with '-', which argparse would take for an option
    (``--token -x...`` fails), and needs no quoting in a shell or the CSV file."""
    return secrets.token_hex(32)
