"""The API server's security files, loaded and checked together at start: the TLS material, the static
token file and the authorization policy. Any wrong file stops the server with an error naming the
flag or file and the line or entry (each loader's own error, a ValueError)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from cluster.apiserver.auth.identity import UserInfo
from cluster.apiserver.auth.policy import Policy, PolicyFileError, load_policy_file
from cluster.apiserver.auth.tls import ServerTls, load_server_tls
from cluster.apiserver.auth.tokens import load_token_file


@dataclass(frozen=True, slots=True)
class SecurityConfig:
    #: Users by bearer token (the token file's); None without a token file.
    tokens: dict[str, UserInfo] | None = None
    policy: Policy = field(default_factory=Policy)
    tls: ServerTls | None = None

    @property
    def client_certificates(self) -> bool:
        return self.tls is not None and self.tls.client_ca is not None

    @property
    def authenticating(self) -> bool:
        """Whether callers must prove who they are; without it the server serves loopback only."""
        return self.tokens is not None or self.client_certificates


def load_security(
    *,
    tls_cert_file: str | None = None,
    tls_private_key_file: str | None = None,
    client_ca_file: str | None = None,
    token_auth_file: str | None = None,
    authorization_policy_file: str | None = None,
) -> SecurityConfig:
    tls = load_server_tls(tls_cert_file, tls_private_key_file, client_ca_file)
    tokens = load_token_file(token_auth_file) if token_auth_file is not None else None
    config = SecurityConfig(tokens, Policy(), tls)
    if authorization_policy_file is None:
        return config
    if not config.authenticating:
        raise PolicyFileError(
            f"--authorization-policy-file {authorization_policy_file} needs an authenticator "
            "(--token-auth-file or --client-ca-file): without one every caller is an admin"
        )
    return replace(config, policy=load_policy_file(authorization_policy_file))
