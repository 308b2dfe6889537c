"""The API server's access control in one object: who calls (authentication) and whether they may
(authorization), built from the server's security files (security.py) and its loopback token."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import grpc

from cluster.apiserver.auth.authenticator import Authenticator
from cluster.apiserver.auth.authorizer import Authorizer
from cluster.apiserver.auth.identity import RequestInfo, UserInfo
from cluster.apiserver.auth.policy import Policy
from cluster.apiserver.auth.roles import MASTERS_GROUP
from cluster.apiserver.auth.security import SecurityConfig
from cluster.apiserver.auth.tokens import TokenTable

#: The identity of the server's own clients (its controllers), as kube-apiserver's loopback client.
LOOPBACK_USER_NAME = "system:apiserver"


@dataclass(frozen=True, slots=True)
class Access:
    authenticator: Authenticator
    authorizer: Authorizer

    @classmethod
    def unsecured(cls) -> Access:
        """No authentication: every caller is an admin (only ever served on loopback)."""
        return cls(Authenticator(), Authorizer(Policy()))

    @classmethod
    def of(cls, config: SecurityConfig, loopback_token: str) -> Access:
        """The access control ``config`` describes, plus ``loopback_token`` for the server's own clients."""
        if not config.authenticating:
            return cls.unsecured()
        tokens = TokenTable(config.tokens)
        tokens.add(loopback_token, UserInfo(LOOPBACK_USER_NAME, str(uuid.uuid4()), (MASTERS_GROUP,)))
        authenticator = Authenticator(tokens, client_certificates=config.client_certificates)
        return cls(authenticator, Authorizer(config.policy))

    @property
    def enabled(self) -> bool:
        return self.authenticator.enabled

    def authenticate(self, context: grpc.aio.ServicerContext) -> UserInfo:
        return self.authenticator.authenticate(context)

    def authenticate_credentials(self, token: str | None, certificate_pem: bytes | None) -> UserInfo:
        return self.authenticator.authenticate_credentials(token, certificate_pem)

    def authorize(self, user: UserInfo, request: RequestInfo) -> None:
        # Without authentication every caller is UNSECURED, in system:masters, which the built-in bindings
        # make an admin (a policy file without an authenticator is refused at start): nothing to ask.
        if self.enabled:
            self.authorizer.authorize(user, request)
