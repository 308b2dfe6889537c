"""Authentication of one call from its metadata and its TLS peer: token first, then the client
certificate, else Unauthorized; and every caller is an admin when nothing is configured."""

from __future__ import annotations

from typing import Any

import pytest
import trustme

from cluster.api import errors
from cluster.apiserver.auth.authenticator import UNSECURED, Authenticator
from cluster.apiserver.auth.identity import UserInfo
from cluster.apiserver.auth.tokens import TokenTable
from cluster.client.credentials import ClientCredentials

ALICE = UserInfo("alice", "1", ("ops",))


class Call:
    """The two things an authenticator reads of a grpc.aio ServicerContext."""

    def __init__(
        self, metadata: tuple[tuple[str, str], ...] = (), peer_certificate: bytes | None = None
    ) -> None:
        self._metadata = metadata
        self._auth = {"x509_pem_cert": [peer_certificate]} if peer_certificate else {}

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def auth_context(self) -> dict[str, Any]:
        return self._auth


@pytest.fixture(scope="module")
def certificate() -> bytes:
    leaf = trustme.CA().issue_cert("client", common_name="carol", organization_name="podsched:clients")
    return leaf.cert_chain_pems[0].bytes()


def _bearer(token: str) -> tuple[tuple[str, str], ...]:
    return ClientCredentials(token=token).metadata()


def test_without_authenticators_every_caller_is_an_admin() -> None:
    authenticator = Authenticator()
    assert not authenticator.enabled
    assert authenticator.authenticate(Call()) == UNSECURED  # type: ignore[arg-type]
    assert "system:masters" in UNSECURED.groups


def test_a_known_token_names_its_user_among_the_authenticated() -> None:
    authenticator = Authenticator(TokenTable({"s3cret": ALICE}))
    for scheme in ("Bearer", "bearer"):
        user = authenticator.authenticate(Call((("authorization", f"{scheme} s3cret"),)))  # type: ignore[arg-type]
        assert user == UserInfo("alice", "1", ("ops", "system:authenticated"))


@pytest.mark.parametrize(
    "metadata",
    [(), _bearer("wrong"), (("authorization", "Basic YWxpY2U6cw=="),), (("authorization", "Bearer "),)],
    ids=["no-credentials", "unknown-token", "not-bearer", "empty-token"],
)
def test_a_call_without_accepted_credentials_is_unauthorized(metadata: tuple[tuple[str, str], ...]) -> None:
    authenticator = Authenticator(TokenTable({"s3cret": ALICE}))
    with pytest.raises(errors.Unauthorized, match=r"^Unauthorized$"):
        authenticator.authenticate(Call(metadata))  # type: ignore[arg-type]


def test_a_verified_client_certificate_names_its_subject(certificate: bytes) -> None:
    authenticator = Authenticator(client_certificates=True)
    user = authenticator.authenticate(Call(peer_certificate=certificate))  # type: ignore[arg-type]
    assert user == UserInfo("carol", groups=("podsched:clients", "system:authenticated"))


def test_a_token_beside_a_certificate_names_the_caller_and_a_bad_one_fails(certificate: bytes) -> None:
    authenticator = Authenticator(TokenTable({"s3cret": ALICE}), client_certificates=True)
    assert authenticator.authenticate(Call(_bearer("s3cret"), certificate)).name == "alice"  # type: ignore[arg-type]
    with pytest.raises(errors.Unauthorized):
        authenticator.authenticate(Call(_bearer("wrong"), certificate))  # type: ignore[arg-type]


def test_a_peer_certificate_is_ignored_unless_client_certificates_are_configured(certificate: bytes) -> None:
    authenticator = Authenticator(TokenTable({"s3cret": ALICE}))
    with pytest.raises(errors.Unauthorized):
        authenticator.authenticate(Call(peer_certificate=certificate))  # type: ignore[arg-type]


def test_calls_of_one_caller_get_the_one_stored_identity(certificate: bytes) -> None:
    authenticator = Authenticator(TokenTable({"s3cret": ALICE}), client_certificates=True)
    by_token = [authenticator.authenticate(Call(_bearer("s3cret"))) for _ in range(2)]  # type: ignore[arg-type]
    by_certificate = [
        authenticator.authenticate(Call(peer_certificate=certificate)) for _ in range(2)  # type: ignore[arg-type]
    ]
    assert by_token[0] is by_token[1]
    assert by_certificate[0] is by_certificate[1]
