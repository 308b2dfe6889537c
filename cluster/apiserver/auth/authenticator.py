"""Authentication: who is calling, from the call's bearer token or its verified client certificate.

A bearer token (metadata ``authorization: Bearer <token>``) is tried first: a token the server does
not know is Unauthorized even on a connection with a good certificate (credentials that fail are an
error, never a fallback). Without one, the client certificate's subject names the caller
(certificates.py). With neither, the call is Unauthorized ("Unauthorized", kube's word). Every
authenticated user is also in the group system:authenticated, as in Kubernetes.

Without any authenticator configured the server serves loopback only and every caller is
``UNSECURED``, a member of system:masters (kube-apiserver's old insecure port).
"""

from __future__ import annotations

import functools

import grpc

from cluster.api import errors
from cluster.apiserver.auth.certificates import user_of_certificate
from cluster.apiserver.auth.identity import UserInfo
from cluster.apiserver.auth.roles import MASTERS_GROUP
from cluster.apiserver.auth.tokens import TokenTable

AUTHENTICATED_GROUP = "system:authenticated"
#: Every caller of a server without authentication.
UNSECURED = UserInfo("system:unsecured", groups=(MASTERS_GROUP, AUTHENTICATED_GROUP))
AUTHORIZATION_METADATA = "authorization"
_BEARER = "bearer"
#: The auth_context key under which gRPC hands over the peer's verified certificate.
_PEER_CERTIFICATE = "x509_pem_cert"
#: Distinct client certificates whose identity is kept parsed (a few per user; parsing costs ~50 us).
CACHED_CERTIFICATES = 1024


class Authenticator:
    def __init__(self, tokens: TokenTable | None = None, *, client_certificates: bool = False) -> None:
        # Users are stored already in system:authenticated, so a call returns one without building it.
        self._tokens = tokens.with_users_changed(_authenticated) if tokens is not None else None
        self._client_certificates = client_certificates

    @property
    def enabled(self) -> bool:
        """Whether callers must prove who they are (a token file or a client CA is configured)."""
        return self._tokens is not None or self._client_certificates

    def authenticate(self, context: grpc.aio.ServicerContext) -> UserInfo:
        """The caller of this gRPC call; Unauthorized if it presents no credentials the server accepts."""
        if not self.enabled:
            return UNSECURED
        certificates = (
            list(context.auth_context().get(_PEER_CERTIFICATE, ())) if self._client_certificates else []
        )
        return self.authenticate_credentials(
            _bearer_token(context.invocation_metadata()), certificates[0] if certificates else None)

    def authenticate_credentials(self, token: str | None, certificate_pem: bytes | None) -> UserInfo:
        """The caller presenting ``token`` (from ``Authorization: Bearer``) and the verified client
        certificate ``certificate_pem``, either None when absent: what every wire hands over."""
        if not self.enabled:
            return UNSECURED
        if token is not None:
            user = self._tokens.user_of(token) if self._tokens is not None else None
            if user is None:
                raise errors.Unauthorized("Unauthorized")
            return user
        if self._client_certificates and certificate_pem is not None:
            user = _authenticated_user_of_certificate(certificate_pem)
            if user is not None:
                return user
        raise errors.Unauthorized("Unauthorized")


def bearer_token_of(header: str) -> str | None:
    """The token of an ``Authorization`` value ``Bearer <token>``, or None for any other value."""
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() == _BEARER and token.strip():
        return token.strip()
    return None


def _bearer_token(metadata: object) -> str | None:
    """The token of the call's ``authorization: Bearer <token>`` metadata, or None without one."""
    for key, value in metadata or ():  # type: ignore[attr-defined]
        if key != AUTHORIZATION_METADATA:
            continue
        token = bearer_token_of(value.decode(errors="replace") if isinstance(value, bytes) else str(value))
        if token is not None:
            return token
    return None


@functools.lru_cache(maxsize=CACHED_CERTIFICATES)
def _authenticated_user_of_certificate(pem: bytes) -> UserInfo | None:
    user = user_of_certificate(pem)
    return _authenticated(user) if user is not None else None


def _authenticated(user: UserInfo) -> UserInfo:
    if AUTHENTICATED_GROUP in user.groups:
        return user
    return UserInfo(user.name, user.uid, (*user.groups, AUTHENTICATED_GROUP))
