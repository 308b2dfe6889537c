"""How `podsched apiserver` reaches itself: the identity and trust of the clients it runs (its
controllers), whatever certificates the operator gave it.

kube-apiserver's own clients use a loopback token. Here that token (``ApiServer.loopback_token``) names
the caller, and the connection follows the server's transport: plaintext when it serves plaintext;
over TLS the client trusts the serving certificate itself (checked under a name it carries), so it does
not matter who signed it or which address it names. A server with ``--client-ca-file`` requires a
client certificate on every connection, which the server cannot get from the operator's CA: at start
it makes a CA of its own, in memory, issues one client certificate from it (CN=system:apiserver,
O=system:masters, kube-apiserver's loopback identity) and trusts that CA beside the operator's. The CA's
key is dropped once the certificate is made, so nothing else can ever be issued from it.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import tempfile
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID

from cluster.apiserver.server import ApiServerOptions
from cluster.client import ClientCredentials
from cluster.launcher.certs import BACKDATE, Issuer

#: kube-apiserver's name for its loopback client, in the group that makes it an admin.
LOOPBACK_USER = "system:apiserver"
LOOPBACK_GROUP = "system:masters"
#: The loopback certificate outlives any server run.
LOOPBACK_DAYS = 3650
#: The combined client CA bundle given to the server: the operator's CAs, then the loopback CA.
CLIENT_CA_BUNDLE = "client-ca.crt"


@dataclass(frozen=True, slots=True)
class Loopback:
    """The options to serve with (the client CA bundle extended when client certificates are
    required) and a token to reach the server with, given once the server exists."""

    options: ApiServerOptions
    #: The loopback client certificate and key (PEM), when the server requires client certificates.
    client_pem: tuple[bytes, bytes] | None = None
    #: A private directory holding the extended client CA bundle; the caller removes it at exit.
    workdir: str | None = None

    @classmethod
    def prepare(cls, options: ApiServerOptions) -> Loopback:
        """``options`` as they are, or with the loopback CA trusted beside ``--client-ca-file``."""
        if options.client_ca_file is None or options.tls_cert_file is None:
            return cls(options)
        now = datetime.datetime.now(datetime.UTC) - BACKDATE
        ca = Issuer.new_ca("podsched-apiserver-loopback-ca", now, LOOPBACK_DAYS)
        cert_pem, key_pem = ca.issue(LOOPBACK_USER, (LOOPBACK_GROUP,), (), [ExtendedKeyUsageOID.CLIENT_AUTH],
                                     now, LOOPBACK_DAYS)
        workdir = tempfile.mkdtemp(prefix="podsched-apiserver-")
        bundle = os.path.join(workdir, CLIENT_CA_BUNDLE)
        with open(options.client_ca_file, "rb") as operators, open(bundle, "wb") as out:
            out.write(operators.read().rstrip(b"\n") + b"\n")
            out.write(ca.cert.public_bytes(serialization.Encoding.PEM))
        extended = dataclasses.replace(options, client_ca_file=bundle)
        return cls(extended, (cert_pem, key_pem), workdir)

    def credentials(self, token: str) -> ClientCredentials:
        """What the server's own clients present: ``token``, and over TLS trust in the serving
        certificate (and the loopback client certificate, when one is required)."""
        if self.options.tls_cert_file is None:
            return ClientCredentials(token=token)
        return ClientCredentials.trusting_certificate(
            self.options.tls_cert_file, token=token, client_pem=self.client_pem
        )
