"""The identity in a client certificate, by Kubernetes' x509 rule: the subject's common name (CN) is the
user name, its organizations (O, any number) are the groups. A certificate without a CN names nobody.

Only certificates the TLS handshake has verified against ``--client-ca-file`` reach this module: the
server requires and verifies client certificates whenever a client CA is configured (tls.py).
"""

from __future__ import annotations

from cryptography import x509
from cryptography.x509.oid import NameOID

from cluster.apiserver.auth.identity import UserInfo


def user_of_certificate(pem: bytes) -> UserInfo | None:
    """The user a verified client certificate (PEM) names, or None if its subject has no CN."""
    subject = x509.load_pem_x509_certificate(pem).subject
    names = [str(attribute.value) for attribute in subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    if not names or not names[0]:
        return None
    organizations = subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    groups = tuple(str(attribute.value) for attribute in organizations)
    return UserInfo(names[0], groups=groups)
